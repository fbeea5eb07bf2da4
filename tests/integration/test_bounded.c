/*
 * Bounded and visible sessions (docs/PROTOCOL.md section 11, issue 24
 * item 3) against a real Redis and the worker binary: max_sessions
 * refuses a session past the cap (ERROR too_many_sessions, the claim
 * released so the same id can come again), the queue's default idle
 * timeout (session_idle_timeout_s) ends a session with no output and no
 * input, input through write keeps one alive, args.keep exempts one from
 * the default (not from its own idle_timeout_s), and list, the mirror
 * and execq ps show the idle time and keep. Every wait has a deadline;
 * the barriers are callbacks and answers, never the clock. Sleeps are
 * named "sleep <n>.<our pid>" so the /proc scans see only this run's.
 */

#include <sys/types.h>

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hiredis/hiredis.h>
#include <jansson.h>

#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "logs/xmalloc.h"
#include "tests/integration/harness.h"

#define CALLBACK_MS	30000	/* a session's callback (a deadline) */
#define CLI_MS		10000	/* one client run (a deadline) */
#define WRITE_EVERY_MS	300	/* the busy session's input */

/* "sleep <n>.<our pid, 7 digits>"; static storage, four at a time. */
static const char *
sleeper(int n)
{
	static char	buf[4][32];
	static int	next;
	char		*s = buf[next++ % 4];

	snprintf(s, sizeof buf[0], "sleep %d.%07ld", n, (long)getpid());
	return (s);
}

/* The harness teardown, then whatever a failed test left of its sleeps. */
static int
bounded_teardown(void **state)
{
	char	mine[16];
	int	rc;

	rc = harness_teardown(state);
	snprintf(mine, sizeof mine, ".%07ld", (long)getpid());
	harness_kill_procs(mine, SIGKILL);
	return (rc);
}

/* A string member, never NULL. */
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

/* Sends command as background session id with args_extra (or NULL). */
static void
submit_session(struct harness *h, const char *id, const char *command,
    const char *args_extra)
{
	json_t		*extra;
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
}

/* Starts session id and checks its EXEC_STARTED. */
static void
start_session(struct harness *h, const char *id, const char *command,
    const char *args_extra)
{
	json_t	*a;

	submit_session(h, id, command, args_extra);
	a = harness_wait_answer(h, NULL, id, HARNESS_WAIT_MS);
	expect_str(h, a, "type", "EXEC_STARTED");
	expect_str(h, a, "session_id", id);
	json_decref(a);
}

/* Session id's callback, checked for status and killed_by. */
static void
expect_callback(struct harness *h, const char *id, const char *status,
    const char *killed_by)
{
	json_t	*a;

	a = harness_wait_callback(h, id, CALLBACK_MS);
	expect_str(h, a, "type", "EXEC_CALLBACK");
	expect_str(h, a, "session_id", id);
	expect_str(h, a, "status", status);
	expect_str(h, a, "killed_by", killed_by);
	json_decref(a);
}

/* kill on session id, answered. */
static void
kill_session(struct harness *h, const char *id)
{
	json_t	*a;

	a = process(h, "{\"action\": \"kill\", \"session_id\": \"%s\"}", id);
	expect_str(h, a, "type", "PROCESS_RESULT");
	json_decref(a);
}

/* Session id's entry in a list answer, or NULL (borrowed). */
static json_t *
list_entry(json_t *list, const char *id)
{
	json_t	*e;
	size_t	 i;

	json_array_foreach(json_object_get(list, "sessions"), i, e) {
		if (strcmp(jstr(e, "session_id"), id) == 0)
			return (e);
	}
	return (NULL);
}

/*
 * max_sessions 2: a third session is refused with too_many_sessions
 * while two run (a kept one counts like any other: nothing is ended to
 * make room); once one ended, the same id is taken again and runs.
 */
