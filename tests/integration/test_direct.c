/*
 * Skipping the shell (issue 25, item 3): a command of plain words is
 * exec'd without the shell, and its answer (exit code, stdout, stderr) is
 * the same as through the shell, for commands found, not found, not
 * executable and scripts without #!; the boundary still holds.
 */

#include <sys/stat.h>

#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "logs/xmalloc.h"
#include "tests/integration/harness.h"

#define WAIT_MS		30000

/* Writes text to dir/name with mode. */
static void
put_file(struct harness *h, const char *dir, const char *name,
    const char *text, mode_t mode)
{
	char	 path[PATH_MAX];
	FILE	*f;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	if ((f = fopen(path, "w")) == NULL || fputs(text, f) == EOF ||
	    fclose(f) != 0 || chmod(path, mode) != 0)
		harness_fail(h, "cannot write %s", path);
}

/* Runs command as item name; its answer. */
static json_t *
run(struct harness *h, const char *name, const char *command)
{
	const char	*id = harness_id(h, name);
	json_t		*a;

	harness_submit(h, "normal", id, command, NULL);
	a = harness_wait_answer(h, NULL, id, WAIT_MS);
	if (strcmp(harness_jstr(a, "id"), id) != 0)
		harness_fail(h, "answer to %s is not its own", id);
	return (a);
}

/* A member of a as text ("" when it is missing). */
static const char *
member(json_t *a, const char *key)
{
	const char	*s = json_string_value(json_object_get(a, key));

	return (s != NULL ? s : "");
}

/*
 * direct (plain words) and shell (the same, its first word quoted: the
 * shell runs it) give the same answer; exit_code is what both give.
 */
static void
same(struct harness *h, const char *name, const char *direct,
    const char *shell, int exit_code)
{
	json_t	*a, *b;
	char	*bname;

	a = run(h, name, direct);
	xasprintf(&bname, "%s-sh", name);
	b = run(h, bname, shell);
	free(bname);
	if (harness_jint(a, "exit_code") != exit_code ||
	    harness_jint(b, "exit_code") != exit_code ||
	    strcmp(member(a, "stdout"), member(b, "stdout")) != 0 ||
	    strcmp(member(a, "stderr"), member(b, "stderr")) != 0) {
		char	*ta = json_dumps(a, JSON_COMPACT);
		char	*tb = json_dumps(b, JSON_COMPACT);

		harness_fail(h, "%s: direct %s\nshell %s", name, ta, tb);
	}
	json_decref(a);
	json_decref(b);
}

static void
test_direct_same_answers(void **state)
{
	struct harness	*h = harness_fixture(state);
	char		 sub[PATH_MAX], *cmd, *cmd2;

	snprintf(sub, sizeof sub, "%s/sub", h->ws);
	assert_int_equal(mkdir(sub, 0755), 0);
	put_file(h, sub, "a.txt", "a\n", 0644);
	put_file(h, sub, "b.txt", "b\n", 0644);
	put_file(h, h->ws, "noexec.sh", "#!/bin/sh\necho no\n", 0644);
	put_file(h, h->ws, "plain.sh", "echo plain $((1+2))\n", 0755);
	put_file(h, h->ws, "bang.sh", "#!/bin/sh\necho bang \"$@\"\n", 0755);
	put_file(h, h->ws, "badinterp.sh", "#!/nonexistent/interp\n", 0755);
	harness_worker_start(h, NULL, NULL);

	same(h, "found", "ls -1 sub", "'ls' -1 sub", 0);
	same(h, "abs", "/bin/ls sub/a.txt", "'/bin/ls' sub/a.txt", 0);
	same(h, "fails", "ls nosuch-file", "'ls' nosuch-file", 2);
	same(h, "notfound", "nosuchcmd-direct", "'nosuchcmd-direct'", 127);
	same(h, "notfound-path", "./nosuch.sh", "'./nosuch.sh'", 127);
	same(h, "noexec", "./noexec.sh", "'./noexec.sh'", 126);
	same(h, "notafile", "./sub", "'./sub'", 126);
	same(h, "nobang", "./plain.sh", "'./plain.sh'", 0);
	same(h, "bang", "./bang.sh x y", "'./bang.sh' x y", 0);
	same(h, "badinterp", "./badinterp.sh", "'./badinterp.sh'", 127);
	same(h, "pwd", "printenv PWD", "'printenv' PWD", 0);
	xasprintf(&cmd, "%s/noexec.sh", h->ws);
	xasprintf(&cmd2, "'%s/noexec.sh'", h->ws);
	same(h, "noexec-abs", cmd, cmd2, 126);
	free(cmd);
	free(cmd2);
	harness_pass(h);
}

