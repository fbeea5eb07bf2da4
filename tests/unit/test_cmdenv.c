/*
 * policy: cwd resolution against a real temporary tree, and the child
 * environment built from plain arrays.
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

#include "exec/cmdenv.h"
#include "logs/xmalloc.h"

/*
 * base/ws          the workspace (a realpath)
 * base/ws/sub/dir
 * base/ws/file     a regular file
 * base/ws/in       -> sub         (inside)
 * base/ws/sib      -> ../ws2      (outside, though it starts with "ws")
 * base/ws/root     -> /
 * base/ws/tmp      -> /tmp
 * base/ws/loop     -> loop
 * base/ws2         a sibling directory
 */
struct tree {
	char	*base;
	char	*ws;
	char	*ws2;
};

/* Makes base/rel a directory. */
static void
tree_mkdir(const struct tree *t, const char *rel)
{
	char	*path;

	xasprintf(&path, "%s/%s", t->base, rel);
	assert_int_equal(mkdir(path, 0700), 0);
	free(path);
}

/* Makes base/rel a symlink to target. */
static void
tree_symlink(const struct tree *t, const char *target, const char *rel)
{
	char	*path;

	xasprintf(&path, "%s/%s", t->base, rel);
	assert_int_equal(symlink(target, path), 0);
	free(path);
}

/* Makes base/rel an empty regular file. */
static void
tree_file(const struct tree *t, const char *rel)
{
	char	*path;
	FILE	*f;

	xasprintf(&path, "%s/%s", t->base, rel);
	assert_non_null(f = fopen(path, "w"));
	fclose(f);
	free(path);
}

/* Builds the tree above under a fresh mkdtemp directory. */
static int
tree_setup(void **state)
{
	struct tree	*t;
	char		 tmpl[] = "/tmp/execq-test-policy-XXXXXX";

	t = xcalloc(1, sizeof *t);
	assert_non_null(mkdtemp(tmpl));
	assert_non_null(t->base = realpath(tmpl, NULL));
	tree_mkdir(t, "ws");
	tree_mkdir(t, "ws/sub");
	tree_mkdir(t, "ws/sub/dir");
	tree_mkdir(t, "ws2");
	tree_file(t, "ws/file");
	tree_symlink(t, "sub", "ws/in");
	tree_symlink(t, "../ws2", "ws/sib");
	tree_symlink(t, "/", "ws/root");
	tree_symlink(t, "/tmp", "ws/tmp");
	tree_symlink(t, "loop", "ws/loop");
	xasprintf(&t->ws, "%s/ws", t->base);
	xasprintf(&t->ws2, "%s/ws2", t->base);
	*state = t;
	return (0);
}

/* nftw() callback: removes one entry, never following a symlink. */
static int
tree_remove_cb(const char *path, const struct stat *sb, int flag,
    struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return (remove(path));
}

/* Removes the whole temporary tree. */
static int
tree_teardown(void **state)
{
	struct tree	*t = *state;
	int		 rc;

	rc = nftw(t->base, tree_remove_cb, 16, FTW_DEPTH | FTW_PHYS);
	free(t->base);
	free(t->ws);
	free(t->ws2);
	free(t);
	return (rc);
}

/* Asserts cwd resolves to expect (base-relative, NULL for the workspace). */
static void
assert_cwd_ok(const char *ws, const char *cwd, const char *expect)
{
	enum errcode	 code;
	char		*cause, *got;

	got = cmdenv_resolve_cwd(ws, cwd, &code, &cause);
	if (got == NULL)
		fail_msg("cwd '%s': %s: %s", cwd, errcode_name(code), cause);
	assert_int_equal(code, ERR_NONE);
	assert_null(cause);
	assert_string_equal(got, expect);
	free(got);
}

/* Asserts cwd is refused with code and, if msg is not NULL, message msg. */
static void
assert_cwd_refused(const char *ws, const char *cwd, const char *code_want,
    const char *msg)
{
	enum errcode	 code;
	char		*cause, *got;

	got = cmdenv_resolve_cwd(ws, cwd, &code, &cause);
	assert_null(got);
	assert_int_not_equal(code, ERR_NONE);
	assert_string_equal(errcode_name(code), code_want);
	assert_non_null(cause);
	if (msg != NULL)
		assert_string_equal(cause, msg);
	free(cause);
}

