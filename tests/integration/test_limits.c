/*
 * The queue's limits shared by the fleet (setting queue_limits, issue
 * 23): two workers of four slots each never run more than max_running
 * of the queue's items at once, and together start no more than the
 * token bucket allows; an item over a limit waits, it is not refused.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "logs/xmalloc.h"
#include "tests/integration/harness.h"

#define WAIT_MS		60000
#define ITEMS		12

/* Starts two workers of queue h->queue with these limits. */
static void
two_workers(struct harness *h, const char *limits)
{
	char	*json;

	xasprintf(&json, "{\"%s\": %s}", h->queue, limits);
	harness_worker_start(h, NULL, "--max-procs", "4", "--queue-limits",
	    json, NULL);
	harness_worker_start(h, NULL, "--max-procs", "4", "--queue-limits",
	    json, NULL);
	free(json);
}

/* The numbers of file name of the workspace, one a line; *n of them. */
static long long *
numbers(struct harness *h, const char *name, size_t *n)
{
	char		*path, *text, *p, *end;
	long long	*v = NULL;

	xasprintf(&path, "%s/%s", h->ws, name);
	text = harness_read_file(path, NULL);
	free(path);
	*n = 0;
	for (p = text; p != NULL && *p != '\0'; p = end) {
		v = xreallocarray(v, *n + 1, sizeof *v);
		v[(*n)++] = strtoll(p, &end, 10);
		if (end == p)
			break;
		while (*end == '\n')
			end++;
	}
	free(text);
	return (v);
}

/*
 * max_running 2: each command counts the markers of those running with
 * it (its own included); none ever sees more than 2, and some see 2.
 */
static void
test_limits_max_running(void **state)
{
	struct harness	*h = harness_fixture(state);
	long long	*seen, most = 0;
	size_t		 i, n;
	char		 id[16], cmd[160];
	json_t		*a;

	two_workers(h, "{\"max_running\": 2}");
	for (i = 0; i < ITEMS; i++) {
		snprintf(id, sizeof id, "m%zu", i);
		snprintf(cmd, sizeof cmd, "touch r.%s; ls r.* | wc -l >> seen; "
		    "sleep 0.3; rm r.%s", id, id);
		harness_submit(h, "normal", id, cmd, NULL);
	}
	for (i = 0; i < ITEMS; i++) {
		snprintf(id, sizeof id, "m%zu", i);
		a = harness_wait_answer(h, NULL, id, WAIT_MS);
		assert_string_equal(harness_jstr(a, "type"), "EXEC_RESULT");
		assert_int_equal(harness_jint(a, "exit_code"), 0);
		json_decref(a);
	}
	seen = numbers(h, "seen", &n);
	assert_int_equal(n, ITEMS);
	for (i = 0; i < n; i++)
		if (seen[i] > most)
			most = seen[i];
	free(seen);
	if (most != 2)
		harness_fail(h, "at most %lld ran at once; the limit is 2", most);
	harness_pass(h);
}

/*
 * max_per_s 4 (a bucket of 4): in any span of the starts, no more than
 * 4 + 4 a second of it (and one for the clocks' grain) began.
 */
static void
test_limits_rate(void **state)
{
	struct harness	*h = harness_fixture(state);
	long long	*t, span;
	size_t		 i, j, n;
	char		 id[16];
	json_t		*a;

	two_workers(h, "{\"max_per_s\": 4}");
	for (i = 0; i < ITEMS; i++) {
		snprintf(id, sizeof id, "s%zu", i);
		harness_submit(h, "normal", id, "date +%s%3N >> starts", NULL);
	}
	for (i = 0; i < ITEMS; i++) {
		snprintf(id, sizeof id, "s%zu", i);
		a = harness_wait_answer(h, NULL, id, WAIT_MS);
		assert_int_equal(harness_jint(a, "exit_code"), 0);
		json_decref(a);
	}
	t = numbers(h, "starts", &n);
	assert_int_equal(n, ITEMS);
	for (i = 1; i < n; i++)		/* in order of their times */
		for (j = i; j > 0 && t[j - 1] > t[j]; j--) {
			span = t[j];
			t[j] = t[j - 1];
			t[j - 1] = span;
		}
	for (i = 0; i < n; i++)
		for (j = i; j < n; j++) {
			span = t[j] - t[i];
			if ((long long)(j - i + 1) > 4 + 1 + span * 4 / 1000)
				harness_fail(h, "%zu starts within %lld ms; 4 a "
				    "second (a bucket of 4) allows %lld",
				    j - i + 1, span, 4 + span * 4 / 1000);
		}
	free(t);
	harness_pass(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_limits_max_running,
		    harness_setup, harness_teardown),
		cmocka_unit_test_setup_teardown(test_limits_rate,
		    harness_setup, harness_teardown),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
