/* Unit tests for logs/tail.c: the last lines of a log, cleaned. */

#include <sys/stat.h>

#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "logs/tail.h"

/* Lists of expected lines: L("a", "b"); L0 for none. */
#define L(...)	((const char *const []){ __VA_ARGS__, NULL })
#define L0	((const char *const []){ NULL })

/* A private temp dir and a file path in it. */
struct fixture {
	char	dir[64];
	char	path[128];
};

static int
setup(void **state)
{
	struct fixture	*fx;

	fx = calloc(1, sizeof *fx);
	assert_non_null(fx);
	snprintf(fx->dir, sizeof fx->dir, "/tmp/test_tail.XXXXXX");
	assert_non_null(mkdtemp(fx->dir));
	snprintf(fx->path, sizeof fx->path, "%s/s1.log", fx->dir);
	*state = fx;
	return (0);
}

static int
teardown(void **state)
{
	struct fixture	*fx = *state;

	unlink(fx->path);
	rmdir(fx->dir);
	free(fx);
	return (0);
}

/* Writes len bytes of p as the fixture's file. */
static void
write_file(struct fixture *fx, const char *p, size_t len)
{
	int	fd;

	fd = open(fx->path, O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC, 0644);
	assert_true(fd != -1);
	assert_int_equal(write(fd, p, len), (ssize_t)len);
	assert_int_equal(close(fd), 0);
}

/* Asserts got (count lines) is want, then frees it. */
static void
check_lines(char **got, unsigned count, const char *const *want)
{
	unsigned	i;

	assert_non_null(got);
	for (i = 0; want[i] != NULL; i++) {
		if (got[i] == NULL)
			fail_msg("line %u missing, want \"%s\"", i, want[i]);
		assert_string_equal(got[i], want[i]);
	}
	assert_null(got[i]);
	assert_int_equal(count, i);
	tail_free(got);
}

/* tail_lines_buf on a string; asserts the lines. */
static void
check_buf(const char *in, unsigned n, size_t max_line,
    const char *const *want)
{
	char		**got;
	unsigned	  count = 12345;

	got = tail_lines_buf(in, strlen(in), n, max_line, &count);
	check_lines(got, count, want);
}

/* tail_lines on a file holding in; asserts the lines. */
static void
check_file(struct fixture *fx, const char *in, size_t len, unsigned n,
    size_t max_line, const char *const *want)
{
	char		**got;
	unsigned	  count = 12345;

	write_file(fx, in, len);
	got = tail_lines(fx->path, n, max_line, &count);
	check_lines(got, count, want);
}

/* tail_strip_ansi on a copy of in; asserts the result. */
static void
check_strip(const char *in, const char *want)
{
	char	*s;
	size_t	 len;

	s = strdup(in);
	assert_non_null(s);
	len = tail_strip_ansi(s, strlen(s));
	assert_int_equal(len, strlen(want));
	assert_memory_equal(s, want, len);
	free(s);
}

static void
test_tail_fewer_lines_than_n(void **state)
{
	(void)state;
	check_buf("a\nb\n", 5, 500, L("a", "b"));
	check_buf("only\n", 5, 500, L("only"));
}

static void
test_tail_exactly_n(void **state)
{
	(void)state;
	check_buf("a\nb\nc\n", 3, 500, L("a", "b", "c"));
}

static void
test_tail_more_than_n(void **state)
{
	(void)state;
	check_buf("1\n2\n3\n4\n5\n6\n7\n", 3, 500, L("5", "6", "7"));
	check_buf("1\n2\n3\n", 1, 500, L("3"));
}

static void
test_tail_no_trailing_newline(void **state)
{
	(void)state;
	check_buf("a\nb\nc", 2, 500, L("b", "c"));
	check_buf("partial", 2, 500, L("partial"));
}

static void
test_tail_empty_input(void **state)
{
	(void)state;
	check_buf("", 5, 500, L0);
	check_buf("\n", 5, 500, L0);
	check_buf("\n\n\n", 5, 500, L0);
}

static void
test_tail_blank_lines_inside_kept(void **state)
{
	(void)state;
	check_buf("a\n\nb\n", 5, 500, L("a", "", "b"));
	check_buf("\nb\n", 5, 500, L("", "b"));
	check_buf("a\n  \nb\n", 2, 500, L("  ", "b"));
}

static void
test_tail_blank_trailing_lines_dropped(void **state)
{
	(void)state;
	check_buf("a\nb\n\n\n  \n\t\n", 2, 500, L("a", "b"));
	check_buf("a\nb\n\r\n\033[0m\n", 5, 500, L("a", "b"));
	check_buf("a\nb\n\n\n", 1, 500, L("b"));
}

