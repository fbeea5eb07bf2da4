#ifndef EXECQ_ITEM_H
#define EXECQ_ITEM_H

struct json_t;

/*
 * Work items and answers: JSON <-> C.  Pure code, no I/O.
 * The wire format is docs/PROTOCOL.md; this file is its C mirror.
 */

#include <stddef.h>
#include <stdint.h>

#include "logs/errcode.h"

enum item_type {
	ITEM_EXEC = 1,
	ITEM_PROCESS,
};

/* Process-manager actions (PROCESS items). */
enum item_action {
	ITEM_ACTION_LIST = 1,
	ITEM_ACTION_POLL,
	ITEM_ACTION_LOG,
	ITEM_ACTION_WRITE,
	ITEM_ACTION_SEND_KEYS,
	ITEM_ACTION_KILL,
	ITEM_ACTION_WAIT,
	ITEM_ACTION_CANCEL,
	ITEM_ACTION_EXEC,		/* a command in a shell session */
	ITEM_ACTION_INTERRUPT,		/* SIGINT to a shell's command */
};

/*
 * args.retry: when a foreground command's run counts as failed, and how
 * long to wait before the next attempt (docs/PROTOCOL.md section 4).
 */
#define ITEM_RETRY_EXIT		0x1	/* any non-zero exit */
#define ITEM_RETRY_TIMEOUT	0x2
#define ITEM_RETRY_SIGNAL	0x4
#define ITEM_RETRY_SPAWN	0x8	/* it could not be started */
#define ITEM_RETRY_CODES_MAX	32
#define ITEM_RETRY_ATTEMPTS_DEF	3
#define ITEM_RETRY_ATTEMPTS_MAX	25	/* Faktory's */
#define ITEM_RETRY_INITIAL_DEF	1000
#define ITEM_RETRY_MAX_DEF	300000	/* 5 min */
#define ITEM_RETRY_WAIT_MAX	2592000000L	/* 30 days */
#define ITEM_DELAY_MAX		2592000000L	/* args.delay_ms: 30 days */
#define ITEM_NOT_BEFORE_MAX	4102444800000LL	/* 2100-01-01 */
struct item_retry {
	unsigned	 on;		/* ITEM_RETRY_* bits */
	int		 codes[ITEM_RETRY_CODES_MAX];	/* exit codes that
					   count besides "exit" */
	size_t		 ncodes;
	unsigned	 max_attempts;	/* every run, the first included */
	long		 initial_ms, max_ms;
	double		 factor;
};

/* A parsed EXEC item. Every string is owned by the item. */
struct item {
	char		*id;		/* [A-Za-z0-9_.:-]{1,128}, no leading . */
	enum item_type	 type;
	char		*reply_to;	/* NULL: the worker's default */
	char		*command;	/* non-empty, no NUL */
	char		*cwd;		/* NULL: the workspace root */
	long		 timeout_ms;	/* 0: the worker's default */
	char		**env;		/* NULL-terminated "NAME=value", or NULL */
	size_t		 nenv;
	int		 background;
	int		 shell;		/* args.shell: a persistent shell
					   session (background, no pty) */
	int		 pty;
	int		 stream;	/* foreground: live output stream */
	unsigned	 rows, cols;	/* PTY size; 0: default */
	int		 retries;	/* re-runs allowed after worker_lost */
	struct item_retry *retry;	/* args.retry; NULL: none given */
	int		 no_retry;	/* args.retry false: not even the
					   queue's default */
	long		 delay_ms;	/* args.delay_ms; 0: none */
	int64_t		 not_before_ms;	/* args.not_before_ms; 0: none */
	long		 idle_timeout_ms;	/* 0: none (sessions) */
	int		 keep;		/* sessions: not ended by the queue's
					   default idle timeout */
	int		 tail_lines;	/* callback tail; -1: default */
	char		*tier;		/* args.tier: may only lower the
					   queue's; NULL: the queue's */
	int		 network;	/* args.network: 1 asks for the host's
					   network (true or "host": held
					   unless the queue grants it), 0
					   declines it (false, or a list of
					   domains), -1 absent */
	char		**domains;	/* args.network as a list: the domains
					   it asks to reach through the
					   worker's proxy, NULL-terminated, as
					   sent (the worker checks them); NULL:
					   none */

