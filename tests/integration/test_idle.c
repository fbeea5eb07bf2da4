/*
 * What an idle or busy worker's reads still hear (issue 25, item 4): the
 * blocking read waits QUEUE_BLOCK_MS (10 s) and a worker with no free
 * slot reads its control lanes only after a grace, yet a control item
 * reaches an idle worker, and a busy one, as it arrives; work sent to an
 * idle worker runs, and a delayed item comes back though the queue had
 * none delayed a moment before. Each wait has a deadline well under the
 * BLOCK: an item seen only when a read ran out would miss it.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "tests/integration/harness.h"

#define WAIT_MS		20000
#define PROMPT_MS	5000	/* half the BLOCK (queue_int.h) */
/* Runs until the test makes the file "go" in the workspace. */
#define BUSY		"while [ ! -e go ]; do sleep 0.05; done"

/* A PROCESS list, answered before the deadline. */
static void
expect_listed(struct harness *h)
{
	json_t	*a = harness_process(h, "{\"action\": \"list\"}", PROMPT_MS);

	assert_string_equal(harness_jstr(a, "type"), "PROCESS_RESULT");
	json_decref(a);
}

/*
 * An idle worker, blocked in its read: a control item, then work, each
 * answered before the BLOCK could have run out.
 */
static void
test_idle_hears_control_and_work(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "first");
	const char	*id2 = harness_id(h, "second");
	json_t		*a;

	harness_worker_start(h, NULL, NULL);
	harness_submit(h, "normal", id, "true", NULL);
	json_decref(harness_wait_answer(h, NULL, id, WAIT_MS));
	harness_sleep_ms(500);		/* blocked in its read by now */
	expect_listed(h);
	harness_sleep_ms(500);
	harness_submit(h, "normal", id2, "echo two", NULL);
	a = harness_wait_answer(h, NULL, id2, PROMPT_MS);
	assert_string_equal(harness_jstr(a, "type"), "EXEC_RESULT");
	json_decref(a);
	harness_pass(h);
}

/* A worker whose one slot is busy still hears a control item. */
static void
test_busy_hears_control(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "busy");
	char		*go;

	harness_worker_start(h, NULL, "--max-procs", "1", NULL);
	harness_submit(h, "normal", id, BUSY, NULL);
	harness_wait_running(h, "go ]");
	expect_listed(h);
	if (asprintf(&go, "%s/go", h->ws) == -1)
		harness_fail(h, "out of memory");
	harness_write_file(go, "");
	free(go);
	json_decref(harness_wait_answer(h, NULL, id, WAIT_MS));
	harness_pass(h);
}

/*
 * An item delayed by 1 s while the queue had nothing delayed (the
 * promote tick looked and found none): back in its lane and run.
 */
static void
test_delayed_after_quiet(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "first");
	const char	*id2 = harness_id(h, "later");
	json_t		*a;

	harness_worker_start(h, NULL, NULL);
	harness_submit(h, "normal", id, "true", NULL);
	json_decref(harness_wait_answer(h, NULL, id, WAIT_MS));
	harness_sleep_ms(1500);		/* a promote found none delayed */
	harness_submit(h, "normal", id2, "echo later", "{\"delay_ms\": 1000}");
	a = harness_wait_answer(h, NULL, id2, WAIT_MS);
	assert_string_equal(harness_jstr(a, "type"), "EXEC_SCHEDULED");
	json_decref(a);
	a = harness_wait_answer(h, NULL, id2, PROMPT_MS);
	assert_string_equal(harness_jstr(a, "type"), "EXEC_RESULT");
	json_decref(a);
	harness_pass(h);
}

#define T(f)	cmocka_unit_test_setup_teardown(f, harness_setup, \
		    harness_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_idle_hears_control_and_work),
		T(test_busy_hears_control),
		T(test_delayed_after_quiet),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
