/*
 * An item's attempts (issue 23): retries with backoff wait in Redis and
 * each runs once, with its own log; delayed items wait for their time; a
 * worker killed between attempts loses none; what exhausts its attempts
 * or cannot run at all joins the dead letters, with its answer.
 */

#include <sys/types.h>

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <hiredis/hiredis.h>
#include <jansson.h>

#include "logs/xmalloc.h"
#include "tests/integration/harness.h"

#define WAIT_MS		30000

/* The number of lines of file name in the workspace. */
static int
count_lines(struct harness *h, const char *name)
{
	char	*path, *text, *p;
	int	 n = 0;

	xasprintf(&path, "%s/%s", h->ws, name);
	text = harness_read_file(path, NULL);
	free(path);
	for (p = text; p != NULL && *p != '\0'; p++)
		n += *p == '\n';
	free(text);
	return (n);
}

/* The next answer for id, which must be of type. */
static json_t *
next(struct harness *h, const char *id, const char *type)
{
	json_t	*a = harness_wait_answer(h, NULL, id, WAIT_MS);

	if (strcmp(harness_jstr(a, "type"), type) != 0) {
		char	*s = json_dumps(a, JSON_COMPACT);

		harness_fail(h, "%s: wanted %s, got %s", id, type, s);
	}
	return (a);
}

/* The dead letters, as XRANGE's reply (freed by the caller). */
static redisReply *
dead_letters(struct harness *h)
{
	return (harness_cmd(h, "XRANGE q:%s:dead - +", h->queue));
}

/* A field of a stream entry of an XRANGE reply, or NULL. */
static const char *
field(const redisReply *e, const char *name)
{
	size_t	i;

	for (i = 0; i + 1 < e->element[1]->elements; i += 2)
		if (strcmp(e->element[1]->element[i]->str, name) == 0)
			return (e->element[1]->element[i + 1]->str);
	return (NULL);
}

/*
 * Fails twice, then succeeds: two EXEC_SCHEDULED notices (each with the
 * attempt before as "last"), then the result of attempt 3, whose log is
 * its own. Three runs, no more.
 */
static void
test_retry_until_success(void **state)
{
	struct harness	*h = harness_fixture(state);
	json_t		*a;
	int		 i;

	harness_worker_start(h, NULL, NULL);
	harness_submit(h, "normal", "r1", "echo run >> runs; "
	    "test $(wc -l < runs) -ge 3",
	    "{\"retry\": {\"max_attempts\": 5, \"initial_ms\": 50, "
	    "\"max_ms\": 200}}");
	for (i = 2; i <= 3; i++) {
		a = next(h, "r1", "EXEC_SCHEDULED");
		assert_string_equal(harness_jstr(a, "reason"), "retry");
		assert_int_equal(harness_jint(a, "attempt"), i);
		assert_true(harness_jint(a, "delay_ms") >= 0);
		assert_true(harness_jint(a, "delay_ms") <= 200);
		assert_true(harness_jint(a, "due_ms") > 0);
		assert_int_equal(harness_jint(a, "last.exit_code"), 1);
		assert_int_equal(harness_jint(a, "last.attempt"), i - 1);
		json_decref(a);
	}
	a = next(h, "r1", "EXEC_RESULT");
	assert_int_equal(harness_jint(a, "exit_code"), 0);
	assert_int_equal(harness_jint(a, "attempt"), 3);
	assert_string_equal(harness_jstr(a, "retry"), "succeeded");
	assert_non_null(strstr(harness_jstr(a, "log_path"),
	    "r1.attempt-3.log"));
	json_decref(a);
	assert_int_equal(count_lines(h, "runs"), 3);
	harness_pass(h);
}

/*
 * Exit 3 counts ("on": [3]) and runs out of attempts: the last answer
 * says "exhausted" and the item is a dead letter, with that answer.
 * Exit 4 does not count: one run, "not_counted", no dead letter.
 */