static void
test_tail_crlf_from_pty(void **state)
{
	(void)state;
	check_buf("one\r\ntwo\r\nthree\r\n", 5, 500,
	    L("one", "two", "three"));
	check_buf("one\r\n\r\n", 5, 500, L("one"));
}

static void
test_tail_csi_colours_removed(void **state)
{
	(void)state;
	check_buf("\033[1;31mred\033[0m plain\033[K\n"
	    "\033[38;5;208morange\033[m\n"
	    "\033[?25lhidden cursor\033[?25h\n", 5, 500,
	    L("red plain", "orange", "hidden cursor"));
}

static void
test_tail_osc_title_removed(void **state)
{
	(void)state;
	check_buf("\033]0;my title\007after bel\n"
	    "\033]2;t\033\\after st\n"
	    "\033]8;;http://x/\033\\link\033]8;;\033\\ text\n", 5, 500,
	    L("after bel", "after st", "link text"));
	/* An OSC left open ends with its line, not later. */
	check_buf("a\033]0;open\nnext\n", 5, 500, L("a", "next"));
}

static void
test_tail_strip_other_escapes(void **state)
{
	(void)state;
	check_strip("\033=\033>\0337x\0338", "x");
	check_strip("\033(Bok\033)0", "ok");
	check_strip("abc\033", "abc");		/* lone ESC at the end */
	check_strip("abc\033[", "abc");			/* CSI cut short */
	check_strip("abc\033[12", "abc");
	check_strip("\033\033[1mx", "x");
	check_strip("bell\a!", "bell!");
	check_strip("\033Pdcs data\033\\ok", "ok");
	check_strip("a\033\nb", "a\nb");		/* ESC then newline */
	check_strip("\xff\xfe ok \xc3", "\xff\xfe ok \xc3");	/* bad UTF-8 */
	check_strip("", "");
}

static void
test_tail_progress_cr(void **state)
{
	(void)state;
	check_buf("Downloading 10%\rDownloading 50%\rDownloading 100%\r\n"
	    "done\n", 5, 500, L("Downloading 100%", "done"));
	check_buf("progress\rdone\n", 5, 500, L("done"));
	check_buf("long text\rab\n", 5, 500, L("ab"));
	check_buf("50%\r\033[K100%\n", 5, 500, L("100%"));
	check_buf("kept\r\033[0m\n", 5, 500, L("kept"));
	check_buf("kept\r\r\r", 5, 500, L("kept"));
	check_strip("a\rb\nc\rd\r\n", "b\nd\n");
}

static void
test_tail_long_line_capped(void **state)
{
	char	 line[2000], want[600];

	(void)state;
	memset(line, 'x', sizeof line - 1);
	line[sizeof line - 1] = '\0';
	memset(want, 'x', 497);
	memcpy(want + 497, "...", 4);
	check_buf(line, 5, 500, L(want));
	check_buf("0123456789", 5, 10, L("0123456789"));	/* fits */
	check_buf("0123456789A", 5, 10, L("0123456..."));
	check_buf("0123456789A", 5, 0, L("0123456789A"));	/* no limit */
	check_buf("abcdef", 5, 2, L(".."));
}

static void
test_tail_cap_keeps_utf8_whole(void **state)
{
	(void)state;
	/* é is 2 bytes at 6..7: a 7-byte cut would split it. */
	check_buf("aaaaaa\xc3\xa9zzzz", 5, 10, L("aaaaaa..."));
	check_buf("aaaaa\xc3\xa9zzzzz", 5, 10, L("aaaaa\xc3\xa9..."));
	/* A 4-byte emoji: back to its first byte. */
	check_buf("a\xf0\x9f\x98\x80zzzzz", 5, 6, L("a..."));
	check_buf("\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac", 5, 7,
	    L("\xe2\x82\xac..."));
	/* The cap counts bytes left after the escapes are gone. */
	check_buf("\033[31m0123456789\033[0m", 5, 10, L("0123456789"));
}

static void
test_tail_n_zero(void **state)
{
	struct fixture	*fx = *state;

	check_buf("a\nb\n", 0, 500, L0);
	check_file(fx, "a\nb\n", 4, 0, 500, L0);
}

static void
test_tail_missing_file(void **state)
{
	struct fixture	*fx = *state;
	char		**got, path[160];
	unsigned	  count = 12345;

	snprintf(path, sizeof path, "%s/nope.log", fx->dir);
	got = tail_lines(path, 5, 500, &count);
	check_lines(got, count, L0);
	got = tail_lines(fx->dir, 5, 500, &count);	/* a directory */
	check_lines(got, count, L0);
}

