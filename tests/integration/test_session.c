/*
 * Background and PTY sessions against a real Redis and the worker binary
 * (docs/PROTOCOL.md sections 11 and 12): EXEC_STARTED, the one
 * EXEC_CALLBACK on q:<reply>:high, the PROCESS actions on q:<queue>:ctl,
 * the Redis mirror, forwarding between workers and the start-up log
 * clean-up. One behaviour per test, each with its own worker, queue,
 * workspace and log dir (tests/integration/harness.h); every wait has a
 * deadline. Sleeps are named like "sleep 8891.0012345": the number is
 * unique to one test and the fraction is this run's pid, so the /proc
 * scans for survivors cannot see another test's processes, or another
 * run's.
 */

#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
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

#define POLL_WAIT_MS	500	/* wait_ms of one poll */
#define CALLBACK_MS	30000	/* a short session's callback (a deadline) */
#define OPTOKEN		"op-token-0123456789"	/* --operator-token */
#define MANY		200	/* concurrent sessions */
#define MAX_HELPERS	4	/* processes a test starts itself */

/* Processes a test started itself; the teardown kills what is left. */
static pid_t	helpers[MAX_HELPERS];

/*
 * "sleep <n>.<our pid, 7 digits>": a command and the /proc pattern that
 * finds it. Static storage, four at a time.
 */
static const char *
sleeper(int n)
{
	static char	buf[4][32];
	static int	next;
	char		*s = buf[next++ % 4];

	snprintf(s, sizeof buf[0], "sleep %d.%07ld", n, (long)getpid());
	return (s);
}

/*
 * Kills the test's own helper processes, then the harness teardown (which
 * stops the workers), then whatever a failed test left of its sleeps, so
 * the next test's /proc scans do not see them.
 */
static int
session_teardown(void **state)
{
	char	mine[16];
	int	i, rc;

	for (i = 0; i < MAX_HELPERS; i++) {
		if (helpers[i] <= 0)
			continue;
		kill(helpers[i], SIGKILL);
		while (waitpid(helpers[i], NULL, 0) == -1 && errno == EINTR)
			/* nothing */;
		helpers[i] = 0;
	}
	rc = harness_teardown(state);
	snprintf(mine, sizeof mine, ".%07ld", (long)getpid());
	harness_kill_procs(mine, SIGKILL);
	return (rc);
}

/* A string member, never NULL: assert_string_equal must not see NULL. */
static const char *
jstr(json_t *a, const char *path)
{
	const char	*s = harness_jstr(a, path);

	return (s != NULL ? s : "<missing or not a string>");
}

/* Fails the test showing answer a (shortened) and why. */
static void __attribute__((noreturn))
fail_answer(struct harness *h, json_t *a, const char *why)
{
	char	*text;
	char	 shown[700];

	text = json_dumps(a, JSON_COMPACT);
	snprintf(shown, sizeof shown, "%s", text != NULL ? text : "?");
	free(text);
	harness_fail(h, "%s; answer: %s", why, shown);
}

/* Asserts a string member, showing the whole answer when it differs. */
static void
expect_str(struct harness *h, json_t *a, const char *path, const char *want)
{
	char	why[256];

	if (strcmp(jstr(a, path), want) == 0)
		return;
	snprintf(why, sizeof why, "%s is \"%s\", expected \"%s\"", path,
	    jstr(a, path), want);
	fail_answer(h, a, why);
}

/* Asserts an integer member, showing the whole answer when it differs. */
static void
expect_int(struct harness *h, json_t *a, const char *path, int64_t want)
{
	char	why[256];

	if (harness_jint(a, path) == want)
		return;
	snprintf(why, sizeof why, "%s is %lld, expected %lld", path,
	    (long long)harness_jint(a, path), (long long)want);
	fail_answer(h, a, why);
}

/* Asserts a is an ERROR with code for item id. */
static void
expect_error(struct harness *h, json_t *a, const char *id, const char *code)
{
	expect_str(h, a, "type", "ERROR");
	expect_str(h, a, "error.code", code);
	expect_str(h, a, "id", id);
	assert_true(strlen(jstr(a, "error.message")) > 0);
}

/* Asserts a is the PROCESS_RESULT of action on session sid (NULL: list). */
static void
expect_process(struct harness *h, json_t *a, const char *action,
    const char *sid)
{
	expect_str(h, a, "type", "PROCESS_RESULT");
	expect_str(h, a, "action", action);
	if (sid != NULL)
		expect_str(h, a, "session_id", sid);
}

