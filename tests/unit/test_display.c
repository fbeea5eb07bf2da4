/* Unit tests for logs/display.c: text escaped for a terminal, as data. */

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "logs/display.h"

/* One case: len bytes in (-1: strlen), the flags, what shows, how much. */
struct display_row {
	const char	*in;
	int		 len;
	int		 flags;
	const char	*out;
	int		 used;		/* -1: all of it */
};

#define LINES	DISPLAY_LINES
#define MORE	DISPLAY_MORE

static const struct display_row display_rows[] = {
	/* Printable ASCII and valid UTF-8 stay as they are. */
	{ "", -1, 0, "", -1 },
	{ "echo hello world ~!@#$%^&*()_+{}|:\"<>?", -1, 0,
	    "echo hello world ~!@#$%^&*()_+{}|:\"<>?", -1 },
	{ "caf\xc3\xa9 na\xc3\xafve", -1, 0, "caf\xc3\xa9 na\xc3\xafve", -1 },
	{ "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", -1, 0,
	    "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", -1 },		/* CJK */
	{ "\xf0\x9f\x98\x80", -1, 0, "\xf0\x9f\x98\x80", -1 },	/* emoji */
	{ "\xc2\xa0\xc2\xa9\xef\xbf\xbd", -1, 0,
	    "\xc2\xa0\xc2\xa9\xef\xbf\xbd", -1 },	/* NBSP, (c), U+FFFD */
	{ "\xf4\x8f\xbf\xbf", -1, 0, "\xf4\x8f\xbf\xbf", -1 },	/* U+10FFFF */
	/* A backslash is doubled, so an escape is never ambiguous. */
	{ "a\\b", -1, 0, "a\\\\b", -1 },
	{ "\\x1b", -1, 0, "\\\\x1b", -1 },
	{ "\\", -1, LINES, "\\\\", -1 },
	/* C0 controls and DEL. */
	{ "a\nb", -1, 0, "a\\nb", -1 },
	{ "a\rb", -1, 0, "a\\rb", -1 },
	{ "a\tb", -1, 0, "a\\tb", -1 },
	{ "\x1b[2K", -1, 0, "\\e[2K", -1 },
	{ "\x1b]0;title\x07", -1, 0, "\\e]0;title\\x07", -1 },
	{ "a\0b", 3, 0, "a\\x00b", -1 },
	{ "\x01\x08\x0b\x0c\x1f", -1, 0, "\\x01\\x08\\x0b\\x0c\\x1f", -1 },
	{ "\x7f", -1, 0, "\\x7f", -1 },
	/* C1 controls: U+0080-U+009F, as UTF-8; U+00A0 is not one. */
	{ "\xc2\x80", -1, 0, "\\u0080", -1 },
	{ "\xc2\x85", -1, 0, "\\u0085", -1 },
	{ "\xc2\x9b" "2K", -1, 0, "\\u009b2K", -1 },		/* CSI */
	{ "\xc2\x9f\xc2\xa0", -1, 0, "\\u009f\xc2\xa0", -1 },
	/* Bidirectional controls. */
	{ "\xd8\x9c", -1, 0, "\\u061c", -1 },			/* ALM */
	{ "\xe2\x80\x8e\xe2\x80\x8f", -1, 0, "\\u200e\\u200f", -1 },
	{ "\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad", -1, 0,
	    "\\u202a\\u202b\\u202c\\u202d", -1 },
	{ "echo \xe2\x80\xae" "cba", -1, 0, "echo \\u202ecba", -1 },
	{ "\xe2\x81\xa6\xe2\x81\xa7\xe2\x81\xa8\xe2\x81\xa9", -1, 0,
	    "\\u2066\\u2067\\u2068\\u2069", -1 },
	/* Invisible characters that can hide text. */
	{ "a\xe2\x80\x8b" "b", -1, 0, "a\\u200bb", -1 },	/* ZWSP */
	{ "\xe2\x80\x8c\xe2\x80\x8d", -1, 0, "\\u200c\\u200d", -1 },
	{ "\xe2\x81\xa0", -1, 0, "\\u2060", -1 },		/* WJ */
	{ "\xef\xbb\xbf" "x", -1, 0, "\\ufeffx", -1 },		/* BOM */
	{ "\xe2\x80\xa8\xe2\x80\xa9", -1, 0, "\\u2028\\u2029", -1 },
	{ "\xf3\xa0\x80\x81\xf3\xa0\x81\xa1", -1, 0,
	    "\\U000e0001\\U000e0061", -1 },			/* tags */
	/* Their neighbours are kept. */
	{ "\xe2\x80\x8a\xe2\x80\x90\xe2\x80\xaf", -1, 0,
	    "\xe2\x80\x8a\xe2\x80\x90\xe2\x80\xaf", -1 },
	/* Bytes that are not UTF-8: each one. */
	{ "\xff", -1, 0, "\\xff", -1 },
	{ "a\xfe\xff" "b", -1, 0, "a\\xfe\\xffb", -1 },
	{ "\x80\xbf", -1, 0, "\\x80\\xbf", -1 },		/* lone tails */
	{ "\xc0\xaf", -1, 0, "\\xc0\\xaf", -1 },		/* overlong / */
	{ "\xe0\x80\xaf", -1, 0, "\\xe0\\x80\\xaf", -1 },	/* overlong */
	{ "\xed\xa0\x80", -1, 0, "\\xed\\xa0\\x80", -1 },	/* surrogate */
	{ "\xf4\x90\x80\x80", -1, 0, "\\xf4\\x90\\x80\\x80", -1 },
	{ "\xf5\x80\x80\x80", -1, 0, "\\xf5\\x80\\x80\\x80", -1 },
	/* Truncated sequences: in the middle, and at the end. */
	{ "\xe2\x80" "a", -1, 0, "\\xe2\\x80a", -1 },
	{ "\xe2\x80\xe2\x80\xae", -1, 0, "\\xe2\\x80\\u202e", -1 },
	{ "a\xe2\x80", -1, 0, "a\\xe2\\x80", -1 },
	{ "a\xf0\x9f\x98", -1, 0, "a\\xf0\\x9f\\x98", -1 },
	{ "a\xc3", -1, 0, "a\\xc3", -1 },
	/* ... and with more to come, left for the next piece. */
	{ "a\xe2\x80", -1, MORE, "a", 1 },
	{ "a\xf0\x9f\x98", -1, MORE, "a", 1 },
	{ "a\xc3", -1, MORE, "a", 1 },
	{ "a\xff", -1, MORE, "a\\xff", -1 },	/* never valid: not kept */
	{ "a\xe2\x28", -1, MORE, "a\\xe2(", -1 },
	{ "a\xc3\xa9", -1, MORE, "a\xc3\xa9", -1 },
	/* DISPLAY_LINES: lines and tabs stay, nothing else does. */
	{ "a\nb\tc\n", -1, LINES, "a\nb\tc\n", -1 },
	{ "a\r\nb\r\n", -1, LINES, "a\r\nb\r\n", -1 },	/* from a PTY */
	{ "evil\rgood\n", -1, LINES, "evil\\rgood\n", -1 },
	{ "a\r\rb", -1, LINES, "a\\r\\rb", -1 },
	{ "a\r", -1, LINES, "a\\r", -1 },
	{ "a\r", -1, LINES|MORE, "a", 1 },	/* a \n may follow */
	{ "a\r\n", -1, LINES|MORE, "a\r\n", -1 },
	{ "\x1b[31mred\x1b[0m\n", -1, LINES,
	    "\\e[31mred\\e[0m\n", -1 },
	{ "\xe2\x80\xae\n", -1, LINES, "\\u202e\n", -1 },
	{ "\x0b\x0c\x08", -1, LINES, "\\x0b\\x0c\\x08", -1 },
};