static void
test_bounded_max_sessions_refuses(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*a = harness_id(h, "a"), *b = harness_id(h, "b"),
			*c = harness_id(h, "c");
	json_t		*ans, *list;

	harness_worker_start(h, NULL, "--max-sessions", "2", NULL);
	start_session(h, a, sleeper(9101), "{\"keep\": true}");
	start_session(h, b, sleeper(9102), NULL);
	submit_session(h, c, sleeper(9103), NULL);
	ans = harness_wait_answer(h, NULL, c, HARNESS_WAIT_MS);
	expect_str(h, ans, "type", "ERROR");
	expect_str(h, ans, "error.code", "too_many_sessions");
	if (strstr(jstr(ans, "error.message"), "max_sessions") == NULL)
		fail_answer(h, ans, "the message should name max_sessions");
	json_decref(ans);
	if (harness_count_procs(sleeper(9103)) != 0)
		harness_fail(h, "the refused session runs");
	/* Both still run, the kept one says so. */
	list = process(h, "{\"action\": \"list\"}");
	if (list_entry(list, a) == NULL || list_entry(list, b) == NULL)
		fail_answer(h, list, "list lacks a running session");
	expect_str(h, list_entry(list, a), "status", "running");
	expect_str(h, list_entry(list, b), "status", "running");
	if (!harness_jbool(list_entry(list, a), "keep") ||
	    harness_jbool(list_entry(list, b), "keep"))
		fail_answer(h, list, "keep is not as sent");
	json_decref(list);
	/* One ends: the refused id may come again, and runs. */
	kill_session(h, b);
	expect_callback(h, b, "killed", "user");
	start_session(h, c, sleeper(9103), NULL);
	kill_session(h, a);
	kill_session(h, c);
	expect_callback(h, a, "killed", "user");
	expect_callback(h, c, "killed", "user");
	harness_pass(h);
}

/*
 * The queue's idle timeout of 1 s ends a quiet session (its callback:
 * timed_out, killed_by idle), while one that prints nothing but gets
 * input every 300 ms through write lives on: it started first, so
 * without input counting it would have ended before the quiet one. It
 * ends when the test kills it (killed, by user).
 */
static void
test_bounded_idle_default_input_counts(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*busy = harness_id(h, "busy"),
			*quiet = harness_id(h, "quiet");
	json_t		*a, *cb = NULL;
	char		*high;

	harness_worker_start(h, NULL, "--session-idle-timeout", "1", NULL);
	start_session(h, busy, "while read -r l; do :; done", NULL);
	start_session(h, quiet, sleeper(9201), NULL);
	xasprintf(&high, "q:%s:high", h->reply);
	while (cb == NULL) {
		a = process(h, "{\"action\": \"write\", \"session_id\": "
		    "\"%s\", \"data\": \"x\\n\"}", busy);
		if (strcmp(jstr(a, "type"), "PROCESS_RESULT") != 0)
			fail_answer(h, a, "the busy session took no input");
		json_decref(a);
		cb = harness_try_entry(h, high, quiet, WRITE_EVERY_MS);
	}
	expect_str(h, cb, "status", "timed_out");
	expect_str(h, cb, "killed_by", "idle");
	json_decref(cb);
	free(high);
	kill_session(h, busy);
	expect_callback(h, busy, "killed", "user");
	harness_pass(h);
}

/*
 * keep: true is exempt from the queue's idle timeout, but not from its
 * own idle_timeout_s: with a 1 s default, a plain session and a kept one
 * with its own 1 s end idle, then the kept one without its own, started
 * before both, is still there for the test to kill.
 */
static void
test_bounded_keep_survives_idle_default(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*kept = harness_id(h, "kept"),
			*own = harness_id(h, "own"),
			*plain = harness_id(h, "plain");
	json_t		*list;

	harness_worker_start(h, NULL, "--session-idle-timeout", "1", NULL);
	start_session(h, kept, sleeper(9301), "{\"keep\": true}");
	start_session(h, own, sleeper(9302), "{\"keep\": true, "
	    "\"idle_timeout_s\": 1}");
	start_session(h, plain, sleeper(9303), NULL);
	expect_callback(h, own, "timed_out", "idle");
	expect_callback(h, plain, "timed_out", "idle");
	list = process(h, "{\"action\": \"list\"}");
	if (list_entry(list, kept) == NULL)
		fail_answer(h, list, "the kept session is not listed");
	expect_str(h, list_entry(list, kept), "status", "running");
	json_decref(list);
	kill_session(h, kept);
	expect_callback(h, kept, "killed", "user");
	harness_pass(h);
}

/* The mirror's field of session id, or NULL (allocated). */
static char *
mirror_field(struct harness *h, const char *id, const char *field)
{
	redisReply	*r;
	char		*v = NULL;

	r = harness_cmd(h, "HGET execq:session:%s %s", id, field);
	if (r->type == REDIS_REPLY_STRING)
		v = xstrdup(r->str);
	freeReplyObject(r);
	return (v);
}

