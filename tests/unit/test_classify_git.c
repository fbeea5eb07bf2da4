/*
 * classify, git against real repositories: each case builds one in a temp
 * dir with plain file writes (never git, never a hook run) and checks that
 * git finds a program there the way git would (hooks, config.worktree, a
 * common dir elsewhere, a bare repository, includes however spelled, pager
 * settings, submodules) and so is unknown, while a plain repository stays
 * read-only. Nothing planted is ever executed: the test only classifies.
 */

#include <sys/stat.h>

#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "policy/classify.h"

static char	tdir[PATH_MAX];		/* the workspace, a fresh temp dir */

/* nftw callback: removes one entry. */
static int
rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return (remove(path));
}

/* A fresh, empty workspace for each test. */
static int
setup(void **state)
{
	char	tmpl[] = "/tmp/execq-gitro-XXXXXX";

	(void)state;
	if (mkdtemp(tmpl) == NULL || realpath(tmpl, tdir) == NULL)
		return (-1);
	return (0);
}

static int
teardown(void **state)
{
	(void)state;
	return (nftw(tdir, rm_entry, 8, FTW_DEPTH | FTW_PHYS));
}

/* Writes len bytes of text into T/rel (len 0: strlen), making its dirs. */
static void
put(const char *rel, const char *text, size_t len)
{
	char	 path[2 * PATH_MAX], *slash;
	FILE	*f;

	snprintf(path, sizeof path, "%s/%s", tdir, rel);
	for (slash = strchr(path + strlen(tdir) + 1, '/'); slash != NULL;
	    slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(path, 0700);
		*slash = '/';
	}
	assert_non_null(f = fopen(path, "w"));
	assert_int_equal(fwrite(text, 1, len != 0 ? len : strlen(text), f),
	    len != 0 ? len : strlen(text));
	fclose(f);
}

/* Makes T/rel a git dir as git init leaves one (no hooks, no config). */
static void
mkgitdir(const char *rel)
{
	char	path[PATH_MAX];

	snprintf(path, sizeof path, "%s/HEAD", rel);
	put(path, "ref: refs/heads/main\n", 0);
	snprintf(path, sizeof path, "%s/objects/info/packs", rel);
	put(path, "", 0);
	snprintf(path, sizeof path, "%s/refs/heads/.keep", rel);
	put(path, "", 0);
}

/* The verdict of src run from T/cwd (NULL: T). */
static struct cls_verdict
run(const char *cwd, const char *src)
{
	struct cls_policy	 p;
	struct cls_verdict	 v;
	char			 dir[2 * PATH_MAX];

	memset(&p, 0, sizeof p);
	p.workspace = tdir;
	p.shell = CLS_SHELL_BASH;
	snprintf(dir, sizeof dir, "%s%s%s", tdir, cwd != NULL ? "/" : "",
	    cwd != NULL ? cwd : "");
	cls_classify(&p, src, strlen(src), dir, &v);
	return (v);
}

/* Asserts src from T/cwd is risk; with why, that the reason holds it. */
static void
want(const char *cwd, const char *src, enum cls_risk risk, const char *why)
{
	struct cls_verdict	v = run(cwd, src);

	if (v.risk != risk || (why != NULL && strstr(v.reason, why) == NULL))
		fail_msg("%s (in %s): %s %s (%s), want %s %s", src,
		    cwd != NULL ? cwd : ".", cls_risk_name(v.risk), v.rule,
		    v.reason, cls_risk_name(risk), why != NULL ? why : "");
	cls_verdict_release(&v);
}

/* A plain repository, found from a subdirectory too, is read-only. */
static void
test_git_plain(void **state)
{
	(void)state;
	mkgitdir(".git");
	put(".git/config", "[core]\n\tbare = false\n[remote \"origin\"]\n"
	    "\turl = https://x\n[pager]\n\tlog = false\n\tdiff\n"
	    "[alias]\n\tst = status\n", 0);
	put(".git/hooks/pre-commit.sample", "#!/bin/sh\n", 0);
	put("src/f.c", "int x;\n", 0);
	want(NULL, "git status", CLS_READ_ONLY, NULL);
	want("src", "git log -p", CLS_READ_ONLY, NULL);
	want(NULL, "git commit -m x", CLS_WRITE, NULL);
}

/* The hooks a subcommand starts: status writes the index. */
static void
test_git_hooks(void **state)
{
	(void)state;
	mkgitdir(".git");
	put(".git/hooks/pre-commit", "#!/bin/sh\n", 0);
	want(NULL, "git status", CLS_READ_ONLY, NULL);
	want(NULL, "git commit -m x", CLS_UNKNOWN, "pre-commit");
	put(".git/hooks/post-index-change", "#!/bin/sh\n", 0);
	want(NULL, "git status", CLS_UNKNOWN, "post-index-change");
	want(NULL, "git diff", CLS_UNKNOWN, "post-index-change");
}

