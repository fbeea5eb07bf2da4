#ifndef EXECQ_CLI_H
#define EXECQ_CLI_H

/*
 * The parts of the execq client (cli/) that its files share. The files,
 * bottom up: each uses only files above it in this list (make layout).
 *
 *   util.c          helpers every file uses: messages (an ERROR answer's
 *                   too), clocks, ids, names, number parsing, tables
 *   tools.c         the tool definitions a model is given (cli/tools.json,
 *                   built in) in the shapes of MCP, OpenAI and Anthropic
 *   clientconf.c    the client config file, and where Redis is
 *   opts.c          the options of run, submit and spawn, and the EXEC
 *                   item they make
 *   conn.c          the conversation with Redis: connecting, sending an
 *                   item, waiting for its answer, the live output
 *   tokens.c        the token store: the session tokens that spawn and
 *                   run keep and PROCESS items show
 *   cmd_run.c       run and submit: one EXEC item and its answer
 *   cmd_sessions.c  spawn, ps, callbacks: sessions as Redis shows them
 *   cmd_process.c   PROCESS items, and send, keys, kill, wait
 *   cmd_workers.c   workers: the fleet as the registry shows it
 *   cmd_queues.c    queues: a queue's backlog (queue/backlog.c)
 *   cmd_policy.c    classify, approvals, approve, reject
 *   cmd_logs.c      logs (and logs -f, through PROCESS items and the
 *                   session hash), cleanup
 *   cmd_tools.c     tools: the tool definitions, printed
 *   mcp_call.c      execq mcp: the tools' calls as items (cli/mcp.h)
 *   mcp.c           execq mcp: JSON-RPC on stdin and stdout
 *   cmd_mcp.c       mcp: the MCP server's options and --help
 *   main.c          dispatch to the subcommands, execq --help
 *
 * Every name here starts with execq_ rather than with its file's name
 * (tokens.c's are execq_tokens_*): the client links objects of the
 * worker's rooms (logs/, policy/, queue/), so a session_* or process_* of
 * ours could collide with one of theirs.
 */

#include <stddef.h>
#include <stdio.h>

struct json_t;
struct client;
struct option;
struct redisReply;
struct ssl_ctx_st;

#define EXECQ_DEFAULT_URL	"redis://127.0.0.1:6379"
#define EXECQ_RUN_SOCKET	".tmp/run/redis.sock"	/* from 'make run' */
#define EXECQ_ROLE_AGENT	"agent"		/* make run's Redis users */
#define EXECQ_ROLE_OPERATOR	"operator"
#define EXECQ_CONNECT_S		2
#define EXECQ_COMMAND_S		10	/* socket timeout per command */
#define EXECQ_BLOCK_MS		1000	/* longest XREAD BLOCK */
#define EXECQ_LIVE_POLL_MS	100	/* on a cluster, while live
						   output streams */
#define EXECQ_TIMEOUT_S		30	/* the worker's default timeout */
#define EXECQ_WAIT_SLACK_S	30	/* default --wait: timeout + this */
#define EXECQ_SPAWN_WAIT_S	30	/* default spawn --wait */
#define EXECQ_MAX_SECONDS	(365.0 * 86400)
#define EXECQ_NAME_MAX		128
#define EXECQ_ID_LEN		26

#define EXECQ_EXIT_USAGE	2
#define EXECQ_EXIT_TIMED_OUT	124
#define EXECQ_EXIT_FAIL		125
#define EXECQ_EXIT_INTERRUPTED	130	/* 128 + SIGINT */

#define EXECQ_DEFAULT_QUEUE	"exec"
#define EXECQ_DEFAULT_REPLIES	"replies"
#define EXECQ_SLACK_MS		30000	/* PROCESS: deadline past its wait */
#define EXECQ_NAME_RULE		"[A-Za-z0-9_.:-]{1,128} and not start with '.'"

/*
 * Options after parsing. Strings are borrowed from argv, except command
 * and env. Subcommands with more flags embed this as their first member.
 */
