/*
 * Shell sessions (issue 24, item 1): args.shell starts a persistent shell
 * inside the boundary; PROCESS exec runs one command in it, answered like
 * a foreground item, with the cwd and variables the commands before it
 * left; output cannot forge the end mark; a command past its timeout is
 * interrupted and the shell goes on; one command at a time; the policy
 * decides on each command.
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

/* harness_shell_exec, which must answer PROCESS_RESULT with exit rc. */
static json_t *
shell_ok(struct harness *h, const char *sid, const char *command, int rc)
{
	json_t	*a = harness_shell_exec(h, sid, command, 0);

	if (strcmp(harness_jstr(a, "type"), "PROCESS_RESULT") != 0 ||
	    harness_jint(a, "exit_code") != rc) {
		char	*s = json_dumps(a, JSON_COMPACT);

		harness_fail(h, "exec %s: wanted exit %d: %s", command, rc, s);
	}
	return (a);
}

static void
test_shell_keeps_state(void **state)
{
	struct harness	*h = harness_fixture(state);
	json_t		*a;
	char		*sub;

	harness_worker_start(h, NULL, NULL);
	harness_shell_start(h, "sh1", "mkdir -p sub; export GREETING=hello");
	a = shell_ok(h, "sh1", "cd sub && pwd", 0);
	xasprintf(&sub, "%s/sub\n", h->ws);
	assert_string_equal(harness_jstr(a, "stdout"), sub);
	sub[strlen(sub) - 1] = '\0';
	assert_string_equal(harness_jstr(a, "cwd"), sub);
	json_decref(a);
	a = shell_ok(h, "sh1", "echo $GREETING from $(basename $PWD); "
	    "echo oops >&2; X=2; false", 1);
	assert_string_equal(harness_jstr(a, "stdout"), "hello from sub\n");
	assert_string_equal(harness_jstr(a, "stderr"), "oops\n");
	assert_false(harness_jbool(a, "timed_out"));
	assert_true(harness_jint(a, "log_to") > harness_jint(a, "log_from"));
	json_decref(a);
	a = shell_ok(h, "sh1", "printf 'x=%s' $X", 0);	/* no newline */
	assert_string_equal(harness_jstr(a, "stdout"), "x=2");
	json_decref(a);
	/* A syntax error is the command's: exit 2, the shell goes on. */
	a = shell_ok(h, "sh1", "echo \"unclosed", 2);
	json_decref(a);
	/* Its stdin is empty: cat ends, and eats nothing of the shell's. */
	a = shell_ok(h, "sh1", "cat; echo after", 0);
	assert_string_equal(harness_jstr(a, "stdout"), "after\n");
	json_decref(a);
	a = shell_ok(h, "sh1", "pwd", 0);
	sub[strlen(sub)] = '\n';
	assert_string_equal(harness_jstr(a, "stdout"), sub);
	json_decref(a);
	free(sub);
	harness_pass(h);
}

/*
 * Output that looks like an end mark does not end the command: the mark
 * holds a secret the command never saw, new for every command.
 */
static void
test_shell_mark_not_forged(void **state)
{
	struct harness	*h = harness_fixture(state);
	json_t		*a;

	harness_worker_start(h, NULL, NULL);
	harness_shell_start(h, "sh2", ":");
	a = shell_ok(h, "sh2", "printf '\\n00000000000000000000000000000000:1"
	    " 0\\n'; printf '\\n:2 0\\n'; sleep 0.2; echo real end; exit_code=5;"
	    " (exit 4)", 4);
	assert_non_null(strstr(harness_jstr(a, "stdout"), "real end\n"));
	assert_non_null(strstr(harness_jstr(a, "stdout"),
	    "00000000000000000000000000000000:1 0"));
	json_decref(a);
	harness_pass(h);
}

/*
 * Past its timeout a command is interrupted (SIGINT to its process
 * group) and the shell goes on, in the same cwd; a second exec while one
 * runs is refused (session_busy); interrupt ends the running one.
 */
