/*
 * "Waiting for input", from the kernel (docs/PROTOCOL.md section 11): a
 * session whose command stops to read its terminal (or its stdin pipe)
 * gets one EXEC_WAITING on q:<reply>:high with its last lines, and poll,
 * list and the Redis mirror say "waiting_input"; a command that sleeps or
 * computes never gets one. The barrier for "never" is the session's own
 * EXEC_CALLBACK: every entry before it on the high lane has been read by
 * then, so an EXEC_WAITING would be in the stash (an event, not a sleep).
 */

#include <sys/types.h>

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hiredis/hiredis.h>
#include <jansson.h>

#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "logs/xmalloc.h"
#include "tests/integration/harness.h"

#define WAIT_MS		30000	/* a deadline, never a pace */

/* The args JSON text of a PROCESS item, printf-style; then its answer. */
static json_t *
process(struct harness *h, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static json_t *
process(struct harness *h, const char *fmt, ...)
{
	va_list	 ap;
	char	*args;
	json_t	*a;

	va_start(ap, fmt);
	if (vasprintf(&args, fmt, ap) == -1)
		harness_fail(h, "out of memory");
	va_end(ap);
	a = harness_process(h, args, HARNESS_WAIT_MS);
	free(args);
	return (a);
}

/* Fails the test showing answer a and why. */
static void __attribute__((noreturn))
fail_answer(struct harness *h, json_t *a, const char *why)
{
	char	*text;

	text = json_dumps(a, JSON_COMPACT);
	harness_fail(h, "%s; answer: %.600s", why, text != NULL ? text : "?");
}

/* Starts command as session id, with a PTY or not; checks EXEC_STARTED. */
static void
start(struct harness *h, const char *id, const char *command, int pty)
{
	json_t	*a;

	harness_submit(h, "normal", id, command, pty ?
	    "{\"background\": true, \"pty\": true}" :
	    "{\"background\": true}");
	a = harness_wait_answer(h, NULL, id, HARNESS_WAIT_MS);
	if (strcmp(harness_jstr(a, "type"), "EXEC_STARTED") != 0)
		fail_answer(h, a, "no EXEC_STARTED");
	json_decref(a);
}

/* 1 if a's "tail" has a line containing s. */
static int
tail_has(json_t *a, const char *s)
{
	json_t	*line;
	size_t	 i;

	json_array_foreach(json_object_get(a, "tail"), i, line) {
		if (json_is_string(line) &&
		    strstr(json_string_value(line), s) != NULL)
			return (1);
	}
	return (0);
}

/* q:<reply>:high, allocated. */
static char *
high(struct harness *h)
{
	char	*key;

	xasprintf(&key, "q:%s:high", h->reply);
	return (key);
}

/* The next EXEC_WAITING of session id, checked: its tail holds prompt. */
static void
expect_waiting(struct harness *h, const char *id, const char *prompt)
{
	char	*key = high(h);
	json_t	*a;

	if ((a = harness_try_typed(h, key, id, "EXEC_WAITING",
	    WAIT_MS)) == NULL)
		harness_fail(h, "no EXEC_WAITING for %s (prompt \"%s\")", id,
		    prompt);
	free(key);
	if (strcmp(harness_jstr(a, "priority"), "high") != 0 ||
	    strcmp(harness_jstr(a, "session_id"), id) != 0 ||
	    harness_jint(a, "pid") <= 0 ||
	    harness_jint(a, "waiting_since_ms") <= 0)
		fail_answer(h, a, "EXEC_WAITING without its fields");
	if (!tail_has(a, prompt))
		fail_answer(h, a, "EXEC_WAITING's tail lacks the prompt");
	json_decref(a);
}

/* Asserts poll on session id says waiting_input is want. */
static void
expect_poll_waiting(struct harness *h, const char *id, int want)
{
	json_t	*a;

	a = process(h, "{\"action\": \"poll\", \"session_id\": \"%s\"}", id);
	if (harness_jbool(a, "waiting_input") != want)
		fail_answer(h, a, want ? "poll: waiting_input should be true" :
		    "poll: waiting_input should be false");
	json_decref(a);
}

/* Writes data (JSON string text) to session id. */
static void
write_to(struct harness *h, const char *id, const char *data)
{
	json_t	*a;

	a = process(h, "{\"action\": \"write\", \"session_id\": \"%s\", "
	    "\"data\": %s}", id, data);
	if (harness_jint(a, "written") <= 0)
		fail_answer(h, a, "write wrote nothing");
	json_decref(a);
}

/* The callback of session id, completed, its tail holding want. */
static void
expect_end(struct harness *h, const char *id, const char *want)
{
	json_t	*a;

	a = harness_wait_callback(h, id, WAIT_MS);
	if (strcmp(harness_jstr(a, "status"), "completed") != 0)
		fail_answer(h, a, "the session did not complete");
	if (want != NULL && !tail_has(a, want))
		fail_answer(h, a, "the callback's tail lacks the answer");
	json_decref(a);
}

/* No EXEC_WAITING for id was on the high lane before its callback. */
static void
expect_never_waited(struct harness *h, const char *id)
{
	char	*key = high(h);
	json_t	*a;

	json_decref(harness_wait_callback(h, id, WAIT_MS));
	/* Everything before the callback was read with it: look, no wait. */
	a = harness_try_typed(h, key, id, "EXEC_WAITING", 0);
	free(key);
	if (a != NULL)
		fail_answer(h, a, "a command that never reads was reported "
		    "waiting");
}

/* 1 if python3 runs here (inside the worker's boundary as well). */
static int
have_python(struct harness *h)
{
	const char	*probe[] = { "python3", "-c", "pass", NULL };

	return (harness_run(h, probe, 10000) == 0);
}

/*
 * read -p on a PTY: EXEC_WAITING with the prompt, poll and the mirror say
 * so; the answer written ends it, and waiting_input is false again.
 */
static void
test_waiting_read_prompt(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "read");
	redisReply	*r;
	char		*key;
	int64_t		 deadline;

	harness_worker_start(h, NULL, NULL);
	start(h, id, "read -p 'name? ' x; echo hi $x", 1);
	expect_waiting(h, id, "name? ");
	expect_poll_waiting(h, id, 1);
	/* The mirror follows the notice on the same connection. */
	xasprintf(&key, "execq:session:%s", id);
	deadline = harness_now_ms() + WAIT_MS;
	for (;;) {
		r = harness_cmd(h, "HGET %s waiting_input", key);
		if (r->type == REDIS_REPLY_STRING && strcmp(r->str, "1") == 0)
			break;
		freeReplyObject(r);
		if (harness_now_ms() > deadline)
			harness_fail(h, "%s: waiting_input never 1", key);
		harness_sleep_ms(10);
	}
	freeReplyObject(r);
	free(key);
	write_to(h, id, "\"bob\\n\"");
	expect_end(h, id, "hi bob");
	expect_poll_waiting(h, id, 0);
	harness_pass(h);
}

