/*
 * The command-line client, execq, as a user runs it: the real binary
 * ($EXECQ_TEST_BUILD/execq) in a child process, with EXECQ_REDIS_URL set
 * to the test's private Redis and --queue set to the test's queue, its
 * stdout, stderr and exit status captured under a deadline
 * (harness_capture). Each test that needs a worker starts its own
 * (tests/integration/harness.h); the ones about usage, help, a missing
 * Redis or a missing worker, and cleanup start none. What is checked is
 * what README.md ("A first session", "Sessions", "Exit codes") and
 * 'execq <cmd> --help' promise. Sleeps are named "sleep <n>.<our pid>"
 * so the /proc scans see only this run's.
 */

#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>
#include <jansson.h>

#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "logs/xmalloc.h"
#include "tests/integration/harness.h"

#define CLI_MS		10000	/* deadline of one client run */
#define POLL_MS		10000	/* output to show up in 'execq logs' */
#define NO_REDIS	"unix:///nonexistent/sock"

extern char **environ;

/* "sleep <n>.<our pid, 7 digits>" words, static, two at a time. */
static const char *
sleep_arg(int n)
{
	static char	buf[2][32];
	static int	next;
	char		*s = buf[next++ % 2];

	snprintf(s, sizeof buf[0], "%d.%07ld", n, (long)getpid());
	return (s);
}

/* The harness teardown, then whatever a failed test left of its sleeps. */
static int
cli_teardown(void **state)
{
	char	mine[16];
	int	rc;

	rc = harness_teardown(state);
	snprintf(mine, sizeof mine, ".%07ld", (long)getpid());
	harness_kill_procs(mine, SIGKILL);
	return (rc);
}

/*
 * execq SUB --queue <the test's queue> ARG...: the usual call, on the
 * test's Redis, with the usual deadline.
 */
static void
cli(struct harness *h, struct harness_proc *p, const char *sub, ...)
    __attribute__((sentinel));
static void
cli(struct harness *h, struct harness_proc *p, const char *sub, ...)
{
	const char	*args[HARNESS_CLI_MAX_ARGS + 1], *s;
	va_list		 ap;
	size_t		 n = 0;

	args[n++] = sub;
	args[n++] = "--queue";
	args[n++] = h->queue;
	va_start(ap, sub);
	while ((s = va_arg(ap, const char *)) != NULL) {
		if (n == HARNESS_CLI_MAX_ARGS)
			harness_fail(h, "too many client arguments");
		args[n++] = s;
	}
	va_end(ap);
	args[n] = NULL;
	harness_cli(h, p, NULL, CLI_MS, args);
}

/* Fails the test showing what the client printed and how it ended. */
static void __attribute__((noreturn))
proc_fail(struct harness *h, const struct harness_proc *p, const char *why)
{
	harness_fail(h, "%s; the client exited %d after %lld ms; stdout: "
	    "\"%.300s\"; stderr: \"%.300s\"", why, harness_proc_exit(p),
	    (long long)p->ms, p->out, p->err);
}

/* Asserts the exit code. */
static void
expect_exit(struct harness *h, const struct harness_proc *p, int code)
{
	char	why[64];

	if (harness_proc_exit(p) == code)
		return;
	snprintf(why, sizeof why, "exit code %d expected", code);
	proc_fail(h, p, why);
}

/* Asserts stdout is exactly want. */
static void
expect_out(struct harness *h, const struct harness_proc *p, const char *want)
{
	char	why[256];

	if (p->out_len == strlen(want) && strcmp(p->out, want) == 0)
		return;
	snprintf(why, sizeof why, "stdout should be \"%.200s\"", want);
	proc_fail(h, p, why);
}

/* Asserts stderr is exactly want. */
static void
expect_err(struct harness *h, const struct harness_proc *p, const char *want)
{
	char	why[256];

	if (p->err_len == strlen(want) && strcmp(p->err, want) == 0)
		return;
	snprintf(why, sizeof why, "stderr should be \"%.200s\"", want);
	proc_fail(h, p, why);
}

/* Asserts stderr holds needle. */
static void
expect_err_has(struct harness *h, const struct harness_proc *p,
    const char *needle)
{
	char	why[256];

	if (strstr(p->err, needle) != NULL)
		return;
	snprintf(why, sizeof why, "stderr should say \"%.200s\"", needle);
	proc_fail(h, p, why);
}

/*
 * Asserts the run waited at least min_ms (it did wait for the timer, or
 * followed the output live). No upper bound: a loaded machine is slow,
 * not wrong; a run that hangs fails on the harness's own deadline.
 */
static void
expect_waited_ms(struct harness *h, const struct harness_proc *p,
    int64_t min_ms)
{
	char	why[128];

	if (p->ms >= min_ms)
		return;
	snprintf(why, sizeof why, "it should wait at least %lld ms",
	    (long long)min_ms);
	proc_fail(h, p, why);
}

/* stdout as exactly one line of JSON (an object); the caller decrefs. */
static json_t *
one_json_line(struct harness *h, const struct harness_proc *p)
{
	json_error_t	 jerr;
	json_t		*j;
	char		 why[256];

	if (p->out_len == 0 || p->out[p->out_len - 1] != '\n' ||
	    strchr(p->out, '\n') != p->out + p->out_len - 1)
		proc_fail(h, p, "stdout should be one line");
	if ((j = json_loads(p->out, 0, &jerr)) == NULL ||
	    !json_is_object(j)) {
		snprintf(why, sizeof why, "stdout is not a JSON object: %s",
		    jerr.text);
		proc_fail(h, p, why);
	}
	return (j);
}