	/*
	 * PROCESS items; timeout_ms is the wait action's limit, and exec's
	 * (command holds exec's command).
	 */
	enum item_action action;
	const char	*action_name;	/* static */
	char		*session_id;
	long		 offset;	/* poll, log: byte offset */
	long		 length;	/* log: bytes; 0: to the end */
	long		 lines;		/* log: the last N lines; 0: bytes */
	long		 max_bytes;	/* poll: 0: default */
	long		 wait_ms;	/* poll */
	char		*data;		/* write: bytes (may hold NULs) */
	size_t		 data_len;
	int		 eof;		/* write: close stdin after */
	char		**keys;		/* send-keys, NULL-terminated */
	char		*signal_name;	/* kill: "TERM", "KILL", ... or NULL */
	int		 base64;	/* poll, log: answer in base64 */
	char		*token;		/* the session's, from EXEC_STARTED */
	char		**tokens;	/* list: the caller's, NULL-terminated;
					   NULL when none */
	char		*operator_token;	/* may act on any session */
};

/*
 * Why an item was refused: code (logs/errcode.h; docs/PROTOCOL.md lists
 * them all); message, id and reply_to are allocated, NULL when unknown.
 * id and reply_to are filled in as far as the item could be read, so the
 * ERROR answer can still reach the sender.
 */
struct item_error {
	enum errcode	 code;
	char		*message;
	char		*id;
	char		*reply_to;
};

/*
 * Fills *err with item_too_large for an item of size bytes of which only
 * the first headlen are at hand, taking its id and reply_to from them when
 * they are there (top-level plain strings), so the refusal reaches its
 * sender.
 */
void		 item_refuse_large(const char *head, size_t headlen,
		    size_t size, size_t max_len, struct item_error *err);
/*
 * Parses one item of len bytes (not NUL-terminated). Items over max_len
 * bytes are refused (item_too_large) without being parsed. Returns NULL and
 * fills *err on any problem; unknown fields are ignored. *err is cleared on
 * entry and left empty on success; after a failure, item_error_release() it.
 * The codes are listed at the top of queue/item.c.
 */
struct item	*item_parse(const char *buf, size_t len, size_t max_len,
		    struct item_error *err);
void		 item_free(struct item *);		/* NULL ok */
void		 item_error_release(struct item_error *);	/* frees members */
/* The longest item id; ITEM_ID_MAX_S for the fetch script. */
#define ITEM_ID_MAX		128
#define ITEM_DOMAINS_MAX	64	/* in args.network as a list */
#define ITEM_SHELL_COMMAND_MAX	60000	/* exec in a shell session: one
					   write into an empty pipe */
#define ITEM_ID_MAX_S		"128"
/* 1 if s is a usable item id or queue name (also safe as a file name). */
int		 item_id_valid(const char *s);

/*
 * A retry policy from a JSON object (args.retry's shape; the worker's
 * queue default too): allocated, or NULL with *err set.
 */
struct item_retry *item_retry_parse(struct json_t *, struct item_error *err);
struct item_retry *item_retry_dup(const struct item_retry *);	/* NULL ok */
/* 1 if this end of a run counts as a failure under r. */
int		 item_retry_counts(const struct item_retry *r,
		    int spawn_failed, int timed_out, int signal,
		    int exit_code);
/*
 * The wait before the attempt after attempt (1: the first run): full
 * jitter, rnd mod (the cap + 1), the cap initial_ms * factor^(attempt-1)
 * up to max_ms.
 */