/* The args JSON text of a PROCESS item, printf-style; then its answer. */
static json_t *
process(struct harness *h, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static json_t *
process(struct harness *h, const char *fmt, ...)
{
	va_list	 ap;
	char	*args;
	json_t	*a;

	va_start(ap, fmt);
	if (vasprintf(&args, fmt, ap) == -1)
		harness_fail(h, "out of memory");
	va_end(ap);
	a = harness_process(h, args, HARNESS_WAIT_MS);
	free(args);
	return (a);
}

/*
 * Starts command as background session id (args_extra: more args, JSON
 * object text, or NULL) and returns its EXEC_STARTED, checked.
 */
static json_t *
start_session(struct harness *h, const char *id, const char *command,
    const char *args_extra)
{
	json_t		*extra, *a;
	json_error_t	 jerr;
	char		*text;

	extra = json_loads(args_extra != NULL ? args_extra : "{}", 0, &jerr);
	if (extra == NULL)
		harness_fail(h, "bad args %s: %s", args_extra, jerr.text);
	json_object_set_new(extra, "background", json_true());
	text = json_dumps(extra, JSON_COMPACT);
	harness_submit(h, "normal", id, command, text);
	free(text);
	json_decref(extra);
	a = harness_wait_answer(h, NULL, id, HARNESS_WAIT_MS);
	expect_str(h, a, "type", "EXEC_STARTED");
	expect_str(h, a, "id", id);
	expect_str(h, a, "session_id", id);
	if (harness_jint(a, "pid") <= 0)
		fail_answer(h, a, "EXEC_STARTED without a pid");
	if (*jstr(a, "log_path") != '/')
		fail_answer(h, a, "EXEC_STARTED without an absolute log_path");
	return (a);
}

/* The EXEC_CALLBACK of session id, checked for status and exit code. */
static json_t *
wait_callback(struct harness *h, const char *id, const char *status,
    int exit_code, int timeout_ms)
{
	json_t	*a;

	a = harness_wait_callback(h, id, timeout_ms);
	expect_str(h, a, "type", "EXEC_CALLBACK");
	expect_str(h, a, "priority", "high");
	expect_str(h, a, "id", id);
	expect_str(h, a, "session_id", id);
	expect_str(h, a, "status", status);
	if (exit_code >= 0)
		expect_int(h, a, "exit_code", exit_code);
	return (a);
}

/* Line i of the callback's tail, never NULL. */
static const char *
tail_line(json_t *cb, size_t i)
{
	const char	*s;

	s = json_string_value(json_array_get(json_object_get(cb, "tail"), i));
	return (s != NULL ? s : "<missing or not a string>");
}

/* 1 if the callback's tail has a line containing s. */
static int
tail_has(json_t *cb, const char *s)
{
	json_t	*line;
	size_t	 i;

	json_array_foreach(json_object_get(cb, "tail"), i, line) {
		if (json_is_string(line) &&
		    strstr(json_string_value(line), s) != NULL)
			return (1);
	}
	return (0);
}

/*
 * Polls session sid (each poll held up to POLL_WAIT_MS) until its output
 * holds needle; fails after timeout_ms. Returns the output so far.
 */
static char *
poll_until(struct harness *h, const char *sid, const char *needle,
    int timeout_ms)
{
	int64_t		 deadline = harness_now_ms() + timeout_ms;
	json_int_t	 offset = 0;
	char		*out = xstrdup(""), *more;
	json_t		*a;

	while (strstr(out, needle) == NULL) {
		if (harness_now_ms() > deadline)
			harness_fail(h, "session %s: no \"%s\" in its output "
			    "within %d ms; output: %.400s", sid, needle,
			    timeout_ms, out);
		a = process(h, "{\"action\": \"poll\", \"session_id\": \"%s\", "
		    "\"offset\": %lld, \"wait_ms\": %d}", sid,
		    (long long)offset, POLL_WAIT_MS);
		expect_process(h, a, "poll", sid);
		expect_int(h, a, "offset", offset);
		xasprintf(&more, "%s%s", out, jstr(a, "output"));
		free(out);
		out = more;
		offset = harness_jint(a, "next_offset");
		if (harness_jbool(a, "eof") == 1 && strstr(out, needle) == NULL)
			harness_fail(h, "session %s ended without \"%s\"; "
			    "output: %.400s", sid, needle, out);
		json_decref(a);
	}
	return (out);
}

/* Sends keys (JSON array text) to session sid; asserts bytes went in. */
static void
send_keys(struct harness *h, const char *sid, const char *keys)
{
	json_t	*a;

	a = process(h, "{\"action\": \"send-keys\", \"session_id\": \"%s\", "
	    "\"keys\": %s}", sid, keys);
	expect_process(h, a, "send-keys", sid);
	if (harness_jint(a, "written") <= 0)
		fail_answer(h, a, "send-keys wrote nothing");
	json_decref(a);
}

/* Kills session sid through the control stream; waits for its callback. */
static void
kill_session(struct harness *h, const char *sid)
{
	json_t	*a;

	a = process(h, "{\"action\": \"kill\", \"session_id\": \"%s\"}", sid);
	expect_process(h, a, "kill", sid);
	expect_str(h, a, "status", "killing");
	json_decref(a);
	json_decref(wait_callback(h, sid, "killed", -1, CALLBACK_MS));
}

/* Fails (after killing them) if processes matching s outlive 30 s. */
static void
expect_gone(struct harness *h, const char *s)
{
	if (harness_wait_procs_gone(s, 30000) == 0)
		return;
	harness_kill_procs(s, SIGKILL);
	harness_fail(h, "'%s' outlived its session", s);
}

/* HGET key field, allocated; NULL when missing. */
static char *
hget(struct harness *h, const char *key, const char *field)
{
	redisReply	*r;
	char		*s = NULL;

	r = harness_cmd(h, "HGET %s %s", key, field);
	if (r->type == REDIS_REPLY_STRING)
		s = xstrdup(r->str);
	freeReplyObject(r);
	return (s);
}

/* Waits until HGET key field is want; fails after timeout_ms. */
static void
wait_hash(struct harness *h, const char *key, const char *field,
    const char *want, int timeout_ms)
{
	int64_t	 deadline = harness_now_ms() + timeout_ms;
	char	*v;

	for (;;) {
		v = hget(h, key, field);
		if (v != NULL && strcmp(v, want) == 0)
			break;
		if (harness_now_ms() > deadline)
			harness_fail(h, "%s %s is %s, expected %s", key, field,
			    v != NULL ? v : "(nil)", want);
		free(v);
		harness_sleep_ms(10);
	}
	free(v);
}

/* Decodes standard base64; the allocated bytes, *len of them. */
static char *
unbase64(const char *in, size_t *len)
{
	static const char	 alpha[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				    "abcdefghijklmnopqrstuvwxyz0123456789+/";
	const char		*p;
	char			*out;
	unsigned		 acc = 0;
	int			 bits = 0;

	out = xmalloc(strlen(in) + 1);
	*len = 0;
	for (; *in != '\0' && *in != '='; in++) {
		if ((p = strchr(alpha, *in)) == NULL)
			fail_msg("bad base64 character '%c'", *in);
		acc = (acc << 6) | (unsigned)(p - alpha);
		if ((bits += 6) >= 8) {
			bits -= 8;
			out[(*len)++] = (char)((acc >> bits) & 0xff);
		}
	}
	return (out);
}

/* Writes path with text, its times hours in the past (0: now). */
static void
make_file(struct harness *h, const char *name, const char *text, int hours)
{
	struct timespec	 ts[2];
	char		*path;
	int		 fd;

	xasprintf(&path, "%s/%s", h->log_dir, name);
	fd = open(path, O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC, 0644);
	if (fd == -1 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		harness_fail(h, "%s: %s", path, strerror(errno));
	close(fd);
	if (hours > 0) {
		clock_gettime(CLOCK_REALTIME, &ts[0]);
		ts[0].tv_sec -= (time_t)hours * 3600;
		ts[1] = ts[0];
		if (utimensat(AT_FDCWD, path, ts, 0) == -1)
			harness_fail(h, "utimensat %s: %s", path,
			    strerror(errno));
	}
	free(path);
}

/* 1 if <log_dir>/name exists. */
static int
log_file_exists(struct harness *h, const char *name)
{
	char	*path;
	int	 r;

	xasprintf(&path, "%s/%s", h->log_dir, name);
	r = access(path, F_OK) == 0;
	free(path);
	return (r);
}

/* Forks a helper process running argv; the teardown kills it. */
static pid_t
start_helper(struct harness *h, const char *const *argv)
{
	pid_t	pid;
	int	i;

	for (i = 0; i < MAX_HELPERS && helpers[i] > 0; i++)
		/* nothing */;
	if (i == MAX_HELPERS)
		harness_fail(h, "too many helper processes");
	if ((pid = fork()) == -1)
		harness_fail(h, "fork: %s", strerror(errno));
	if (pid == 0) {
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	helpers[i] = pid;
	return (pid);
}

/* Kills and reaps a helper process. */
static void
stop_helper(pid_t pid)
{
	int	i;

	for (i = 0; i < MAX_HELPERS; i++) {
		if (helpers[i] != pid)
			continue;
		kill(pid, SIGKILL);
		while (waitpid(pid, NULL, 0) == -1 && errno == EINTR)
			/* nothing */;
		helpers[i] = 0;
	}
}

/*
 * A background job: EXEC_STARTED at once, then exactly one EXEC_CALLBACK
 * on the high lane with the status, the tail and the log; the metadata
 * says how it ended.
 */
static void
test_session_background_job_calls_back_once(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "bg");
	json_t		*st, *cb, *m, *all, *a;
	char		*high, *log;
	size_t		 i, n = 0;

	harness_worker_start(h, NULL, NULL);
	xasprintf(&high, "q:%s:high", h->reply);
	st = start_session(h, id, "echo one; echo two; sleep 0.3; "
	    "echo three; exit 4", "{\"tail_lines\": 2}");
	/* Answered while the command still runs. */
	if ((a = harness_try_entry(h, high, id, 0)) != NULL)
		fail_answer(h, a, "the callback came before EXEC_STARTED was "
		    "read: EXEC_STARTED waited for the end");
	log = harness_read_file(jstr(st, "log_path"), NULL);
	if (log != NULL && strstr(log, "three") != NULL)
		harness_fail(h, "EXEC_STARTED came after the command ended");
	free(log);
	if (harness_jbool(st, "pty") != 0)
		fail_answer(h, st, "pty should be false");
	expect_str(h, st, "worker", h->w[0].consumer);

	cb = wait_callback(h, id, "failed", 4, CALLBACK_MS);
	assert_true(json_is_null(json_object_get(cb, "signal")));
	assert_true(json_is_null(json_object_get(cb, "killed_by")));
	if (json_array_size(json_object_get(cb, "tail")) != 2 ||
	    strcmp(tail_line(cb, 0), "two") != 0 ||
	    strcmp(tail_line(cb, 1), "three") != 0)
		fail_answer(h, cb, "tail should be [\"two\", \"three\"]");
	expect_str(h, cb, "log_path", jstr(st, "log_path"));
	expect_int(h, cb, "output_bytes", 14);
	assert_true(harness_jint(cb, "duration_ms") >= 250);
	log = harness_read_file(jstr(cb, "log_path"), NULL);
	assert_non_null(log);
	assert_string_equal(log, "one\ntwo\nthree\n");

	/* Exactly one: nothing more on high, only EXEC_STARTED on normal. */
	if ((a = harness_try_entry(h, high, id, 700)) != NULL)
		fail_answer(h, a, "a second callback");
	all = harness_all_answers(h, NULL);
	json_array_foreach(all, i, a) {
		if (strcmp(jstr(a, "id"), id) == 0)
			n++;
	}
	assert_int_equal(n, 1);

	m = harness_load_meta(h, id);
	expect_str(h, m, "status", "failed");
	expect_int(h, m, "exit_code", 4);
	assert_int_equal(harness_jbool(m, "background"), 1);
	json_decref(m);
	json_decref(all);
	json_decref(cb);
	json_decref(st);
	free(log);
	free(high);
	harness_pass(h);
}

/* A Python REPL on a PTY, driven by send-keys and read by poll. */
static void
test_session_python_repl_on_pty(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "py");
	const char	*probe[] = { "python3", "-c", "pass", NULL };
	json_t		*st, *cb;
	char		*out;

	if (harness_run(h, probe, 10000) != 0)
		skip();
	harness_worker_start(h, NULL, NULL);
	st = start_session(h, id, "python3 -q", "{\"pty\": true}");
	assert_int_equal(harness_jbool(st, "pty"), 1);
	free(poll_until(h, id, ">>> ", 10000));
	send_keys(h, id, "[\"6*7\", \"Enter\"]");
	/*
	 * C-d once the next prompt is up: typed earlier, the REPL's line
	 * editor can flush it as it puts the terminal in raw mode again, and
	 * the REPL waits for a line that never comes (seen under load).
	 */
	out = poll_until(h, id, "42\r\n>>> ", 30000);
	free(out);
	send_keys(h, id, "[\"C-d\"]");
	cb = wait_callback(h, id, "completed", 0, CALLBACK_MS);
	json_decref(cb);
	json_decref(st);
	harness_pass(h);
}

/* write feeds stdin (no PTY); eof closes it and cat ends. */
static void
test_session_write_and_eof_on_pipe(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "cat"), *held;
	json_t		*st, *a, *cb;
	char		*args;

	harness_worker_start(h, NULL, NULL);
	st = start_session(h, id, "cat", NULL);
	a = process(h, "{\"action\": \"write\", \"session_id\": \"%s\", "
	    "\"data\": \"hello\\n\"}", id);
	expect_process(h, a, "write", id);
	expect_int(h, a, "written", 6);
	json_decref(a);
	free(poll_until(h, id, "hello", 30000));
	/* wait: held until the end, or waited out. */
	xasprintf(&args, "{\"action\": \"wait\", \"session_id\": \"%s\", "
	    "\"timeout_ms\": 10000}", id);
	held = harness_submit_process(h, args);
	free(args);
	a = process(h, "{\"action\": \"wait\", \"session_id\": \"%s\", "
	    "\"timeout_ms\": 200}", id);
	expect_process(h, a, "wait", id);
	expect_str(h, a, "status", "running");
	if (harness_jbool(a, "waited_out") != 1)
		fail_answer(h, a, "waited_out should be true");
	json_decref(a);
	a = process(h, "{\"action\": \"write\", \"session_id\": \"%s\", "
	    "\"eof\": true}", id);
	expect_process(h, a, "write", id);
	json_decref(a);
	cb = wait_callback(h, id, "completed", 0, CALLBACK_MS);
	if (!tail_has(cb, "hello"))
		fail_answer(h, cb, "tail without hello");
	a = harness_wait_answer(h, NULL, held, CALLBACK_MS);
	expect_process(h, a, "wait", id);
	expect_str(h, a, "status", "completed");
	expect_int(h, a, "exit_code", 0);
	if (harness_jbool(a, "waited_out") == 1 || !tail_has(a, "hello"))
		fail_answer(h, a, "wait: the callback's fields expected");
	json_decref(a);
	json_decref(cb);
	json_decref(st);
	harness_pass(h);
}

/* C-c interrupts a sleep in an interactive bash; the shell lives on. */
static void
test_session_ctrl_c_interrupts_bash_sleep(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "bash");
	json_t		*st, *cb;

	harness_worker_start(h, NULL, NULL);
	st = start_session(h, id, "bash --norc -i",
	    "{\"pty\": true, \"env\": {\"PS1\": \"ready> \"}}");
	free(poll_until(h, id, "ready> ", 30000));
	send_keys(h, id, "[\"sleep 3030\", \"Enter\"]");
	harness_wait_running(h, "sleep 3030");
	send_keys(h, id, "[\"C-c\"]");
	send_keys(h, id, "[\"echo after-$((40+2))\", \"Enter\"]");
	/* Only an interrupted sleep gives the prompt back. */
	free(poll_until(h, id, "after-42", 10000));
	send_keys(h, id, "[\"exit\", \"Enter\"]");
	cb = wait_callback(h, id, "completed", 0, CALLBACK_MS);
	json_decref(cb);
	json_decref(st);
	harness_pass(h);
}