/* Python's input() on a PTY. */
static void
test_waiting_python_input(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "input");

	if (!have_python(h))
		skip();
	harness_worker_start(h, NULL, NULL);
	start(h, id, "python3 -c \"x = input('age? '); print('got', x)\"", 1);
	expect_waiting(h, id, "age? ");
	write_to(h, id, "\"7\\n\"");
	expect_end(h, id, "got 7");
	harness_pass(h);
}

/*
 * The Python REPL (readline waits in pselect6 or select): a prompt, and
 * after an answer and its output a new prompt, a new EXEC_WAITING.
 */
static void
test_waiting_python_repl(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "repl");

	if (!have_python(h))
		skip();
	harness_worker_start(h, NULL, NULL);
	start(h, id, "python3 -q", 1);
	expect_waiting(h, id, ">>> ");
	write_to(h, id, "\"6*7\\n\"");
	expect_waiting(h, id, "42");
	write_to(h, id, "\"\\u0004\"");
	expect_end(h, id, NULL);
	harness_pass(h);
}

/* 1 if node runs here (inside the worker's boundary as well). */
static int
have_node(struct harness *h)
{
	const char	*probe[] = { "node", "-e", "0", NULL };

	return (harness_run(h, probe, 20000) == 0);
}

/*
 * Node's REPL: libuv waits in epoll, with a timer of its own armed, on
 * the terminal and its own wake-ups: a prompt, and a new one after an
 * answer.
 */