long		 item_retry_delay(const struct item_retry *r,
		    unsigned attempt, uint32_t rnd);

/* The facts of a finished foreground command; all borrowed. */
struct item_result {
	const char	*id;
	int		 exit_code;	/* 128+n when killed by signal n */
	int		 signal;	/* 0: none */
	const char	*out;		/* stdout, already capped */
	size_t		 out_len;
	const char	*err;		/* stderr, already capped */
	size_t		 err_len;
	int		 truncated;	/* either stream lost bytes */
	int		 timed_out;
	int64_t		 duration_ms;
	const char	*log_path;
	int64_t		 user_ms, sys_ms, max_rss_kb;
	const char	*request;	/* approved: the request id */
	const char	*approved_by;	/* NULL: ran without approval */
	struct json_t	*confinement;	/* borrowed object, or NULL */
	const char	*log_error;	/* the log is short: why; else NULL */
	unsigned	 attempt;	/* with args.retry: which run this
					   was; 0: left out */
	const char	*retry_end;	/* the last attempt: why no other
					   follows; NULL: left out */
	const char	*token;		/* its session token, sent once, last;
					   NULL: left out (the kept copy) */
};

/*
 * Answers, as allocated JSON text (*len set when len != NULL). Bytes that
 * are not valid UTF-8 are replaced with U+FFFD, so any output encodes.
 */
char	*item_result_to_json(const struct item_result *, size_t *len);
/*
 * An EXEC_SCHEDULED notice: item id waits (reason "delay" or "retry")
 * and runs as attempt after delay_ms (-1: left out); last (stolen, may be
 * NULL) is the answer of the attempt before. "due_ms" is -1, for the
 * script that schedules it to fill in. Allocated, *len set.
 */
#define ITEM_DUE_UNKNOWN	"\"due_ms\":-1"
char	*item_scheduled_to_json(const char *id, const char *reason,
	    unsigned attempt, long delay_ms, struct json_t *last,
	    size_t *len);
/*
 * Answer text (an object) with "attempt" and, when retry_end is not
 * NULL, "retry" added; reallocated in place.
 */
void	 item_json_add_attempt(char **json, size_t *len, unsigned attempt,
	    const char *retry_end);
/* The facts of a session that ended, for its EXEC_CALLBACK; borrowed. */
struct item_callback {
	const char	*id, *session_id;
	const char	*status;	/* completed, failed, killed, ... */
	int		 exit_code;
	int		 signal;	/* 0: none */
	const char	*killed_by;	/* NULL: null */
	const char	*log_path;
	const char *const *tail;	/* ntail lines, any bytes */
	size_t		 ntail;
	int64_t		 duration_ms, output_bytes, ended_ms;
	int64_t		 user_ms, sys_ms, max_rss_kb;
	const char	*worker;	/* its consumer name */
	const char	*log_error;	/* the log is not whole: why */
	struct json_t	*confinement;	/* {...}; NULL: left out */
};
/*
 * A session's EXEC_CALLBACK (docs/PROTOCOL.md section 11), a new
 * reference: the worker keeps it as the session's final state.
 */
struct json_t	*item_callback_to_json(const struct item_callback *);

/*
 * The EXEC_CALLBACK of a session whose worker vanished, as a template for
 * the lost-session script: "@ID@", "@LOG@" and "@WORKER@" (JSON strings,
 * quotes included) stand for the session id, its log path and the
 * worker's name, which only Redis knows. Allocated.
 */
#define ITEM_LOST_ID		"\"@ID@\""
#define ITEM_LOST_LOG		"\"@LOG@\""
#define ITEM_LOST_WORKER	"\"@WORKER@\""
char	*item_lost_template(size_t *len);

/*
 * The "end" entry of a foreground item's live stream (args.stream):
 * {"id", "exit_code", "timed_out", "stdout_bytes", "stderr_bytes",
 * "log_path"}. Allocated, *len set (len may be NULL).
 */