/* rows and cols reach the PTY. */
static void
test_session_pty_size(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "stty");
	json_t		*st, *cb;

	harness_worker_start(h, NULL, NULL);
	st = start_session(h, id, "stty size",
	    "{\"pty\": true, \"rows\": 33, \"cols\": 111}");
	cb = wait_callback(h, id, "completed", 0, CALLBACK_MS);
	if (!tail_has(cb, "33 111"))
		fail_answer(h, cb, "tail without \"33 111\"");
	json_decref(cb);
	json_decref(st);
	harness_pass(h);
}

/* kill ends the whole tree, setsid'd children included. */
static void
test_session_kill_ends_tree(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "kill");
	json_t		*st, *a, *cb, *m;
	char		*cmd;
	int		 i;

	harness_worker_start(h, NULL, NULL);
	xasprintf(&cmd, "%s & setsid %s & %s", sleeper(8891), sleeper(8892),
	    sleeper(8893));
	st = start_session(h, id, cmd, NULL);
	free(cmd);
	for (i = 0; i < 3; i++)
		harness_wait_running(h, sleeper(8891 + i));
	a = process(h, "{\"action\": \"kill\", \"session_id\": \"%s\"}", id);
	expect_process(h, a, "kill", id);
	expect_str(h, a, "status", "killing");
	cb = wait_callback(h, id, "killed", -1, CALLBACK_MS);
	expect_str(h, cb, "killed_by", "user");
	expect_int(h, cb, "exit_code", 143);
	expect_str(h, cb, "signal", "SIGTERM");
	for (i = 0; i < 3; i++)
		expect_gone(h, sleeper(8891 + i));
	m = harness_load_meta(h, id);
	expect_str(h, m, "status", "killed");
	expect_str(h, m, "killed_by", "user");
	json_decref(m);
	json_decref(cb);
	json_decref(a);
	json_decref(st);
	harness_pass(h);
}

/* A grandchild holding the output pipe delays the callback by drain_s. */
static void
test_session_grandchild_holding_pipe_does_not_hang(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "drain");
	json_t		*st, *cb;
	char		*cmd;

	harness_worker_start(h, NULL, "--drain", "1", NULL);
	xasprintf(&cmd, "(%s &) ; echo started", sleeper(8895));
	st = start_session(h, id, cmd, NULL);
	free(cmd);
	/* The grandchild sleeps for hours: only the drain ends the wait. */
	cb = wait_callback(h, id, "completed", 0, CALLBACK_MS);
	if (!tail_has(cb, "started"))
		fail_answer(h, cb, "tail without \"started\"");
	expect_gone(h, sleeper(8895));
	json_decref(cb);
	json_decref(st);
	harness_pass(h);
}

/* idle_timeout_s ends a session that prints nothing. */
static void
test_session_idle_timeout(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "idle");
	json_t		*st, *cb;

	harness_worker_start(h, NULL, NULL);
	st = start_session(h, id, sleeper(8896), "{\"idle_timeout_s\": 1}");
	cb = wait_callback(h, id, "timed_out", -1, CALLBACK_MS);
	assert_true(harness_jint(cb, "duration_ms") >= 900);
	expect_str(h, cb, "killed_by", "idle");
	expect_gone(h, sleeper(8896));
	json_decref(cb);
	json_decref(st);
	harness_pass(h);
}

/* timeout_s is a session's wall-clock limit. */
static void
test_session_timeout(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "timeout");
	json_t		*st, *cb;

	harness_worker_start(h, NULL, NULL);
	st = start_session(h, id, sleeper(8897), "{\"timeout_s\": 1}");
	cb = wait_callback(h, id, "timed_out", -1, CALLBACK_MS);
	assert_true(harness_jint(cb, "duration_ms") >= 900);
	expect_str(h, cb, "killed_by", "timeout");
	expect_gone(h, sleeper(8897));
	json_decref(cb);
	json_decref(st);
	harness_pass(h);
}

