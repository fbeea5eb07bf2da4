/* Unit tests for exec/keys.c: tmux key names to terminal bytes. */

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "exec/keys.h"

/* Encodes key alone; asserts the return value and the n bytes produced. */
static void
check_len(const char *key, int ret, const char *want, size_t n)
{
	char	buf[64];
	size_t	len = 0;

	memset(buf, 'x', sizeof buf);
	if (keys_encode(key, buf, sizeof buf, &len) != ret)
		fail_msg("%s: return is not %d", key, ret);
	if (len != n || memcmp(buf, want, n) != 0)
		fail_msg("%s: %zu bytes, not the %zu expected", key, len, n);
	assert_int_equal((unsigned char)buf[len], 'x');	/* no NUL added */
}

/* The same for bytes that contain no NUL. */
static void
check(const char *key, int ret, const char *want)
{
	check_len(key, ret, want, strlen(want));
}

static void
test_keys_named_keys(void **state)
{
	(void)state;
	check("Enter", 1, "\r");
	check("Tab", 1, "\t");
	check("BTab", 1, "\033[Z");
	check("Escape", 1, "\033");
	check("Space", 1, " ");
	check("BSpace", 1, "\177");
	check("Up", 1, "\033[A");
	check("Down", 1, "\033[B");
	check("Right", 1, "\033[C");
	check("Left", 1, "\033[D");
	check("Home", 1, "\033[1~");
	check("End", 1, "\033[4~");
	check("IC", 1, "\033[2~");
	check("Insert", 1, "\033[2~");
	check("DC", 1, "\033[3~");
	check("Delete", 1, "\033[3~");
	check("PageUp", 1, "\033[5~");
	check("PgUp", 1, "\033[5~");
	check("PPage", 1, "\033[5~");
	check("PageDown", 1, "\033[6~");
	check("PgDn", 1, "\033[6~");
	check("NPage", 1, "\033[6~");
}

static void
test_keys_function_keys(void **state)
{
	(void)state;
	check("F1", 1, "\033OP");
	check("F2", 1, "\033OQ");
	check("F3", 1, "\033OR");
	check("F4", 1, "\033OS");
	check("F5", 1, "\033[15~");
	check("F6", 1, "\033[17~");
	check("F7", 1, "\033[18~");
	check("F8", 1, "\033[19~");
	check("F9", 1, "\033[20~");
	check("F10", 1, "\033[21~");
	check("F11", 1, "\033[23~");
	check("F12", 1, "\033[24~");
	check("F13", 0, "F13");
	check("F0", 0, "F0");
}

static void
test_keys_ctrl_letters(void **state)
{
	char	key[8], want[2];
	int	c;

	(void)state;
	for (c = 'a'; c <= 'z'; c++) {
		snprintf(key, sizeof key, "C-%c", c);
		want[0] = (char)(c - 'a' + 1);
		want[1] = '\0';
		check(key, 1, want);
		snprintf(key, sizeof key, "C-%c", c - 'a' + 'A');
		check(key, 1, want);		/* C-A is C-a */
	}
}

static void
test_keys_ctrl_symbols(void **state)
{
	(void)state;
	check_len("C-@", 1, "", 1);
	check_len("C-Space", 1, "", 1);
	check_len("C- ", 1, "", 1);
	check("C-[", 1, "\033");
	check("C-\\", 1, "\034");
	check("C-]", 1, "\035");
	check("C-^", 1, "\036");
	check("C-_", 1, "\037");
	check("C-?", 1, "\177");
	check("C-1", 0, "C-1");		/* no control code: text */
	check("C-\xc3\xa9", 0, "C-\xc3\xa9");
}

static void
test_keys_caret_is_ctrl(void **state)
{
	(void)state;
	check("^c", 1, "\003");
	check("^C", 1, "\003");
	check("^[", 1, "\033");
	check("^^", 1, "\036");
	check("^", 0, "^");
	check("^ls", 0, "^ls");
	check("^Up", 1, "\033[1;5A");
}

static void
test_keys_meta(void **state)
{
	(void)state;
	check("M-x", 1, "\033x");
	check("M-X", 1, "\033X");	/* the character keeps its case */
	check("M-Enter", 1, "\033\r");
	check("M-BSpace", 1, "\033\177");
	check("M-Up", 1, "\033\033[A");
	check("M-F5", 1, "\033\033[15~");
	check("M-\xc3\xa9", 1, "\033\xc3\xa9");
	check_len("M-C-Space", 1, "\033", 2);
}

static void
test_keys_ctrl_meta(void **state)
{
	(void)state;
	check("C-M-a", 1, "\033\001");
	check("M-C-a", 1, "\033\001");
	check("C-M-A", 1, "\033\001");
	check("m-c-z", 1, "\033\032");
	check("C-M-", 0, "C-M-");
}