char	*item_stream_end_to_json(const char *id, int exit_code,
	    int timed_out, uint64_t stdout_bytes, uint64_t stderr_bytes,
	    const char *log_path, size_t *len);

/*
 * A PROCESS_RESULT: {"type", "id", "action", "session_id"} and the
 * action's fields (stolen). Allocated, *len set.
 */
char	*item_process_result_to_json(const char *id, const char *action,
	    const char *session_id, struct json_t *fields, size_t *len);
/* Output in an answer: "output" (text, sanitized) or "output_b64". */
void	 item_json_put_output(struct json_t *o, const char *buf, size_t len,
	    int base64);
/* "SIGTERM" for 15, "SIG99" for an unnamed one, null for 0 (new ref). */
struct json_t	*item_json_signal(int sig);

/*
 * The fields of each action's PROCESS_RESULT (docs/PROTOCOL.md section
 * 12), for item_process_result_to_json. Each is a new reference; the
 * structs' strings are borrowed.
 */

/* How a session stands, as its answers show it. */
struct item_session_status {
	const char	*status;	/* "running", "completed", ... */
	int		 ended;		/* 0: no "signal", "killed_by" */
	int		 has_exit_code;	/* 0: "exit_code": null */
	int		 exit_code;
	int		 signal;	/* 0: null */
	const char	*killed_by;	/* NULL: null */
	int		 waiting_input;	/* poll and list: blocked reading its
					   input (worker/waiting.h) */
};
/* Output read from a session's log, for poll and log. */
struct item_read {
	const char	*buf;		/* len bytes, any */
	size_t		 len;
	int		 base64;	/* "output_b64" rather than "output" */
	long long	 offset;	/* where buf starts in the log */
	long long	 size;		/* log: the log's size */
	int		 eof;		/* poll: it ended and all is read */
};
/*
 * poll: the status members, the output, "offset", "next_offset", "eof",
 * "waiting_input".
 */
struct json_t	*item_poll_to_json(const struct item_session_status *,
		    const struct item_read *);
/* log: the output, "offset", "next_offset", "size", the status members. */
struct json_t	*item_log_to_json(const struct item_session_status *,
		    const struct item_read *);
/*
 * The final state of a session only its files remember, kept as a
 * session's EXEC_CALLBACK is: {"status", "exit_code", "signal",
 * "killed_by", "log_path"}.
 */
struct json_t	*item_session_end_to_json(const struct item_session_status *,
		    const char *log_path);
/*
 * wait: final (the EXEC_CALLBACK, or item_session_end_to_json) less
 * "type", "priority", "id" and "session_id"; for a NULL final (running)
 * {"status": "running", "waited_out"}.
 */
struct json_t	*item_wait_to_json(const struct json_t *final,
		    int waited_out);

/* A session as list shows it. */
struct item_session {
	const char	*session_id, *command, *log_path;
	long		 pid;
	int		 pty;
	int64_t		 started_ms;
	int64_t		 ended_ms;	/* shown once status.ended */
	int64_t		 output_bytes;
	int		 keep;		/* args.keep */
	int64_t		 idle_ms;	/* since output or input; shown while
					   it runs */
	struct item_session_status status;
};
/*
 * One list entry: the session's facts, then the status members, then
 * "waiting_input".
 */
struct json_t	*item_session_to_json(const struct item_session *);
/* list: {"sessions": sessions}, the array (stolen) of entries. */
struct json_t	*item_list_to_json(struct json_t *sessions);
/* write and send-keys: {"written": n}. */
struct json_t	*item_write_to_json(long long written);
/* kill: {"status": "killing"}. */
struct json_t	*item_kill_to_json(void);

/*
 * An item held for approval, or one whose request ended without running
 * it, as PROCESS actions show it: state is "held", "rejected", "expired"
 * or "cancelled". decided_by may be NULL.
 */
