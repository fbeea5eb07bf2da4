#ifndef EXECQ_TEST_HARNESS_H
#define EXECQ_TEST_HARNESS_H

/*
 * The integration test harness: a synchronous hiredis client on the
 * private server of scripts/with-redis.sh (EXECQ_TEST_REDIS_URL), the real
 * worker binary ($EXECQ_TEST_BUILD/execq-worker) started per test with its
 * own temp dir, workspace, log dir and queue, and a deadline on every wait.
 *
 * Anything that goes wrong inside a helper fails the running test through
 * cmocka's fail_msg() after printing the tail of each worker's stderr, so
 * callers check nothing. Answers are jansson objects the caller decrefs.
 */

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct redisContext;
struct redisReply;

#define HARNESS_WAIT_MS		10000	/* default answer deadline */
#define HARNESS_MAX_WORKERS	4

/* One worker process started by the harness. */
struct harness_worker {
	pid_t	 pid;		/* -1 once reaped */
	char	*consumer;	/* its --consumer name */
	char	*err_path;	/* its stdout and stderr */
	char	*log_path;	/* --log-file, or NULL */
};

/* One test's world; plain data, the test reads the paths and names. */
struct harness {
	struct redisContext	*rc;
	char			*redis_path;	/* the unix socket */
	char			*bin;		/* the worker binary */
	char			*dir;		/* per-test temp dir */
	char			*ws;		/* workspace (a realpath) */
	char			*log_dir;
	char			*state_dir;	/* --state-dir: audit, spool */
	char			*queue;		/* --queue, unique per test */
	char			*reply;		/* this test's reply_to */
	int			 execute;	/* ENABLE_EXECUTE=1 (default) */
	int			 passed;	/* harness_pass() was reached */
	struct harness_worker	 w[HARNESS_MAX_WORKERS];
	unsigned		 nw;
	json_t			*cursors;	/* stream -> last id read */
	json_t			*stash;		/* stream -> answers held */
	json_t			*ids;		/* from harness_id() */
	json_t			*tokens;	/* session id -> its token */
};

/*
 * cmocka setup and teardown. Setup leaves *state NULL when
 * EXECQ_TEST_REDIS_URL is unset (the test then calls skip()). Teardown
 * stops the workers still running (SIGTERM), prints their stderr unless
 * the test passed, and removes the temp dir (kept if EXECQ_TEST_KEEP is
 * set); it fails (-1) when such a worker did not exit 0 or a sanitizer
 * reported anything in any worker's stderr.
 */
int		 harness_setup(void **state);
int		 harness_teardown(void **state);
/*
 * "<queue>-<name>": an item id no other test (or earlier run on the same
 * server) uses. Owned by the harness until teardown.
 */
const char	*harness_id(struct harness *, const char *name);
/* Marks the test as passed (teardown then keeps the worker logs quiet). */
void		 harness_pass(struct harness *);
/* Prints the worker stderr tails and fails the test. */
void		 harness_fail(struct harness *, const char *, ...)
		    __attribute__((format(printf, 2, 3), noreturn));

/*
 * Starts the worker with the harness's flags (--redis, --queue,
 * --workspace, --log-dir, --state-dir, --consumer, -v, and --tier admin
 * --sandbox off so that only the policy tests meet the command policy)
 * followed by the extra flags (a NULL-terminated list; the last of a
 * repeated flag wins) and waits until its consumer reads the queue.
 * env: extra "NAME=value" entries (NULL: none) on top of the test's
 * environment minus ENABLE_EXECUTE and EXECQ_*; ENABLE_EXECUTE=1 is added
 * while h->execute is set. Returns the pid.
 */
pid_t		 harness_worker_start(struct harness *, const char *const *env,
		    ...) __attribute__((sentinel));
/* The same without waiting: for a worker that is not meant to read. */
pid_t		 harness_worker_launch(struct harness *, const char *const *env,
		    ...) __attribute__((sentinel));
/*
 * Every worker the harness starts runs under an outer cgroup v1 pids
 * limit of this test process (4096), so that a confinement that fails
 * can never take the machine down. The pids.max of that group if the
 * process pid is in it, else -1 (no v1 pids controller, or not in it):
 * tests that run hostile commands check it first.
 */
long		 harness_outer_limit(struct harness *, pid_t pid);
/* SIGTERM, then waits up to 10 s (SIGKILL and fail after). Wait status. */
int		 harness_worker_stop(struct harness *, pid_t);
/* SIGKILL and reap. */
void		 harness_worker_kill(struct harness *, pid_t);
/*
 * The process that is the worker: under a holder (hold_sessions, the
 * default; worker/holder.h) the holder's execq-worker child, else pid.
 * What SIGSTOP must reach to freeze it.
 */