/* Asserts a string member of j, showing j when it differs. */
static void
expect_str(struct harness *h, json_t *j, const char *path, const char *want)
{
	const char	*got = harness_jstr(j, path);
	char		*text;
	char		 shown[600];

	if (got != NULL && strcmp(got, want) == 0)
		return;
	text = json_dumps(j, JSON_COMPACT);
	snprintf(shown, sizeof shown, "%s", text != NULL ? text : "?");
	free(text);
	harness_fail(h, "%s is \"%s\", expected \"%s\"; JSON: %s", path,
	    got != NULL ? got : "<missing>", want, shown);
}

/*
 * execq spawn [ARG...] -- CMD...: asserts that it exits 0 printing only
 * the session id on a line; returns the id (allocated).
 */
static char *
spawn(struct harness *h, const char *const *args)
{
	struct harness_proc	 p;
	const char		*argv[HARNESS_CLI_MAX_ARGS + 1];
	char			*id;
	size_t			 n = 0, i;

	argv[n++] = "spawn";
	argv[n++] = "--queue";
	argv[n++] = h->queue;
	for (i = 0; args[i] != NULL && n < HARNESS_CLI_MAX_ARGS; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	harness_cli(h, &p, NULL, CLI_MS, argv);
	expect_exit(h, &p, 0);
	expect_err(h, &p, "");
	if (p.out_len < 2 || p.out[p.out_len - 1] != '\n' ||
	    strspn(p.out, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789_.:-") != p.out_len - 1)
		proc_fail(h, &p, "stdout should be a session id alone on "
		    "a line");
	id = xstrndup(p.out, p.out_len - 1);
	harness_proc_release(&p);
	return (id);
}

/* Runs 'execq logs ID' until its output holds needle; fails after. */
static void
logs_until(struct harness *h, const char *id, const char *needle)
{
	struct harness_proc	p;
	int64_t			deadline = harness_now_ms() + POLL_MS;
	char			why[256];

	for (;;) {
		cli(h, &p, "logs", id, NULL);
		expect_exit(h, &p, 0);
		if (strstr(p.out, needle) != NULL)
			break;
		if (harness_now_ms() > deadline) {
			snprintf(why, sizeof why, "no \"%s\" in 'execq logs "
			    "%s' within %d ms", needle, id, POLL_MS);
			proc_fail(h, &p, why);
		}
		harness_proc_release(&p);
		harness_sleep_ms(50);
	}
	harness_proc_release(&p);
}

/* A PROCESS subcommand (send, keys, kill) that must exit 0 silently. */
static void
quiet_ok(struct harness *h, const char *sub, ...) __attribute__((sentinel));
static void
quiet_ok(struct harness *h, const char *sub, ...)
{
	struct harness_proc	 p;
	const char		*args[HARNESS_CLI_MAX_ARGS + 1], *s;
	va_list			 ap;
	size_t			 n = 0;

	args[n++] = sub;
	args[n++] = "--queue";
	args[n++] = h->queue;
	va_start(ap, sub);
	while ((s = va_arg(ap, const char *)) != NULL && n < HARNESS_CLI_MAX_ARGS)
		args[n++] = s;
	va_end(ap);
	args[n] = NULL;
	harness_cli(h, &p, NULL, CLI_MS, args);
	expect_exit(h, &p, 0);
	expect_out(h, &p, "");
	expect_err(h, &p, "");
	harness_proc_release(&p);
}

/* 'execq wait ID --timeout 10': exit 0 and its JSON line, checked. */
static json_t *
wait_session(struct harness *h, const char *id, const char *status)
{
	struct harness_proc	 p;
	json_t			*j;

	cli(h, &p, "wait", id, "--timeout", "10", NULL);
	expect_exit(h, &p, 0);
	j = one_json_line(h, &p);
	expect_str(h, j, "session_id", id);
	expect_str(h, j, "status", status);
	harness_proc_release(&p);
	return (j);
}

/* Writes path with text, its mtime hours in the past (0: now). */
static void
make_file(struct harness *h, const char *path, const char *text, int hours)
{
	struct timespec	ts[2];
	int		fd;

	fd = open(path, O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC, 0644);
	if (fd == -1 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		harness_fail(h, "%s: %s", path, strerror(errno));
	close(fd);
	if (hours == 0)
		return;
	clock_gettime(CLOCK_REALTIME, &ts[0]);
	ts[0].tv_sec -= (time_t)hours * 3600;
	ts[1] = ts[0];
	if (utimensat(AT_FDCWD, path, ts, 0) == -1)
		harness_fail(h, "utimensat %s: %s", path, strerror(errno));
}

/* run replays the command's stdout, nothing else, and exits 0. */
static void
test_cli_run_prints_stdout(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct harness_proc	 p;

	harness_worker_start(h, NULL, NULL);
	cli(h, &p, "run", "--", "echo", "hello", NULL);
	expect_exit(h, &p, 0);
	expect_out(h, &p, "hello\n");
	expect_err(h, &p, "");
	harness_proc_release(&p);
	harness_pass(h);
}

/*
 * run shows output as the command writes it: the reader of run's stdout
 * gets the first line while the command still waits, and only that line
 * lets the command end (it waits for the file the reader makes). Without
 * live output this would hang until the command's timeout: exit 124.
 */
static void
test_cli_run_output_is_live(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct harness_proc	 p;

	harness_worker_start(h, NULL, NULL);
	harness_cli_sh(h, &p, 60000, "\"$CLI\" run --timeout 20 -- sh -c "
	    "'echo first; echo err1 >&2; while [ ! -e go ]; do sleep 0.05; "
	    "done; echo second; exit 7' | { read -r line; "
	    "echo \"got $line\"; touch \"$WS/go\"; cat; }; "
	    "echo \"rc ${?}\"");
	expect_exit(h, &p, 0);
	expect_out(h, &p, "got first\nsecond\nrc 0\n");
	if (strstr(p.err, "err1\n") == NULL)
		proc_fail(h, &p, "stderr should have err1");
	harness_proc_release(&p);
	/* The exit status is run's own; the pipe above hid it. */
	cli(h, &p, "run", "--", "sh", "-c", "echo a; echo b >&2; exit 7", NULL);
	expect_exit(h, &p, 7);
	expect_out(h, &p, "a\n");
	expect_err(h, &p, "b\n");
	harness_proc_release(&p);
	harness_pass(h);
}

/* run -v says the id and the log path; --id-file writes the id. */
static void
test_cli_run_shows_id_and_log(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct harness_proc	 p;
	char			*idf, *text, *want;

	harness_worker_start(h, NULL, NULL);
	xasprintf(&idf, "%s/run.id", h->dir);
	cli(h, &p, "run", "-v", "--id-file", idf, "--id",
	    harness_id(h, "shown"), "--", "echo", "hi", NULL);
	expect_exit(h, &p, 0);
	expect_out(h, &p, "hi\n");
	xasprintf(&want, "execq: item %s: log %s/%s.log\n",
	    harness_id(h, "shown"), h->log_dir, harness_id(h, "shown"));
	if (strstr(p.err, want) == NULL)
		harness_fail(h, "stderr should have: %s; it has: %s", want,
		    p.err);
	harness_proc_release(&p);
	text = harness_read_file(idf, NULL);
	assert_non_null(text);
	free(want);
	xasprintf(&want, "%s\n", harness_id(h, "shown"));
	assert_string_equal(text, want);
	free(text);
	free(want);
	free(idf);
	harness_pass(h);
}

/* run replays stderr on stderr and exits with the command's status. */
static void
test_cli_run_replays_stderr_and_status(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct harness_proc	 p;

	harness_worker_start(h, NULL, NULL);
	cli(h, &p, "run", "--", "sh", "-c", "echo oops >&2; exit 3", NULL);
	expect_exit(h, &p, 3);
	expect_out(h, &p, "");
	expect_err(h, &p, "oops\n");
	harness_proc_release(&p);
	harness_pass(h);
}

/* run --timeout: 124 soon after the timeout, said, and the tree gone. */
static void
test_cli_run_timeout_exits_124(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct harness_proc	 p;
	char			 procs[48];
	const char		*secs = sleep_arg(60);

	snprintf(procs, sizeof procs, "sleep %s", secs);
	harness_worker_start(h, NULL, "--kill-grace", "1", NULL);
	cli(h, &p, "run", "--timeout", "1", "--", "sleep", secs, NULL);
	expect_exit(h, &p, 124);
	expect_waited_ms(h, &p, 900);
	expect_out(h, &p, "");
	expect_err_has(h, &p, "timed out");
	if (harness_wait_procs_gone(procs, 30000) != 0)
		proc_fail(h, &p, "the sleep outlived the timeout");
	harness_proc_release(&p);
	harness_pass(h);
}

/* --cwd is relative to the workspace; --env reaches the command. */
static void
test_cli_run_cwd_and_env(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct harness_proc	 p;
	char			*sub, *dir, *real, *want;

	xasprintf(&sub, "%s/sub", h->ws);
	xasprintf(&dir, "%s/sub/dir", h->ws);
	if (mkdir(sub, 0755) == -1 || mkdir(dir, 0755) == -1 ||
	    (real = realpath(dir, NULL)) == NULL)
		harness_fail(h, "%s: %s", dir, strerror(errno));
	xasprintf(&want, "%s\nV\n", real);
	harness_worker_start(h, NULL, NULL);
	cli(h, &p, "run", "--cwd", "sub/dir", "--env", "K=V", "--", "sh", "-c",
	    "pwd; echo $K", NULL);
	expect_exit(h, &p, 0);
	expect_out(h, &p, want);
	expect_err(h, &p, "");
	harness_proc_release(&p);
	free(want);
	free(real);
	free(dir);
	free(sub);
	harness_pass(h);
}

/* One word is a shell command as is: pipes work. */
static void
test_cli_run_one_word_is_shell(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct harness_proc	 p;

	harness_worker_start(h, NULL, NULL);
	cli(h, &p, "run", "echo a | tr a b", NULL);
	expect_exit(h, &p, 0);
	expect_out(h, &p, "b\n");
	expect_err(h, &p, "");
	harness_proc_release(&p);
	harness_pass(h);
}

/* Several words are quoted: spaces and quotes arrive as the argv. */
static void
test_cli_run_quotes_words(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct harness_proc	 p;

	harness_worker_start(h, NULL, NULL);
	cli(h, &p, "run", "--", "printf", "%s|", "a b", "c'd", NULL);
	expect_exit(h, &p, 0);
	expect_out(h, &p, "a b|c'd|");
	expect_err(h, &p, "");
	harness_proc_release(&p);
	harness_pass(h);
}

/* submit --raw: the ERROR answer as one line of JSON, and exit 0. */
static void
test_cli_submit_raw_bad_json(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct harness_proc	 p;
	json_t			*j;

	harness_worker_start(h, NULL, NULL);
	cli(h, &p, "submit", "--raw", "{not json", NULL);
	expect_exit(h, &p, 0);
	expect_err(h, &p, "");
	j = one_json_line(h, &p);
	expect_str(h, j, "type", "ERROR");
	expect_str(h, j, "error.code", "bad_json");
	if (!json_is_null(json_object_get(j, "id")))
		proc_fail(h, &p, "the id of an unreadable item should be null");
	json_decref(j);
	harness_proc_release(&p);
	harness_pass(h);
}

/* An ERROR answer to run: "execq: <code>: <message>" and 125. */
static void
test_cli_run_error_answer_exits_125(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct harness_proc	 p;
	const char		*prefix = "execq: cwd_outside_workspace: ";

	harness_worker_start(h, NULL, NULL);
	cli(h, &p, "run", "--cwd", "../..", "--", "ls", NULL);
	expect_exit(h, &p, 125);
	expect_out(h, &p, "");
	if (strncmp(p.err, prefix, strlen(prefix)) != 0 ||
	    p.err_len <= strlen(prefix) + 1 || p.err[p.err_len - 1] != '\n')
		proc_fail(h, &p, "stderr should be \"execq: "
		    "cwd_outside_workspace: <message>\"");
	harness_proc_release(&p);
	harness_pass(h);
}

/* No Redis: 125 at once, and the message names Redis. */
static void
test_cli_run_no_redis_exits_125(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct harness_proc	 p;
	const char		*args[] = { "run", "--queue", h->queue, "--",
				    "true", NULL };

	harness_cli(h, &p, NO_REDIS, 5000, args);
	expect_exit(h, &p, 125);
	expect_out(h, &p, "");
	expect_err_has(h, &p, "Redis");
	harness_proc_release(&p);
	harness_pass(h);
}

/* No worker: 125 once --wait passed, saying so; the item stays queued. */
static void
test_cli_run_no_worker_exits_125(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct harness_proc	 p;
	redisReply		*r;

	cli(h, &p, "run", "--wait", "1", "--", "true", NULL);
	expect_exit(h, &p, 125);
	expect_waited_ms(h, &p, 900);
	expect_out(h, &p, "");
	expect_err_has(h, &p, "no answer");
	r = harness_cmd(h, "XLEN q:%s:normal", h->queue);
	if (r->type != REDIS_REPLY_INTEGER || r->integer != 1)
		proc_fail(h, &p, "the item should stay on the queue");
	freeReplyObject(r);
	harness_proc_release(&p);
	harness_pass(h);
}

/* Usage errors exit 2, say why and point at --help. */
static void
test_cli_usage_errors_exit_2(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct harness_proc	 p;
	const char		*bogus[] = { "bogus", NULL };
	const char		*no_cmd[] = { "run", "--queue", h->queue,
				    NULL };
	const char		*bad_env[] = { "run", "--queue", h->queue,
				    "--env", "KV", "--", "true", NULL };
	const char *const	*cases[] = { bogus, no_cmd, bad_env };
	size_t			 i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		harness_cli(h, &p, NULL, CLI_MS, cases[i]);
		expect_exit(h, &p, 2);
		expect_out(h, &p, "");
		expect_err_has(h, &p, "execq: ");
		expect_err_has(h, &p, "--help");
		harness_proc_release(&p);
	}
	harness_pass(h);
}

/*
 * A session on a pipe, end to end: spawn prints the id, send writes,
 * logs shows it, send --eof ends cat, wait prints how it ended, and
 * callbacks finds its one EXEC_CALLBACK on the reply queue.
 */
static void
test_cli_session_on_pipe(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct harness_proc	 p;
	const char		*spawn_args[] = { "--reply-to", h->reply, "--",
				    "cat", NULL };
	const char		*cb_args[] = { "callbacks", "--queue", h->reply,
				    "--count", "1", "--from-start", "--timeout",
				    "5", NULL };
	json_t			*j;
	char			*id;

	harness_worker_start(h, NULL, NULL);
	id = spawn(h, spawn_args);
	quiet_ok(h, "send", id, "hi\n", NULL);
	logs_until(h, id, "hi");
	cli(h, &p, "logs", id, NULL);
	expect_exit(h, &p, 0);
	expect_out(h, &p, "hi\n");
	harness_proc_release(&p);
	quiet_ok(h, "send", "--eof", id, NULL);
	j = wait_session(h, id, "completed");
	if (harness_jint(j, "exit_code") != 0)
		harness_fail(h, "wait: exit_code should be 0");
	json_decref(j);

	harness_cli(h, &p, NULL, CLI_MS, cb_args);
	expect_exit(h, &p, 0);
	expect_err(h, &p, "");
	j = one_json_line(h, &p);
	expect_str(h, j, "type", "EXEC_CALLBACK");
	expect_str(h, j, "session_id", id);
	expect_str(h, j, "status", "completed");
	json_decref(j);
	harness_proc_release(&p);
	free(id);
	harness_pass(h);
}

/* The README's Python REPL on a PTY: keys, logs, kill, wait. */
static void
test_cli_session_python_on_pty(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*probe[] = { "python3", "-c", "pass", NULL };
	const char	*spawn_args[] = { "--pty", "--", "python3", "-q",
			    NULL };
	json_t		*j;
	char		*id;

	if (harness_run(h, probe, 10000) != 0)
		skip();
	harness_worker_start(h, NULL, NULL);
	id = spawn(h, spawn_args);
	quiet_ok(h, "keys", id, "6*7", "Enter", NULL);
	logs_until(h, id, "42");
	quiet_ok(h, "kill", id, NULL);
	j = wait_session(h, id, "killed");
	expect_str(h, j, "killed_by", "user");
	json_decref(j);
	free(id);
	harness_pass(h);
}

/* ps shows a running session, as a table and as JSON lines. */
static void
test_cli_ps_lists_running(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct harness_proc	 p;
	const char		*spawn_args[] = { "--", "sleep",
				    sleep_arg(31), NULL };
	json_t			*j;
	char			*id, *line, *save = NULL;
	int			 found = 0;

	harness_worker_start(h, NULL, NULL);
	id = spawn(h, spawn_args);
	cli(h, &p, "ps", NULL);
	expect_exit(h, &p, 0);
	expect_err(h, &p, "");
	if (strncmp(p.out, "SESSION", 7) != 0)
		proc_fail(h, &p, "ps should start with its header");
	for (line = strtok_r(p.out, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if (strstr(line, id) != NULL && strstr(line, "running") != NULL)
			found = 1;
	}
	if (!found)
		harness_fail(h, "ps: no running line for %s", id);
	harness_proc_release(&p);

	cli(h, &p, "ps", "--json", NULL);
	expect_exit(h, &p, 0);
	expect_err(h, &p, "");
	found = 0;
	for (line = strtok_r(p.out, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if ((j = json_loads(line, 0, NULL)) == NULL)
			harness_fail(h, "ps --json: not JSON: %.300s", line);
		if (strcmp(harness_jstr(j, "session_id") != NULL ?
		    harness_jstr(j, "session_id") : "", id) == 0) {
			expect_str(h, j, "status", "running");
			found = 1;
		}
		json_decref(j);
	}
	if (!found)
		harness_fail(h, "ps --json: no line for %s", id);
	harness_proc_release(&p);
	quiet_ok(h, "kill", id, NULL);
	json_decref(wait_session(h, id, "killed"));
	free(id);
	harness_pass(h);
}

/* logs -f prints the output as it comes and ends with the session. */
static void
test_cli_logs_follow_until_end(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct harness_proc	 p;
	const char		*spawn_args[] = { "--", "sh", "-c",
				    "echo l1; sleep 0.4; echo l2; sleep 0.4; "
				    "echo l3", NULL };
	char			*id, *end;

	harness_worker_start(h, NULL, NULL);
	id = spawn(h, spawn_args);
	cli(h, &p, "logs", "-f", id, NULL);
	expect_exit(h, &p, 0);
	expect_out(h, &p, "l1\nl2\nl3\n");
	xasprintf(&end, "execq: session %s completed, exit 0\n", id);
	expect_err(h, &p, end);
	/* It followed the session live rather than print a finished log. */
	expect_waited_ms(h, &p, 400);
	harness_proc_release(&p);
	free(end);
	free(id);
	harness_pass(h);
}

/* kill of a session nobody has: unknown_session and 125. */
static void
test_cli_kill_unknown_session(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct harness_proc	 p;

	harness_worker_start(h, NULL, NULL);
	cli(h, &p, "kill", "nope-xyz", NULL);
	expect_exit(h, &p, 125);
	expect_out(h, &p, "");
	expect_err_has(h, &p, "unknown_session");
	harness_proc_release(&p);
	harness_pass(h);
}

/* A log dir that is not there is an error (a cron typo), unless asked. */
static void
test_cli_cleanup_missing_dir(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct harness_proc	 p;
	char			*dir;
	const char		*strict[] = { "cleanup", "--log-dir", NULL, NULL };
	const char		*lax[] = { "cleanup", "--log-dir", NULL,
				    "--missing-ok", NULL };

	xasprintf(&dir, "%s/no-such-dir", h->dir);
	strict[2] = lax[2] = dir;
	harness_cli(h, &p, NO_REDIS, CLI_MS, strict);
	expect_exit(h, &p, 2);
	if (strstr(p.err, "does not exist") == NULL)
		proc_fail(h, &p, "stderr should say the dir does not exist");
	harness_proc_release(&p);
	harness_cli(h, &p, NO_REDIS, CLI_MS, lax);
	expect_exit(h, &p, 0);
	harness_proc_release(&p);
	free(dir);
	harness_pass(h);
}

/*
 * Without --redis or EXECQ_REDIS_URL the client reads redis_url from its
 * config file, else finds the socket of 'make run' in a parent of its
 * directory; when it cannot reach Redis it says what it tried.
 */
static void
test_cli_finds_redis(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct harness_proc	 p;
	char			*script, *conf, *text;

	harness_worker_start(h, NULL, NULL);
	/* The config file. */
	xasprintf(&conf, "%s/xdg/execq", h->dir);
	xasprintf(&script, "mkdir -p %s/xdg/execq", h->dir);
	harness_cli_sh(h, &p, CLI_MS, script);
	harness_proc_release(&p);
	free(script);
	xasprintf(&text, "# written by the test\n  redis_url =  unix://%s  "
	    "# the test's\n", h->redis_path);
	free(conf);
	xasprintf(&conf, "%s/xdg/execq/config", h->dir);
	assert_int_equal(harness_write_file(conf, text), 0);
	free(text);
	xasprintf(&script, "unset EXECQ_REDIS_URL; cd \"$WS\" && "
	    "XDG_CONFIG_HOME=%s/xdg \"$CLI\" run -- echo via-config",
	    h->dir);
	harness_cli_sh(h, &p, CLI_MS, script);
	expect_exit(h, &p, 0);
	expect_out(h, &p, "via-config\n");
	harness_proc_release(&p);
	free(script);
	/* A config naming a dead address: the message names the file. */
	assert_int_equal(harness_write_file(conf,
	    "redis_url = unix:///nonexistent/sock\n"), 0);
	xasprintf(&script, "unset EXECQ_REDIS_URL; XDG_CONFIG_HOME=%s/xdg "
	    "\"$CLI\" ps", h->dir);
	harness_cli_sh(h, &p, CLI_MS, script);
	expect_exit(h, &p, 125);
	if (strstr(p.err, conf) == NULL)
		proc_fail(h, &p, "stderr should name the config file");
	harness_proc_release(&p);
	free(script);
	/* No config: the socket of 'make run' two directories up. */
	xasprintf(&script, "unset EXECQ_REDIS_URL; mkdir -p %s/co/.tmp/run "
	    "%s/co/a/b && ln -s %s %s/co/.tmp/run/redis.sock && cd %s/co/a/b "
	    "&& XDG_CONFIG_HOME=%s/empty \"$CLI\" run -- echo via-socket",
	    h->dir, h->dir, h->redis_path, h->dir, h->dir, h->dir);
	harness_cli_sh(h, &p, CLI_MS, script);
	expect_exit(h, &p, 0);
	expect_out(h, &p, "via-socket\n");
	harness_proc_release(&p);
	free(script);
	/* Nothing at all: the default, and the message says so. */
	xasprintf(&script, "unset EXECQ_REDIS_URL; cd / && "
	    "XDG_CONFIG_HOME=%s/empty \"$CLI\" --redis '' ps", h->dir);
	harness_cli_sh(h, &p, CLI_MS, script);
	if (strstr(p.err, "the default: no --redis, no $EXECQ_REDIS_URL") ==
	    NULL && harness_proc_exit(&p) != 0)
		proc_fail(h, &p, "stderr should say it used the default");
	harness_proc_release(&p);
	free(script);
	free(conf);
	harness_pass(h);
}

/* cleanup --dry-run lists the old log and keeps it; then it goes. */
static void
test_cli_cleanup_dry_run_then_remove(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct harness_proc	 p;
	char			*dir, *old, *young, *line;
	const char		*dry[] = { "cleanup", "--log-dir", NULL,
				    "--max-age-hours", "24", "--dry-run",
				    NULL };
	const char		*real[] = { "cleanup", "--log-dir", NULL,
				    "--max-age-hours", "24", NULL };

	xasprintf(&dir, "%s/cleanup", h->dir);
	if (mkdir(dir, 0755) == -1)
		harness_fail(h, "mkdir %s: %s", dir, strerror(errno));
	xasprintf(&old, "%s/old-1.log", dir);
	xasprintf(&young, "%s/young-1.log", dir);
	xasprintf(&line, "would remove %s\n", old);
	make_file(h, old, "old\n", 48);
	make_file(h, young, "young\n", 0);
	dry[2] = dir;
	real[2] = dir;

	harness_cli(h, &p, NULL, CLI_MS, dry);
	expect_exit(h, &p, 0);
	expect_err(h, &p, "");
	if (strncmp(p.out, line, strlen(line)) != 0 ||
	    strstr(p.out, "young-1.log") != NULL)
		proc_fail(h, &p, "--dry-run should list the old file alone");
	if (access(old, F_OK) == -1 || access(young, F_OK) == -1)
		proc_fail(h, &p, "--dry-run removed a file");
	harness_proc_release(&p);

	harness_cli(h, &p, NULL, CLI_MS, real);
	expect_exit(h, &p, 0);
	expect_err(h, &p, "");
	if (access(old, F_OK) == 0)
		proc_fail(h, &p, "the old file is still there");
	if (access(young, F_OK) == -1)
		proc_fail(h, &p, "the recent file was removed");
	harness_proc_release(&p);
	free(line);
	free(young);
	free(old);
	free(dir);
	harness_pass(h);
}

/* classify: one verdict, a batch with a bad line, usage errors. */
static void
test_cli_classify(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct harness_proc	 p;
	const char		*one[] = { "classify", "--workspace", h->ws,
				    "-c", "sudo rm -fr -- /*", NULL };
	const char		*none[] = { "classify", NULL };
	const char		*batch[] = { "sh", "-c", "printf '%s\\n' "
				    "'\"ls -la\"' 'not json' "
				    "'\"echo a\\nrm -rf ~\"' | \"$0\" classify "
				    "--workspace \"$1\" --batch", NULL, NULL, NULL };
	json_t			*o;

	harness_cli(h, &p, NO_REDIS, CLI_MS, one);
	expect_exit(h, &p, 0);
	o = json_loads(p.out, 0, NULL);
	assert_non_null(o);
	assert_string_equal(harness_jstr(o, "risk"), "blocked");
	assert_string_equal(harness_jstr(o, "action"), "refuse");
	assert_string_equal(harness_jstr(o, "rule"), "blocked:rm-root");
	assert_int_equal(json_array_size(harness_jget(o, "commands")), 1);
	json_decref(o);
	harness_proc_release(&p);

	harness_cli(h, &p, NO_REDIS, CLI_MS, none);
	expect_exit(h, &p, 2);
	harness_proc_release(&p);

	batch[3] = harness_cli_path(h);
	batch[4] = h->ws;
	harness_capture(h, batch, NULL, CLI_MS, &p);
	expect_exit(h, &p, 1);
	if (strstr(p.out, "\"risk\":\"read_only\"") == NULL ||
	    strstr(p.out, "\"error\"") == NULL ||
	    strstr(p.out, "\"line\":2") == NULL ||
	    strstr(p.out, "\"risk\":\"blocked\"") == NULL)
		proc_fail(h, &p, "three verdict lines expected");
	harness_proc_release(&p);
	harness_pass(h);
}

/* Every subcommand's --help: a usage line on stdout, exit 0. */
static void
test_cli_help_for_every_subcommand(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct harness_proc	 p;
	const char		*subs[] = { "run", "submit", "spawn", "ps",
				    "logs", "send", "keys", "kill", "wait",
				    "callbacks", "cleanup", "classify",
				    "approvals", "approve", "reject",
				    "workers", "tools", NULL };
	const char		*args[3] = { NULL, "--help", NULL };
	const char		*top[] = { "--help", NULL };
	char			 want[64];
	size_t			 i;

	for (i = 0; subs[i] != NULL; i++) {
		args[0] = subs[i];
		harness_cli(h, &p, NO_REDIS, CLI_MS, args);
		expect_exit(h, &p, 0);
		expect_err(h, &p, "");
		snprintf(want, sizeof want, "usage: execq %s ", subs[i]);
		if (strncmp(p.out, want, strlen(want)) != 0)
			proc_fail(h, &p, "stdout should start with a usage "
			    "line");
		harness_proc_release(&p);
	}
	harness_cli(h, &p, NO_REDIS, CLI_MS, top);
	expect_exit(h, &p, 0);
	if (strncmp(p.out, "usage: execq ", 13) != 0)
		proc_fail(h, &p, "execq --help should print a usage line");
	harness_proc_release(&p);
	harness_pass(h);
}

/*
 * run keeps the token of its EXEC_RESULT, so 'execq logs ID' then prints
 * the whole log through the worker, with no flag: more than the answer
 * could hold (the worker's output cap is 1k). submit prints the token
 * with the rest of the answer.
 */
static void
test_cli_run_then_logs(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct harness_proc	 p;
	const char		*id = harness_id(h, "run-log");
	char			*want, *w, *said;
	json_t			*j;
	int			 i;

	want = xmalloc(2000 * 12 + 1);
	for (i = 1, w = want; i <= 2000; i++)
		w += sprintf(w, "%d\n", i);
	harness_worker_start(h, NULL, "--output-cap", "1k", NULL);
	cli(h, &p, "run", "--no-live", "--id", id, "--", "seq", "1", "2000",
	    NULL);
	expect_exit(h, &p, 0);
	xasprintf(&said, "execq: output truncated; the whole log: execq logs "
	    "%s\n", id);
	expect_err(h, &p, said);
	if (strcmp(p.out, want) == 0)
		proc_fail(h, &p, "run --no-live should show the cut answer");
	harness_proc_release(&p);
	cli(h, &p, "logs", id, NULL);
	expect_exit(h, &p, 0);
	expect_err(h, &p, "");
	if (p.out_len != strlen(want) || strcmp(p.out, want) != 0)
		proc_fail(h, &p, "logs should print seq 1 2000 whole");
	harness_proc_release(&p);
	cli(h, &p, "logs", "--lines", "2", id, NULL);
	expect_exit(h, &p, 0);
	expect_out(h, &p, "1999\n2000\n");
	harness_proc_release(&p);

	cli(h, &p, "submit", "--", "echo", "hi", NULL);
	expect_exit(h, &p, 0);
	j = one_json_line(h, &p);
	expect_str(h, j, "type", "EXEC_RESULT");
	if (harness_jstr(j, "session_token") == NULL ||
	    strlen(harness_jstr(j, "session_token")) != 32)
		proc_fail(h, &p, "submit should print the session_token");
	json_decref(j);
	harness_proc_release(&p);
	free(said);
	free(want);
	harness_pass(h);
}

/*
 * The token store keeps the newest TOKENS_KEEP lines (EXECQ_TOKENS_KEEP,
 * execq(1) FILES): a store TOKENS_KEEP + 5 lines long, then one run, and
 * the store holds TOKENS_KEEP lines, the oldest gone, run's last, mode
 * 0600 still; and logs finds run's token there.
 */
#define TOKENS_KEEP	1000
static void
test_cli_tokens_keep_newest(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct harness_proc	 p;
	const char		*id = harness_id(h, "tok-run");
	struct stat		 st;
	char			*dir, *path, *text, *w, *last, want[64];
	size_t			 len, lines = 0, i;

	xasprintf(&dir, "%s/cli-state", h->dir);
	assert_int_equal(mkdir(dir, 0700), 0);
	free(dir);
	xasprintf(&dir, "%s/cli-state/execq", h->dir);
	assert_int_equal(mkdir(dir, 0700), 0);
	xasprintf(&path, "%s/tokens", dir);
	text = w = xmalloc((TOKENS_KEEP + 5) * 64 + 1);
	*w = '\0';
	for (i = 1; i <= TOKENS_KEEP + 5; i++)
		w += sprintf(w, "old-%04zu %032zx\n", i, i);
	assert_int_equal(harness_write_file(path, text), 0);
	assert_int_equal(chmod(path, 0600), 0);
	free(text);

	harness_worker_start(h, NULL, NULL);
	cli(h, &p, "run", "--id", id, "--", "echo", "kept", NULL);
	expect_exit(h, &p, 0);
	expect_out(h, &p, "kept\n");
	expect_err(h, &p, "");
	harness_proc_release(&p);

	if ((text = harness_read_file(path, &len)) == NULL)
		harness_fail(h, "%s: %s", path, strerror(errno));
	for (i = 0; i < len; i++)
		if (text[i] == '\n')
			lines++;
	if (lines != TOKENS_KEEP)
		harness_fail(h, "the store holds %zu lines, not %d", lines,
		    TOKENS_KEEP);
	/* 1005 old ones and run's: the 6 oldest went. */
	snprintf(want, sizeof want, "old-0007 %032x\n", 7);
	if (strncmp(text, want, strlen(want)) != 0)
		harness_fail(h, "the store should start with %s: \"%.80s\"",
		    want, text);
	snprintf(want, sizeof want, "old-%04d %032x\n", TOKENS_KEEP + 5,
	    TOKENS_KEEP + 5);
	last = text + len - 1;
	while (last > text && last[-1] != '\n')
		last--;
	if (strncmp(last - strlen(want), want, strlen(want)) != 0 ||
	    strncmp(last, id, strlen(id)) != 0 || last[strlen(id)] != ' ' ||
	    strlen(last + strlen(id) + 1) != 33)
		harness_fail(h, "run's token should be last, after %s: "
		    "\"%s\"", want, last);
	free(text);
	if (stat(path, &st) == -1)
		harness_fail(h, "%s: %s", path, strerror(errno));
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_true(S_ISREG(st.st_mode));
	/* The token kept is run's: logs shows it. */
	cli(h, &p, "logs", id, NULL);
	expect_exit(h, &p, 0);
	expect_out(h, &p, "kept\n");
	harness_proc_release(&p);
	free(path);
	free(dir);
	harness_pass(h);
}

/*
 * The client's environment for a run of our own (harness_cli's: ours
 * minus EXECQ_*, ENABLE_EXECUTE and XDG_STATE_HOME, plus the test's
 * Redis and token store). The array and vars are allocated.
 */
static char **
pipe_env(struct harness *h, char **vars)
{
	char	**v;
	size_t	  n = 0, i;

	for (i = 0; environ[i] != NULL; i++)
		n++;
	v = xcalloc(n + 3, sizeof *v);
	n = 0;
	for (i = 0; environ[i] != NULL; i++)
		if (strncmp(environ[i], "EXECQ_", 6) != 0 &&
		    strncmp(environ[i], "ENABLE_EXECUTE=", 15) != 0 &&
		    strncmp(environ[i], "XDG_STATE_HOME=", 15) != 0)
			v[n++] = environ[i];
	xasprintf(&vars[0], "EXECQ_REDIS_URL=unix://%s", h->redis_path);
	xasprintf(&vars[1], "XDG_STATE_HOME=%s/cli-state", h->dir);
	v[n++] = vars[0];
	v[n++] = vars[1];
	return (v);
}

/*
 * Runs the client (argv after the binary) with stdout a pipe of ours,
 * reads up to the first newline (at most len - 1 bytes) into line, then
 * closes the read end, as 'execq ... | head -n 1' does; its stderr goes
 * to a file. Returns the wait status, and the stderr in *err (to free).
 */
static int
cli_into_closed_pipe(struct harness *h, const char *const *args, char *line,
    size_t len, char **err)
{
	const char	*argv[HARNESS_CLI_MAX_ARGS + 2];
	char		**env, *vars[2], *err_path;
	sigset_t	 all;
	size_t		 i, used = 0;
	int64_t		 deadline = harness_now_ms() + CLI_MS;
	int		 out[2], errfd, status;
	ssize_t		 n;
	pid_t		 pid;

	argv[0] = harness_cli_path(h);
	for (i = 0; args[i] != NULL && i < HARNESS_CLI_MAX_ARGS; i++)
		argv[i + 1] = args[i];
	argv[i + 1] = NULL;
	env = pipe_env(h, vars);
	xasprintf(&err_path, "%s/pipe.err", h->dir);
	if (pipe2(out, O_CLOEXEC) == -1 || (errfd = open(err_path,
	    O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC, 0600)) == -1)
		harness_fail(h, "pipe2, open: %s", strerror(errno));
	if ((pid = fork()) == -1)
		harness_fail(h, "fork: %s", strerror(errno));
	if (pid == 0) {
		/* SIGPIPE as a shell leaves it: not blocked, not ignored. */
		sigemptyset(&all);
		sigprocmask(SIG_SETMASK, &all, NULL);
		signal(SIGPIPE, SIG_DFL);
		if (dup2(out[1], 1) == -1 || dup2(errfd, 2) == -1)
			_exit(126);
		execve(argv[0], (char *const *)argv, env);
		_exit(127);
	}
	close(out[1]);
	close(errfd);
	while (used + 1 < len && (used == 0 || line[used - 1] != '\n')) {
		if ((n = read(out[0], line + used, 1)) <= 0)
			break;
		used += (size_t)n;
	}
	line[used] = '\0';
	close(out[0]);			/* the reader goes */
	while (waitpid(pid, &status, WNOHANG) != pid) {
		if (harness_now_ms() > deadline) {
			kill(pid, SIGKILL);
			harness_fail(h, "the client did not end once its "
			    "reader went");
		}
		harness_sleep_ms(5);
	}
	*err = harness_read_file(err_path, NULL);
	free(err_path);
	free(vars[0]);
	free(vars[1]);
	free(env);
	return (status);
}

/*
 * execq run ... | head -n 1: once its reader is gone the client ends by
 * SIGPIPE and says nothing, as a filter does (it ignores SIGPIPE only so
 * that a reset Redis connection is an error), whether the output came
 * live (execq_write_all) or with the answer (--no-live: a fflush).
 */
static void
test_cli_run_closed_pipe_ends_by_sigpipe(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*live[] = { "run", "--queue", h->queue, "--", "seq",
			    "1", "100000", NULL };
	const char	*answer[] = { "run", "--queue", h->queue, "--no-live",
			    "--", "seq", "1", "100000", NULL };
	const char	*const *args[] = { live, answer };
	char		 line[16], *err;
	int		 status, i;

	harness_worker_start(h, NULL, NULL);
	for (i = 0; i < 2; i++) {
		status = cli_into_closed_pipe(h, args[i], line, sizeof line,
		    &err);
		if (strcmp(line, "1\n") != 0)
			harness_fail(h, "the first line should be 1: \"%s\"",
			    line);
		if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGPIPE)
			harness_fail(h, "%s: the client should end by SIGPIPE, "
			    "not with status 0x%x; stderr: \"%.300s\"",
			    args[i][3], status, err != NULL ? err : "");
		if (err == NULL || *err != '\0')
			harness_fail(h, "%s: stderr should be empty: "
			    "\"%.300s\"", args[i][3], err != NULL ? err :
			    "(unreadable)");
		free(err);
	}
	harness_pass(h);
}

#define T(f)	cmocka_unit_test_setup_teardown(f, harness_setup, \
		    cli_teardown)

int
main(void)
{
	const struct CMUnitTest	tests[] = {
		T(test_cli_run_prints_stdout),
		T(test_cli_run_output_is_live),
		T(test_cli_run_shows_id_and_log),
		T(test_cli_run_replays_stderr_and_status),
		T(test_cli_run_timeout_exits_124),
		T(test_cli_run_cwd_and_env),
		T(test_cli_run_one_word_is_shell),
		T(test_cli_run_quotes_words),
		T(test_cli_submit_raw_bad_json),
		T(test_cli_run_error_answer_exits_125),
		T(test_cli_run_no_redis_exits_125),
		T(test_cli_run_no_worker_exits_125),
		T(test_cli_usage_errors_exit_2),
		T(test_cli_session_on_pipe),
		T(test_cli_session_python_on_pty),
		T(test_cli_ps_lists_running),
		T(test_cli_logs_follow_until_end),
		T(test_cli_kill_unknown_session),
		T(test_cli_cleanup_dry_run_then_remove),
		T(test_cli_cleanup_missing_dir),
		T(test_cli_finds_redis),
		T(test_cli_help_for_every_subcommand),
		T(test_cli_classify),
		T(test_cli_run_then_logs),
		T(test_cli_tokens_keep_newest),
		T(test_cli_run_closed_pipe_ends_by_sigpipe),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