/* Every row of the table. */
static void
test_display_rows(void **state)
{
	const struct display_row	*r;
	size_t				 i, len, used;
	char				*out;

	(void)state;
	for (i = 0; i < sizeof display_rows / sizeof *display_rows; i++) {
		r = &display_rows[i];
		len = r->len >= 0 ? (size_t)r->len : strlen(r->in);
		used = (size_t)-1;
		out = display_escape(r->in, len, r->flags, &used);
		if (strcmp(out, r->out) != 0)
			print_error("row %zu: got \"%s\"\n", i, out);
		assert_string_equal(out, r->out);
		assert_int_equal(used, r->used >= 0 ? (size_t)r->used : len);
		free(out);
	}
}

/* No escape leaves a byte that moves a terminal: every byte is printable. */
static void
test_display_every_byte(void **state)
{
	char		 in[256], *out;
	const char	*p;
	size_t		 used;
	int		 i;

	(void)state;
	for (i = 0; i < 256; i++)
		in[i] = (char)i;
	out = display_escape(in, sizeof in, 0, &used);
	assert_int_equal(used, sizeof in);
	for (p = out; *p != '\0'; p++) {
		assert_true((unsigned char)*p >= 0x20);
		assert_true((unsigned char)*p < 0x7f);
	}
	/*
	 * 94 printable kept, the backslash doubled, \n \r \t \e, and the
	 * 28 other C0 controls, DEL and 128 bytes alone (not UTF-8) as \xHH.
	 */
	assert_int_equal(strlen(out), 94 + 2 + 4 * 2 + 4 * (28 + 1 + 128));
	free(out);
}

/* A text cut anywhere, given piece by piece, shows as the whole does. */
static void
test_display_pieces(void **state)
{
	static const char	 text[] = "ok \xc3\xa9\xe2\x80\xae\r\n"
	    "\xf0\x9f\x98\x80\x1b[0m\r\\\xe6\x97\xa5\r\n";
	size_t			 len = sizeof text - 1, cut, used;
	char			*whole, *a, *b, *joined;

	(void)state;
	whole = display_escape(text, len, DISPLAY_LINES, NULL);
	for (cut = 0; cut <= len; cut++) {
		a = display_escape(text, cut, DISPLAY_LINES|DISPLAY_MORE,
		    &used);
		b = display_escape(text + used, len - used, DISPLAY_LINES,
		    NULL);
		joined = malloc(strlen(a) + strlen(b) + 1);
		assert_non_null(joined);
		strcpy(joined, a);
		strcat(joined, b);
		assert_string_equal(joined, whole);
		free(a);
		free(b);
		free(joined);
	}
	free(whole);
}

/* display_str: a C string; NULL is "". */
static void
test_display_str(void **state)
{
	char	*s;

	(void)state;
	s = display_str(NULL);
	assert_string_equal(s, "");
	free(s);
	s = display_str("rm\x1b[2K\recho ok");
	assert_string_equal(s, "rm\\e[2K\\recho ok");
	free(s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_display_rows),
		cmocka_unit_test(test_display_every_byte),
		cmocka_unit_test(test_display_pieces),
		cmocka_unit_test(test_display_str),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
