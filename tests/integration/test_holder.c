/*
 * Sessions that survive a worker restart (issue 24, item 4): the worker
 * runs under a holder (hold_sessions, on by default); SIGUSR2 makes it
 * hand its sessions over and exit, a crash (SIGKILL) ends it without a
 * word, and either way the next worker the holder starts adopts them: a
 * PTY session and a shell session keep their process, cwd, variables and
 * output, a poll from offset 0 sees every line once and in order, and
 * each session's EXEC_CALLBACK comes once. A foreground item the crashed
 * worker was running does not outlive it.
 */

#include <sys/types.h>

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "logs/xmalloc.h"
#include "tests/integration/harness.h"

#define WAIT_MS		30000
#define POLL_WAIT_MS	500

static const char	*ticker, *sh;	/* this test's session ids */

/* Ids no other test on this Redis uses. */
static void
name_sessions(struct harness *h)
{
	ticker = harness_id(h, "ticker");
	sh = harness_id(h, "sh");
}

/* PROCESS poll of sid from offset; the answer. */
static json_t *
poll_at(struct harness *h, const char *sid, long long offset)
{
	char	*args;
	json_t	*a;

	xasprintf(&args, "{\"action\": \"poll\", \"session_id\": \"%s\", "
	    "\"offset\": %lld, \"wait_ms\": %d}", sid, offset, POLL_WAIT_MS);
	a = harness_process(h, args, WAIT_MS);
	free(args);
	if (strcmp(harness_jstr(a, "type"), "PROCESS_RESULT") != 0) {
		args = json_dumps(a, JSON_COMPACT);
		harness_fail(h, "poll %s: %s", sid, args);
	}
	return (a);
}

/*
 * Polls sid from offset 0, every answer starting where the last ended,
 * until the output holds "tick <n>\r\n"; the output.
 */
static char *
poll_ticks(struct harness *h, const char *sid, int n)
{
	int64_t		 deadline = harness_now_ms() + WAIT_MS;
	long long	 offset = 0;
	char		*out = xstrdup(""), *more, needle[32];
	json_t		*a;

	snprintf(needle, sizeof needle, "tick %d\r\n", n);
	while (strstr(out, needle) == NULL) {
		if (harness_now_ms() > deadline)
			harness_fail(h, "session %s: no \"tick %d\" within %d "
			    "ms; output: %.300s", sid, n, WAIT_MS, out);
		a = poll_at(h, sid, offset);
		if (harness_jint(a, "offset") != offset)
			harness_fail(h, "poll from %lld answered from %lld",
			    offset, (long long)harness_jint(a, "offset"));
		xasprintf(&more, "%s%s", out, harness_jstr(a, "output"));
		free(out);
		out = more;
		offset = harness_jint(a, "next_offset");
		json_decref(a);
	}
	return (out);
}

/* Every "tick i" from 0 to n, once each and in order: no gap, no copy. */
static void
assert_ticks(struct harness *h, const char *out, int n)
{
	char		 want[32];
	const char	*p = out;
	int		 i;

	for (i = 0; i <= n; i++) {
		snprintf(want, sizeof want, "tick %d\r\n", i);
		if (strncmp(p, want, strlen(want)) != 0)
			harness_fail(h, "the log has a gap or a copy at tick "
			    "%d: %.80s", i, p);
		p += strlen(want);
	}
}

/* The tick count in the last full line of out. */
static int
last_tick(const char *out)
{
	const char	*p = out, *q;
	int		 n = -1;

	while ((q = strstr(p, "tick ")) != NULL) {
		if (strchr(q, '\n') != NULL)
			n = atoi(q + 5);
		p = q + 5;
	}
	return (n);
}

/* Starts the PTY ticker and the shell session; the shell's own pid. */
static long
start_both(struct harness *h, char **cwd_out)
{
	json_t	*a;
	long	 pid;
	char	*want;

	harness_submit(h, "normal", ticker, "i=0; while [ $i -lt 100000 ]; "
	    "do echo tick $i; i=$((i+1)); sleep 0.02; done",
	    "{\"background\": true, \"pty\": true}");
	a = harness_wait_answer(h, NULL, ticker, WAIT_MS);
	assert_string_equal(harness_jstr(a, "type"), "EXEC_STARTED");
	json_decref(a);
	harness_shell_start(h, sh, "mkdir -p kept; cd kept; export "
	    "KEPT=yes; echo tmp-kept > $TMPDIR/mark");
	a = harness_shell_exec(h, sh, "echo $KEPT $$; pwd; cat $TMPDIR/mark",
	    0);
	assert_string_equal(harness_jstr(a, "type"), "PROCESS_RESULT");
	pid = atol(harness_jstr(a, "stdout") + 4);
	xasprintf(&want, "yes %ld\n%s/kept\ntmp-kept\n", pid, h->ws);
	assert_string_equal(harness_jstr(a, "stdout"), want);
	json_decref(a);
	*cwd_out = want;
	return (pid);
}