/* config.worktree (extensions.worktreeConfig) is git's config too. */
static void
test_git_worktree_config(void **state)
{
	(void)state;
	mkgitdir(".git");
	put(".git/config", "[extensions]\n\tworktreeConfig = true\n", 0);
	put(".git/config.worktree", "[core]\n\tfsmonitor = ./x\n", 0);
	want(NULL, "git status", CLS_UNKNOWN, "config.worktree");
}

/* A .git file and a commondir: the config where git reads it. */
static void
test_git_common_dir(void **state)
{
	(void)state;
	mkgitdir("main");
	mkgitdir("main/worktrees/wt");
	put("main/worktrees/wt/commondir", "../..\n", 0);
	put("wt/.git", "gitdir: ../main/worktrees/wt\n", 0);
	want("wt", "git status", CLS_READ_ONLY, NULL);
	put("main/config", "[diff \"x\"]\n\ttextconv = ./x\n", 0);
	want("wt", "git log -p", CLS_UNKNOWN, "textconv");
	/* A .git dir with a commondir. */
	put("main/config", "", 0);
	mkgitdir("r/.git");
	put("r/.git/commondir", "../../main\n", 0);
	want("r", "git status", CLS_READ_ONLY, NULL);
	put("main/config", "[core]\n\tpager = ./x\n", 0);
	want("r", "git log", CLS_UNKNOWN, "pager");
	/* Pointing outside the workspace: not read, unknown. */
	put("wt/.git", "gitdir: /nonexistent-execq/wt\n", 0);
	want("wt", "git status", CLS_UNKNOWN, "outside");
	put("wt/.git", "gitdir ../main\n", 0);
	want("wt", "git status", CLS_UNKNOWN, ".git file");
}

/* A bare repository is its own git dir (its info/attributes too). */
static void
test_git_bare(void **state)
{
	(void)state;
	mkgitdir("bare.git");
	put("bare.git/info/attributes", "* diff=x\n", 0);
	want("bare.git", "git log -p", CLS_READ_ONLY, NULL);
	put("bare.git/config", "[core]\n\tbare = true\n[diff \"x\"]\n"
	    "\ttextconv = ./x\n", 0);
	want("bare.git", "git log -p", CLS_UNKNOWN, "textconv");
	want("bare.git/refs", "git show HEAD", CLS_UNKNOWN, "textconv");
}

/* A .git that is no git dir is passed over, by git and by the scan. */
static void
test_git_not_a_git_dir(void **state)
{
	(void)state;
	mkgitdir(".git");
	put(".git/config", "[core]\n\tfsmonitor = ./x\n", 0);
	put("src/.git/x", "", 0);		/* an empty-ish .git dir */
	want("src", "git status", CLS_UNKNOWN, "fsmonitor");
}

/* Includes, however spelled, are followed; the file they name is read. */
static void
test_git_includes(void **state)
{
	static const char *const inc[] = {
		"[include]\n\tpath = inc\n",
		"[Include]\n\tPATH = inc\n",
		"[includeIf \"gitdir:/\"]\n\tpath = inc\n",
		"[includeIf \"gitdir/i:~/x/\"]\n\tpath = ../.git/inc\n",
		"\xef\xbb\xbf[include]\n\tpath = inc\n",
		"[user] [include] path = inc\n",
		"[include]path=\"i\\\nnc\"\n",
		"[include]\n\tpath = inc ; a comment\n",
		"[include]\n\tpath = \"inc\" # a comment\n",
	};
	size_t	i;

	(void)state;
	mkgitdir(".git");
	put(".git/inc", "[user]\n\tname = x\n", 0);
	for (i = 0; i < sizeof inc / sizeof inc[0]; i++) {
		put(".git/config", inc[i], 0);
		want(NULL, "git log", CLS_READ_ONLY, NULL);
	}
	put(".git/inc", "[pager]\n\tlog = ./x\n", 0);
	for (i = 0; i < sizeof inc / sizeof inc[0]; i++) {
		put(".git/config", inc[i], 0);
		want(NULL, "git log", CLS_UNKNOWN, "inc sets pager.log");
	}
	/* Nested, and a loop, bounded. */
	put(".git/config", "[include]\n\tpath = inc\n", 0);
	put(".git/inc", "[include]\n\tpath = inc2\n", 0);
	put(".git/inc2", "[core]\n\tsshCommand = ./x\n", 0);
	want(NULL, "git log", CLS_UNKNOWN, "sshcommand");
	put(".git/inc", "[include]\n\tpath = config\n", 0);
	want(NULL, "git log", CLS_UNKNOWN, "deep");
	/* Paths the scan cannot see: unknown. */
	put(".git/config", "[include]\n\tpath = ~/.gitconfig\n", 0);
	want(NULL, "git log", CLS_UNKNOWN, NULL);
	put(".git/config", "[include]\n\tpath = /etc/passwd\n", 0);
	want(NULL, "git log", CLS_UNKNOWN, "outside");
	/* Outside, whether there is a file there or not is not told. */
	put(".git/config", "[include]\n\tpath = /nonexistent-execq\n", 0);
	want(NULL, "git log", CLS_UNKNOWN, "outside");
	/* Inside, a file that is not there is read as nothing, as git does. */
	put(".git/config", "[include]\n\tpath = nothere\n", 0);
	want(NULL, "git log", CLS_READ_ONLY, NULL);
}