/* A direct command meets the same boundary as one through the shell. */
static void
test_direct_still_confined(void **state)
{
	struct harness	*h = harness_fixture(state);
	char		 tmp[PATH_MAX], marker[PATH_MAX], *cmd;
	json_t		*a;
	pid_t		 pid;

	snprintf(tmp, sizeof tmp, "%s/cmdtmp", h->dir);
	pid = harness_worker_start(h, NULL, "--tmp-dir", tmp, NULL);
	if (harness_outer_limit(h, pid) <= 0) {
		harness_worker_stop(h, pid);
		print_message("no outer cgroup v1 pids limit here: hostile "
		    "commands are not run\n");
		skip();
	}
	snprintf(marker, sizeof marker, "%s/outside-marker", h->dir);
	xasprintf(&cmd, "touch %s", marker);
	a = run(h, "outside", cmd);
	if (harness_jint(a, "exit_code") == 0 || access(marker, F_OK) == 0)
		harness_fail(h, "a direct command wrote outside: %s", marker);
	if (harness_jint(a, "confinement.landlock") < 1)
		harness_fail(h, "not confined by Landlock");
	json_decref(a);
	free(cmd);
	/* And inside it may write. */
	a = run(h, "inside", "touch made-inside");
	assert_int_equal(harness_jint(a, "exit_code"), 0);
	json_decref(a);
	snprintf(marker, sizeof marker, "%s/made-inside", h->ws);
	assert_int_equal(access(marker, F_OK), 0);
	harness_pass(h);
}

/* Runs command as item name with the item's PATH set to path; its answer. */
static json_t *
run_path(struct harness *h, const char *name, const char *command,
    const char *path)
{
	const char	*id = harness_id(h, name);
	char		*extra;
	json_t		*a;

	xasprintf(&extra, "{\"env\": {\"PATH\": \"%s\"}}", path);
	harness_submit(h, "normal", id, command, extra);
	free(extra);
	a = harness_wait_answer(h, NULL, id, WAIT_MS);
	if (strcmp(harness_jstr(a, "id"), id) != 0)
		harness_fail(h, "answer to %s is not its own", id);
	return (a);
}

/*
 * sh -c takes a command text that starts with '-' or '+' for its own
 * options and runs nothing (exit 2): a program of that name in the PATH
 * is not run directly either.
 */
static void
test_direct_dash_first(void **state)
{
	struct harness	*h = harness_fixture(state);
	static const char *const cmds[] = { "--", "-- x", "- x", "-x",
	    "-x y", "+x", "-" };
	char		 marker[PATH_MAX], *path, *name, *script;
	json_t		*a;
	size_t		 i;

	snprintf(marker, sizeof marker, "%s/ran-marker", h->ws);
	xasprintf(&script, "#!/bin/sh\ntouch %s\n", marker);
	put_file(h, h->ws, "--", script, 0755);
	put_file(h, h->ws, "-", script, 0755);
	put_file(h, h->ws, "-x", script, 0755);
	put_file(h, h->ws, "+x", script, 0755);
	free(script);
	xasprintf(&path, "%s:/usr/bin:/bin", h->ws);
	harness_worker_start(h, NULL, NULL);
	for (i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
		xasprintf(&name, "dash-first-%zu", i);
		a = run_path(h, name, cmds[i], path);
		free(name);
		if (harness_jint(a, "exit_code") != 2 ||
		    access(marker, F_OK) == 0) {
			char	*t = json_dumps(a, JSON_COMPACT);

			harness_fail(h, "'%s' ran a program: %s", cmds[i], t);
		}
		json_decref(a);
	}
	free(path);
	harness_pass(h);
}

int
main(void)
{
#define T(name)	cmocka_unit_test_setup_teardown(name, harness_setup, \
	    harness_teardown)
	const struct CMUnitTest tests[] = {
		T(test_direct_same_answers),
		T(test_direct_still_confined),
		T(test_direct_dash_first),
	};
#undef T

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