struct execq_opts {
	const char	*redis;		/* --redis, or NULL */
	const char	*queue;		/* --queue, $EXECQ_QUEUE, "exec" */
	const char	*lane;		/* --priority, or "ctl" for PROCESS */
	const char	*id;		/* --id, or NULL: generated */
	const char	*cwd;		/* --cwd, or NULL */
	const char	*tier;		/* --tier, or NULL: the queue's */
	const char	*raw;		/* submit --raw TEXT, or NULL */
	const char	*reply_default;	/* submit --reply-default */
	const char	*reply_to;	/* spawn --reply-to, or NULL */
	int		 submit_only;	/* --raw or --reply-default given */
	int		 background;	/* spawn: a session */
	int		 pty;		/* spawn --pty */
	int		 shell;		/* spawn --shell */
	int		 stream;	/* run: ask for the live output */
	long		 rows, cols;	/* spawn --rows, --cols; 0: not given */
	long		 tail_lines;	/* spawn --tail-lines; -1: not given */
	double		 timeout_s;	/* --timeout; 0 if not given */
	double		 idle_timeout_s; /* spawn --idle-timeout; 0: none */
	int		 keep;		/* spawn --keep */
	double		 wait_s;	/* --wait; 0 if not given */
	long		 retry;		/* --retry: attempts in all; 0: none */
	double		 delay_s;	/* --delay; 0: none */
	struct json_t	*env;		/* --env K=V as an object, or NULL */
	char		*command;	/* the words after options, joined */
	char		*conf_queue;	/* queue from the client config */
};

/* Applies one option to o: 0, or -1 (said) on a bad value. */
typedef int (*execq_opts_set_fn)(struct execq_opts *, const char *cmd,
    int ch, const char *arg);

/* One entry of a live output stream (its field/value array), borrowed. */
typedef void (*execq_live_cb)(const struct redisReply *fields, void *arg);

/* One conversation with Redis: where the item goes, where the answer is. */
struct execq_session {
	struct client		*c;		/* queue/client.h: the
						   connections, the key
						   names */
	struct ssl_ctx_st	*tls;		/* rediss://: c's, else NULL */
	char			*auth_user;	/* the URL's login, for a */
	char			*auth_password;	/* cluster node; or NULL */
	char			*display;	/* Redis URL, no password */
	char			*user;		/* the Redis user, or NULL */
	char			*queue;		/* the worker queue */
	char			*item_key;	/* q:<queue>:<lane> (on a
						   cluster q:{<queue>}:...,
						   queue/client.h) */
	char			*own_key;	/* with a user, its own lane
						   q:<queue>:<user>.<lane>
						   (tried first); else NULL */
	char			*reply;		/* private replies, or NULL */
	char			*answer_key;	/* where answers are read */
	char			*cursor;	/* last entry id read there */
	char			*notice_key;	/* private: q:<reply>:high, where
						   APPROVAL_REQUESTs come */
	char			*notice_cursor;
	char			*live_key;	/* execq:out:<id>, as
						   client_out_key names it;
						   or NULL */
	char			*live_cursor;
	execq_live_cb		 live_cb;	/* each entry read there */
	void			*live_arg;
};

/* An answer: the parsed JSON and the text exactly as received. */
struct execq_answer {
	struct json_t	*root;
	char		*text;
	size_t		 len;
};

/* Which answers are ours. */
struct execq_want {
	const char		*id;		/* NULL: only null ids */
	const char * const	*types;		/* NULL-terminated; NULL: any */
	int			 null_id;	/* "id": null is ours too */
	long long		 run_ms;	/* the wait for one run: an
						   EXEC_SCHEDULED notice adds
						   it and its delay to the
						   deadline (execq_answer_wait
						   sets it) */
};

