/*
 * execq cancel (issue 23): an item that has not run never runs and its
 * sender gets ERROR cancelled, whether it waited in its lane, in the
 * delayed set or for approval; one that runs or ran is not cancelled;
 * an agent's items are the agent's to cancel.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <hiredis/hiredis.h>
#include <jansson.h>

#include "logs/xmalloc.h"
#include "tests/integration/harness.h"

#define WAIT_MS		30000
/* Runs until the test makes the file "go" in the workspace. */
#define BUSY		"while [ ! -e go ]; do sleep 0.05; done; echo ran >> busy"

/* execq cancel ID; its exit status, and its stdout in *out (allocated). */
static int
cancel(struct harness *h, const char *id, char **out)
{
	struct harness_proc	 p;
	char			*script;
	int			 rc;

	xasprintf(&script, "$CLI cancel --queue $EXECQ_QUEUE %s", id);
	harness_cli_sh(h, &p, WAIT_MS, script);
	free(script);
	rc = harness_proc_exit(&p);
	xasprintf(out, "%s%s", p.out, p.err);
	harness_proc_release(&p);
	return (rc);
}

/* The next answer for id: an ERROR cancelled. */
static void
expect_cancelled(struct harness *h, const char *id)
{
	json_t	*a = harness_wait_answer(h, NULL, id, WAIT_MS);

	if (strcmp(harness_jstr(a, "type"), "ERROR") != 0 ||
	    strcmp(harness_jstr(a, "error.code"), "cancelled") != 0) {
		char	*s = json_dumps(a, JSON_COMPACT);

		harness_fail(h, "%s: not cancelled: %s", id, s);
	}
	json_decref(a);
}

/* Makes the workspace's "go" file: BUSY commands end. */
static void
go(struct harness *h)
{
	char	*path;

	xasprintf(&path, "%s/go", h->ws);
	assert_int_equal(harness_write_file(path, "\n"), 0);
	free(path);
}

/*
 * One slot, busy: an item queued behind it is cancelled (its answer
 * comes when the worker reaches it, and it never runs); a delayed one
 * leaves the delayed set at once; the running one is not cancelled, and
 * once it ran, neither ("answered").
 */
static void
test_cancel_queued_delayed_running(void **state)
{
	struct harness	*h = harness_fixture(state);
	redisReply	*r;
	json_t		*a;
	char		*out, *path;

	harness_worker_start(h, NULL, "--max-procs", "1", NULL);
	harness_submit(h, "normal", "busy1", BUSY, NULL);
	harness_wait_running(h, "sleep 0.05");
	harness_submit(h, "normal", "q1", "echo ran > q1ran", NULL);
	harness_submit(h, "normal", "d1", "echo ran > d1ran",
	    "{\"delay_ms\": 600000}");
	if (cancel(h, "q1", &out) != 0 || strstr(out, "cancelled q1 (it "
	    "was queued)") == NULL)
		harness_fail(h, "cancel q1: %s", out);
	free(out);
	if (cancel(h, "busy1", &out) != 1 || strstr(out, "running") == NULL)
		harness_fail(h, "cancel busy1: %s", out);
	free(out);
	go(h);
	a = harness_wait_answer(h, NULL, "busy1", WAIT_MS);
	assert_string_equal(harness_jstr(a, "type"), "EXEC_RESULT");
	json_decref(a);
	expect_cancelled(h, "q1");
	/* d1 was read after q1: its notice, then the cancel. */
	a = harness_wait_answer(h, NULL, "d1", WAIT_MS);
	assert_string_equal(harness_jstr(a, "type"), "EXEC_SCHEDULED");
	json_decref(a);
	if (cancel(h, "d1", &out) != 0 || strstr(out, "it was delayed") ==
	    NULL)
		harness_fail(h, "cancel d1: %s", out);
	free(out);
	expect_cancelled(h, "d1");
	r = harness_cmd(h, "ZCARD q:%s:delayed", h->queue);
	assert_int_equal(r->integer, 0);
	freeReplyObject(r);
	if (cancel(h, "busy1", &out) != 1 || strstr(out, "answered") == NULL)
		harness_fail(h, "cancel busy1 after: %s", out);
	free(out);
	/* Sent again, a cancelled id is answered so, and does not run. */
	harness_submit(h, "normal", "q1", "echo ran > q1ran", NULL);
	expect_cancelled(h, "q1");
	xasprintf(&path, "%s/q1ran", h->ws);
	assert_int_equal(access(path, F_OK), -1);
	free(path);
	xasprintf(&path, "%s/d1ran", h->ws);
	assert_int_equal(access(path, F_OK), -1);
	free(path);
	harness_pass(h);
}

/* A command held for approval is cancelled: its request ends. */
static void
test_cancel_held(void **state)
{
	struct harness	*h = harness_fixture(state);
	json_t		*a;
	char		*out, *hi;

	harness_worker_start(h, NULL, "--tier", "read_only", NULL);
	harness_submit(h, "normal", "h1", "touch made.txt", NULL);
	xasprintf(&hi, "q:%s:high", h->reply);
	a = harness_wait_entry(h, hi, "h1", WAIT_MS);
	assert_string_equal(harness_jstr(a, "type"), "APPROVAL_REQUEST");
	json_decref(a);
	free(hi);
	if (cancel(h, "h1", &out) != 0 || strstr(out, "it was held") == NULL)
		harness_fail(h, "cancel h1: %s", out);
	free(out);
	expect_cancelled(h, "h1");
	harness_pass(h);
}

/*
 * With agents: from the shared lane an agent's id may not be cancelled
 * (forbidden); the agent itself may (its own lane, as execq does when
 * logged in as it: here, its lane written directly).
 */
static void
test_cancel_owner(void **state)
{
	struct harness	*h = harness_fixture(state);
	json_t		*a;
	char		*out, *lane;

	harness_worker_start(h, NULL, "--agents", "la", NULL);
	if (cancel(h, "la.x1", &out) != 125 || strstr(out, "forbidden") ==
	    NULL)
		harness_fail(h, "shared-lane cancel of la.x1: %s", out);
	free(out);
	xasprintf(&lane, "la.ctl");
	harness_submit_json(h, lane, "{\"id\": \"la.c1\", \"type\": "
	    "\"PROCESS\", \"reply_to\": \"la.r\", \"args\": {\"action\": "
	    "\"cancel\", \"session_id\": \"la.x1\"}}");
	free(lane);
	a = harness_wait_answer(h, "la.r", "la.c1", WAIT_MS);
	assert_string_equal(harness_jstr(a, "type"), "PROCESS_RESULT");
	assert_true(harness_jbool(a, "cancelled"));
	assert_string_equal(harness_jstr(a, "state"), "queued");
	json_decref(a);
	/* la.x1 comes: cancelled, to the agent's reply queue. */
	harness_submit_json(h, "la.normal", "{\"id\": \"la.x1\", \"type\": "
	    "\"EXEC\", \"reply_to\": \"la.r\", \"args\": {\"command\": "
	    "\"true\"}}");
	a = harness_wait_answer(h, "la.r", "la.x1", WAIT_MS);
	assert_string_equal(harness_jstr(a, "error.code"), "cancelled");
	json_decref(a);
	harness_pass(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_cancel_queued_delayed_running, harness_setup,
		    harness_teardown),
		cmocka_unit_test_setup_teardown(test_cancel_held,
		    harness_setup, harness_teardown),
		cmocka_unit_test_setup_teardown(test_cancel_owner,
		    harness_setup, harness_teardown),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