/* The line of ps --json for id (a new reference), or NULL. */
static json_t *
ps_json_line(struct harness *h, struct harness_proc *p, const char *id)
{
	char	*line, *save = NULL;
	json_t	*j;

	for (line = strtok_r(p->out, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if ((j = json_loads(line, 0, NULL)) == NULL)
			harness_fail(h, "ps --json: not JSON: %.300s", line);
		if (strcmp(jstr(j, "session_id"), id) == 0)
			return (j);
		json_decref(j);
	}
	return (NULL);
}

/*
 * The mirror has keep and last_activity_ms, which input moves on; list
 * has keep and idle_ms; execq spawn --keep sends keep; execq ps shows
 * IDLE and WAITING, and --json idle_ms and keep.
 */
static void
test_bounded_ps_shows_idle(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct harness_proc	 p;
	const char		*id = harness_id(h, "seen");
	const char		*spawn[] = { "spawn", "--queue", h->queue,
				    "--keep", "--", "sleep", NULL, NULL };
	const char		*ps[] = { "ps", NULL };
	const char		*psj[] = { "ps", "--json", NULL };
	json_t			*list, *j;
	char			*v, *start, *sid;
	int64_t			 deadline;

	harness_worker_start(h, NULL, NULL);
	start_session(h, id, "while read -r l; do :; done", NULL);
	/* The mirror says when, and moves on with input. */
	start = mirror_field(h, id, "last_activity_ms");
	v = mirror_field(h, id, "keep");
	if (start == NULL || v == NULL || strcmp(v, "0") != 0)
		harness_fail(h, "mirror: last_activity_ms %s, keep %s",
		    start != NULL ? start : "missing", v != NULL ? v :
		    "missing");
	free(v);
	deadline = harness_now_ms() + CALLBACK_MS;
	for (;;) {
		json_decref(process(h, "{\"action\": \"write\", "
		    "\"session_id\": \"%s\", \"data\": \"x\\n\"}", id));
		v = mirror_field(h, id, "last_activity_ms");
		if (v != NULL && strtoll(v, NULL, 10) > strtoll(start, NULL,
		    10))
			break;
		free(v);
		if (harness_now_ms() > deadline)
			harness_fail(h, "last_activity_ms stays %s after input",
			    start);
		harness_sleep_ms(WRITE_EVERY_MS);
	}
	free(v);
	free(start);
	list = process(h, "{\"action\": \"list\"}");
	if ((j = list_entry(list, id)) == NULL ||
	    !json_is_integer(json_object_get(j, "idle_ms")) ||
	    harness_jint(j, "idle_ms") < 0 ||
	    !json_is_false(json_object_get(j, "keep")))
		fail_answer(h, list, "list: no idle_ms or keep");
	json_decref(list);

	spawn[6] = sleeper(9401) + strlen("sleep ");
	harness_cli(h, &p, NULL, CLI_MS, spawn);
	if (harness_proc_exit(&p) != 0)
		harness_fail(h, "spawn --keep exited %d: %s",
		    harness_proc_exit(&p), p.err);
	sid = xstrdup(strtok(p.out, "\n"));
	harness_proc_release(&p);
	v = mirror_field(h, sid, "keep");
	if (v == NULL || strcmp(v, "1") != 0)
		harness_fail(h, "spawn --keep: mirror keep is %s",
		    v != NULL ? v : "missing");
	free(v);

	harness_cli(h, &p, NULL, CLI_MS, ps);
	if (harness_proc_exit(&p) != 0 || strstr(p.out, "IDLE") == NULL ||
	    strstr(p.out, "WAITING") == NULL || strstr(p.out, id) == NULL)
		harness_fail(h, "ps: no IDLE and WAITING columns, or no %s: "
		    "%.600s", id, p.out);
	harness_proc_release(&p);
	harness_cli(h, &p, NULL, CLI_MS, psj);
	if (harness_proc_exit(&p) != 0)
		harness_fail(h, "ps --json exited %d", harness_proc_exit(&p));
	if ((j = ps_json_line(h, &p, id)) == NULL)
		harness_fail(h, "ps --json: no line for %s", id);
	if (!json_is_integer(json_object_get(j, "idle_ms")) ||
	    harness_jint(j, "idle_ms") < 0 ||
	    !json_is_false(json_object_get(j, "keep")))
		fail_answer(h, j, "ps --json: idle_ms or keep");
	json_decref(j);
	harness_proc_release(&p);
	harness_cli(h, &p, NULL, CLI_MS, psj);
	if ((j = ps_json_line(h, &p, sid)) == NULL ||
	    !json_is_true(json_object_get(j, "keep")))
		harness_fail(h, "ps --json: %s is not kept", sid);
	json_decref(j);
	harness_proc_release(&p);

	kill_session(h, id);
	expect_callback(h, id, "killed", "user");
	free(sid);
	harness_pass(h);
}

#define T(f)	cmocka_unit_test_setup_teardown(f, harness_setup, \
		    bounded_teardown)

int
main(void)
{
	const struct CMUnitTest	tests[] = {
		T(test_bounded_max_sessions_refuses),
		T(test_bounded_idle_default_input_counts),
		T(test_bounded_keep_survives_idle_default),
		T(test_bounded_ps_shows_idle),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