struct item_held {
	const char	*id, *state, *request, *command, *risk, *rule,
			*reason, *decided_by;
	long long	 created_ms, expires_ms;
};
/* One held item as a list entry. */
struct json_t	*item_held_to_json(const struct item_held *);
/*
 * poll, log or wait (action) on a held item: its state, and for poll and
 * log an empty output ("output_b64" if base64), "eof" once the request
 * ended; wait has "waited_out": false (it does not wait for a human).
 */
struct json_t	*item_held_answer_to_json(const struct item_held *,
		    enum item_action, int base64);

/* A session that started, for its EXEC_STARTED; borrowed. */
struct item_started {
	const char	*id, *session_id, *log_path, *worker;
	long		 pid;
	int		 pty;
	struct json_t	*confinement;	/* NULL: left out */
	const char	*token;		/* NULL: left out (the kept copy) */
};
/* An EXEC_STARTED answer (section 11); allocated, *len set. */
char	*item_started_to_json(const struct item_started *, size_t *len);

/* A session that waits for input, for its EXEC_WAITING; borrowed. */
struct item_waiting {
	const char	*id, *session_id;
	const char *const *tail;	/* ntail lines, any bytes */
	size_t		 ntail;
	int64_t		 waiting_since_ms;
	long		 pid;		/* the process that reads */
};
/*
 * An EXEC_WAITING notice (section 11): {"type", "priority": "high", "id",
 * "session_id", "tail", "waiting_since_ms", "pid"}. Allocated, *len set.
 */
char	*item_waiting_to_json(const struct item_waiting *, size_t *len);

/* An ERROR answer; id may be NULL (then "id": null). */
char	*item_error_to_json(const char *id, enum errcode code,
	    const char *message, size_t *len);

/*
 * An APPROVE or REJECT item, read from the approvers' stream
 * execq:decisions: {"type", "request", "by", "reason"?}. 0, or -1 with an
 * allocated *cause; release *d after success.
 */
struct item_decision {
	int		 approve;	/* 1 APPROVE, 0 REJECT */
	char		*request;	/* the request id */
	char		*by;		/* who decided (as they say) */
	char		*reason;	/* NULL if none given */
};
int	 item_decision_parse(const char *buf, size_t len,
	    struct item_decision *, char **cause);
void	 item_decision_release(struct item_decision *);

/* An APPROVAL_REQUEST (also the request's record, with its state). */
struct item_approval {
	const char	*id;		/* the item's id */
	const char	*request;	/* the request id */
	const char	*state;		/* pending, approved, rejected,
					   expired, cancelled */
	const char	*command, *cwd;
	char *const	*env;		/* the item's NAME=value, or NULL */
	const char	*risk, *rule, *reason;
	int64_t		 created_ms, expires_ms;	/* Unix ms */
	const char	*queue, *worker, *reply_to;
	int		 background;
	int		 network;	/* it asks for network */
	const char *const *domains;	/* ... domains it asks to reach that
					   the queue does not grant; NULL */
	const char	*grant_path;	/* the outside path it would open */
	const char	*decided_by, *decision_reason;	/* or NULL */
};
char	*item_approval_to_json(const struct item_approval *, size_t *len);

/*
 * Copies len bytes of s into a new NUL-terminated string that is valid
 * UTF-8 (invalid sequences and NULs become U+FFFD); *outlen is its length.
 */
char	*item_utf8_sanitize(const char *s, size_t len, size_t *outlen);
/* Any bytes as a JSON string (new reference), not UTF-8 made U+FFFD. */
struct json_t	*item_json_text(const char *s, size_t len);

/*
 * Standard base64 of len bytes: 0 and the allocated bytes (NUL-terminated
 * too) in *out, or -1 on a character that is not base64.
 */
int	 item_base64_decode(const char *, size_t len, char **out,
	    size_t *outlen);
/* Standard base64 of len bytes, allocated and NUL-terminated. */
char	*item_base64_encode(const void *, size_t len, size_t *outlen);

#endif