pid_t		 harness_worker_proc(struct harness *, pid_t);
/*
 * Waits until holder's worker is a process other than old (-1: any),
 * failing after timeout_ms or if the holder exits; its pid.
 */
pid_t		 harness_wait_worker_proc(struct harness *, pid_t holder,
		    pid_t old, int timeout_ms);
/* The entries on q:<h->reply>:high for session id (its callbacks). */
int		 harness_count_callbacks(struct harness *, const char *id);
/* 1 if the worker has not exited. */
int		 harness_worker_alive(struct harness *, pid_t);

/* A command on the sync client; fails the test on an error reply. */
struct redisReply *harness_cmd(struct harness *, const char *, ...);
/* Kills the test's redis-server with SIGKILL and waits until it is gone. */
void		 harness_redis_kill(struct harness *);
/*
 * Starts it again from its config with an extra "--opt val" (both may be
 * NULL), reconnects and waits until it has loaded its data.
 */
void		 harness_redis_start(struct harness *, const char *opt,
		    const char *val);
/* Drops the sync connection and connects again (after a Redis restart). */
void		 harness_reconnect(struct harness *);
/* XADD q:<queue>:<lane> * field body. */
void		 harness_xadd(struct harness *, const char *lane,
		    const char *field, const void *body, size_t len);
/* XADD of an item's JSON text. */
void		 harness_submit_json(struct harness *, const char *lane,
		    const char *json);
/*
 * XADD of an EXEC item replying to h->reply; args_extra (JSON object text
 * or NULL) is merged into args, e.g. "{\"timeout_s\": 1}".
 */
void		 harness_submit(struct harness *, const char *lane,
		    const char *id, const char *command,
		    const char *args_extra);
/*
 * The first answer on q:<reply_to>:normal (reply_to NULL: h->reply) whose
 * id is id (NULL: any answer, "id": null included) that no earlier call
 * returned. Fails the test after timeout_ms. Answers read while looking
 * for another id are kept for later calls.
 */
json_t		*harness_wait_answer(struct harness *, const char *reply_to,
		    const char *id, int timeout_ms);
/*
 * Like harness_wait_answer, on any stream named by its whole key (such as
 * "q:<reply>:high"): the first entry whose id is id (NULL: any) that no
 * earlier call returned, or NULL once timeout_ms have passed (the stream
 * is read at least once, so 0 means "is it there now"). Never fails.
 */
json_t		*harness_try_entry(struct harness *, const char *stream,
		    const char *id, int timeout_ms);
/* The same, failing the test at the deadline. */
json_t		*harness_wait_entry(struct harness *, const char *stream,
		    const char *id, int timeout_ms);
/*
 * The same, for an entry whose "type" is type; NULL: any but an
 * EXEC_WAITING (harness_try_entry, harness_wait_entry and
 * harness_wait_answer never return one).
 */
json_t		*harness_try_typed(struct harness *, const char *stream,
		    const char *id, const char *type, int timeout_ms);
/*
 * The EXEC_CALLBACK of session id on q:<h->reply>:high (other entries of
 * the id, such as an EXEC_WAITING, stay for later calls); fails after.
 */
json_t		*harness_wait_callback(struct harness *, const char *id,
		    int timeout_ms);
/*
 * XADDs a PROCESS item with args (JSON object text), a fresh id and
 * reply_to h->reply to q:<queue>:ctl. Returns the id (the harness's until
 * teardown).
 */
const char	*harness_submit_process(struct harness *, const char *args);
/* The same, then waits for its answer on q:<h->reply>:normal. */
json_t		*harness_process(struct harness *, const char *args,
		    int timeout_ms);
/*
 * A shell session (args.shell) id, its first command setup, started and
 * its EXEC_STARTED waited for (fails on anything else).
 */
void		 harness_shell_start(struct harness *, const char *id,
		    const char *setup);
/* PROCESS exec of command in shell session sid (timeout_ms 0: the
   default), and its answer. */
json_t		*harness_shell_exec(struct harness *, const char *sid,
		    const char *command, long timeout_ms);
/* Every entry of q:<reply_to>:normal, oldest first, as a JSON array. */
json_t		*harness_all_answers(struct harness *, const char *reply_to);
/* Entries of stream (a whole key) whose "item" field contains needle. */
int		 harness_count_entries(struct harness *, const char *stream,
		    const char *needle);
/* XPENDING count of q:<queue>:<lane> in the group "execq". */
long long	 harness_pending(struct harness *, const char *lane);

/* A member by dotted path ("error.code"), or NULL. Borrowed. */
json_t		*harness_jget(json_t *, const char *path);
/* Its string value, or NULL. */
const char	*harness_jstr(json_t *, const char *path);
/* Its integer value, or INT64_MIN. */
int64_t		 harness_jint(json_t *, const char *path);
/* 1 true, 0 false, -1 missing or not a boolean. */
int		 harness_jbool(json_t *, const char *path);