static void
test_tail_file_small(void **state)
{
	struct fixture	*fx = *state;
	const char	*in = "\033[32mok\033[0m\r\nsecond\r\nthird\r\n\r\n";

	check_file(fx, in, strlen(in), 2, 500, L("second", "third"));
	check_file(fx, in, strlen(in), 10, 500, L("ok", "second", "third"));
	check_file(fx, "", 0, 5, 500, L0);
	check_file(fx, "no newline", 10, 5, 500, L("no newline"));
}

/*
 * The 64 KiB boundary of the first read from the end falls inside the
 * first of the three lines asked for.
 */
static void
test_tail_file_tail_across_chunk(void **state)
{
	struct fixture	*fx = *state;
	char		*in, *one, *two;
	size_t		 len = 0, i;

	in = malloc(200000);
	one = malloc(300);
	two = malloc(70000);
	assert_true(in != NULL && one != NULL && two != NULL);
	for (i = 0; i < 1000; i++)
		len += sprintf(in + len, "prefix %zu\n", i);
	memcpy(one, "one-", 4);
	memset(one + 4, 'y', 200);
	one[204] = '\0';
	memset(two, 'z', 65450);
	two[65450] = '\0';
	len += sprintf(in + len, "%s\n%s\nthree\n", one, two);
	assert_true(len > 65536 + 1000);
	/* The first chunk starts 126 bytes into "one-yyy...". */
	assert_int_equal(strlen(one) + 1 + strlen(two) + 1 + 6 - 65536, 126);
	check_file(fx, in, len, 3, 100000, L(one, two, "three"));
	check_file(fx, in, len, 4, 100000, L("prefix 999", one, two, "three"));
	free(in);
	free(one);
	free(two);
}

/* 100 KB of blank lines at the end: reading goes on past them. */
static void
test_tail_file_blank_tail_past_chunk(void **state)
{
	struct fixture	*fx = *state;
	char		*in;
	size_t		 len = 0;
	int		 i;

	in = malloc(200000);
	assert_non_null(in);
	for (i = 1; i <= 10; i++)
		len += sprintf(in + len, "L%d\n", i);
	memset(in + len, '\n', 100000);
	len += 100000;
	check_file(fx, in, len, 3, 500, L("L8", "L9", "L10"));
	free(in);
}

static void
test_tail_file_3mb(void **state)
{
	struct fixture	*fx = *state;
	char		*in, want[3][32];
	size_t		 len = 0, i;

	in = malloc(3200000);
	assert_non_null(in);
	for (i = 0; len < 3000000; i++)
		len += sprintf(in + len, "line %07zu \033[1mbold\033[0m\r\n",
		    i);
	snprintf(want[0], sizeof want[0], "line %07zu bold", i - 3);
	snprintf(want[1], sizeof want[1], "line %07zu bold", i - 2);
	snprintf(want[2], sizeof want[2], "line %07zu bold", i - 1);
	check_file(fx, in, len, 3, 500, L(want[0], want[1], want[2]));
	free(in);
}

/*
 * One 2 MB line without a newline: the read stops at 1 MiB, and the line
 * comes back capped.
 */
static void
test_tail_file_huge_line(void **state)
{
	struct fixture	*fx = *state;
	char		*in;
	size_t		 len = 2 * 1024 * 1024;

	in = malloc(len);
	assert_non_null(in);
	memset(in, 'h', len);
	check_file(fx, in, len, 2, 10, L("hhhhhhh..."));
	in[100] = '\n';		/* a first line beyond the 1 MiB read */
	check_file(fx, in, len, 2, 10, L("hhhhhhh..."));
	free(in);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tail_fewer_lines_than_n),
		cmocka_unit_test(test_tail_exactly_n),
		cmocka_unit_test(test_tail_more_than_n),
		cmocka_unit_test(test_tail_no_trailing_newline),
		cmocka_unit_test(test_tail_empty_input),
		cmocka_unit_test(test_tail_blank_lines_inside_kept),
		cmocka_unit_test(test_tail_blank_trailing_lines_dropped),
		cmocka_unit_test(test_tail_crlf_from_pty),
		cmocka_unit_test(test_tail_csi_colours_removed),
		cmocka_unit_test(test_tail_osc_title_removed),
		cmocka_unit_test(test_tail_strip_other_escapes),
		cmocka_unit_test(test_tail_progress_cr),
		cmocka_unit_test(test_tail_long_line_capped),
		cmocka_unit_test(test_tail_cap_keeps_utf8_whole),
		cmocka_unit_test_setup_teardown(test_tail_n_zero, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_tail_missing_file, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_tail_file_small, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(
		    test_tail_file_tail_across_chunk, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_tail_file_blank_tail_past_chunk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tail_file_3mb, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_tail_file_huge_line, setup,
		    teardown),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