/* Joins the workspace and rel into a path the caller frees. */
static char *
ws_path(const struct tree *t, const char *rel)
{
	char	*path;

	xasprintf(&path, "%s/%s", t->ws, rel);
	return (path);
}

/* NULL, "" and "." all mean the workspace itself. */
static void
test_cmdenv_cwd_empty_is_workspace(void **state)
{
	struct tree	*t = *state;

	assert_cwd_ok(t->ws, NULL, t->ws);
	assert_cwd_ok(t->ws, "", t->ws);
	assert_cwd_ok(t->ws, ".", t->ws);
	assert_cwd_ok(t->ws, "./sub/..", t->ws);
}

/* A relative cwd is joined to the workspace and normalised. */
static void
test_cmdenv_cwd_relative_inside(void **state)
{
	struct tree	*t = *state;
	char		*want = ws_path(t, "sub/dir");

	assert_cwd_ok(t->ws, "sub/dir", want);
	assert_cwd_ok(t->ws, "sub/dir/", want);
	assert_cwd_ok(t->ws, "sub//./dir", want);
	free(want);
}

/* A symlink that stays inside the workspace is followed. */
static void
test_cmdenv_cwd_symlink_inside_allowed(void **state)
{
	struct tree	*t = *state;
	char		*want = ws_path(t, "sub/dir");

	assert_cwd_ok(t->ws, "in/dir", want);
	free(want);
}

/* An absolute cwd inside the workspace is taken as is. */
static void
test_cmdenv_cwd_absolute_inside(void **state)
{
	struct tree	*t = *state;
	char		*want = ws_path(t, "sub/dir");

	assert_cwd_ok(t->ws, want, want);
	assert_cwd_ok(t->ws, t->ws, t->ws);
	free(want);
}

/* Climbing out with ".." is refused. */
static void
test_cmdenv_cwd_dotdot_refused(void **state)
{
	struct tree	*t = *state;
	char		*msg;

	xasprintf(&msg, "cwd '../..' resolves outside the workspace %s",
	    t->ws);
	assert_cwd_refused(t->ws, "../..", "cwd_outside_workspace", msg);
	free(msg);
	assert_cwd_refused(t->ws, "..", "cwd_outside_workspace", NULL);
	assert_cwd_refused(t->ws, "sub/../..", "cwd_outside_workspace", NULL);
}

/* An absolute cwd outside the workspace is refused. */
static void
test_cmdenv_cwd_absolute_outside_refused(void **state)
{
	struct tree	*t = *state;

	assert_cwd_refused(t->ws, "/", "cwd_outside_workspace", NULL);
	assert_cwd_refused(t->ws, "/tmp", "cwd_outside_workspace", NULL);
	assert_cwd_refused(t->ws, t->base, "cwd_outside_workspace", NULL);
}

/* ws2 starts with the workspace's path: a bare prefix test lets it in. */
static void
test_cmdenv_cwd_sibling_prefix_refused(void **state)
{
	struct tree	*t = *state;
	char		*msg;

	xasprintf(&msg, "cwd 'sib' resolves outside the workspace %s", t->ws);
	assert_cwd_refused(t->ws, "sib", "cwd_outside_workspace", msg);
	free(msg);
	assert_cwd_refused(t->ws, t->ws2, "cwd_outside_workspace", NULL);
	assert_cwd_refused(t->ws, "../ws2", "cwd_outside_workspace", NULL);
}

/* A symlink leading out is refused without naming its target. */
static void
test_cmdenv_cwd_symlink_outside_refused(void **state)
{
	struct tree	*t = *state;
	char		*msg;

	/* The message names the link and the workspace, not the target. */
	xasprintf(&msg, "cwd 'root' resolves outside the workspace %s",
	    t->ws);
	assert_cwd_refused(t->ws, "root", "cwd_outside_workspace", msg);
	free(msg);
	assert_cwd_refused(t->ws, "tmp", "cwd_outside_workspace", NULL);
	assert_cwd_refused(t->ws, "root/etc", "cwd_outside_workspace", NULL);
}