/* After the restart: the same shell, cwd, variables; the ticks go on. */
static void
check_both(struct harness *h, const char *want, int ticks_before)
{
	json_t	*a;
	char	*out;
	int	 n;

	a = harness_shell_exec(h, sh, "echo $KEPT $$; pwd; cat $TMPDIR/mark",
	    0);
	if (strcmp(harness_jstr(a, "type"), "PROCESS_RESULT") != 0 ||
	    strcmp(harness_jstr(a, "stdout"), want) != 0) {
		out = json_dumps(a, JSON_COMPACT);
		harness_fail(h, "the shell after the restart: %s (wanted %s)",
		    out, want);
	}
	json_decref(a);
	out = poll_ticks(h, ticker, ticks_before + 20);
	n = last_tick(out);
	assert_ticks(h, out, n);
	free(out);
}

/* PROCESS kill of session sid. */
static void
kill_session(struct harness *h, const char *sid)
{
	char	*args;

	xasprintf(&args, "{\"action\": \"kill\", \"session_id\": \"%s\"}",
	    sid);
	json_decref(harness_process(h, args, WAIT_MS));
	free(args);
}

/*
 * Waits until the shell's log shows the command that ran through the
 * crash printed "done" and its mark after it.
 */
static void
wait_orphan_done(struct harness *h, const char *sid)
{
	int64_t		 deadline = harness_now_ms() + WAIT_MS;
	const char	*done;
	char		*path, *log;

	xasprintf(&path, "%s/%s.log", h->log_dir, sid);
	for (;;) {
		log = harness_read_file(path, NULL);
		if (log != NULL && (done = strstr(log, "done\n")) != NULL &&
		    strstr(done, " 0\n") != NULL)
			break;
		free(log);
		if (harness_now_ms() > deadline)
			harness_fail(h, "the command of the crash did not end");
		harness_sleep_ms(20);
	}
	free(log);
	free(path);
}

static void
test_holder_handover(void **state)
{
	struct harness	*h = harness_fixture(state);
	json_t		*cb;
	char		*want, *out;
	pid_t		 holder, w1, w2;
	int		 ticks;

	name_sessions(h);
	holder = harness_worker_start(h, NULL, NULL);
	w1 = harness_wait_worker_proc(h, holder, -1, WAIT_MS);
	start_both(h, &want);
	out = poll_ticks(h, ticker, 3);
	ticks = last_tick(out);
	free(out);
	assert_int_equal(kill(holder, SIGUSR2), 0);
	w2 = harness_wait_worker_proc(h, holder, w1, WAIT_MS);
	assert_true(w2 != w1);
	check_both(h, want, ticks);
	free(want);
	/* Ended by the new worker: one callback each, with its exit. */
	kill_session(h, ticker);
	cb = harness_wait_callback(h, ticker, WAIT_MS);
	assert_string_equal(harness_jstr(cb, "status"), "killed");
	assert_string_equal(harness_jstr(cb, "killed_by"), "user");
	json_decref(cb);
	kill_session(h, sh);
	json_decref(harness_wait_callback(h, sh, WAIT_MS));
	assert_int_equal(harness_count_callbacks(h, ticker), 1);
	assert_int_equal(harness_count_callbacks(h, sh), 1);
	harness_stop_clean(h, holder);
	harness_pass(h);
}

static void
test_holder_crash(void **state)
{
	struct harness	*h = harness_fixture(state);
	json_t		*cb;
	char		*want, *out, *path, *text;
	const char	*orphan;
	pid_t		 holder, w1;
	long		 fg;
	int		 ticks;

	name_sessions(h);
	holder = harness_worker_start(h, NULL, NULL);
	assert_true(harness_outer_limit(h, holder) > 0);
	w1 = harness_wait_worker_proc(h, holder, -1, WAIT_MS);
	start_both(h, &want);
	/* A foreground item mid-way when the worker dies. */
	harness_submit(h, "normal", harness_id(h, "fg"), "echo $$ > fg.pid; exec sleep 1000",
	    NULL);
	xasprintf(&path, "%s/fg.pid", h->ws);
	if (harness_wait_file(path, WAIT_MS) == -1)
		harness_fail(h, "the foreground item did not start");
	while ((text = harness_read_file(path, NULL)) == NULL ||
	    strchr(text, '\n') == NULL) {
		free(text);
		harness_sleep_ms(10);
	}
	fg = atol(text);
	free(text);
	free(path);
	out = poll_ticks(h, ticker, 3);
	ticks = last_tick(out);
	free(out);
	/* A shell command mid-way: never run twice, even if sent again. */
	xasprintf(&text, "{\"action\": \"exec\", \"session_id\": \"%s\", "
	    "\"command\": \"echo run >> ../ran.txt; sleep 0.5; echo done\"}", sh);
	orphan = harness_submit_process(h, text);
	free(text);
	harness_wait_ws_lines(h, "ran.txt", 1, WAIT_MS);
	assert_int_equal(kill(w1, SIGKILL), 0);
	(void)harness_wait_worker_proc(h, holder, w1, WAIT_MS);
	wait_orphan_done(h, sh);
	xasprintf(&text, "{\"id\": \"%s\", \"type\": \"PROCESS\", "
	    "\"reply_to\": \"%s\", \"args\": {\"action\": \"exec\", "
	    "\"session_id\": \"%s\", \"command\": \"echo run >> ../ran.txt\", "
	    "\"token\": \"%s\"}}", orphan, h->reply, sh,
	    json_string_value(json_object_get(h->tokens, sh)));
	harness_submit_json(h, "ctl", text);
	free(text);
	cb = harness_wait_answer(h, NULL, orphan, WAIT_MS);
	assert_string_equal(harness_jstr(cb, "error.code"), "duplicate_id");
	json_decref(cb);
	assert_int_equal(harness_ws_lines(h, "ran.txt"), 1);
	check_both(h, want, ticks);
	free(want);
	/* The dead worker's item: killed by the next one, not adopted. */
	for (int64_t d = harness_now_ms() + WAIT_MS; kill((pid_t)fg, 0) == 0;
	    harness_sleep_ms(20))
		if (harness_now_ms() > d)
			harness_fail(h, "the crashed worker's item (pid %ld) "
			    "still runs", fg);
	/* SIGTERM to the holder ends the sessions as always: once each. */
	harness_stop_clean(h, holder);
	cb = harness_wait_callback(h, ticker, WAIT_MS);
	assert_string_equal(harness_jstr(cb, "killed_by"), "shutdown");
	json_decref(cb);
	json_decref(harness_wait_callback(h, sh, WAIT_MS));
	assert_int_equal(harness_count_callbacks(h, ticker), 1);
	assert_int_equal(harness_count_callbacks(h, sh), 1);
	harness_pass(h);
}