/* Option values above any short option's character. */
enum execq_optval {
	EXECQ_OPT_TIMEOUT = 256,
	EXECQ_OPT_CWD,
	EXECQ_OPT_ENV,
	EXECQ_OPT_QUEUE,
	EXECQ_OPT_PRIORITY,
	EXECQ_OPT_ID,
	EXECQ_OPT_WAIT,
	EXECQ_OPT_REDIS,
	EXECQ_OPT_RAW,
	EXECQ_OPT_REPLY_DEFAULT,
	EXECQ_OPT_VERSION,
	EXECQ_OPT_PTY,
	EXECQ_OPT_ROWS,
	EXECQ_OPT_COLS,
	EXECQ_OPT_REPLY_TO,
	EXECQ_OPT_IDLE_TIMEOUT,
	EXECQ_OPT_TAIL_LINES,
	EXECQ_OPT_ALL,
	EXECQ_OPT_JSON,
	EXECQ_OPT_LINES,
	EXECQ_OPT_EOF,
	EXECQ_OPT_B64,
	EXECQ_OPT_SIGNAL,
	EXECQ_OPT_COUNT,
	EXECQ_OPT_FROM_START,
	EXECQ_OPT_LOG_DIR,
	EXECQ_OPT_MAX_AGE,
	EXECQ_OPT_DRY_RUN,
	EXECQ_OPT_TIER,
	EXECQ_OPT_PRUNE,
	EXECQ_OPT_ID_FILE,
	EXECQ_OPT_MISSING_OK,
	EXECQ_OPT_QUIET,
	EXECQ_OPT_NO_LIVE,
	EXECQ_OPT_AGENTS,
	EXECQ_OPT_RETRY,
	EXECQ_OPT_DELAY,
	EXECQ_OPT_SHELL,
	EXECQ_OPT_KEEP,
};

/*
 * util.c: messages. Each returns after printing on stderr, the message
 * escaped (logs/display.h: no control, escape or bidi character of a
 * quoted name or answer reaches the terminal); but once stdout failed
 * with EPIPE (its reader gone), the client ends by SIGPIPE instead of
 * saying "stdout: Broken pipe", as execq_write_all does.
 */
void	 execq_error(const char *, ...) __attribute__((format(printf, 1, 2)));
/*
 * From now on execq_error also keeps its message, unescaped, in *where
 * (allocated; after "; " and the one there, if any: the caller frees
 * and clears it); NULL stops.
 * execq mcp hands a model the reason a call failed.
 */
void	 execq_error_keep(char **where);
int	 execq_usage_hint(const char *cmd);		/* returns 2 */
int	 execq_usage_error(const char *cmd, const char *, ...)
	    __attribute__((format(printf, 2, 3)));	/* returns 2 */
/*
 * One line for a person on f: fmt formatted, escaped as a whole
 * (logs/display.h), then \n. For any line that holds a name, a path or
 * an answer's text (a table: execq_print_table).
 */
