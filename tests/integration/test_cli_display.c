/*
 * What the client shows a person, against a real redis-server and the
 * real worker: a command held for approval whose text holds a carriage
 * return, an erase-line escape and a right-to-left override is shown
 * escaped by 'execq approvals' (no raw ESC or CR reaches the terminal),
 * with its env and the grants an approval would give, while --json
 * keeps the bytes; ps escapes its table; logs writes the output's bytes
 * to a pipe, and escapes them for a terminal unless --raw; a message
 * that quotes its argument escapes it. Every command is an echo.
 */

#include <limits.h>
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

#define WAIT_MS		10000
#define CLI_MS		15000

/* The hostile text: CR, ESC [2K (erase the line), U+202E (RLO). */
#define EVIL		"ok\r\033[2K\xe2\x80\xae txt.cba"
#define EVIL_SHOWN	"ok\\r\\e[2K\\u202e txt.cba"

/* Fails the test showing what the client printed. */
static void __attribute__((noreturn))
proc_fail(struct harness *h, const struct harness_proc *p, const char *why)
{
	harness_fail(h, "%s; the client exited %d; stdout: \"%.600s\"; "
	    "stderr: \"%.300s\"", why, harness_proc_exit(p),
	    p->out != NULL ? p->out : "", p->err != NULL ? p->err : "");
}

/* The client with args after it (NULL-terminated), on the test's queue. */
static void
cli(struct harness *h, struct harness_proc *p, const char *sub, ...)
    __attribute__((sentinel));
static void
cli(struct harness *h, struct harness_proc *p, const char *sub, ...)
{
	const char	*args[HARNESS_CLI_MAX_ARGS + 1], *s;
	va_list		 ap;
	size_t		 n = 0;

	args[n++] = sub;
	args[n++] = "--queue";
	args[n++] = h->queue;
	va_start(ap, sub);
	while ((s = va_arg(ap, const char *)) != NULL) {
		if (n == HARNESS_CLI_MAX_ARGS)
			harness_fail(h, "too many client arguments");
		args[n++] = s;
	}
	va_end(ap);
	args[n] = NULL;
	harness_cli(h, p, NULL, CLI_MS, args);
}

/* Fails unless text holds no byte that moves a terminal (\n aside). */
static void
expect_inert(struct harness *h, const struct harness_proc *p,
    const char *text, size_t len)
{
	size_t	i;

	for (i = 0; i < len; i++) {
		if (text[i] == '\033' || text[i] == '\r')
			proc_fail(h, p, "a raw ESC or CR reached the output");
	}
	if (memmem(text, len, "\xe2\x80\xae", 3) != NULL)
		proc_fail(h, p, "a raw U+202E reached the output");
}

/* Fails unless needle is in the client's stdout. */
static void
expect_in(struct harness *h, const struct harness_proc *p,
    const char *needle)
{
	char	why[512];

	if (strstr(p->out, needle) != NULL)
		return;
	snprintf(why, sizeof why, "stdout lacks \"%s\"", needle);
	proc_fail(h, p, why);
}

/* The APPROVAL_REQUEST of item id on the reply queue's high lane. */
static json_t *
wait_request(struct harness *h, const char *id)
{
	char	key[256];
	json_t	*a;

	snprintf(key, sizeof key, "q:%s:high", h->reply);
	a = harness_wait_entry(h, key, id, WAIT_MS);
	assert_string_equal(harness_jstr(a, "type"), "APPROVAL_REQUEST");
	assert_string_equal(harness_jstr(a, "state"), "pending");
	return (a);
}

/*
 * Three held echoes: one whose command and env hold the hostile text,
 * one that asks for network, one that writes outside the workspace.
 * 'execq approvals' shows them all escaped, with what approving grants;
 * --json shows the very bytes the worker would run.
 */
