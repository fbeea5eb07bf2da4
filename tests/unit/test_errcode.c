/* Unit tests for logs/errcode.c and logs/clock.c. */

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "logs/clock.h"
#include "logs/errcode.h"

/* Every code has a name of its own, and the name leads back to it. */
static void
test_errcode_names_whole_and_unique(void **state)
{
	unsigned	i, j;
	const char	*n;

	(void)state;
	assert_string_equal(errcode_name(ERR_NONE), "");
	for (i = 1; i < ERR_COUNT; i++) {
		n = errcode_name((enum errcode)i);
		if (*n == '\0')
			fail_msg("code %u has no name", i);
		assert_int_equal(errcode_parse(n), i);
		for (j = 1; j < i; j++)
			if (strcmp(n, errcode_name((enum errcode)j)) == 0)
				fail_msg("codes %u and %u are both %s", j, i,
				    n);
	}
	assert_string_equal(errcode_name(ERR_COUNT), "");
	assert_string_equal(errcode_name((enum errcode)-1), "");
	assert_int_equal(errcode_parse("no_such_code"), ERR_NONE);
	assert_int_equal(errcode_parse(NULL), ERR_NONE);
	assert_string_equal(errcode_name(ERR_BAD_ITEM), "bad_item");
	assert_string_equal(errcode_name(ERR_BAD_ARGS), "bad_args");
}

/* Every code is documented in docs/PROTOCOL.md as `code`. */
static void
test_errcode_documented(void **state)
{
	FILE		*f;
	char		*doc, want[64];
	long		 len;
	unsigned	 i;

	(void)state;
	if ((f = fopen("docs/PROTOCOL.md", "r")) == NULL)
		skip();		/* not run from the checkout's top */
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	len = ftell(f);
	rewind(f);
	doc = calloc(1, len + 1);
	assert_non_null(doc);
	assert_int_equal(fread(doc, 1, len, f), (size_t)len);
	fclose(f);
	for (i = 1; i < ERR_COUNT; i++) {
		snprintf(want, sizeof want, "`%s`",
		    errcode_name((enum errcode)i));
		if (strstr(doc, want) == NULL)
			fail_msg("%s is not in docs/PROTOCOL.md", want);
	}
	free(doc);
}

/* The monotonic clock does not go back; the wall clock is past 2020. */
static void
test_clock_moves_forward(void **state)
{
	int64_t	a, b;

	(void)state;
	a = clock_mono_us();
	b = clock_mono_us();
	assert_true(b >= a);
	assert_true(clock_mono_ms() >= a / 1000);
	assert_true(clock_wall_ms() > 1577836800000LL);
}

/* 2026-11-26T07:01:02.345Z: UTC, milliseconds, 24 characters. */
static void
test_clock_iso(void **state)
{
	char	buf[CLOCK_ISO_LEN];
	int	i;

	(void)state;
	memset(buf, 'x', sizeof buf);
	clock_wall_iso(buf, sizeof buf);
	assert_int_equal(strlen(buf), 24);
	for (i = 0; i < 24; i++) {
		if (i == 4 || i == 7)
			assert_int_equal(buf[i], '-');
		else if (i == 10)
			assert_int_equal(buf[i], 'T');
		else if (i == 13 || i == 16)
			assert_int_equal(buf[i], ':');
		else if (i == 19)
			assert_int_equal(buf[i], '.');
		else if (i == 23)
			assert_int_equal(buf[i], 'Z');
		else if (buf[i] < '0' || buf[i] > '9')
			fail_msg("%s: not a digit at %d", buf, i);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_errcode_names_whole_and_unique),
		cmocka_unit_test(test_errcode_documented),
		cmocka_unit_test(test_clock_moves_forward),
		cmocka_unit_test(test_clock_iso),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