/* The largest number of sessions at once in the metadata of ids. */
static int
peak_overlap(struct harness *h, json_t *ids)
{
	int64_t		 start[MANY], end[MANY];
	json_t		*m, *v;
	size_t		 i, j, n = 0;
	int		 peak = 0, c;

	json_array_foreach(ids, i, v) {
		m = harness_load_meta(h, json_string_value(v));
		start[n] = harness_jint(m, "started_ms");
		end[n++] = harness_jint(m, "started_ms") +
		    harness_jint(m, "duration_ms");
		json_decref(m);
	}
	for (i = 0; i < n; i++) {
		c = 0;
		for (j = 0; j < n; j++)
			if (start[j] <= start[i] && end[j] > start[i])
				c++;
		if (c > peak)
			peak = c;
	}
	return (peak);
}

/* 200 sessions at once: 200 callbacks, each exactly once. */
static void
test_session_200_concurrent(void **state)
{
	struct harness	*h = harness_fixture(state);
	int64_t		 deadline;
	json_t		*seen, *ids, *a;
	char		 name[16], cmd[64], n[16], *high;
	const char	*id;
	redisReply	*r;
	int		 i, got, peak;

	harness_worker_start(h, NULL, "--max-procs", "200", "--max-sessions",
	    "200", NULL);
	ids = json_array();
	for (i = 0; i < MANY; i++) {
		snprintf(name, sizeof name, "c%03d", i);
		snprintf(cmd, sizeof cmd, "sleep 0.2; echo %d", i);
		id = harness_id(h, name);
		json_array_append_new(ids, json_string(id));
		harness_submit(h, "normal", id, cmd, "{\"background\": true}");
	}
	deadline = harness_now_ms() + 60000;
	for (got = 0; got < MANY; got++) {
		a = harness_wait_answer(h, NULL, NULL, (int)(deadline -
		    harness_now_ms()));
		expect_str(h, a, "type", "EXEC_STARTED");
		json_decref(a);
	}
	xasprintf(&high, "q:%s:high", h->reply);
	seen = json_object();
	for (got = 0; got < MANY; got++) {
		a = harness_wait_entry(h, high, NULL, (int)(deadline -
		    harness_now_ms()));
		expect_str(h, a, "type", "EXEC_CALLBACK");
		expect_str(h, a, "status", "completed");
		expect_int(h, a, "exit_code", 0);
		id = jstr(a, "id");
		if (json_object_get(seen, id) != NULL)
			fail_answer(h, a, "a second callback for this id");
		if (strncmp(id, h->queue, strlen(h->queue)) != 0 ||
		    strncmp(id + strlen(h->queue), "-c", 2) != 0)
			fail_answer(h, a, "a callback for an unknown id");
		snprintf(n, sizeof n, "%d", atoi(id + strlen(h->queue) + 2));
		if (!tail_has(a, n))
			fail_answer(h, a, "tail without its number");
		json_object_set_new(seen, id, json_true());
		json_decref(a);
	}
	assert_int_equal(json_object_size(seen), MANY);
	/* Nothing more comes. */
	if ((a = harness_try_entry(h, high, NULL, 500)) != NULL)
		fail_answer(h, a, "a callback beyond the 200");
	r = harness_cmd(h, "XLEN %s", high);
	assert_int_equal(r->integer, MANY);
	freeReplyObject(r);
	/* More at once than the default max_procs (16) would allow. */
	peak = peak_overlap(h, ids);
	if (peak <= 16)
		harness_fail(h, "at most %d sessions ran at once", peak);
	print_message("    200 sessions: at most %d at once\n", peak);
	json_decref(seen);
	json_decref(ids);
	free(high);
	harness_pass(h);
}

/* Every action on an unknown session, and bad arguments, are errors. */
static void
check_unknown_session(struct harness *h)
{
	static const char	*actions[] = {
		"\"action\": \"poll\"",
		"\"action\": \"log\"",
		"\"action\": \"write\", \"data\": \"x\"",
		"\"action\": \"send-keys\", \"keys\": [\"x\"]",
		"\"action\": \"kill\"",
		"\"action\": \"wait\", \"timeout_ms\": 100",
	};
	json_t			*a;
	size_t			 i;

	for (i = 0; i < sizeof actions / sizeof actions[0]; i++) {
		a = process(h, "{%s, \"session_id\": \"nope-123\"}",
		    actions[i]);
		expect_error(h, a, jstr(a, "id"), "unknown_session");
		json_decref(a);
	}
	a = process(h, "{\"action\": \"frob\", \"session_id\": \"nope-123\"}");
	expect_error(h, a, jstr(a, "id"), "bad_action");
	json_decref(a);
	a = process(h, "{\"session_id\": \"nope-123\"}");
	expect_error(h, a, jstr(a, "id"), "bad_action");
	json_decref(a);
	a = process(h, "{\"action\": \"send-keys\", \"session_id\": "
	    "\"nope-123\", \"keys\": \"Enter\"}");
	expect_error(h, a, jstr(a, "id"), "bad_args");
	json_decref(a);
	a = process(h, "{\"action\": \"poll\"}");
	expect_error(h, a, jstr(a, "id"), "bad_args");
	json_decref(a);
	a = process(h, "{\"action\": \"write\", \"session_id\": "
	    "\"nope-123\"}");
	expect_error(h, a, jstr(a, "id"), "bad_args");
	json_decref(a);
}

/* What still works on a finished session, and what is session_ended. */
static void
check_finished_session(struct harness *h, const char *id)
{
	static const char	*refused[] = {
		"\"action\": \"write\", \"data\": \"x\"",
		"\"action\": \"send-keys\", \"keys\": [\"Enter\"]",
		"\"action\": \"kill\"",
	};
	json_t			*a;
	size_t			 i;

	for (i = 0; i < sizeof refused / sizeof refused[0]; i++) {
		a = process(h, "{%s, \"session_id\": \"%s\"}", refused[i], id);
		expect_error(h, a, jstr(a, "id"), "session_ended");
		json_decref(a);
	}
	a = process(h, "{\"action\": \"poll\", \"session_id\": \"%s\", "
	    "\"wait_ms\": 2000}", id);
	expect_process(h, a, "poll", id);
	expect_str(h, a, "status", "completed");
	expect_int(h, a, "exit_code", 0);
	expect_str(h, a, "output", "fin\n");
	if (harness_jbool(a, "eof") != 1)
		fail_answer(h, a, "poll of a finished session: eof not true");
	json_decref(a);
	a = process(h, "{\"action\": \"wait\", \"session_id\": \"%s\"}", id);
	expect_process(h, a, "wait", id);
	expect_str(h, a, "status", "completed");
	expect_int(h, a, "exit_code", 0);
	json_decref(a);
	a = process(h, "{\"action\": \"log\", \"session_id\": \"%s\"}", id);
	expect_process(h, a, "log", id);
	expect_str(h, a, "output", "fin\n");
	expect_int(h, a, "size", 4);
	json_decref(a);
}

/* Unknown sessions, bad actions and ended sessions: clear errors. */
static void
test_session_bad_ids_and_ended_sessions(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "fin");
	json_t		*st, *cb, *a;
	pid_t		 pid;

	pid = harness_worker_start(h, NULL, NULL);
	check_unknown_session(h);
	assert_true(harness_worker_alive(h, pid));

	st = start_session(h, id, "echo fin", NULL);
	cb = wait_callback(h, id, "completed", 0, CALLBACK_MS);
	check_finished_session(h, id);

	/* The worker lives on and serves. */
	assert_true(harness_worker_alive(h, pid));
	a = process(h, "{\"action\": \"list\"}");
	expect_process(h, a, "list", NULL);
	json_decref(a);
	harness_stop_clean(h, pid);
	json_decref(cb);
	json_decref(st);
	harness_pass(h);
}