static void
test_keys_modified_special_keys(void **state)
{
	(void)state;
	check("C-Up", 1, "\033[1;5A");
	check("C-Left", 1, "\033[1;5D");
	check("S-Right", 1, "\033[1;2C");
	check("C-S-Down", 1, "\033[1;6B");
	check("C-Home", 1, "\033[1;5H");
	check("C-End", 1, "\033[1;5F");
	check("C-Delete", 1, "\033[3;5~");
	check("S-F1", 1, "\033[1;2P");
	check("C-F5", 1, "\033[15;5~");
	check("S-Tab", 1, "\033[Z");
	check("C-Enter", 1, "\r");	/* no modified form without CSI u */
	check("S-a", 1, "A");
}

static void
test_keys_case_insensitive(void **state)
{
	(void)state;
	check("enter", 1, "\r");
	check("ENTER", 1, "\r");
	check("eNtEr", 1, "\r");
	check("escape", 1, "\033");
	check("pgup", 1, "\033[5~");
	check("f12", 1, "\033[24~");
	check("bspace", 1, "\177");
	check("c-c", 1, "\003");
	check_len("C-space", 1, "", 1);
	check_len("c-SPACE", 1, "", 1);
	check("m-enter", 1, "\033\r");
}

static void
test_keys_literal_text(void **state)
{
	(void)state;
	check("ls -l", 0, "ls -l");
	check("hello", 0, "hello");
	check("Enterx", 0, "Enterx");
	check(" Enter", 0, " Enter");
	check("C-", 0, "C-");
	check("C-ab", 0, "C-ab");
	check("c-3po", 0, "c-3po");
	check("a-b", 0, "a-b");
	check("", 0, "");
	check("\xc3\xa9t\xc3\xa9", 0, "\xc3\xa9t\xc3\xa9");
}

static void
test_keys_single_char_is_literal(void **state)
{
	(void)state;
	check("a", 0, "a");
	check("C", 0, "C");
	check("-", 0, "-");
	check("^", 0, "^");
	check(" ", 0, " ");
	check("\xc3\xa9", 0, "\xc3\xa9");
	check("\xe2\x82\xac", 0, "\xe2\x82\xac");
}

static void
test_keys_appends(void **state)
{
	char	buf[32];
	size_t	len = 0;

	(void)state;
	assert_int_equal(keys_encode("ls", buf, sizeof buf, &len), 0);
	assert_int_equal(keys_encode("Space", buf, sizeof buf, &len), 1);
	assert_int_equal(keys_encode("-l", buf, sizeof buf, &len), 0);
	assert_int_equal(keys_encode("Enter", buf, sizeof buf, &len), 1);
	assert_int_equal(keys_encode("C-c", buf, sizeof buf, &len), 1);
	assert_int_equal(len, 7);
	assert_memory_equal(buf, "ls -l\r\003", 7);
}

static void
test_keys_overflow(void **state)
{
	char	buf[8];
	size_t	len;

	(void)state;
	len = 0;
	assert_int_equal(keys_encode("12345678", buf, sizeof buf, &len), 0);
	assert_int_equal(len, 8);
	assert_int_equal(keys_encode("Enter", buf, sizeof buf, &len), -1);
	assert_int_equal(len, 8);
	assert_int_equal(keys_encode("", buf, sizeof buf, &len), 0);
	assert_int_equal(len, 8);

	len = 0;
	assert_int_equal(keys_encode("123456789", buf, sizeof buf, &len), -1);
	assert_int_equal(len, 0);

	len = 5;
	assert_int_equal(keys_encode("F5", buf, sizeof buf, &len), -1);
	assert_int_equal(len, 5);
	len = 3;
	assert_int_equal(keys_encode("F5", buf, sizeof buf, &len), 1);
	assert_int_equal(len, 8);

	len = 6;	/* M-Up needs 4: the ESC fits, the rest does not */
	assert_int_equal(keys_encode("M-Up", buf, sizeof buf, &len), -1);
	assert_int_equal(len, 6);
	len = 7;
	assert_int_equal(keys_encode("M-a", buf, sizeof buf, &len), -1);
	assert_int_equal(len, 7);

	len = 0;
	assert_int_equal(keys_encode("a", buf, 0, &len), -1);
	assert_int_equal(len, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keys_named_keys),
		cmocka_unit_test(test_keys_function_keys),
		cmocka_unit_test(test_keys_ctrl_letters),
		cmocka_unit_test(test_keys_ctrl_symbols),
		cmocka_unit_test(test_keys_caret_is_ctrl),
		cmocka_unit_test(test_keys_meta),
		cmocka_unit_test(test_keys_ctrl_meta),
		cmocka_unit_test(test_keys_modified_special_keys),
		cmocka_unit_test(test_keys_case_insensitive),
		cmocka_unit_test(test_keys_literal_text),
		cmocka_unit_test(test_keys_single_char_is_literal),
		cmocka_unit_test(test_keys_appends),
		cmocka_unit_test(test_keys_overflow),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