static void
test_retry_exhausted(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct harness_proc	 p;
	redisReply		*r;
	json_t			*a;

	harness_worker_start(h, NULL, NULL);
	harness_submit(h, "normal", "x4", "exit 4",
	    "{\"retry\": {\"max_attempts\": 2, \"on\": [3]}}");
	a = next(h, "x4", "EXEC_RESULT");
	assert_int_equal(harness_jint(a, "attempt"), 1);
	assert_string_equal(harness_jstr(a, "retry"), "not_counted");
	json_decref(a);
	harness_submit(h, "normal", "x3", "exit 3",
	    "{\"retry\": {\"max_attempts\": 2, \"on\": [3], "
	    "\"initial_ms\": 10}}");
	json_decref(next(h, "x3", "EXEC_SCHEDULED"));
	a = next(h, "x3", "EXEC_RESULT");
	assert_int_equal(harness_jint(a, "exit_code"), 3);
	assert_int_equal(harness_jint(a, "attempt"), 2);
	assert_string_equal(harness_jstr(a, "retry"), "exhausted");
	json_decref(a);
	r = dead_letters(h);
	assert_int_equal(r->elements, 1);
	assert_string_equal(field(r->element[0], "id"), "x3");
	assert_true(strncmp(field(r->element[0], "lane"), "q:", 2) == 0);
	assert_non_null(strstr(field(r->element[0], "lane"), ":normal"));
	assert_non_null(strstr(field(r->element[0], "item"), "exit 3"));
	assert_non_null(strstr(field(r->element[0], "answer"),
	    "\"exhausted\""));
	assert_null(field(r->element[0], "attempt"));
	/* The answer as kept: its session token was sent once, to x3's. */
	assert_null(strstr(field(r->element[0], "answer"), "session_token"));
	freeReplyObject(r);
	/* execq dead shows it; requeue runs it again, as a first attempt. */
	harness_cli_sh(h, &p, WAIT_MS, "$CLI dead --queue $EXECQ_QUEUE "
	    "--json && $CLI dead --queue $EXECQ_QUEUE requeue x3");
	if (harness_proc_exit(&p) != 0 || strstr(p.out, "\"id\":\"x3\"") ==
	    NULL || strstr(p.out, "\"exhausted\"") == NULL ||
	    strstr(p.out, "requeued x3") == NULL)
		harness_fail(h, "execq dead: %d: %s%s", harness_proc_exit(&p),
		    p.out, p.err);
	harness_proc_release(&p);
	a = next(h, "x3", "EXEC_SCHEDULED");
	assert_int_equal(harness_jint(a, "attempt"), 2);
	json_decref(a);
	a = next(h, "x3", "EXEC_RESULT");
	assert_string_equal(harness_jstr(a, "retry"), "exhausted");
	json_decref(a);
	/* Its new letter (the old went with the requeue); drop forgets it. */
	r = dead_letters(h);
	assert_int_equal(r->elements, 1);
	freeReplyObject(r);
	harness_cli_sh(h, &p, WAIT_MS, "$CLI dead --queue $EXECQ_QUEUE "
	    "drop x3 && $CLI dead --queue $EXECQ_QUEUE drop x3");
	if (harness_proc_exit(&p) != 1 || strstr(p.out, "dropped x3") ==
	    NULL || strstr(p.err, "no dead letter") == NULL)
		harness_fail(h, "execq dead drop: %d: %s%s",
		    harness_proc_exit(&p), p.out, p.err);
	harness_proc_release(&p);
	r = dead_letters(h);
	assert_int_equal(r->elements, 0);
	freeReplyObject(r);
	harness_pass(h);
}

/*
 * args.delay_ms: EXEC_SCHEDULED at once (reason "delay", its due time by
 * Redis's clock), and the command runs no earlier than that.
 */
static void
test_delay(void **state)
{
	struct harness	*h = harness_fixture(state);
	json_t		*a;
	long long	 due;
	char		*path, *text;

	harness_worker_start(h, NULL, NULL);
	harness_submit(h, "normal", "d1", "date +%s%3N > ran",
	    "{\"delay_ms\": 1500}");
	a = next(h, "d1", "EXEC_SCHEDULED");
	assert_string_equal(harness_jstr(a, "reason"), "delay");
	assert_int_equal(harness_jint(a, "attempt"), 1);
	due = harness_jint(a, "due_ms");
	json_decref(a);
	a = next(h, "d1", "EXEC_RESULT");
	assert_int_equal(harness_jint(a, "exit_code"), 0);
	json_decref(a);
	xasprintf(&path, "%s/ran", h->ws);
	text = harness_read_file(path, NULL);
	free(path);
	assert_non_null(text);
	if (strtoll(text, NULL, 10) < due)
		harness_fail(h, "ran at %s, due at %lld", text, due);
	free(text);
	/* Due already: it runs at once, no notice. */
	harness_submit(h, "normal", "d2", "true", "{\"not_before_ms\": 1}");
	a = next(h, "d2", "EXEC_RESULT");
	json_decref(a);
	harness_pass(h);
}

/*
 * The worker dies (SIGKILL) while the item waits for its second attempt:
 * another worker makes attempts 2 and 3, each once.
 */