/* log: the last lines, a byte range, and exact bytes in base64. */
static void
test_session_log_lines_range_base64(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "log");
	const char	*bid = harness_id(h, "bin");
	const char	 want[] = "caf\351\000z\n";
	json_t		*st, *cb, *a;
	char		*bytes;
	size_t		 len;

	harness_worker_start(h, NULL, NULL);
	st = start_session(h, id, "printf 'a1\\na2\\na3\\na4\\n'", NULL);
	cb = wait_callback(h, id, "completed", 0, CALLBACK_MS);
	json_decref(cb);
	json_decref(st);

	a = process(h, "{\"action\": \"log\", \"session_id\": \"%s\", "
	    "\"lines\": 2}", id);
	expect_process(h, a, "log", id);
	expect_str(h, a, "output", "a3\na4\n");
	expect_int(h, a, "offset", 6);
	expect_int(h, a, "next_offset", 12);
	expect_int(h, a, "size", 12);
	json_decref(a);
	a = process(h, "{\"action\": \"log\", \"session_id\": \"%s\", "
	    "\"offset\": 3, \"length\": 5}", id);
	expect_process(h, a, "log", id);
	expect_str(h, a, "output", "a2\na3");
	expect_int(h, a, "offset", 3);
	expect_int(h, a, "next_offset", 8);
	json_decref(a);

	/* Bytes that are not text: base64 gives them back exactly. */
	st = start_session(h, bid, "printf 'caf\\351\\000z\\n'", NULL);
	cb = wait_callback(h, bid, "completed", 0, CALLBACK_MS);
	json_decref(cb);
	json_decref(st);
	a = process(h, "{\"action\": \"log\", \"session_id\": \"%s\", "
	    "\"encoding\": \"base64\"}", bid);
	expect_process(h, a, "log", bid);
	if (harness_jget(a, "output_b64") == NULL ||
	    harness_jget(a, "output") != NULL)
		fail_answer(h, a, "base64: output_b64 (only) expected");
	bytes = unbase64(jstr(a, "output_b64"), &len);
	assert_int_equal(len, sizeof want - 1);
	assert_memory_equal(bytes, want, len);
	free(bytes);
	json_decref(a);
	a = process(h, "{\"action\": \"log\", \"session_id\": \"%s\"}", bid);
	expect_str(h, a, "output", "caf\357\277\275\357\277\275z\n");
	json_decref(a);
	harness_pass(h);
}

/* list shows a running session. */
static void
test_session_list_shows_running(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "list");
	json_t		*st, *a, *s, *found = NULL;
	size_t		 i;

	harness_worker_start(h, NULL, NULL);
	st = start_session(h, id, sleeper(8898), NULL);
	a = process(h, "{\"action\": \"list\"}");
	expect_process(h, a, "list", NULL);
	json_array_foreach(json_object_get(a, "sessions"), i, s) {
		if (strcmp(jstr(s, "session_id"), id) == 0)
			found = s;
	}
	if (found == NULL)
		fail_answer(h, a, "the session is not listed");
	expect_str(h, found, "status", "running");
	expect_str(h, found, "command", sleeper(8898));
	expect_int(h, found, "pid", harness_jint(st, "pid"));
	expect_str(h, found, "log_path", jstr(st, "log_path"));
	json_decref(a);
	a = process(h, "{\"action\": \"kill\", \"session_id\": \"%s\", "
	    "\"signal\": \"NOPE\"}", id);
	expect_error(h, a, jstr(a, "id"), "bad_args");
	json_decref(a);
	kill_session(h, id);
	expect_gone(h, sleeper(8898));
	json_decref(st);
	harness_pass(h);
}

/* After a restart, log, poll and wait still answer from the files. */
static void
test_session_answers_from_files_after_restart(void **state)
{
	struct harness	*h = harness_fixture(state);
	char		*id = xstrdup(harness_id(h, "offline"));
	pid_t		 w;
	json_t		*a;

	w = harness_worker_start(h, NULL, NULL);
	json_decref(start_session(h, id, "echo one; echo two; exit 5", NULL));
	json_decref(wait_callback(h, id, "failed", 5, CALLBACK_MS));
	harness_stop_clean(h, w);
	harness_worker_start(h, NULL, NULL);
	a = process(h, "{\"action\": \"log\", \"session_id\": \"%s\"}", id);
	expect_str(h, a, "type", "PROCESS_RESULT");
	expect_str(h, a, "session_id", id);
	expect_str(h, a, "output", "one\ntwo\n");
	expect_str(h, a, "status", "failed");
	json_decref(a);
	a = process(h, "{\"action\": \"wait\", \"session_id\": \"%s\"}", id);
	expect_str(h, a, "action", "wait");
	expect_int(h, a, "exit_code", 5);
	json_decref(a);
	/* The files keep its token: nobody else reads them. */
	a = process(h, "{\"action\": \"log\", \"session_id\": \"%s\", "
	    "\"token\": null}", id);
	expect_str(h, a, "error.code", "forbidden");
	json_decref(a);
	a = process(h, "{\"action\": \"poll\", \"session_id\": \"%s\", "
	    "\"token\": \"00000000000000000000000000000000\"}", id);
	expect_str(h, a, "error.code", "forbidden");
	json_decref(a);
	a = process(h, "{\"action\": \"write\", \"session_id\": \"%s\", "
	    "\"data\": \"x\"}", id);
	expect_error(h, a, jstr(a, "id"), "unknown_session");
	json_decref(a);
	free(id);
	harness_pass(h);
}

/* An EXEC item on the control stream is refused and does not run. */
static void
test_session_exec_on_control_lane_refused(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "ctlexec");
	char		*marker, *cmd;
	json_t		*a;
	struct stat	 st;

	harness_worker_start(h, NULL, "--max-procs", "1", NULL);
	xasprintf(&marker, "%s/ctl-ran", h->ws);
	xasprintf(&cmd, "touch %s", marker);
	harness_submit(h, "ctl", id, cmd, "{\"background\": true}");
	a = harness_wait_answer(h, NULL, id, 10000);
	expect_error(h, a, id, "bad_item");
	json_decref(a);
	/* The barrier: a stopped worker runs nothing more. */
	harness_stop_clean(h, h->w[0].pid);
	if (stat(marker, &st) == 0)
		harness_fail(h, "the command on the control stream ran");
	free(cmd);
	free(marker);
	harness_pass(h);
}

/*
 * The data of execq:out:<id> joined, and its last entry's end JSON. Each
 * data entry's offset must be where its data starts in the log.
 */
static char *
out_stream(struct harness *h, const char *id, json_t **end)
{
	redisReply	*r, *f, *v;
	json_error_t	 jerr;
	char		*data, *more;
	size_t		 i, j;

	*end = NULL;
	data = xstrdup("");
	r = harness_cmd(h, "XRANGE execq:out:%s - +", id);
	for (i = 0; r->type == REDIS_REPLY_ARRAY && i < r->elements; i++) {
		f = r->element[i]->element[1];
		for (j = 0; j + 1 < f->elements; j += 2) {
			v = f->element[j + 1];
			if (strcmp(f->element[j]->str, "offset") == 0 &&
			    strtoull(v->str, NULL, 10) != strlen(data))
				harness_fail(h, "execq:out:%s entry %zu: "
				    "offset %s, its data starts at %zu", id, i,
				    v->str, strlen(data));
			if (strcmp(f->element[j]->str, "data") == 0) {
				xasprintf(&more, "%s%s", data, v->str);
				free(data);
				data = more;
			} else if (strcmp(f->element[j]->str, "end") == 0 &&
			    i == r->elements - 1)
				*end = json_loads(v->str, 0, &jerr);
		}
	}
	freeReplyObject(r);
	return (data);
}