/* Processes whose command line (args joined by spaces) contains s. */
int		 harness_count_procs(const char *s);
/* Sends sig to those processes; how many. */
int		 harness_kill_procs(const char *s, int sig);
/* Waits until none is left; the number left at the deadline. */
int		 harness_wait_procs_gone(const char *s, int timeout_ms);
/* 0 once path exists, -1 at the deadline. */
int		 harness_wait_file(const char *path, int timeout_ms);
/*
 * An HTTP server on 127.0.0.1 (the kernel's port, in *port) on base that
 * answers every request "hello from the test host <uri>\n": a stand-in
 * for the internet. NULL if it cannot listen.
 */
struct event_base;
struct evhttp;
struct evhttp	*harness_http_bind(struct event_base *base, int *port);
/* A TCP port on 127.0.0.1 nobody listens on now (the kernel's pick). */
int		 harness_free_port(void);
/*
 * Makes in dir, with the openssl command: ca.crt/.key (the test CA),
 * other.crt/.key (another CA), srv.crt/.key (CN localhost, SAN localhost
 * and 127.0.0.1) and cli.crt/.key (a client), signed by the test CA.
 * 0, or -1 with openssl's words on stderr.
 */
int		 harness_tls_certs(const char *dir);
/*
 * Lines in the workspace's file name (0 if there is none): a marker a
 * command appends to counts its runs. The wait fails the test when the
 * file has fewer than n lines at the deadline.
 */
int		 harness_ws_lines(struct harness *, const char *name);
void		 harness_wait_ws_lines(struct harness *, const char *name,
		    int n, int timeout_ms);
/* The whole file, NUL-terminated (*len without it); NULL if unreadable. */
char		*harness_read_file(const char *path, size_t *len);
/* Writes text to path (created or truncated): 0, or -1 and errno. */
int		 harness_write_file(const char *path, const char *text);
/* argv (argv[0] looked up in PATH) with a deadline; its wait status. */
int		 harness_run(struct harness *, const char *const *argv,
		    int timeout_ms);
/* What harness_capture saw of one program run. */
struct harness_proc {
	char	*out;		/* its stdout, NUL-terminated */
	size_t	 out_len;
	char	*err;		/* its stderr, NUL-terminated */
	size_t	 err_len;
	int	 status;	/* its wait status */
	int64_t	 ms;		/* from fork to reaped */
};

/*
 * Runs argv (argv[0] looked up in PATH) in a process group of its own,
 * with envp as its whole environment (NULL: ours) and stdin from
 * /dev/null, until it has exited and closed stdout and stderr. Fills *p
 * (release it with harness_proc_release). After timeout_ms the group gets
 * SIGKILL and the test fails, showing what the program printed.
 */
void		 harness_capture(struct harness *, const char *const *argv,
		    const char *const *envp, int timeout_ms,
		    struct harness_proc *);
/*
 * Runs the client ($EXECQ_TEST_BUILD/execq, else build/execq) with args
 * (NULL-terminated, after the binary; at most HARNESS_CLI_MAX_ARGS) on
 * url (NULL: the test's Redis), with our environment minus EXECQ_* and
 * ENABLE_EXECUTE, and fills *p as harness_capture does.
 */
#define HARNESS_CLI_MAX_ARGS	32
/* The client binary's path (static; fails the test if not executable). */
const char	*harness_cli_path(struct harness *);
void		 harness_cli(struct harness *, struct harness_proc *p,
		    const char *url, int timeout_ms, const char *const *args);
/*
 * Runs sh -c script with the client's environment, plus CLI (the client
 * binary's path), WS (the workspace) and EXECQ_QUEUE (the test's queue),
 * and fills *p.
 */
void		 harness_cli_sh(struct harness *, struct harness_proc *p,
		    int timeout_ms, const char *script);
/* Frees the captured output; p may be zeroed or released already. */
void		 harness_proc_release(struct harness_proc *);
/* Its exit code, 128 + n if signal n killed it. */
int		 harness_proc_exit(const struct harness_proc *);
/* Monotonic milliseconds. */
int64_t		 harness_now_ms(void);
/* Sleeps ms milliseconds. */
void		 harness_sleep_ms(int ms);

/* The fixture, or skip() when scripts/with-redis.sh did not run. */
struct harness	*harness_fixture(void **state);
/* The metadata file <log_dir>/<id>.json, parsed (fails if missing). */
json_t		*harness_load_meta(struct harness *, const char *id);
/* Stops the worker with SIGTERM and fails unless it exits 0. */
void		 harness_stop_clean(struct harness *, pid_t);
/* Waits (5 s at most) until a process whose cmdline holds s runs. */
void		 harness_wait_running(struct harness *, const char *s);

#endif
