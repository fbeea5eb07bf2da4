/*
 * The command policy tried as an attacker would, against a real worker
 * in the read_only tier: commands that look read-only but would run a
 * program or write a file (through an option, the environment, a config
 * file, a loop, a function, arithmetic) are held, and the marker file
 * each would create never appears; loops, conditions and functions of
 * read-only commands run at once (under dash, the default shell, which
 * never runs a value as arithmetic code). Nothing here is catastrophic: the
 * worst any of these would do is create a file in the workspace.
 */

#include <sys/stat.h>
#include <sys/types.h>

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

#define WAIT_MS		15000

/* Writes text into the workspace file name. */
static void
put(struct harness *h, const char *name, const char *text)
{
	char	 path[PATH_MAX];
	FILE	*f;

	snprintf(path, sizeof path, "%s/%s", h->ws, name);
	if ((f = fopen(path, "w")) == NULL)
		harness_fail(h, "cannot write %s", path);
	fputs(text, f);
	fclose(f);
}

/* 1 if the workspace file name exists. */
static int
exists(struct harness *h, const char *name)
{
	char		path[PATH_MAX];
	struct stat	sb;

	snprintf(path, sizeof path, "%s/%s", h->ws, name);
	return (lstat(path, &sb) == 0);
}

/*
 * Each would create its marker (m<N>) if it ran; each must be held (an
 * APPROVAL_REQUEST) and never answered.
 */
static void
test_hostile_held_never_runs(void **state)
{
	static const char *const cmds[] = {
		"TAR_OPTIONS=--to-command='touch m0' tar tf a.tar",
		"git -c core.pager='touch m1' log",
		"for i in 1; do touch m2; done",
		"env XDG_CONFIG_HOME=. git status > /dev/null",
		"rg --pre ./m.sh x",
		"sort --compress-program=./m.sh a.tar",
		"nohup touch m6",
		"find . -name nothing -fprint m7",
		"f() { touch m8; }; f",
		"(( $(touch m9) ))",
		"case x in x) touch m10;; esac",
		"cd repo && git status",
		"HOME=. git log",
		"x=$(touch m13)",
		"file -C -m m.magic",
		"tar -tf a.tar -I './m.sh'",
		"if true; then touch m16; fi",
		"while read l; do touch \"$l\"; done <<EOF\nm17\nEOF\n",
		"read -r x < list; echo $((x))",
		"export GIT_EXTERNAL_DIFF=./m.sh; git diff",
		"env LESSOPEN='|./m.sh %s' cat a.tar",
		"set -a; TAR_OPTIONS=-v; tar tf a.tar",
	};
	struct harness	*h = harness_fixture(state);
	char		 name[32], lane[256], key[64];
	const char	*id;
	json_t		*a;
	size_t		 i;

	/* What each would use: a script that makes its marker, a repo. */
	put(h, "m.sh", "#!/bin/sh\ntouch m-script\n");
	snprintf(lane, sizeof lane, "%s/m.sh", h->ws);
	assert_int_equal(chmod(lane, 0755), 0);
	put(h, "a.tar", "");
	put(h, "list", "a[$(touch m18)]\n");
	snprintf(lane, sizeof lane, "%s/repo", h->ws);
	assert_int_equal(mkdir(lane, 0755), 0);
	snprintf(lane, sizeof lane, "%s/repo/.git", h->ws);
	assert_int_equal(mkdir(lane, 0755), 0);
	put(h, "repo/.git/config", "[core]\n\tfsmonitor = touch ../m11\n");
	/* bash: it reads more (arithmetic on a value from outside runs). */
	harness_worker_start(h, NULL, "--tier", "read_only", "--sandbox",
	    "hold", "--shell", "/bin/bash", NULL);
	snprintf(lane, sizeof lane, "q:%s:high", h->reply);
	for (i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
		snprintf(key, sizeof key, "held%zu", i);
		id = harness_id(h, key);
		harness_submit(h, "normal", id, cmds[i], NULL);
		if ((a = harness_try_entry(h, lane, id, WAIT_MS)) == NULL)
			harness_fail(h, "%s was not held", cmds[i]);
		if (strcmp(harness_jstr(a, "type"), "APPROVAL_REQUEST") != 0)
			harness_fail(h, "%s: %s", cmds[i], json_dumps(a, 0));
		json_decref(a);
	}
	/* A barrier: a read-only command submitted last has run. */
	id = harness_id(h, "barrier");
	harness_submit(h, "normal", id, "for f in a b; do echo $f; done", NULL);
	a = harness_wait_answer(h, NULL, id, WAIT_MS);
	assert_string_equal(harness_jstr(a, "type"), "EXEC_RESULT");
	json_decref(a);
	for (i = 0; i <= 18; i++) {
		snprintf(name, sizeof name, "m%zu", i);
		if (exists(h, name))
			harness_fail(h, "marker %s exists: a held command ran",
			    name);
	}
	assert_false(exists(h, "m-script"));
	assert_false(exists(h, "nohup.out"));
	assert_false(exists(h, "m.magic.mgc"));
	harness_pass(h);
}

/* Loops, conditions, cases and functions of read-only commands run. */
static void
test_hostile_read_only_constructs_run(void **state)
{
	static const struct {
		const char	*cmd;
		const char	*out;
	} t[] = {
		{ "for f in a b c; do echo $f; done", "a\nb\nc\n" },
		{ "if [ -d . ]; then echo dir; else echo no; fi", "dir\n" },
		{ "i=0; while [ $i -lt 3 ]; do echo $i; i=$((i + 1)); done",
		    "0\n1\n2\n" },
		{ "case abc in a*) echo yes;; *) echo no;; esac", "yes\n" },
		{ "f() { echo \"hi $1\"; }; f you", "hi you\n" },
		{ "LANG=C ls -d . && echo ok", ".\nok\n" },
		{ "{ echo a; echo b; } | sort -r", "b\na\n" },
		{ "n=$(echo 5); echo $((n * 2))", "10\n" },
	};
	struct harness	*h = harness_fixture(state);
	char		 key[32];
	const char	*id;
	json_t		*a;
	size_t		 i;

	harness_worker_start(h, NULL, "--tier", "read_only", "--sandbox",
	    "hold", NULL);
	for (i = 0; i < sizeof t / sizeof t[0]; i++) {
		snprintf(key, sizeof key, "ro%zu", i);
		id = harness_id(h, key);
		harness_submit(h, "normal", id, t[i].cmd, NULL);
		a = harness_wait_answer(h, NULL, id, WAIT_MS);
		if (harness_jstr(a, "type") == NULL ||
		    strcmp(harness_jstr(a, "type"), "EXEC_RESULT") != 0 ||
		    harness_jint(a, "exit_code") != 0 ||
		    strcmp(harness_jstr(a, "stdout"), t[i].out) != 0)
			harness_fail(h, "%s: %s", t[i].cmd, json_dumps(a, 0));
		json_decref(a);
	}
	harness_pass(h);
}

int
main(void)
{
#define T(f)	cmocka_unit_test_setup_teardown(f, harness_setup, \
		    harness_teardown)
	const struct CMUnitTest tests[] = {
		T(test_hostile_held_never_runs),
		T(test_hostile_read_only_constructs_run),
	};
#undef T

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