/* The session in Redis: the hash, the index and the live output. */
static void
test_session_redis_mirror(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "mirror");
	json_t		*st, *a, *cb, *end = NULL;
	redisReply	*r;
	char		*key, *v, *data = NULL;
	int64_t		 deadline;

	harness_worker_start(h, NULL, NULL);
	xasprintf(&key, "execq:session:%s", id);
	st = start_session(h, id, "echo m1; read x; echo m2 $x", NULL);
	wait_hash(h, key, "status", "running", 3000);
	v = hget(h, key, "worker");
	assert_non_null(v);
	assert_string_equal(v, h->w[0].consumer);
	free(v);
	v = hget(h, key, "exit_code");
	if (v != NULL)
		harness_fail(h, "exit_code %s while running", v);
	r = harness_cmd(h, "ZSCORE execq:sessions %s", id);
	if (r->type != REDIS_REPLY_STRING)
		harness_fail(h, "%s is not in execq:sessions", id);
	freeReplyObject(r);
	r = harness_cmd(h, "TTL %s", key);
	assert_true(r->integer > 0);
	freeReplyObject(r);

	a = process(h, "{\"action\": \"write\", \"session_id\": \"%s\", "
	    "\"data\": \"go\\n\"}", id);
	expect_process(h, a, "write", id);
	json_decref(a);
	cb = wait_callback(h, id, "completed", 0, CALLBACK_MS);
	wait_hash(h, key, "status", "completed", 3000);
	wait_hash(h, key, "exit_code", "0", 3000);

	/* The live stream: the data, then one end entry. */
	deadline = harness_now_ms() + 3000;
	for (;;) {
		free(data);
		json_decref(end);
		data = out_stream(h, id, &end);
		if (end != NULL || harness_now_ms() > deadline)
			break;
		harness_sleep_ms(20);
	}
	if (end == NULL)
		harness_fail(h, "execq:out:%s has no final end entry", id);
	assert_string_equal(data, "m1\nm2 go\n");
	expect_str(h, end, "status", "completed");
	expect_int(h, end, "exit_code", 0);
	json_decref(end);
	json_decref(cb);
	json_decref(st);
	free(data);
	free(key);
	harness_pass(h);
}

/* How many times the worker at err_path forwarded an item. */
static int
count_forwards(const char *err_path)
{
	char		*text, *p;
	int		 n = 0;

	if ((text = harness_read_file(err_path, NULL)) == NULL)
		return (0);
	for (p = text; (p = strstr(p, "forwarded to the session's")) != NULL;
	    p++)
		n++;
	free(text);
	return (n);
}

/* A PROCESS item read by the worker that does not own the session. */
static void
test_session_forwarded_to_owner(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "fwd");
	char		*name[2], *err, *cmd;
	json_t		*st, *a;
	int		 i, owner, forwards = 0;

	for (i = 0; i < 2; i++) {
		xasprintf(&name[i], "%s-%s", h->queue, i == 0 ? "alpha" :
		    "beta");
		harness_worker_start(h, NULL, "--consumer", name[i],
		    "--kill-grace", "1", NULL);
	}
	xasprintf(&cmd, "echo fwd; %s", sleeper(8899));
	st = start_session(h, id, cmd, NULL);
	free(cmd);
	if (strcmp(jstr(st, "worker"), name[0]) == 0)
		owner = 0;
	else if (strcmp(jstr(st, "worker"), name[1]) == 0)
		owner = 1;
	else
		fail_answer(h, st, "EXEC_STARTED names neither worker");
	free(poll_until(h, id, "fwd", 30000));
	err = h->w[1 - owner].err_path;
	for (i = 0; i < 30 && (i < 10 || forwards < 2); i++) {
		a = process(h, "{\"action\": \"poll\", \"session_id\": \"%s\"}",
		    id);
		expect_process(h, a, "poll", id);
		expect_str(h, a, "status", "running");
		expect_str(h, a, "output", "fwd\n");
		json_decref(a);
		forwards = count_forwards(err);
	}
	if (forwards == 0)
		harness_fail(h, "%d polls, none read by the other worker %s",
		    i, name[1 - owner]);
	print_message("    %d polls, %d forwarded by %s to %s\n", i, forwards,
	    name[1 - owner], name[owner]);
	kill_session(h, id);
	expect_gone(h, sleeper(8899));
	json_decref(st);
	free(name[0]);
	free(name[1]);
	harness_pass(h);
}

/*
 * A session of a worker younger than its first heartbeat is not "lost":
 * another worker's lost-session check (every second with claim_idle 3)
 * must leave it running, and it gets exactly one callback.
 */
static void
test_session_young_worker_not_lost(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "young");
	json_t		*st, *a;
	char		*key, *high, *v;

	harness_worker_start(h, NULL, NULL);
	st = start_session(h, id, sleeper(8894), NULL);
	harness_worker_start(h, NULL, "--claim-idle", "3", NULL);
	xasprintf(&high, "q:%s:high", h->reply);
	if ((a = harness_try_entry(h, high, id, 2500)) != NULL)
		fail_answer(h, a, "a callback for a running session");
	xasprintf(&key, "execq:session:%s", id);
	v = hget(h, key, "status");
	if (v == NULL || strcmp(v, "running") != 0)
		harness_fail(h, "%s status %s, expected running", key,
		    v != NULL ? v : "(nil)");
	free(v);
	kill_session(h, id);
	if ((a = harness_try_entry(h, high, id, 300)) != NULL)
		fail_answer(h, a, "a second callback");
	expect_gone(h, sleeper(8894));
	json_decref(st);
	free(key);
	free(high);
	harness_pass(h);
}

/*
 * The worker of a session dies: another worker's heartbeat ends it as
 * lost, with one callback; the next worker on the host ends its
 * processes; a PROCESS item for it is unknown_session.
 */
static void
test_session_lost_when_worker_dies(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "lost");
	json_t		*st, *cb, *a;
	char		*high, *text;
	pid_t		 pid;

	pid = harness_worker_start(h, NULL, "--claim-idle", "1", NULL);
	st = start_session(h, id, sleeper(8881), NULL);
	harness_wait_running(h, sleeper(8881));
	harness_worker_kill(h, pid);
	harness_worker_start(h, NULL, "--claim-idle", "1", NULL);
	cb = wait_callback(h, id, "lost", -1, 30000);
	assert_true(json_is_null(json_object_get(cb, "exit_code")));
	expect_str(h, cb, "worker", h->w[0].consumer);
	/* Only a cgroup lets the next worker find the dead one's tree. */
	text = harness_read_file(h->w[1].err_path, NULL);
	if (text == NULL || strstr(text, "contained in cgroups") == NULL)
		harness_kill_procs(sleeper(8881), SIGKILL);
	else
		expect_gone(h, sleeper(8881));
	free(text);
	/* Its log is on this host: the poll answers from it, as lost. */
	a = process(h, "{\"action\": \"poll\", \"session_id\": \"%s\"}",
	    id);
	expect_process(h, a, "poll", id);
	expect_str(h, a, "status", "lost");
	json_decref(a);
	xasprintf(&high, "q:%s:high", h->reply);
	if ((a = harness_try_entry(h, high, id, 1500)) != NULL)
		fail_answer(h, a, "a second callback");
	json_decref(cb);
	json_decref(st);
	free(high);
	harness_pass(h);
}

/* SIGTERM ends sessions at once, each with its callback. */
static void
test_session_shutdown_ends_sessions(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "shut");
	json_t		*st, *cb;
	char		*high;
	pid_t		 pid;

	pid = harness_worker_start(h, NULL, NULL);	/* kill_grace 5 s */
	st = start_session(h, id, sleeper(8890), NULL);
	harness_wait_running(h, sleeper(8890));
	harness_stop_clean(h, pid);
	/* Sent before the worker exited: it is there already. */
	xasprintf(&high, "q:%s:high", h->reply);
	cb = harness_try_entry(h, high, id, 100);
	if (cb == NULL)
		harness_fail(h, "no callback after the worker stopped");
	expect_str(h, cb, "status", "killed");
	expect_str(h, cb, "killed_by", "shutdown");
	expect_gone(h, sleeper(8890));
	json_decref(cb);
	json_decref(st);
	free(high);
	harness_pass(h);
}

