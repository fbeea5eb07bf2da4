/* The protocol's error codes: the one table of their wire names. */

#include <stddef.h>
#include <string.h>

#include "logs/errcode.h"

/* Designated: a reordering of the enum cannot mislabel a code. */
static const char *const errcode_names[ERR_COUNT] = {
	[ERR_NONE] = "",
	[ERR_ITEM_TOO_LARGE] = "item_too_large",
	[ERR_COMMAND_TOO_LONG] = "command_too_long",
	[ERR_NUL_BYTE] = "nul_byte",
	[ERR_BAD_JSON] = "bad_json",
	[ERR_BAD_ITEM] = "bad_item",
	[ERR_BAD_ID] = "bad_id",
	[ERR_UNKNOWN_TYPE] = "unknown_type",
	[ERR_BAD_REPLY_TO] = "bad_reply_to",
	[ERR_MISSING_COMMAND] = "missing_command",
	[ERR_BAD_TIMEOUT] = "bad_timeout",
	[ERR_BAD_ENV] = "bad_env",
	[ERR_ENV_FORBIDDEN] = "env_forbidden",
	[ERR_CWD_OUTSIDE_WORKSPACE] = "cwd_outside_workspace",
	[ERR_CWD_NOT_FOUND] = "cwd_not_found",
	[ERR_BAD_TIER] = "bad_tier",
	[ERR_BLOCKED] = "blocked",
	[ERR_OUTSIDE_WORKSPACE] = "outside_workspace",
	[ERR_REJECTED] = "rejected",
	[ERR_APPROVAL_EXPIRED] = "approval_expired",
	[ERR_EXECUTION_DISABLED] = "execution_disabled",
	[ERR_DUPLICATE_ID] = "duplicate_id",
	[ERR_WORKER_STOPPING] = "worker_stopping",
	[ERR_WORKER_LOST] = "worker_lost",
	[ERR_LOG_FAILED] = "log_failed",
	[ERR_LOG_UNSAFE] = "log_unsafe",
	[ERR_CONFINE_FAILED] = "confine_failed",
	[ERR_SPAWN_FAILED] = "spawn_failed",
	[ERR_AUDIT_FAILED] = "audit_failed",
	[ERR_CANCELLED] = "cancelled",
	[ERR_SESSION_BUSY] = "session_busy",
	[ERR_TOO_MANY_SESSIONS] = "too_many_sessions",
	[ERR_UNKNOWN_SESSION] = "unknown_session",
	[ERR_SESSION_ENDED] = "session_ended",
	[ERR_HELD] = "held",
	[ERR_FORBIDDEN] = "forbidden",
	[ERR_BAD_ACTION] = "bad_action",
	[ERR_BAD_ARGS] = "bad_args",
};

const char *
errcode_name(enum errcode code)
{
	if ((unsigned)code >= ERR_COUNT || errcode_names[code] == NULL)
		return ("");
	return (errcode_names[code]);
}

enum errcode
errcode_parse(const char *name)
{
	unsigned	i;

	if (name == NULL || *name == '\0')
		return (ERR_NONE);
	for (i = 1; i < ERR_COUNT; i++)
		if (errcode_names[i] != NULL &&
		    strcmp(errcode_names[i], name) == 0)
			return ((enum errcode)i);
	return (ERR_NONE);
}
