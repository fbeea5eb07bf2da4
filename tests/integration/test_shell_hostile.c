/*
 * Shell sessions against a hostile agent (issue 24, item 1): a command
 * cannot pin the exit code the worker reports for later commands, and a
 * command that takes the end
 * mark's way out (its stdout or stderr closed or sent away) is still
 * answered at its timeout, with the session ended.
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

#define WAIT_MS		30000

/* The exit code of a PROCESS_RESULT (fails on anything else). */
static int
exit_of(struct harness *h, json_t *a, const char *command)
{
	char	*s;

	if (strcmp(harness_jstr(a, "type"), "PROCESS_RESULT") != 0) {
		s = json_dumps(a, JSON_COMPACT);
		harness_fail(h, "exec %s: %s", command, s);
	}
	return ((int)harness_jint(a, "exit_code"));
}

/* A readonly variable of the wrapper's cannot pin later exit codes. */
static void
test_shell_exit_code_not_pinned(void **state)
{
	struct harness	*h = harness_fixture(state);
	json_t		*a;

	harness_worker_start(h, NULL, "--tier", "read_only", NULL);
	harness_shell_start(h, "hs2", ":");
	a = harness_shell_exec(h, "hs2", "readonly __execq_rc=0", 0);
	json_decref(a);
	a = harness_shell_exec(h, "hs2", "false", 0);
	assert_int_equal(exit_of(h, a, "false"), 1);
	json_decref(a);
	harness_pass(h);
}

/*
 * A command that sends the shell's stdout (or stderr) away for good:
 * the end mark can never come. The exec is still answered (timed_out),
 * and the session, whose answers can no longer be told apart, ends.
 */
static void
test_shell_mark_lost(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*cmds[] = { "exec >/dev/null", "exec 2>&-" };
	char		 id[16];
	json_t		*a;
	size_t		 i;

	harness_worker_start(h, NULL, "--kill-grace", "1", NULL);
	for (i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
		snprintf(id, sizeof id, "hs3-%zu", i);
		harness_shell_start(h, id, ":");
		a = harness_shell_exec(h, id, cmds[i], 300);
		assert_string_equal(harness_jstr(a, "type"),
		    "PROCESS_RESULT");
		assert_true(harness_jbool(a, "timed_out"));
		json_decref(a);
		json_decref(harness_wait_callback(h, id, WAIT_MS));
		a = harness_shell_exec(h, id, "echo again", 0);
		assert_string_equal(harness_jstr(a, "type"), "ERROR");
		json_decref(a);
	}
	harness_pass(h);
}

/*
 * The shell's input cannot be reopened for writing: text written to its
 * saved copy of stdin (/dev/fd/N, /proc/<pid>/fd/0), which the policy
 * would never see, never runs. The next command's answer is the barrier.
 */
static void
test_shell_no_injection(void **state)
{
	static const char *const tries[] = {
	    "echo 'touch injected' >/dev/fd/10",
	    "echo 'touch injected' >/dev/fd/11",
	    "echo 'touch injected' >/dev/fd/255",
	    "echo 'touch injected' >/proc/$$/fd/0",
	    "echo 'touch injected' >&0",
	};
	struct harness	*h = harness_fixture(state);
	json_t		*a;
	char		*path;
	size_t		 i;

	harness_worker_start(h, NULL, "--tier", "read_only", NULL);
	harness_shell_start(h, "inj", ":");
	for (i = 0; i < sizeof tries / sizeof tries[0]; i++) {
		a = harness_shell_exec(h, "inj", tries[i], 0);
		json_decref(a);
		a = harness_shell_exec(h, "inj", "true", 0);
		assert_int_equal(exit_of(h, a, "true"), 0);
		json_decref(a);
		xasprintf(&path, "%s/injected", h->ws);
		if (harness_read_file(path, NULL) != NULL)
			harness_fail(h, "%s ran text the policy never saw",
			    tries[i]);
		free(path);
	}
	harness_pass(h);
}

/*
 * A shell session's commands are read as bash reads them: arithmetic on
 * a value that hides a command substitution, and a name reference, are
 * code there (in sh they are not), so at read_only they would wait for a
 * person: refused held, and nothing made.
 */
static void
test_shell_bash_dialect(void **state)
{
	static const char *const tries[] = {
	    "X='a[$(touch made)]'; echo $((X))",
	    "declare -n r=PS4; r='$(touch made)'; set -x; ls",
	};
	struct harness	*h = harness_fixture(state);
	json_t		*a;
	char		*path;
	size_t		 i;

	harness_worker_start(h, NULL, "--tier", "read_only", NULL);
	harness_shell_start(h, "dia", ":");
	for (i = 0; i < sizeof tries / sizeof tries[0]; i++) {
		a = harness_shell_exec(h, "dia", tries[i], 0);
		if (strcmp(harness_jstr(a, "type"), "ERROR") != 0 ||
		    strcmp(harness_jstr(a, "error.code"), "held") != 0) {
			char	*t = json_dumps(a, JSON_COMPACT);

			harness_fail(h, "%s: not held: %s", tries[i], t);
		}
		json_decref(a);
	}
	a = harness_shell_exec(h, "dia", "ls", 0);
	assert_int_equal(exit_of(h, a, "ls"), 0);
	json_decref(a);
	xasprintf(&path, "%s/made", h->ws);
	assert_null(harness_read_file(path, NULL));
	free(path);
	harness_pass(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_shell_exit_code_not_pinned, harness_setup,
		    harness_teardown),
		cmocka_unit_test_setup_teardown(test_shell_no_injection,
		    harness_setup, harness_teardown),
		cmocka_unit_test_setup_teardown(test_shell_bash_dialect,
		    harness_setup, harness_teardown),
		cmocka_unit_test_setup_teardown(test_shell_mark_lost,
		    harness_setup, harness_teardown),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
