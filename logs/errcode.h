#ifndef EXECQ_ERRCODE_H
#define EXECQ_ERRCODE_H

/*
 * The protocol's error codes: the "code" of every ERROR answer
 * (docs/PROTOCOL.md, section 5 and section 12). One enum, one name table
 * (logs/errcode.c): modules pass the enum and only the answer's JSON
 * spells the name. It lives in logs/, the room every other room may use,
 * because the policy and exec/ produce codes too and may not include
 * queue/.
 */

enum errcode {
	ERR_NONE = 0,
	/* The item itself (section 5). */
	ERR_ITEM_TOO_LARGE,
	ERR_COMMAND_TOO_LONG,
	ERR_NUL_BYTE,
	ERR_BAD_JSON,
	ERR_BAD_ITEM,
	ERR_BAD_ID,
	ERR_UNKNOWN_TYPE,
	ERR_BAD_REPLY_TO,
	ERR_MISSING_COMMAND,
	ERR_BAD_TIMEOUT,
	ERR_BAD_ENV,
	ERR_ENV_FORBIDDEN,
	ERR_CWD_OUTSIDE_WORKSPACE,
	ERR_CWD_NOT_FOUND,
	ERR_BAD_TIER,
	/* The policy and approvals (section 13). */
	ERR_BLOCKED,
	ERR_OUTSIDE_WORKSPACE,
	ERR_REJECTED,
	ERR_APPROVAL_EXPIRED,
	/* The worker. */
	ERR_EXECUTION_DISABLED,
	ERR_DUPLICATE_ID,
	ERR_WORKER_STOPPING,
	ERR_WORKER_LOST,
	ERR_LOG_FAILED,
	ERR_LOG_UNSAFE,
	ERR_CONFINE_FAILED,
	ERR_SPAWN_FAILED,
	ERR_AUDIT_FAILED,
	ERR_CANCELLED,
	ERR_SESSION_BUSY,
	ERR_TOO_MANY_SESSIONS,
	/* PROCESS items (section 12). */
	ERR_UNKNOWN_SESSION,
	ERR_SESSION_ENDED,
	ERR_HELD,
	ERR_FORBIDDEN,
	ERR_BAD_ACTION,
	ERR_BAD_ARGS,
	ERR_COUNT		/* not a code: the table's size */
};

/* The wire name ("bad_item"); "" for ERR_NONE and out-of-range values. */
const char	*errcode_name(enum errcode);
/* The code of a wire name; ERR_NONE if it names none. */
enum errcode	 errcode_parse(const char *name);

#endif