/* Start-up clean-up: old logs go, a running session's and new ones stay. */
static void
test_session_startup_cleanup(void **state)
{
	struct harness	*h = harness_fixture(state);
	/* sleeper() + 6: only its seconds, after "sleep ". */
	const char	*argv[] = { "sleep", sleeper(8880) + 6, NULL };
	char		*json;
	pid_t		 live, dead;

	live = start_helper(h, argv);
	if ((dead = fork()) == 0)
		_exit(0);
	waitpid(dead, NULL, 0);
	make_file(h, "x.log", "old\n", 48);
	make_file(h, "x.json", "{\"id\":\"x\",\"status\":\"completed\","
	    "\"pid\":1}", 48);
	xasprintf(&json, "{\"id\":\"y\",\"status\":\"running\",\"pid\":%ld}",
	    (long)live);
	make_file(h, "y.log", "still running\n", 48);
	make_file(h, "y.json", json, 48);
	free(json);
	xasprintf(&json, "{\"id\":\"w\",\"status\":\"running\",\"pid\":%ld}",
	    (long)dead);
	make_file(h, "w.log", "its process is gone\n", 48);
	make_file(h, "w.json", json, 48);
	free(json);
	make_file(h, "z.log", "new\n", 0);
	make_file(h, "z.json", "{\"id\":\"z\",\"status\":\"completed\"}", 0);

	harness_worker_start(h, NULL, "--log-max-age", "24", NULL);
	assert_false(log_file_exists(h, "x.log"));
	assert_false(log_file_exists(h, "x.json"));
	assert_false(log_file_exists(h, "w.log"));
	assert_false(log_file_exists(h, "w.json"));
	assert_true(log_file_exists(h, "y.log"));
	assert_true(log_file_exists(h, "y.json"));
	assert_true(log_file_exists(h, "z.log"));
	assert_true(log_file_exists(h, "z.json"));
	stop_helper(live);
	harness_pass(h);
}

/*
 * A session belongs to whoever started it. Another agent, without the
 * session's token or with a wrong one, gets forbidden on every action
 * (on the worker that owns it or through another one), does not see it
 * in list, and the session runs on untouched; its owner, and an
 * operator, may act on it.
 */
static void
test_session_belongs_to_its_starter(void **state)
{
	static const char *acts[] = {
	    "\"action\": \"poll\"", "\"action\": \"log\"",
	    "\"action\": \"write\", \"data\": \"x\\n\"",
	    "\"action\": \"send-keys\", \"keys\": [\"C-c\"]",
	    "\"action\": \"kill\"", "\"action\": \"wait\", \"timeout_ms\": 1" };
	static const char *who[] = { "\"token\": null",
	    "\"token\": \"0123456789abcdef0123456789abcdef\"",
	    "\"token\": null, \"operator_token\": \"not-the-operator-token\"" };
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "owned");
	json_t		*st, *a;
	char		*text;
	size_t		 i, k;

	harness_worker_start(h, NULL, "--operator-token", OPTOKEN, NULL);
	st = start_session(h, id, "cat", NULL);
	assert_int_equal(strlen(harness_jstr(st, "session_token")), 32);
	/* list: others see nothing of it; its owner and an operator do. */
	a = process(h, "{\"action\": \"list\", \"tokens\": []}");
	assert_int_equal(json_array_size(harness_jget(a, "sessions")), 0);
	json_decref(a);
	a = process(h, "{\"action\": \"list\"}");	/* our tokens */
	text = json_dumps(a, JSON_COMPACT);
	assert_non_null(strstr(text, id));
	free(text);
	json_decref(a);
	a = process(h, "{\"action\": \"list\", \"tokens\": [], "
	    "\"operator_token\": \"" OPTOKEN "\"}");
	text = json_dumps(a, JSON_COMPACT);
	assert_non_null(strstr(text, id));
	free(text);
	json_decref(a);

	/* A second worker: some actions reach the owner forwarded. */
	harness_worker_start(h, NULL, NULL);
	for (i = 0; i < sizeof acts / sizeof acts[0]; i++)
		for (k = 0; k < sizeof who / sizeof who[0]; k++) {
			a = process(h, "{%s, \"session_id\": \"%s\", %s}",
			    acts[i], id, who[k]);
			expect_str(h, a, "type", "ERROR");
			expect_str(h, a, "error.code", "forbidden");
			json_decref(a);
		}
	/* The owner: still running, and nothing else was written to it. */
	a = process(h, "{\"action\": \"write\", \"session_id\": \"%s\", "
	    "\"data\": \"mine\\n\"}", id);
	expect_str(h, a, "type", "PROCESS_RESULT");
	json_decref(a);
	text = poll_until(h, id, "mine", HARNESS_WAIT_MS);
	if (strstr(text, "x\n") != NULL)
		harness_fail(h, "another agent wrote to the session: %s", text);
	free(text);
	/* An operator may end it. */
	a = process(h, "{\"action\": \"kill\", \"session_id\": \"%s\", "
	    "\"token\": null, \"operator_token\": \"" OPTOKEN "\"}", id);
	expect_str(h, a, "type", "PROCESS_RESULT");
	json_decref(a);
	json_decref(wait_callback(h, id, "killed", -1, CALLBACK_MS));
	json_decref(st);
	harness_pass(h);
}

/* The output of seq 1 n, allocated. */
static char *
seq_text(int n)
{
	char	*text, *p;
	int	 i;

	text = xmalloc((size_t)n * 12 + 1);
	for (i = 1, p = text; i <= n; i++)
		p += sprintf(p, "%d\n", i);
	return (text);
}

/* Asserts a carries a session_token of 32 hex digits; returns it. */
static char *
expect_token(struct harness *h, json_t *a)
{
	const char	*tok = harness_jstr(a, "session_token");

	if (tok == NULL || strlen(tok) != 32 ||
	    strspn(tok, "0123456789abcdef") != 32)
		fail_answer(h, a, "no session_token of 32 hex digits");
	return (xstrdup(tok));
}

/*
 * A foreground item belongs to its sender too: its EXEC_RESULT carries a
 * token, as a session's EXEC_STARTED does, and <id>.json keeps it. With
 * it, the sender reads the whole log through the worker, more than the
 * answer's capped stdout; without it, or with another, the log is
 * forbidden (ids are guessable, tokens are not).
 */
static void
test_session_foreground_log_needs_its_token(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "fg-log");
	json_t		*a, *m;
	char		*tok, *want;

	harness_worker_start(h, NULL, "--output-cap", "1k", NULL);
	want = seq_text(2000);
	harness_submit(h, "normal", id, "seq 1 2000", NULL);
	a = harness_wait_answer(h, NULL, id, HARNESS_WAIT_MS);
	expect_str(h, a, "type", "EXEC_RESULT");
	if (harness_jbool(a, "truncated") != 1 ||
	    strcmp(jstr(a, "stdout"), want) == 0)
		fail_answer(h, a, "stdout should be cut to 1k");
	tok = expect_token(h, a);
	json_decref(a);
	m = harness_load_meta(h, id);
	expect_str(h, m, "session_token", tok);
	json_decref(m);

	a = process(h, "{\"action\": \"log\", \"session_id\": \"%s\", "
	    "\"token\": \"%s\"}", id, tok);
	expect_process(h, a, "log", id);
	expect_str(h, a, "output", want);
	expect_int(h, a, "size", (int64_t)strlen(want));
	expect_str(h, a, "status", "completed");
	json_decref(a);
	a = process(h, "{\"action\": \"log\", \"session_id\": \"%s\", "
	    "\"token\": null}", id);
	expect_error(h, a, jstr(a, "id"), "forbidden");
	json_decref(a);
	a = process(h, "{\"action\": \"log\", \"session_id\": \"%s\", "
	    "\"token\": \"0123456789abcdef0123456789abcdef\"}", id);
	expect_error(h, a, jstr(a, "id"), "forbidden");
	json_decref(a);
	free(tok);
	free(want);
	harness_pass(h);
}

/*
 * The token is sent once: whoever sends the same id again gets the
 * answer kept for it, the same answer without the token, and cannot read
 * the log with what it got.
 */