void	 execq_line(FILE *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
/*
 * Replays an EXEC_RESULT (or a shell's exec answer) on stdout and stderr;
 * returns its exit code (124 timed out, 125 a bad answer). cmd_run.c.
 */
int	 execq_print_result(const struct json_t *);
/* Prints "execq: <code>: <message>" for an ERROR answer; returns 125. */
int	 execq_print_error(const struct json_t *);

/* util.c: small helpers. */
int	 execq_name_valid(const char *);	/* 1 if it keeps NAME_RULE */
/* A new ULID, after "<user>." when s logs in as a user; allocated. */
char	*execq_make_id(const struct execq_session *s);
char	*execq_user_queue(void);		/* "execq.<user>"; allocated */
char	*execq_reply_name(void);	/* a private reply queue; allocated */
int	 execq_parse_seconds(const char *, double *);	/* > 0, or -1 */
int	 execq_parse_long(const char *, long min, long max, long *);
char	*execq_join_command(int argc, char **argv);	/* allocated */
/* fwrite and fflush: 0, -1 (said); EPIPE ends the client by SIGPIPE. */
int	 execq_write_all(FILE *, const void *, size_t);
/*
 * At the end (main.c): flushes stdout; ends the client by SIGPIPE if a
 * write to it found the reader gone, even one its writer did not check.
 */
void	 execq_stdout_done(void);
/* "45s", "3m04s", "2h05m", "3d04h" into buf. */
void	 execq_format_duration(long long ms, char *buf, size_t len);
/*
 * Prints nrows rows of ncols cells (row after row) aligned under the
 * headers; the last column is cut to the terminal's width (else
 * EXECQ_TABLE_LAST columns). Cells are allocated, the caller's to free;
 * each is replaced by its escaped copy (logs/display.h), maybe cut.
 */
#define EXECQ_TABLE_LAST	60
void	 execq_print_table(const char *const *headers, int ncols,
	    char **cells, size_t nrows);

/* opts.c: options, and the EXEC item they make. */
void	 execq_opts_init(struct execq_opts *, const char *redis);
void	 execq_opts_release(struct execq_opts *);
int	 execq_opts_set(struct execq_opts *, const char *cmd, int ch,
	    const char *arg);
/*
 * getopt_long over argv[1..]: --help prints usage and gives 1; the
 * options in longopts go to set (execq_opts_set if NULL). 0 with optind
 * at the first operand, or -1 (said) on a bad option.
 */
int	 execq_opts_getopt(struct execq_opts *, const char *cmd, int argc,
	    char **argv, const char *shortopts, const struct option *,
	    execq_opts_set_fn set, void (*usage)(FILE *));
/* As getopt, then joins the command words and checks: run, submit, spawn. */
int	 execq_opts_parse(struct execq_opts *, const char *cmd, int argc,
	    char **argv, const char *shortopts, const struct option *,
	    execq_opts_set_fn set, void (*usage)(FILE *));
/* The EXEC item as compact JSON, or NULL (said) if not UTF-8. */
char	*execq_item_json(const struct execq_opts *, const char *id,
	    const char *reply);

/* clientconf.c: the client config file and where Redis is. */
struct rurl;
/*
 * key's value in the first client config file that exists (allocated, or
 * NULL), and in *from that file's path (allocated, or NULL).
 */
char	*execq_conf_get(const char *key, char **from);
/*
 * The Redis address: flag, $EXECQ_REDIS_URL, redis_url in the config
 * file, the socket of 'make run' here or above, the default. *from says
 * which (allocated, always set). The user and password: the URL's, or
 * make run's for the role, unless $EXECQ_REDIS_USER, redis_user,
 * $EXECQ_REDIS_PASSWORD, $EXECQ_REDIS_PASSWORD_FILE or
 * redis_password_file say. 0, or -1 with an allocated *cause.
 */
int	 execq_redis_url(const char *flag, struct rurl *, char **from,
	    char **cause);
/*
 * A setting the worker reads too (EXECQ_REDIS_TLS_CA...): $env if set
 * and not empty, else key in the client config file; allocated, or NULL.
 */
char	*execq_conf_setting(const char *env, const char *key);
/* Whose password make run's socket takes: EXECQ_ROLE_* (main.c sets). */
void	 execq_set_role(const char *role);
/*
 * Where sessions call back by default: execq.<login>, and with a Redis
 * user <user>.execq.<login> (an agent's ACL lets it read q:<user>.*).
 */
char	*execq_user_reply(const char *flag);

/* conn.c: the Redis session. */
int	 execq_session_open(struct execq_session *,
	    const struct execq_opts *);		/* 0, or an exit code */
void	 execq_session_close(struct execq_session *);	/* DELs private */
void	 execq_session_private_reply(struct execq_session *);
int	 execq_session_shared_reply(struct execq_session *, const char *);
/*
 * Wraps a reply of queue/client.c (which builds every command): r, or
 * NULL (said, "Redis at URL: WHAT: why") if the connection failed or
 * Redis answered with an error (then freed).
 */
struct redisReply *execq_reply(struct execq_session *, const char *what,
	    struct redisReply *r);
/* The newest entry id of a stream, "0" if empty or missing; NULL (said). */
char	*execq_stream_last_id(struct execq_session *, const char *key);
/* XREAD replies: entries of one stream; an entry's id; a field (or NULL). */
const struct redisReply *execq_xread_entries(const struct redisReply *);
const char *execq_entry_id(const struct redisReply *);
const struct redisReply *execq_entry_field(const struct redisReply *,
	    const char *name);
void	 execq_quiet_sigint(void);	/* Ctrl-C: _exit(130), no message */
/* 1 with *a filled, 0 at the deadline, -1 (said) if Redis failed. */
int	 execq_answer_wait(struct execq_session *, const struct execq_want *,
	    long long wait_ms, struct execq_answer *);
void	 execq_answer_release(struct execq_answer *);
/*
 * Reads what is left of s->live_key after the answer came (every entry
 * went there before it) into s->live_cb: 0, or -1 (said).
 */
int	 execq_live_drain(struct execq_session *);
/*
 * XADDs text as an item: with a user, to its own lane (s->own_key) if a
 * worker reads it (made it), else to s->item_key, the shared lane; the
 * one it went to is s->item_key then. The new entry's id (allocated), or
 * NULL (said).
 */
char	*execq_item_add(struct execq_session *, const char *text);
/* XADDs text as the item and waits for the answer: 0, or an exit code. */
int	 execq_exchange(struct execq_session *, const struct execq_opts *,
	    const char *text, const struct execq_want *,
	    struct execq_answer *);
/*
 * Sends o's EXEC item and waits o->wait_s for an answer of one of types
 * (NULL: any): 0 with *a filled, or an exit code (said). Sessions
 * (o->background) answer on o->reply_to or execq.<user>, else on a new
 * private queue.
 */
int	 execq_exchange_exec(struct execq_session *,
	    const struct execq_opts *, const char * const *types,
	    struct execq_answer *);

/* cmd_sessions.c: the execq:session:<id> hash as JSON, numbers typed. */
struct json_t *execq_session_json(const char *id, const struct redisReply *);
/* HGETALL it: 0 with *out (NULL if there is none), or -1 (said). */
int	 execq_session_get(struct execq_session *, const char *id,
	    struct json_t **out);
/* 1 if a session's status says it is over. */
int	 execq_status_ended(const char *status);

/*
 * tokens.c: the client's token store, $XDG_STATE_HOME/execq/tokens (else
 * ~/.local/state/execq/tokens). Keeps a session's token (from its
 * EXEC_STARTED, or a foreground item's from its EXEC_RESULT), so later
 * PROCESS items on it carry it (execq_process adds it). A failure is said
 * on stderr and is not the caller's: the token is only not kept.
 */
#define EXECQ_TOKENS_KEEP	1000	/* the store's newest lines kept */
/*
 * Adds "<session_id> <token>" as the store's newest line, and keeps the
 * newest EXECQ_TOKENS_KEEP lines only; the store is replaced whole
 * (rename), never left half-written, and two clients saving at once both
 * keep their line.
 */
void	 execq_tokens_save(const char *session_id, const char *token);
/*
 * Every token in the store, newest last (a new JSON array, maybe empty),
 * and in *found the newest of session_id (static), or NULL.
 */
struct json_t *execq_tokens_load(const char *session_id, const char **found);

/*
 * tools.c: the tools an agent's model is given, exec and process
 * (cli/tools.json, built in; docs/TOOLS.md), in each framework's shape:
 * mcp {"tools": [{name, description, inputSchema}]} as MCP's tools/list
 * answers (inputSchema with its "$schema"), openai [{"type": "function",
 * "function": {name, description, parameters}}], anthropic [{name,
 * description, input_schema}]. Each description is one string; the
 * source's "$comment"s (how each field maps onto the item) are left out.
 */
enum execq_tools_format {
	EXECQ_TOOLS_MCP,
	EXECQ_TOOLS_OPENAI,
	EXECQ_TOOLS_ANTHROPIC,
};
/* "mcp", "openai" or "anthropic": 0 with *fmt set, or -1. */
int	 execq_tools_format_parse(const char *, enum execq_tools_format *fmt);
/*
 * cli/tools.json as written, "$comment"s, "item" and "client_actions"
 * included: a new reference, or NULL with an allocated *cause if the
 * built-in text does not parse (a build gone wrong).
 */
struct json_t *execq_tools_source(char **cause);
/* The tools in fmt's shape: a new reference, or NULL and *cause. */
struct json_t *execq_tools_json(enum execq_tools_format, char **cause);
/* The same as indented JSON and a newline, allocated; *len set. */
char	*execq_tools_text(enum execq_tools_format, size_t *len,
	    char **cause);
/* Writes the text on f and flushes: 0, or -1 and an allocated *cause. */
int	 execq_tools_print(FILE *f, enum execq_tools_format, char **cause);

/* cmd_process.c: PROCESS items. */
/* Checks o->queue and opens s on q:<queue>:ctl: 0, or an exit code. */
int	 execq_process_open(struct execq_session *, struct execq_opts *,
	    const char *cmd);
/*
 * Sends {"type": "PROCESS", "args": args} (args borrowed) on s, whose
 * item_key is q:<queue>:ctl; a private reply queue is made on first use.
 * Waits wait_ms + 30 s for the answer. 0 with *a holding a PROCESS_RESULT;
 * else an exit code, said: 125 for an ERROR, no answer or a Redis error.
 */
int	 execq_process(struct execq_session *, struct json_t *args,
	    long long wait_ms, struct execq_answer *);
/* The fields of a PROCESS_RESULT: its "result" object if any, else it. */
struct json_t *execq_process_result(struct json_t *);
/* "SIGTERM" for 15 or "TERM"; buf must hold 32 bytes. */
const char *execq_signal_name(const struct json_t *, char *buf);

/*
 * The subcommands, for main.c: argv[0] is "execq <name>"; each returns an
 * exit code.
 */
/* cmd_run.c */
int	 execq_cmd_run(const char *redis, int argc, char **argv);
int	 execq_cmd_submit(const char *redis, int argc, char **argv);
/* cmd_workers.c */
int	 execq_cmd_cancel(const char *redis, int argc, char **argv);
int	 execq_cmd_exec(const char *redis, int argc, char **argv);
int	 execq_cmd_interrupt(const char *redis, int argc, char **argv);
int	 execq_cmd_dead(const char *redis, int argc, char **argv);
int	 execq_cmd_workers(const char *redis, int argc, char **argv);
/* cmd_queues.c */
int	 execq_cmd_queues(const char *redis, int argc, char **argv);
/* cmd_sessions.c */
int	 execq_cmd_spawn(const char *redis, int argc, char **argv);
int	 execq_cmd_ps(const char *redis, int argc, char **argv);
int	 execq_cmd_callbacks(const char *redis, int argc, char **argv);
/* cmd_logs.c */
int	 execq_cmd_logs(const char *redis, int argc, char **argv);
int	 execq_cmd_cleanup(const char *redis, int argc, char **argv);
/* cmd_process.c */
int	 execq_cmd_send(const char *redis, int argc, char **argv);
int	 execq_cmd_keys(const char *redis, int argc, char **argv);
int	 execq_cmd_kill(const char *redis, int argc, char **argv);
int	 execq_cmd_wait(const char *redis, int argc, char **argv);
/* cmd_policy.c */
int	 execq_cmd_classify(const char *redis, int argc, char **argv);
int	 execq_cmd_approvals(const char *redis, int argc, char **argv);
int	 execq_cmd_approve(const char *redis, int argc, char **argv);
int	 execq_cmd_reject(const char *redis, int argc, char **argv);
/* cmd_tools.c */
int	 execq_cmd_tools(const char *redis, int argc, char **argv);
/* cmd_mcp.c */
int	 execq_cmd_mcp(const char *redis, int argc, char **argv);

#endif
