/* Unit tests for logs/token.c: 128-bit secrets and their comparison. */

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>

#include <cmocka.h>

#include "logs/token.h"

/* 32 lowercase hex digits, NUL-terminated, and two are not alike. */
static void
test_token_new_is_hex_and_fresh(void **state)
{
	char	a[TOKEN_LEN + 2], b[TOKEN_LEN + 1];
	int	i;

	(void)state;
	memset(a, 'X', sizeof a);
	token_new(a);
	token_new(b);
	assert_int_equal(strlen(a), TOKEN_LEN);
	assert_int_equal(a[TOKEN_LEN + 1], 'X');	/* nothing past the NUL */
	for (i = 0; i < TOKEN_LEN; i++)
		if (strchr("0123456789abcdef", a[i]) == NULL)
			fail_msg("%s: not hex at %d", a, i);
	assert_string_not_equal(a, b);
}

static void
test_token_eq(void **state)
{
	char	t[TOKEN_LEN + 1], u[TOKEN_LEN + 1];

	(void)state;
	token_new(t);
	memcpy(u, t, sizeof u);
	assert_true(token_eq(u, t));
	u[TOKEN_LEN - 1] = u[TOKEN_LEN - 1] == '0' ? '1' : '0';
	assert_false(token_eq(u, t));
	u[TOKEN_LEN - 1] = '\0';		/* a prefix is not the token */
	assert_false(token_eq(u, t));
	assert_false(token_eq(NULL, t));
	assert_false(token_eq(t, NULL));
	assert_false(token_eq("", t));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_token_new_is_hex_and_fresh),
		cmocka_unit_test(test_token_eq),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