static void
test_shell_timeout_interrupt_busy(void **state)
{
	struct harness	*h = harness_fixture(state);
	json_t		*a;
	const char	*pid;
	char		*hi;

	harness_worker_start(h, NULL, NULL);
	harness_shell_start(h, "sh3", "mkdir -p d; cd d");
	a = harness_shell_exec(h, "sh3", "sleep 60", 300);
	assert_string_equal(harness_jstr(a, "type"), "PROCESS_RESULT");
	assert_true(harness_jbool(a, "timed_out"));
	assert_int_equal(harness_jint(a, "exit_code"), 130);
	json_decref(a);
	a = shell_ok(h, "sh3", "basename $PWD", 0);
	assert_string_equal(harness_jstr(a, "stdout"), "d\n");
	json_decref(a);
	/* A long one; another comes while it runs. */
	pid = harness_submit_process(h, "{\"action\": \"exec\", "
	    "\"session_id\": \"sh3\", \"command\": \"sleep 60; echo no\"}");
	harness_wait_running(h, "sleep 60");
	a = harness_shell_exec(h, "sh3", "echo two", 0);
	assert_string_equal(harness_jstr(a, "type"), "ERROR");
	assert_string_equal(harness_jstr(a, "error.code"), "session_busy");
	json_decref(a);
	a = harness_process(h, "{\"action\": \"interrupt\", \"session_id\": "
	    "\"sh3\"}", WAIT_MS);
	assert_true(harness_jbool(a, "interrupted"));
	json_decref(a);
	a = harness_wait_answer(h, NULL, pid, WAIT_MS);
	assert_int_equal(harness_jint(a, "exit_code"), 130);
	assert_string_equal(harness_jstr(a, "stdout"), "");
	json_decref(a);
	a = shell_ok(h, "sh3", "echo three", 0);
	json_decref(a);
	/* exit ends the shell: the command's answer says so. */
	a = harness_shell_exec(h, "sh3", "exit 7", 0);
	assert_string_equal(harness_jstr(a, "error.code"), "session_ended");
	json_decref(a);
	a = harness_wait_callback(h, "sh3", WAIT_MS);
	assert_int_equal(harness_jint(a, "exit_code"), 7);
	json_decref(a);
	/*
	 * Between its commands the shell waits on the worker's pipe, by
	 * design: never "waiting for input" (its end was the barrier).
	 */
	xasprintf(&hi, "q:%s:high", h->reply);
	assert_int_equal(harness_count_entries(h, hi, "EXEC_WAITING"), 0);
	free(hi);
	harness_pass(h);
}

/*
 * The policy decides on each command, at the session's tier: on a
 * read_only queue a write would wait for a person, and a shell's command
 * cannot, so it is refused (held) and nothing ran.
 */
static void
test_shell_policy(void **state)
{
	struct harness	*h = harness_fixture(state);
	json_t		*a;
	char		*path;

	harness_worker_start(h, NULL, "--tier", "read_only", NULL);
	harness_shell_start(h, "sh4", ":");
	a = harness_shell_exec(h, "sh4", "touch made.txt", 0);
	assert_string_equal(harness_jstr(a, "type"), "ERROR");
	assert_string_equal(harness_jstr(a, "error.code"), "held");
	json_decref(a);
	a = shell_ok(h, "sh4", "ls", 0);
	json_decref(a);
	xasprintf(&path, "%s/made.txt", h->ws);
	assert_null(harness_read_file(path, NULL));
	free(path);
	/* Not a shell session: exec is refused. */
	harness_submit(h, "normal", "plain", "cat", "{\"background\": true}");
	json_decref(harness_wait_answer(h, NULL, "plain", WAIT_MS));
	a = harness_shell_exec(h, "plain", "echo x", 0);
	assert_string_equal(harness_jstr(a, "error.code"), "bad_action");
	json_decref(a);
	harness_pass(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_shell_keeps_state,
		    harness_setup, harness_teardown),
		cmocka_unit_test_setup_teardown(test_shell_mark_not_forged,
		    harness_setup, harness_teardown),
		cmocka_unit_test_setup_teardown(
		    test_shell_timeout_interrupt_busy, harness_setup,
		    harness_teardown),
		cmocka_unit_test_setup_teardown(test_shell_policy,
		    harness_setup, harness_teardown),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
