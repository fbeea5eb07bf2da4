/*
 * The claim, the idempotency key of an item, run as the worker runs it:
 * queue/scripts.c's claim and release scripts, EVAL'd on the test's own
 * Redis with the arguments queue/outbox.c gives them. One table row per
 * step of a story; each story on its own id.
 */

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <hiredis/hiredis.h>

#include "queue/queue_int.h"
#include "tests/integration/harness.h"

/* One EVAL of the claim script: {outcome} or {2, answer}. */
static long long
claim(struct harness *h, const char *id, const char *consumer,
    const char *redelivered, const char *retries, const char *entry,
    const char *life)
{
	redisReply	*r;
	long long	 n;

	r = harness_cmd(h, "EVAL %s 2 execq:claim:%s execq:answer:%s %s 60 %s "
	    "%s %s %s", queue_claim_lua, id, id, consumer, redelivered,
	    retries, entry, life);
	assert_int_equal(r->type, REDIS_REPLY_ARRAY);
	n = r->element[0]->integer;
	freeReplyObject(r);
	return (n);
}

static char *
claim_value(struct harness *h, const char *id)
{
	redisReply	*r;
	char		*v;

	r = harness_cmd(h, "GET execq:claim:%s", id);
	v = r->type == REDIS_REPLY_STRING ? strdup(r->str) : NULL;
	freeReplyObject(r);
	return (v);
}

/*
 * An entry a life ran comes back to the same life (its answer lost): a
 * resend of the first claim still runs (it is the same request), but a
 * claim with the reclaim mark counts the run: lost with retries 0, once
 * more with retries 1, and never again after that.
 */
static void
test_claim_same_life_counts_an_earlier_run(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "ran");
	const char	*id2 = harness_id(h, "ran2");
	char		*v;

	assert_int_equal(claim(h, id, "w1", "0", "0", "1-0", "aaaa"), 1);
	/* The same request again (its reply was lost): run. */
	assert_int_equal(claim(h, id, "w1", "0", "0", "1-0", "aaaa"), 1);
	/* The entry again, after this life ran it: counted, lost. */
	assert_int_equal(claim(h, id, "w1", "1", "0", "1-0", "aaaa!1"), 4);
	/* With retries 1: once more, then lost. */
	assert_int_equal(claim(h, id2, "w1", "0", "1", "2-0", "aaaa"), 1);
	assert_int_equal(claim(h, id2, "w1", "1", "1", "2-0", "aaaa!2"), 1);
	v = claim_value(h, id2);
	assert_string_equal(v, "w1|2|2-0@aaaa!2");
	free(v);
	/* A resend of that reclaim is the same request: run. */
	assert_int_equal(claim(h, id2, "w1", "1", "1", "2-0", "aaaa!2"), 1);
	assert_int_equal(claim(h, id2, "w1", "1", "1", "2-0", "aaaa!3"), 4);
	harness_pass(h);
}

/* A claim made with a reclaim mark is still this life's to release. */
static void
test_claim_release_of_a_reclaim(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "rel");
	redisReply	*r;
	char		*v;

	assert_int_equal(claim(h, id, "w1", "0", "1", "3-0", "bbbb"), 1);
	assert_int_equal(claim(h, id, "w1", "1", "1", "3-0", "bbbb!7"), 1);
	/* Another life's release does nothing. */
	r = harness_cmd(h, "EVAL %s 1 execq:claim:%s w1 3-0@cccc 60",
	    queue_release_lua, id);
	assert_int_equal(r->integer, 0);
	freeReplyObject(r);
	r = harness_cmd(h, "EVAL %s 1 execq:claim:%s w1 3-0@bbbb 60",
	    queue_release_lua, id);
	assert_int_equal(r->integer, 1);
	freeReplyObject(r);
	v = claim_value(h, id);
	assert_string_equal(v, "-");
	free(v);
	harness_pass(h);
}

#define T(f)	cmocka_unit_test_setup_teardown(f, harness_setup, \
		    harness_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_claim_same_life_counts_an_earlier_run),
		T(test_claim_release_of_a_reclaim),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