/* A missing directory is cwd_not_found. */
static void
test_cmdenv_cwd_missing_not_found(void **state)
{
	struct tree	*t = *state;

	assert_cwd_refused(t->ws, "sub/x", "cwd_not_found",
	    "cwd 'sub/x' does not exist in the workspace");
	assert_cwd_refused(t->ws, "nope/deeper", "cwd_not_found", NULL);
}

/* A regular file is not a working directory. */
static void
test_cmdenv_cwd_file_not_found(void **state)
{
	struct tree	*t = *state;

	assert_cwd_refused(t->ws, "file", "cwd_not_found",
	    "cwd 'file' is not a directory");
	assert_cwd_refused(t->ws, "file/", "cwd_not_found", NULL);
	assert_cwd_refused(t->ws, "file/x", "cwd_not_found", NULL);
}

/* Other realpath errors (ELOOP) are cwd_not_found too. */
static void
test_cmdenv_cwd_loop_not_found(void **state)
{
	struct tree	*t = *state;

	assert_cwd_refused(t->ws, "loop", "cwd_not_found", NULL);
}

/* The "/" workspace holds every existing directory. */
static void
test_cmdenv_cwd_root_workspace_contains_all(void **state)
{
	struct tree	*t = *state;
	char		*want = ws_path(t, "sub/dir");

	assert_cwd_ok("/", "", "/");
	assert_cwd_ok("/", "..", "/");
	assert_cwd_ok("/", "tmp", "/tmp");
	assert_cwd_ok("/", want, want);
	assert_cwd_refused("/", "/no/such/dir/here", "cwd_not_found", NULL);
	free(want);
}

/* Value of name in env, or NULL; fails if name appears twice. */
static const char *
env_get(char **env, const char *name)
{
	const char	*found = NULL;
	size_t		 len = strlen(name);

	for (; *env != NULL; env++) {
		if (strncmp(*env, name, len) != 0 || (*env)[len] != '=')
			continue;
		if (found != NULL)
			fail_msg("%s appears twice", name);
		found = *env + len + 1;
	}
	return (found);
}

/* Number of entries in env. */
static size_t
env_count(char **env)
{
	size_t	n = 0;

	while (env[n] != NULL)
		n++;
	return (n);
}

/* Builds an env that must succeed. */
static char **
env_ok(const char **parent, const char **extra, int pty)
{
	enum errcode	 code;
	char		*cause, **env;

	env = cmdenv_build_env((char *const *)parent, (char *const *)extra,
	    pty, "s1", &code, &cause);
	if (env == NULL)
		fail_msg("%s: %s", errcode_name(code), cause);
	assert_int_equal(code, ERR_NONE);
	assert_null(cause);
	return (env);
}

/* Asserts one extra entry is refused with code; returns the cause. */
static char *
env_refused(const char *entry, const char *code_want)
{
	const char	*extra[] = { "OK=1", entry, NULL };
	enum errcode	 code;
	char		*cause, **env;

	env = cmdenv_build_env(NULL, (char *const *)extra, 0, "s1", &code,
	    &cause);
	assert_null(env);
	assert_int_not_equal(code, ERR_NONE);
	if (strcmp(errcode_name(code), code_want) != 0)
		fail_msg("%s: got %s, want %s", entry, errcode_name(code),
		    code_want);
	assert_non_null(cause);
	return (cause);
}