/* The config is parsed as git parses it; what it cannot parse is unknown. */
static void
test_git_config_syntax(void **state)
{
	static const char *const bad[] = {
		"[pager]\n\tlog = ./x\n",
		"[pager]\n\tlog = \"less; ./x\"\n",
		"[core]\n\tPAGER = ./x\n",
		"[Core]\n\tpager = ./x\n",
		"[core] pager = ./x\n",
		"[user] [core] fsmonitor = ./x\n",
		"[remote \"o\"]\n\turl = a \\\n\tb\n[core]\n\tfsmonitor=./x\n",
		"[gpg \"ssh\"]\n\tdefaultKeyCommand = ./x\n",
		"[uploadpack]\n\tpackObjectsHook = ./x\n",
		"[submodule \"s\"]\n\tupdate = !./x\n",
		"[browser \"b\"]\n\tpath = ./x\n",
		"[alias]\n\tlog = !./x\n",
		"[core.x]\n\tfsmonitor = ./x\n",
		"[user]\n\tname = \"unterminated\n",
		"[user]\n\tname = a\\q\n",
		"[user\n",
		"[user \"x]\n",
		"= x\n",
		"name = x\n",
		"[user]\n\tname ; x\n",
		"[user]\n\t\f\n",
	};
	static const char nul[] = "[user]\n#\0\n[core]\n\tfsmonitor = ./x\n";
	size_t	i;

	(void)state;
	mkgitdir(".git");
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		put(".git/config", bad[i], 0);
		want(NULL, "git log", CLS_UNKNOWN, NULL);
	}
	/* A NUL hides nothing. */
	put(".git/config", nul, sizeof nul - 1);
	want(NULL, "git log", CLS_UNKNOWN, NULL);
	/* Quoted comment characters and escapes are values. */
	put(".git/config", "[user]\n\tname = \"a;b#c\" \\\"d\\\\\n"
	    "\temail = x # fsmonitor = y\n; [core] fsmonitor = z\n", 0);
	want(NULL, "git log", CLS_READ_ONLY, NULL);
}

/* A submodule (a gitlink in the index) runs git under its own config. */
static void
test_git_submodule(void **state)
{
	/* DIRC v2, one entry "f" of the given mode, then a checksum. */
	unsigned char	idx[12 + 64 + 20];

	(void)state;
	mkgitdir(".git");
	memset(idx, 0, sizeof idx);
	memcpy(idx, "DIRC\0\0\0\2\0\0\0\1", 12);
	idx[12 + 24 + 2] = 0x81;		/* 0100644 */
	idx[12 + 24 + 3] = 0xa4;
	idx[12 + 61] = 1;			/* the name's length */
	idx[12 + 62] = 'f';
	put(".git/index", (const char *)idx, sizeof idx);
	want(NULL, "git status", CLS_READ_ONLY, NULL);
	idx[12 + 24 + 2] = 0xe0;		/* 0160000 */
	idx[12 + 24 + 3] = 0x00;
	put(".git/index", (const char *)idx, sizeof idx);
	want(NULL, "git status", CLS_UNKNOWN, "submodule");
	put(".git/index", "DIRC\0\0\0\2\0\0\0\1", 12);	/* cut short */
	want(NULL, "git status", CLS_UNKNOWN, "index");
}

/* What points git elsewhere from the command itself is unknown. */
static void
test_git_env(void **state)
{
	static const char *const srcs[] = {
		"GIT_DIR=/x git status",
		"GIT_COMMON_DIR=/x git status",
		"GIT_WORK_TREE=/x git status",
		"GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager "
		    "GIT_CONFIG_VALUE_0=./x git log",
		"GIT_PAGER=./x git log",
		"export GIT_CONFIG_GLOBAL=./c; git log",
		"env GIT_ATTR_SOURCE=HEAD git log -p",
	};
	size_t	i;

	(void)state;
	mkgitdir(".git");
	for (i = 0; i < sizeof srcs / sizeof srcs[0]; i++)
		want(NULL, srcs[i], CLS_UNKNOWN, NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_git_plain, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_git_hooks, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_git_worktree_config, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_git_common_dir, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_git_bare, setup, teardown),
		cmocka_unit_test_setup_teardown(test_git_not_a_git_dir, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_git_includes, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_git_config_syntax, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_git_submodule, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_git_env, setup, teardown),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