static void
test_display_approvals(void **state)
{
	struct harness		*h = harness_fixture(state);
	const char		*evil = harness_id(h, "evil");
	const char		*net = harness_id(h, "net");
	const char		*out = harness_id(h, "out");
	const char		*cmd = "echo '" EVIL "' > esc.txt";
	struct harness_proc	 p;
	char			*outside_cmd, *want, *line, *save;
	json_t			*a, *j;
	int			 found = 0;

	harness_worker_start(h, NULL, "--tier", "read_only", "--sandbox",
	    "hold", NULL);
	harness_submit(h, "normal", evil, cmd,
	    "{\"env\": {\"NOTE\": \"a\\u001b]0;x\\u0007b\"}}");
	json_decref(wait_request(h, evil));
	harness_submit(h, "normal", net, "echo net", "{\"network\": true}");
	a = wait_request(h, net);
	assert_true(harness_jbool(a, "network"));
	json_decref(a);
	xasprintf(&outside_cmd, "echo out > %s/outside.txt", h->dir);
	harness_submit(h, "normal", out, outside_cmd, NULL);
	a = wait_request(h, out);
	assert_string_equal(harness_jstr(a, "rule"), "sandbox");
	xasprintf(&want, "    grant write %s\n", harness_jstr(a, "grant_path"));
	json_decref(a);

	harness_cli(h, &p, NULL, CLI_MS, (const char *[]){ "approvals",
	    NULL });
	if (harness_proc_exit(&p) != 0)
		proc_fail(h, &p, "approvals should exit 0");
	expect_inert(h, &p, p.out, p.out_len);
	expect_in(h, &p, "    $ echo '" EVIL_SHOWN "' > esc.txt\n");
	expect_in(h, &p, "    env NOTE=a\\e]0;x\\x07b\n");
	expect_in(h, &p, "    $ echo net\n    grant network\n");
	expect_in(h, &p, want);
	harness_proc_release(&p);

	/* --json: the request as the worker wrote it, bytes and all. */
	harness_cli(h, &p, NULL, CLI_MS, (const char *[]){ "approvals",
	    "--json", NULL });
	if (harness_proc_exit(&p) != 0)
		proc_fail(h, &p, "approvals --json should exit 0");
	for (line = strtok_r(p.out, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if ((j = json_loads(line, 0, NULL)) == NULL)
			harness_fail(h, "not JSON: %s", line);
		if (strcmp(harness_jstr(j, "id"), evil) == 0) {
			assert_string_equal(harness_jstr(j, "command"), cmd);
			assert_string_equal(harness_jstr(j, "env.NOTE"),
			    "a\033]0;x\007b");
			found = 1;
		}
		json_decref(j);
	}
	harness_proc_release(&p);
	assert_true(found);
	free(outside_cmd);
	free(want);
	harness_pass(h);
}

/* Runs the session's 'execq logs' until its output ends in "c\n". */
static void
logs_done(struct harness *h, struct harness_proc *p, const char *id)
{
	int64_t	deadline = harness_now_ms() + WAIT_MS;

	for (;;) {
		cli(h, p, "logs", id, NULL);
		if (harness_proc_exit(p) == 0 && p->out_len >= 2 &&
		    strcmp(p->out + p->out_len - 2, "c\n") == 0)
			return;
		if (harness_now_ms() > deadline)
			proc_fail(h, p, "the session's log never ended");
		harness_proc_release(p);
		harness_sleep_ms(50);
	}
}

/*
 * 'execq logs' on a terminal (script(1) gives it one): the hostile
 * output escaped, lines kept; with --raw, the bytes.
 */
static void
logs_on_a_tty(struct harness *h, const char *id)
{
	struct harness_proc	 p;
	char			*sh;

	if (access("/usr/bin/script", X_OK) != 0) {
		print_message("no script(1): logs on a terminal not tried\n");
		return;
	}
	xasprintf(&sh, "script -qec \"$CLI logs %s\" /dev/null", id);
	harness_cli_sh(h, &p, CLI_MS, sh);
	free(sh);
	if (harness_proc_exit(&p) != 0)
		proc_fail(h, &p, "logs on a terminal should exit 0");
	/* The terminal's own line ends are \r\n. */
	if (strstr(p.out, "a\\r\\e[2Kb\\u202ec\r\n") == NULL)
		proc_fail(h, &p, "logs on a terminal should escape");
	if (strchr(p.out, '\033') != NULL)
		proc_fail(h, &p, "a raw ESC reached the terminal");
	harness_proc_release(&p);

	xasprintf(&sh, "script -qec \"$CLI logs --raw %s\" /dev/null", id);
	harness_cli_sh(h, &p, CLI_MS, sh);
	free(sh);
	if (harness_proc_exit(&p) != 0 ||
	    strstr(p.out, "\033[2Kb\xe2\x80\xae") == NULL)
		proc_fail(h, &p, "logs --raw should give the bytes");
	harness_proc_release(&p);
}

/*
 * A session that echoes the hostile text: ps escapes its command, logs
 * gives the output's bytes to a pipe and escapes them for a terminal.
 */
static void
test_display_ps_and_logs(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct harness_proc	 p;
	char			*id;

	harness_worker_start(h, NULL, NULL);
	cli(h, &p, "spawn", "--", "echo 'a\r\033[2Kb\xe2\x80\xae" "c'", NULL);
	if (harness_proc_exit(&p) != 0 || p.out_len < 2)
		proc_fail(h, &p, "spawn should print the session id");
	id = xstrndup(p.out, p.out_len - 1);
	harness_proc_release(&p);

	logs_done(h, &p, id);
	if (strcmp(p.out, "a\r\033[2Kb\xe2\x80\xae" "c\n") != 0)
		proc_fail(h, &p, "logs to a pipe should give the bytes");
	harness_proc_release(&p);
	logs_on_a_tty(h, id);

	cli(h, &p, "ps", "--all", NULL);
	if (harness_proc_exit(&p) != 0)
		proc_fail(h, &p, "ps should exit 0");
	expect_inert(h, &p, p.out, p.out_len);
	expect_in(h, &p, "echo 'a\\r\\e[2Kb\\u202ec'\n");
	harness_proc_release(&p);
	free(id);
	harness_pass(h);
}

/* A message that quotes an argument shows it escaped. */
static void
test_display_messages(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct harness_proc	 p;

	cli(h, &p, "logs", "bad\033[2Kid\r", NULL);
	if (harness_proc_exit(&p) != 2)
		proc_fail(h, &p, "a bad id is a usage error");
	expect_inert(h, &p, p.err, p.err_len);
	if (strstr(p.err, "'bad\\e[2Kid\\r'") == NULL)
		proc_fail(h, &p, "the message should show the id escaped");
	harness_proc_release(&p);
	harness_pass(h);
}

int
main(void)
{
#define T(f)	cmocka_unit_test_setup_teardown(f, harness_setup, \
		    harness_teardown)
	const struct CMUnitTest tests[] = {
		T(test_display_approvals),
		T(test_display_ps_and_logs),
		T(test_display_messages),
	};
#undef T

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