static void
test_waiting_node_repl(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "node");

	if (!have_node(h))
		skip();
	harness_worker_start(h, NULL, NULL);
	start(h, id, "NODE_REPL_HISTORY= node", 1);
	expect_waiting(h, id, "> ");
	write_to(h, id, "\"6*7\\n\"");
	expect_waiting(h, id, "42");
	write_to(h, id, "\".exit\\n\"");
	expect_end(h, id, NULL);
	harness_pass(h);
}

/*
 * Node with timers and no reader of its input (epoll, the terminal not
 * in its set), and Node serving a socket while it reads the terminal
 * (a server, not a prompt): neither is waiting for input.
 */
static void
test_waiting_node_not_waiting(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*timers = harness_id(h, "node-timers");
	const char	*server = harness_id(h, "node-server");

	if (!have_node(h))
		skip();
	harness_worker_start(h, NULL, NULL);
	start(h, timers, "node -e \"let n = 0; const t = setInterval(() => "
	    "{ if (++n === 30) clearInterval(t); }, 100)\"; echo done", 1);
	start(h, server, "node -e \"const s = require('net').createServer();"
	    " s.listen(0, '127.0.0.1'); process.stdin.on('data', () => {});"
	    " setTimeout(() => process.exit(0), 3000)\"; echo done", 1);
	expect_never_waited(h, timers);
	expect_never_waited(h, server);
	harness_pass(h);
}

/* An interactive sh (its own line reader) waits at its prompt. */
static void
test_waiting_shell_prompt(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "sh");

	harness_worker_start(h, NULL, NULL);
	start(h, id, "PS1='sh> ' sh -i", 1);
	expect_waiting(h, id, "sh> ");
	write_to(h, id, "\"echo one$((1+1))\\n\"");
	expect_waiting(h, id, "one2");
	write_to(h, id, "\"exit\\n\"");
	expect_end(h, id, NULL);
	harness_pass(h);
}

/* No PTY: head reading its stdin pipe waits too. */
static void
test_waiting_stdin_pipe(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "head");

	harness_worker_start(h, NULL, NULL);
	start(h, id, "echo ready; head -n1", 0);
	expect_waiting(h, id, "ready");
	expect_poll_waiting(h, id, 1);
	write_to(h, id, "\"line\\n\"");
	expect_end(h, id, "line");
	harness_pass(h);
}

/* Sleeping, on a PTY or not, is not waiting for input. */
static void
test_waiting_not_sleep(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*pty = harness_id(h, "sleep-pty");
	const char	*pipe = harness_id(h, "sleep-pipe");

	harness_worker_start(h, NULL, NULL);
	start(h, pty, "echo start; sleep 3; echo done", 1);
	start(h, pipe, "echo start; sleep 3; echo done", 0);
	expect_never_waited(h, pty);
	expect_never_waited(h, pipe);
	harness_pass(h);
}

/* Computing (a busy loop bounded by time) is not waiting for input. */
static void
test_waiting_not_busy(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "busy");

	harness_worker_start(h, NULL, NULL);
	start(h, id, "echo start; timeout 2 sh -c 'while :; do :; done'; "
	    "echo done", 1);
	expect_never_waited(h, id);
	harness_pass(h);
}

#define T(f)	cmocka_unit_test_setup_teardown(f, harness_setup, \
		    harness_teardown)

int
main(void)
{
	const struct CMUnitTest	tests[] = {
		T(test_waiting_read_prompt),
		T(test_waiting_python_input),
		T(test_waiting_python_repl),
		T(test_waiting_node_repl),
		T(test_waiting_node_not_waiting),
		T(test_waiting_shell_prompt),
		T(test_waiting_stdin_pipe),
		T(test_waiting_not_sleep),
		T(test_waiting_not_busy),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