/*
 * The last write that went into a session before its worker crashed,
 * delivered again (as a takeover would), is answered duplicate_id and
 * never written twice.
 */
static void
test_holder_write_once(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*cat = harness_id(h, "cat"), *wid = harness_id(h, "w1");
	char		*item, *log, *path;
	const char	*p;
	json_t		*a;
	pid_t		 holder, w1;
	int		 n;

	holder = harness_worker_start(h, NULL, NULL);
	w1 = harness_wait_worker_proc(h, holder, -1, WAIT_MS);
	harness_submit(h, "normal", cat, "cat", "{\"background\": true}");
	a = harness_wait_answer(h, NULL, cat, WAIT_MS);
	assert_string_equal(harness_jstr(a, "type"), "EXEC_STARTED");
	json_decref(a);
	xasprintf(&item, "{\"id\": \"%s\", \"type\": \"PROCESS\", "
	    "\"reply_to\": \"%s\", \"args\": {\"action\": \"write\", "
	    "\"session_id\": \"%s\", \"data\": \"once-only\\n\", "
	    "\"token\": \"%s\"}}", wid, h->reply, cat,
	    json_string_value(json_object_get(h->tokens, cat)));
	harness_submit_json(h, "ctl", item);
	a = harness_wait_answer(h, NULL, wid, WAIT_MS);
	assert_string_equal(harness_jstr(a, "type"), "PROCESS_RESULT");
	json_decref(a);
	assert_int_equal(kill(w1, SIGKILL), 0);
	(void)harness_wait_worker_proc(h, holder, w1, WAIT_MS);
	harness_submit_json(h, "ctl", item);
	a = harness_wait_answer(h, NULL, wid, WAIT_MS);
	if (harness_jstr(a, "error.code") == NULL ||
	    strcmp(harness_jstr(a, "error.code"), "duplicate_id") != 0)
		harness_fail(h, "the write sent again was done again: %s",
		    json_dumps(a, JSON_COMPACT));
	json_decref(a);
	free(item);
	/* Its callback comes once its log is on disk: all of it. */
	xasprintf(&path, "%s/%s.log", h->log_dir, cat);
	kill_session(h, cat);
	json_decref(harness_wait_callback(h, cat, WAIT_MS));
	log = harness_read_file(path, NULL);
	assert_non_null(log);
	for (n = 0, p = log; (p = strstr(p, "once-only")) != NULL; p++)
		n++;
	assert_int_equal(n, 1);
	free(log);
	free(path);
	harness_stop_clean(h, holder);
	harness_pass(h);
}

/* hold_sessions off: no holder; SIGUSR2 is logged and ignored. */
static void
test_holder_off(void **state)
{
	struct harness	*h = harness_fixture(state);
	json_t		*a;
	pid_t		 w;

	name_sessions(h);
	w = harness_worker_start(h, NULL, "--no-hold-sessions", NULL);
	harness_shell_start(h, sh, ":");
	assert_int_equal(kill(w, SIGUSR2), 0);
	a = harness_shell_exec(h, sh, "echo still", 0);
	assert_string_equal(harness_jstr(a, "stdout"), "still\n");
	json_decref(a);
	assert_true(harness_worker_alive(h, w));
	harness_stop_clean(h, w);
	harness_pass(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_holder_handover,
		    harness_setup, harness_teardown),
		cmocka_unit_test_setup_teardown(test_holder_crash,
		    harness_setup, harness_teardown),
		cmocka_unit_test_setup_teardown(test_holder_write_once,
		    harness_setup, harness_teardown),
		cmocka_unit_test_setup_teardown(test_holder_off,
		    harness_setup, harness_teardown),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