static void
test_session_foreground_token_sent_once(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "fg-once");
	json_t		*a1, *a2, *a;
	char		*tok;

	harness_worker_start(h, NULL, NULL);
	harness_submit(h, "normal", id, "echo once", NULL);
	a1 = harness_wait_answer(h, NULL, id, HARNESS_WAIT_MS);
	expect_str(h, a1, "type", "EXEC_RESULT");
	tok = expect_token(h, a1);
	harness_submit(h, "normal", id, "echo once", NULL);
	a2 = harness_wait_answer(h, NULL, id, HARNESS_WAIT_MS);
	expect_str(h, a2, "type", "EXEC_RESULT");
	if (json_object_get(a2, "session_token") != NULL)
		fail_answer(h, a2, "the kept answer should have no token");
	json_object_del(a1, "session_token");
	if (!json_equal(a1, a2))
		fail_answer(h, a2, "the kept answer should be the first one "
		    "less its token");
	a = process(h, "{\"action\": \"log\", \"session_id\": \"%s\", "
	    "\"token\": null}", id);
	expect_error(h, a, jstr(a, "id"), "forbidden");
	json_decref(a);
	a = process(h, "{\"action\": \"log\", \"session_id\": \"%s\", "
	    "\"token\": \"%s\"}", id, tok);
	expect_process(h, a, "log", id);
	expect_str(h, a, "output", "once\n");
	json_decref(a);
	json_decref(a1);
	json_decref(a2);
	free(tok);
	harness_pass(h);
}

/*
 * Another "host": a log dir and a state dir of its own under the test's
 * dir, for a worker that must not see the others' files.
 */
static void
other_host_dirs(struct harness *h, char **log_dir, char **state_dir)
{
	xasprintf(log_dir, "%s/logs-b", h->dir);
	xasprintf(state_dir, "%s/state-b", h->dir);
	if (mkdir(*log_dir, 0700) == -1 || mkdir(*state_dir, 0700) == -1)
		harness_fail(h, "mkdir: %s", strerror(errno));
}

/* Asserts execq:claim:<id> names consumer as the worker that ran id. */
static void
expect_claimed_by(struct harness *h, const char *id, const char *consumer)
{
	redisReply	*r;

	r = harness_cmd(h, "GET execq:claim:%s", id);
	if (r->type != REDIS_REPLY_STRING ||
	    strncmp(r->str, consumer, strlen(consumer)) != 0 ||
	    r->str[strlen(consumer)] != '|')
		harness_fail(h, "execq:claim:%s is %s, expected %s|...", id,
		    r->type == REDIS_REPLY_STRING ? r->str : "not a string",
		    consumer);
	freeReplyObject(r);
}

/*
 * A foreground item's log is on the host of the worker that ran it. Two
 * workers on two "hosts" (each its own log dir): A runs the item, then
 * the PROCESS log items with its token are read by either; the ones B
 * reads go to A (the item's claim names it), and every answer is the
 * whole log, read from A's disk.
 */
static void
test_session_foreground_log_forwarded_to_its_host(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "fg-fwd");
	char		*tok, *want, *log_b, *state_b, *name;
	json_t		*a;
	int		 i, forwards = 0;

	harness_worker_start(h, NULL, "--output-cap", "1k", NULL);
	want = seq_text(2000);
	harness_submit(h, "normal", id, "seq 1 2000", NULL);
	a = harness_wait_answer(h, NULL, id, HARNESS_WAIT_MS);
	expect_str(h, a, "type", "EXEC_RESULT");
	if (strcmp(jstr(a, "stdout"), want) == 0)
		fail_answer(h, a, "stdout should be cut to 1k");
	tok = expect_token(h, a);
	json_decref(a);
	expect_claimed_by(h, id, h->w[0].consumer);

	other_host_dirs(h, &log_b, &state_b);
	harness_worker_start(h, NULL, "--log-dir", log_b, "--state-dir",
	    state_b, NULL);
	xasprintf(&name, "%s/%s.log", log_b, id);
	if (access(name, F_OK) == 0)
		harness_fail(h, "%s: the other host has the log", name);
	for (i = 0; i < 30 && (i < 10 || forwards < 2); i++) {
		a = process(h, "{\"action\": \"log\", \"session_id\": \"%s\", "
		    "\"token\": \"%s\"}", id, tok);
		expect_process(h, a, "log", id);
		expect_str(h, a, "output", want);
		expect_int(h, a, "size", (int64_t)strlen(want));
		expect_str(h, a, "status", "completed");
		json_decref(a);
		forwards = count_forwards(h->w[1].err_path);
	}
	if (forwards == 0)
		harness_fail(h, "%d log items, none read by the other worker "
		    "%s", i, h->w[1].consumer);
	print_message("    %d log items, %d forwarded by %s to %s\n", i,
	    forwards, h->w[1].consumer, h->w[0].consumer);
	free(name);
	free(log_b);
	free(state_b);
	free(tok);
	free(want);
	harness_pass(h);
}

/* Waits until the lease key of consumer is gone; fails after 10 s. */
static void
wait_lease_gone(struct harness *h, const char *consumer)
{
	int64_t		 deadline = harness_now_ms() + HARNESS_WAIT_MS;
	redisReply	*r;
	long long	 n;

	for (;;) {
		r = harness_cmd(h, "EXISTS execq:worker:%s", consumer);
		n = r->integer;
		freeReplyObject(r);
		if (n == 0)
			return;
		if (harness_now_ms() > deadline)
			harness_fail(h, "execq:worker:%s outlived its worker",
			    consumer);
		harness_sleep_ms(10);
	}
}

/*
 * The worker that ran a foreground item is gone: a PROCESS log for it is
 * answered as for a session whose worker is gone, by a worker on another
 * host with unknown_session, and by one on the same host (a restart:
 * another consumer name) from the files.
 */
static void
test_session_foreground_log_worker_gone(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "fg-gone");
	char		*tok, *log_b, *state_b;
	json_t		*a;
	pid_t		 ran, other;

	ran = harness_worker_start(h, NULL, NULL);
	harness_submit(h, "normal", id, "echo gone", NULL);
	a = harness_wait_answer(h, NULL, id, HARNESS_WAIT_MS);
	expect_str(h, a, "type", "EXEC_RESULT");
	tok = expect_token(h, a);
	json_decref(a);
	expect_claimed_by(h, id, h->w[0].consumer);
	harness_stop_clean(h, ran);
	wait_lease_gone(h, h->w[0].consumer);

	other_host_dirs(h, &log_b, &state_b);
	other = harness_worker_start(h, NULL, "--log-dir", log_b,
	    "--state-dir", state_b, NULL);
	a = process(h, "{\"action\": \"log\", \"session_id\": \"%s\", "
	    "\"token\": \"%s\"}", id, tok);
	expect_error(h, a, jstr(a, "id"), "unknown_session");
	if (strstr(jstr(a, "error.message"), "is gone") == NULL)
		fail_answer(h, a, "not the answer for a worker that is gone");
	json_decref(a);

	/* The same host again: the files are here. */
	harness_worker_start(h, NULL, NULL);
	harness_stop_clean(h, other);
	a = process(h, "{\"action\": \"log\", \"session_id\": \"%s\", "
	    "\"token\": \"%s\"}", id, tok);
	expect_process(h, a, "log", id);
	expect_str(h, a, "output", "gone\n");
	json_decref(a);
	free(log_b);
	free(state_b);
	free(tok);
	harness_pass(h);
}

#define T(f)	cmocka_unit_test_setup_teardown(f, harness_setup, \
		    session_teardown)

int
main(void)
{
	const struct CMUnitTest	tests[] = {
		T(test_session_background_job_calls_back_once),
		T(test_session_python_repl_on_pty),
		T(test_session_write_and_eof_on_pipe),
		T(test_session_ctrl_c_interrupts_bash_sleep),
		T(test_session_pty_size),
		T(test_session_kill_ends_tree),
		T(test_session_grandchild_holding_pipe_does_not_hang),
		T(test_session_idle_timeout),
		T(test_session_timeout),
		T(test_session_200_concurrent),
		T(test_session_bad_ids_and_ended_sessions),
		T(test_session_log_lines_range_base64),
		T(test_session_list_shows_running),
		T(test_session_exec_on_control_lane_refused),
		T(test_session_answers_from_files_after_restart),
		T(test_session_redis_mirror),
		T(test_session_forwarded_to_owner),
		T(test_session_young_worker_not_lost),
		T(test_session_shutdown_ends_sessions),
		T(test_session_lost_when_worker_dies),
		T(test_session_startup_cleanup),
		T(test_session_belongs_to_its_starter),
		T(test_session_foreground_log_needs_its_token),
		T(test_session_foreground_token_sent_once),
		T(test_session_foreground_log_forwarded_to_its_host),
		T(test_session_foreground_log_worker_gone),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
