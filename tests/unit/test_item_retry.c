/*
 * args.retry, delay_ms and not_before_ms: what is accepted and refused,
 * which outcomes count, and the backoff's bounds (full jitter).
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "queue/item.h"

/* Parses an EXEC item with these args (JSON object members). */
static struct item *
parse(const char *args, struct item_error *err)
{
	char	buf[1024];

	snprintf(buf, sizeof buf, "{\"id\": \"a\", \"type\": \"EXEC\", "
	    "\"args\": {\"command\": \"true\"%s%s}}", *args ? ", " : "", args);
	return (item_parse(buf, strlen(buf), 1 << 20, err));
}

static void
test_retry_defaults(void **state)
{
	struct item_error	 err;
	struct item		*it;

	(void)state;
	it = parse("\"retry\": {}", &err);
	assert_non_null(it);
	assert_int_equal(it->retry->max_attempts, ITEM_RETRY_ATTEMPTS_DEF);
	assert_int_equal(it->retry->initial_ms, ITEM_RETRY_INITIAL_DEF);
	assert_int_equal(it->retry->max_ms, ITEM_RETRY_MAX_DEF);
	assert_true(it->retry->factor == 2);
	/* Every outcome counts by default; success never does. */
	assert_true(item_retry_counts(it->retry, 1, 0, 0, 0));
	assert_true(item_retry_counts(it->retry, 0, 1, 0, 124));
	assert_true(item_retry_counts(it->retry, 0, 0, 9, 137));
	assert_true(item_retry_counts(it->retry, 0, 0, 0, 1));
	assert_false(item_retry_counts(it->retry, 0, 0, 0, 0));
	item_free(it);
	it = parse("\"retry\": false", &err);
	assert_non_null(it);
	assert_null(it->retry);
	assert_true(it->no_retry);
	item_free(it);
}

static void
test_retry_on(void **state)
{
	struct item_error	 err;
	struct item		*it;

	(void)state;
	it = parse("\"retry\": {\"on\": [3, 75, \"timeout\"]}", &err);
	assert_non_null(it);
	assert_true(item_retry_counts(it->retry, 0, 0, 0, 3));
	assert_true(item_retry_counts(it->retry, 0, 0, 0, 75));
	assert_false(item_retry_counts(it->retry, 0, 0, 0, 4));
	assert_true(item_retry_counts(it->retry, 0, 1, 0, 124));
	assert_false(item_retry_counts(it->retry, 0, 0, 9, 137));
	assert_false(item_retry_counts(it->retry, 1, 0, 0, 0));
	item_free(it);
	it = parse("\"retry\": {\"on\": \"signal\"}", &err);
	assert_non_null(it);
	assert_true(item_retry_counts(it->retry, 0, 0, 15, 143));
	assert_false(item_retry_counts(it->retry, 0, 0, 0, 1));
	item_free(it);
}

/* Each refusal: bad_args, and a message that names the member. */
static void
test_retry_refused(void **state)
{
	static const struct {
		const char	*args, *says;
	} bad[] = {
		{ "\"retry\": 3", "args.retry must be" },
		{ "\"retry\": {\"on\": []}", "empty" },
		{ "\"retry\": {\"on\": [\"often\"]}", "args.retry.on" },
		{ "\"retry\": {\"on\": [0]}", "exit code" },
		{ "\"retry\": {\"on\": [256]}", "exit code" },
		{ "\"retry\": {\"max_attempts\": 0}", "max_attempts" },
		{ "\"retry\": {\"max_attempts\": 26}", "max_attempts" },
		{ "\"retry\": {\"factor\": 0.5}", "factor" },
		{ "\"retry\": {\"factor\": \"2\"}", "factor" },
		{ "\"retry\": {\"initial_ms\": -1}", "initial_ms" },
		{ "\"retry\": {\"tries\": 3}", "no member" },
		{ "\"retry\": {}, \"background\": true", "foreground" },
		{ "\"delay_ms\": -5", "delay_ms" },
		{ "\"delay_ms\": 5, \"not_before_ms\": 9", "give one" },
		{ "\"not_before_ms\": \"soon\"", "not_before_ms" },
	};
	struct item_error	 err;
	struct item		*it;
	size_t			 i;

	(void)state;
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		it = parse(bad[i].args, &err);
		if (it != NULL)
			fail_msg("accepted: %s", bad[i].args);
		if (strstr(err.message, bad[i].says) == NULL)
			fail_msg("%s: \"%s\" does not say %s", bad[i].args,
			    err.message, bad[i].says);
		assert_true(err.code == ERR_BAD_ARGS ||
		    err.code == ERR_BAD_ITEM);
		item_error_release(&err);
	}
}

/* The wait stays within 0 .. min(max_ms, initial_ms * factor^(n-1)). */
static void
test_retry_delay(void **state)
{
	struct item_retry	r;
	uint32_t		rnd;
	unsigned		n;
	long			cap, d;

	(void)state;
	memset(&r, 0, sizeof r);
	r.initial_ms = 100;
	r.max_ms = 1000;
	r.factor = 3;
	for (n = 1; n <= 25; n++) {
		cap = n == 1 ? 100 : n == 2 ? 300 : n == 3 ? 900 : 1000;
		assert_int_equal(item_retry_delay(&r, n, (uint32_t)cap), cap);
		assert_int_equal(item_retry_delay(&r, n, 0), 0);
		for (rnd = 1; rnd < 100000; rnd += 7919) {
			d = item_retry_delay(&r, n, rnd * 2654435761u);
			assert_true(d >= 0 && d <= cap);
		}
	}
	/* A huge factor or attempt count never overflows past max_ms. */
	r.factor = 10;
	r.max_ms = 2592000000L;
	assert_true(item_retry_delay(&r, 25, UINT32_MAX) <= r.max_ms);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_retry_defaults),
		cmocka_unit_test(test_retry_on),
		cmocka_unit_test(test_retry_refused),
		cmocka_unit_test(test_retry_delay),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
