/* Unit tests for worker/direct.c: which commands skip the shell. */

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "worker/direct.h"

#define DASH	"/usr/bin/dash"

/* A command and whether it goes direct. */
struct row {
	const char	*command;
	int		 direct;
};

static const struct row rows[] = {
	{ "ls", 1 },
	/* sh -c reads a leading - or + as its own options: runs nothing. */
	{ "--", 0 },
	{ "-x", 0 },
	{ "+x", 0 },
	{ "- ls", 0 },
	{ "-- ls", 0 },
	{ "  -x", 1 },	/* after blanks: a program, for dash too */
	{ "ls -la /tmp", 1 },
	{ "ls\t-la", 1 },
	{ "  ls  ", 1 },
	{ "/bin/true", 1 },
	{ "./script.sh", 1 },
	{ "nosuchcmd", 1 },			/* the child falls back */
	{ "make CC=gcc -j2", 1 },
	{ "git log --format=%H -n1", 1 },
	{ "cat a,b user@host:x +1", 1 },
	{ "ls -- -x", 1 },
	{ "echo hi", 0 },			/* builtins */
	{ "true", 0 },
	{ "false", 0 },
	{ "printf x", 0 },
	{ "test -f x", 0 },
	{ "[ -f x ]", 0 },
	{ "kill 1", 0 },
	{ "pwd", 0 },
	{ "cd /tmp", 0 },
	{ "exec ls", 0 },
	{ "command ls", 0 },
	{ "time ls", 0 },
	{ "read x", 0 },
	{ "source f", 0 },
	{ ". f", 0 },
	{ "if", 0 },				/* keywords */
	{ "ls *.c", 0 },			/* globs, braces */
	{ "ls ?", 0 },
	{ "ls [ab]", 0 },
	{ "ls {a,b}", 0 },
	{ "a=b ls", 0 },			/* assignment */
	{ "a=b", 0 },
	{ "ls > f", 0 },			/* redirections */
	{ "ls 2>&1", 0 },
	{ "ls <f", 0 },
	{ "ls | wc", 0 },			/* operators */
	{ "ls; ls", 0 },
	{ "ls && ls", 0 },
	{ "ls || ls", 0 },
	{ "ls &", 0 },
	{ "ls\nls", 0 },
	{ "$HOME/x", 0 },			/* expansions */
	{ "ls $x", 0 },
	{ "ls `id`", 0 },
	{ "ls $(id)", 0 },
	{ "~/x", 0 },
	{ "ls ~", 0 },
	{ "'ls'", 0 },				/* quoting */
	{ "\"ls\"", 0 },
	{ "ls\\ x", 0 },
	{ "ls ''", 0 },
	{ "(ls)", 0 },				/* grouping */
	{ "{ ls; }", 0 },
	{ "! ls", 0 },
	{ "ls # comment", 0 },
	{ "", 0 },
	{ "   ", 0 },
	{ "f() { ls; }", 0 },
	{ "ls\x01", 0 },
};

static void
test_direct_table(void **state)
{
	size_t	i;
	int	got;

	(void)state;
	for (i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		got = direct_ok(rows[i].command, DASH);
		if (got != rows[i].direct)
			fail_msg("\"%s\": direct %d, expected %d",
			    rows[i].command, got, rows[i].direct);
	}
}

static void
test_direct_argv(void **state)
{
	char	**argv;

	(void)state;
	argv = direct_argv("  ls\t-la  /tmp ", DASH);
	assert_non_null(argv);
	assert_string_equal(argv[0], "ls");
	assert_string_equal(argv[1], "-la");
	assert_string_equal(argv[2], "/tmp");
	assert_null(argv[3]);
	direct_free(argv);
	assert_null(direct_argv("ls *.c", DASH));
	direct_free(NULL);
}

/* Only when the shell is dash, whose behaviour the child reproduces. */
static void
test_direct_shell(void **state)
{
	(void)state;
	assert_int_equal(direct_ok("ls", "/bin/bash"), 0);
	assert_int_equal(direct_ok("ls", "/nonexistent/sh"), 0);
	assert_int_equal(direct_ok("ls", NULL), 0);
	assert_int_equal(direct_ok("ls", DASH), 1);
}

static void
test_direct_builtin(void **state)
{
	(void)state;
	assert_true(direct_builtin("echo"));
	assert_true(direct_builtin("ulimit"));
	assert_false(direct_builtin("ls"));
	assert_false(direct_builtin("/bin/echo"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_direct_table),
		cmocka_unit_test(test_direct_argv),
		cmocka_unit_test(test_direct_shell),
		cmocka_unit_test(test_direct_builtin),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