/* Only allowlisted worker variables reach the command. */
static void
test_cmdenv_env_allowlist_filters_parent(void **state)
{
	const char	*parent[] = { "PATH=/p", "HOME=/h", "LANG=C.UTF-8",
		    "LANGUAGE=en", "LC_ALL=C", "LC_CTYPE=C", "USER=u",
		    "LOGNAME=u", "SHELL=/bin/sh", "TZ=UTC", "TMPDIR=/t",
		    "SECRET_TOKEN=hunter2", "REDIS_URL=redis://x",
		    "LD_PRELOAD=/evil.so", "EXECQ_SESSION_ID=old", "LC_=x",
		    "PATHX=1", "NOEQUALS", NULL };
	char		**env;

	(void)state;
	env = env_ok(parent, NULL, 0);
	assert_string_equal(env_get(env, "PATH"), "/p");
	assert_string_equal(env_get(env, "HOME"), "/h");
	assert_string_equal(env_get(env, "LANG"), "C.UTF-8");
	assert_string_equal(env_get(env, "LANGUAGE"), "en");
	assert_string_equal(env_get(env, "LC_ALL"), "C");
	assert_string_equal(env_get(env, "LC_CTYPE"), "C");
	assert_string_equal(env_get(env, "USER"), "u");
	assert_string_equal(env_get(env, "LOGNAME"), "u");
	assert_string_equal(env_get(env, "SHELL"), "/bin/sh");
	assert_string_equal(env_get(env, "TZ"), "UTC");
	assert_string_equal(env_get(env, "TMPDIR"), "/t");
	assert_null(env_get(env, "SECRET_TOKEN"));
	assert_null(env_get(env, "REDIS_URL"));
	assert_null(env_get(env, "LD_PRELOAD"));
	assert_null(env_get(env, "LC_"));
	assert_null(env_get(env, "PATHX"));
	assert_string_equal(env_get(env, "EXECQ_SESSION_ID"), "s1");
	/* 11 allowed + TERM NO_COLOR PAGER GIT_PAGER + EXECQ_SESSION_ID */
	assert_int_equal(env_count(env), 16);
	cmdenv_env_free(env);
}

/* Without a terminal: plain output and no pager, over the parent's. */
static void
test_cmdenv_env_non_pty_defaults(void **state)
{
	const char	*parent[] = { "PATH=/p", "TERM=xterm", "PAGER=less",
		    "NO_COLOR=0", NULL };
	char		**env;

	(void)state;
	env = env_ok(parent, NULL, 0);
	assert_string_equal(env_get(env, "TERM"), "dumb");
	assert_string_equal(env_get(env, "NO_COLOR"), "1");
	assert_string_equal(env_get(env, "PAGER"), "cat");
	assert_string_equal(env_get(env, "GIT_PAGER"), "cat");
	cmdenv_env_free(env);
}

/* With a PTY: TERM defaults to xterm-256color, else kept. */
static void
test_cmdenv_env_pty_defaults(void **state)
{
	const char	*parent[] = { "PATH=/p", NULL };
	const char	*parent_term[] = { "PATH=/p", "TERM=screen", NULL };
	char		**env;

	(void)state;
	env = env_ok(parent, NULL, 1);
	assert_string_equal(env_get(env, "TERM"), "xterm-256color");
	assert_null(env_get(env, "NO_COLOR"));
	assert_null(env_get(env, "PAGER"));
	assert_null(env_get(env, "GIT_PAGER"));
	cmdenv_env_free(env);
	env = env_ok(parent_term, NULL, 1);
	assert_string_equal(env_get(env, "TERM"), "screen");
	cmdenv_env_free(env);
}

/* The item's env overrides defaults and the parent's values. */
static void
test_cmdenv_env_item_overrides(void **state)
{
	const char	*parent[] = { "PATH=/p", "HOME=/h", NULL };
	const char	*extra[] = { "TERM=vt100", "PATH=/item", "CI=1",
		    "EMPTY=", "EQ=a=b", "PAGER=more", NULL };
	char		**env;

	(void)state;
	env = env_ok(parent, extra, 0);
	assert_string_equal(env_get(env, "TERM"), "vt100");
	assert_string_equal(env_get(env, "PATH"), "/item");
	assert_string_equal(env_get(env, "CI"), "1");
	assert_string_equal(env_get(env, "EMPTY"), "");
	assert_string_equal(env_get(env, "EQ"), "a=b");
	assert_string_equal(env_get(env, "PAGER"), "more");
	assert_string_equal(env_get(env, "HOME"), "/h");
	cmdenv_env_free(env);
	env = env_ok(parent, extra, 1);
	assert_string_equal(env_get(env, "TERM"), "vt100");
	cmdenv_env_free(env);
}