static void
test_retry_worker_killed(void **state)
{
	struct harness	*h = harness_fixture(state);
	json_t		*a;
	pid_t		 pid;

	pid = harness_worker_start(h, NULL, NULL);
	harness_submit(h, "normal", "k1", "echo run >> kruns; exit 1",
	    "{\"retry\": {\"max_attempts\": 3, \"initial_ms\": 2000, "
	    "\"factor\": 1}}");
	json_decref(next(h, "k1", "EXEC_SCHEDULED"));
	harness_worker_kill(h, pid);
	harness_worker_start(h, NULL, NULL);
	a = next(h, "k1", "EXEC_SCHEDULED");
	assert_int_equal(harness_jint(a, "attempt"), 3);
	json_decref(a);
	a = next(h, "k1", "EXEC_RESULT");
	assert_int_equal(harness_jint(a, "attempt"), 3);
	assert_string_equal(harness_jstr(a, "retry"), "exhausted");
	json_decref(a);
	assert_int_equal(count_lines(h, "kruns"), 3);
	harness_pass(h);
}

/*
 * The queue's default (setting retry) for items without args.retry;
 * "retry": false opts out. Items no worker can run are dead letters
 * too: not JSON, refused by the policy.
 */
static void
test_retry_default_and_dead(void **state)
{
	struct harness	*h = harness_fixture(state);
	redisReply	*r;
	json_t		*a;
	size_t		 i;
	int		 bad = 0;

	harness_worker_start(h, NULL, "--retry",
	    "{\"max_attempts\": 2, \"initial_ms\": 10}", NULL);
	harness_submit(h, "normal", "q1", "exit 1", NULL);
	json_decref(next(h, "q1", "EXEC_SCHEDULED"));
	a = next(h, "q1", "EXEC_RESULT");
	assert_int_equal(harness_jint(a, "attempt"), 2);
	json_decref(a);
	harness_submit(h, "normal", "q2", "exit 1", "{\"retry\": false}");
	a = next(h, "q2", "EXEC_RESULT");
	assert_null(harness_jget(a, "attempt"));
	json_decref(a);
	harness_submit_json(h, "normal", "{not json");
	harness_submit(h, "normal", "q3", "echo hi", "{\"cwd\": \"/etc\"}");
	a = next(h, "q3", "ERROR");
	json_decref(a);
	r = dead_letters(h);
	for (i = 0; i < r->elements; i++) {
		const char *ans = field(r->element[i], "answer");

		if (strstr(ans, "bad_json") != NULL &&
		    strcmp(field(r->element[i], "item"), "{not json") == 0)
			bad |= 1;
		if (strcmp(field(r->element[i], "id"), "q3") == 0)
			bad |= 2;
		if (strcmp(field(r->element[i], "id"), "q1") == 0)
			bad |= 4;
	}
	freeReplyObject(r);
	if (bad != 7)
		harness_fail(h, "dead letters: found %d of 7", bad);
	harness_pass(h);
}

/*
 * execq run --retry and --delay: it says on stderr when the next attempt
 * comes, waits for it past its own --wait, and exits with the last
 * attempt's status.
 */
static void
test_retry_cli(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct harness_proc	 p;

	harness_worker_start(h, NULL, NULL);
	harness_cli_sh(h, &p, WAIT_MS, "cd \"$WS\" && $CLI run --queue "
	    "$EXECQ_QUEUE --retry 3 --delay 0.2 --wait 5 -- sh -c 'echo x >> "
	    "cruns; test $(wc -l < cruns) -ge 2 && echo done'");
	if (harness_proc_exit(&p) != 0 || strstr(p.out, "done") == NULL ||
	    strstr(p.err, "delay: attempt 1") == NULL ||
	    strstr(p.err, "retry: attempt 2") == NULL)
		harness_fail(h, "execq run --retry: %d: %s%s",
		    harness_proc_exit(&p), p.out, p.err);
	harness_proc_release(&p);
	assert_int_equal(count_lines(h, "cruns"), 2);
	harness_cli_sh(h, &p, WAIT_MS, "$CLI run --queue $EXECQ_QUEUE "
	    "--retry 26 true");
	if (harness_proc_exit(&p) != 2)
		harness_fail(h, "--retry 26: %d: %s", harness_proc_exit(&p),
		    p.err);
	harness_proc_release(&p);
	harness_pass(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_retry_until_success,
		    harness_setup, harness_teardown),
		cmocka_unit_test_setup_teardown(test_retry_exhausted,
		    harness_setup, harness_teardown),
		cmocka_unit_test_setup_teardown(test_delay,
		    harness_setup, harness_teardown),
		cmocka_unit_test_setup_teardown(test_retry_worker_killed,
		    harness_setup, harness_teardown),
		cmocka_unit_test_setup_teardown(test_retry_default_and_dead,
		    harness_setup, harness_teardown),
		cmocka_unit_test_setup_teardown(test_retry_cli,
		    harness_setup, harness_teardown),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