/* Later values replace earlier ones where they stand: no duplicates. */
static void
test_cmdenv_env_duplicates_replaced(void **state)
{
	const char	*parent[] = { "PATH=/a", "HOME=/h", "PATH=/b", NULL };
	const char	*extra[] = { "X=1", "Y=2", "X=3", "HOME=/i", NULL };
	char		**env;

	(void)state;
	env = env_ok(parent, extra, 1);
	assert_string_equal(env[0], "PATH=/b");
	assert_string_equal(env[1], "HOME=/i");
	assert_string_equal(env[2], "TERM=xterm-256color");
	assert_string_equal(env[3], "X=3");
	assert_string_equal(env[4], "Y=2");
	assert_string_equal(env[5], "EXECQ_SESSION_ID=s1");
	assert_null(env[6]);
	cmdenv_env_free(env);
}

/* A parent without PATH gets the standard one. */
static void
test_cmdenv_env_missing_path_default(void **state)
{
	const char	*parent[] = { "HOME=/h", NULL };
	char		**env;

	(void)state;
	env = env_ok(parent, NULL, 0);
	assert_string_equal(env_get(env, "PATH"),
	    "/usr/local/bin:/usr/bin:/bin");
	cmdenv_env_free(env);
	env = env_ok(NULL, NULL, 1);
	assert_string_equal(env_get(env, "PATH"),
	    "/usr/local/bin:/usr/bin:/bin");
	cmdenv_env_free(env);
}

/* EXECQ_SESSION_ID is the last entry. */
static void
test_cmdenv_env_session_id_last(void **state)
{
	const char	*parent[] = { "PATH=/p", "HOME=/h", "LC_ALL=C", NULL };
	const char	*extra[] = { "A=1", "B=2", NULL };
	enum errcode	 code;
	char		*cause, **env;
	size_t		 n;

	(void)state;
	env = cmdenv_build_env((char *const *)parent, (char *const *)extra, 0,
	    "abc-123", &code, &cause);
	assert_non_null(env);
	n = env_count(env);
	assert_string_equal(env[n - 1], "EXECQ_SESSION_ID=abc-123");
	cmdenv_env_free(env);
}

/* Each forbidden class is refused, naming the variable. */
static void
test_cmdenv_env_forbidden_refused(void **state)
{
	static const char	*names[] = { "LD_PRELOAD", "LD_LIBRARY_PATH",
		    "LD_AUDIT", "DYLD_INSERT_LIBRARIES", "PYTHONPATH",
		    "PYTHONSTARTUP", "PYTHONHOME", "PYTHONUSERBASE",
		    "PYTHONBREAKPOINT", "NODE_OPTIONS", "NODE_PATH",
		    "PERL5OPT", "PERL5LIB", "PERLLIB", "PERL5DB", "RUBYOPT",
		    "RUBYLIB", "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS",
		    "PS4", "PROMPT_COMMAND", "IFS", "CDPATH", "GCONV_PATH",
		    "LOCPATH", "NLSPATH", "GLIBC_TUNABLES", "HOSTALIASES",
		    "RESOLV_HOST_CONF", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS",
		    "JDK_JAVA_OPTIONS", "LESSOPEN", "LESSCLOSE",
		    "EXECQ_SESSION_ID", "EXECQ_ANYTHING", NULL };
	const char		**p;
	char			 *entry, *cause;

	(void)state;
	for (p = names; *p != NULL; p++) {
		if (!cmdenv_env_forbidden(*p))
			fail_msg("%s is not forbidden", *p);
		xasprintf(&entry, "%s=x", *p);
		cause = env_refused(entry, "env_forbidden");
		if (strstr(cause, *p) == NULL)
			fail_msg("cause '%s' does not name %s", cause, *p);
		free(cause);
		free(entry);
	}
}

/* The cause says why the variable is refused. */
static void
test_cmdenv_env_forbidden_messages(void **state)
{
	char	*cause;

	(void)state;
	cause = env_refused("LD_PRELOAD=/x.so", "env_forbidden");
	assert_string_equal(cause, "env LD_PRELOAD is refused: it can inject "
	    "code into every program the command runs");
	free(cause);
	cause = env_refused("EXECQ_SESSION_ID=x", "env_forbidden");
	assert_string_equal(cause, "env EXECQ_SESSION_ID is refused: names "
	    "starting with EXECQ_ are reserved for the worker");
	free(cause);
}

/* "BASH_FUNC_x%%" is no valid name, but the refusal should say why. */
static void
test_cmdenv_env_bash_func_forbidden(void **state)
{
	char	*cause;

	(void)state;
	cause = env_refused("BASH_FUNC_x%%=() { id; }", "env_forbidden");
	assert_non_null(strstr(cause, "BASH_FUNC_x%%"));
	free(cause);
	assert_true(cmdenv_env_forbidden("BASH_FUNC_ls%%"));
}

/* Near misses of forbidden names stay allowed. */
static void
test_cmdenv_env_allowed_names(void **state)
{
	static const char	*names[] = { "PATH", "PAGER", "HOME", "TERM",
		    "CI", "LD", "LDFLAGS", "PYTHONUNBUFFERED", "NODE_ENV",
		    "EXECQ", "GIT_SSH_COMMAND", "ENVIRONMENT", "MY_ENV",
		    "IFS2", "BASH_FUNC", NULL };
	const char		**p;

	(void)state;
	for (p = names; *p != NULL; p++) {
		if (cmdenv_env_forbidden(*p))
			fail_msg("%s is forbidden", *p);
	}
}

/* Malformed entries and names are bad_env. */
static void
test_cmdenv_env_bad_names(void **state)
{
	static const char	*entries[] = { "=x", "1A=x", "A-B=x",
		    "A B=x", "A.B=x", "NOEQUALS", "", "\xc3\x89=x", NULL };
	const char		**p;
	char			 *cause;

	(void)state;
	for (p = entries; *p != NULL; p++) {
		cause = env_refused(*p, "bad_env");
		free(cause);
	}
	cause = env_refused("A-B=x", "bad_env");
	assert_string_equal(cause,
	    "env name 'A-B' is not a valid variable name");
	free(cause);
}

int
main(void)
{
	const struct CMUnitTest	tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, tree_setup, tree_teardown)
		T(test_cmdenv_cwd_empty_is_workspace),
		T(test_cmdenv_cwd_relative_inside),
		T(test_cmdenv_cwd_symlink_inside_allowed),
		T(test_cmdenv_cwd_absolute_inside),
		T(test_cmdenv_cwd_dotdot_refused),
		T(test_cmdenv_cwd_absolute_outside_refused),
		T(test_cmdenv_cwd_sibling_prefix_refused),
		T(test_cmdenv_cwd_symlink_outside_refused),
		T(test_cmdenv_cwd_missing_not_found),
		T(test_cmdenv_cwd_file_not_found),
		T(test_cmdenv_cwd_loop_not_found),
		T(test_cmdenv_cwd_root_workspace_contains_all),
#undef T
		cmocka_unit_test(test_cmdenv_env_allowlist_filters_parent),
		cmocka_unit_test(test_cmdenv_env_non_pty_defaults),
		cmocka_unit_test(test_cmdenv_env_pty_defaults),
		cmocka_unit_test(test_cmdenv_env_item_overrides),
		cmocka_unit_test(test_cmdenv_env_duplicates_replaced),
		cmocka_unit_test(test_cmdenv_env_missing_path_default),
		cmocka_unit_test(test_cmdenv_env_session_id_last),
		cmocka_unit_test(test_cmdenv_env_forbidden_refused),
		cmocka_unit_test(test_cmdenv_env_forbidden_messages),
		cmocka_unit_test(test_cmdenv_env_bash_func_forbidden),
		cmocka_unit_test(test_cmdenv_env_allowed_names),
		cmocka_unit_test(test_cmdenv_env_bad_names),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
