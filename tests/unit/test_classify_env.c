/*
 * classify, the environment as an allowlist: the names an item's env, a
 * "NAME=value cmd" prefix, export, declare -x, env NAME=, set -a and a
 * plain assignment of a name the shell or its commands read may set;
 * the operator's env_allow patterns; values bash arithmetic would run.
 */

#include <stdio.h>
#include <string.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "policy/classify.h"
#include "tests/unit/classify_rows.h"

static const struct row rows[] = {
	/* Names that make a read-only tool run, load or write. */
	{ "TAR_OPTIONS=--to-command=sh tar tf a.tar", CLS_UNKNOWN,
	    "unknown:environment" },
	{ "HOME=/tmp/h git status", CLS_UNKNOWN, "unknown:environment" },
	{ "XDG_CONFIG_HOME=. git log", CLS_UNKNOWN, "unknown:environment" },
	{ "GIT_DIR=/x git status", CLS_UNKNOWN, "unknown:environment" },
	{ "GIT_CONFIG_GLOBAL=./c git diff", CLS_UNKNOWN,
	    "unknown:environment" },
	{ "GIT_EXTERNAL_DIFF=./x git diff", CLS_UNKNOWN,
	    "unknown:environment" },
	{ "SSH_ASKPASS=./p ssh h ls", CLS_UNKNOWN, "unknown:environment" },
	{ "MAKEFLAGS=--eval=x make", CLS_UNKNOWN, "unknown:environment" },
	{ "OPENSSL_CONF=./c cat x", CLS_UNKNOWN, "unknown:environment" },
	{ "GREP_OPTIONS=-r grep x", CLS_UNKNOWN, "unknown:environment" },
	{ "LESSOPEN='|sh x' cat f", CLS_UNKNOWN, "unknown:environment" },
	{ "PAGER=./x git log", CLS_UNKNOWN, "unknown:environment" },
	{ "EDITOR=./x ls", CLS_UNKNOWN, "unknown:environment" },
	{ "LD_PRELOAD=./x.so ls", CLS_UNKNOWN, "unknown:environment" },
	{ "PATH=.:$PATH ls", CLS_UNKNOWN, "unknown:environment" },
	{ "X=1 ls", CLS_UNKNOWN, "unknown:environment" },
	{ "env TAR_OPTIONS=x tar tf a", CLS_UNKNOWN, "unknown:environment" },
	{ "env -i HOME=/x ls", CLS_UNKNOWN, "unknown:environment" },
	{ "env -u PATH GIT_DIR=x git status", CLS_UNKNOWN,
	    "unknown:environment" },
	{ "export GIT_PAGER=x; git log", CLS_UNKNOWN, "unknown:environment" },
	{ "export TAR_OPTIONS; tar tf a", CLS_UNKNOWN, "unknown:environment" },
	{ "export -n X; export Y=1", CLS_UNKNOWN, "unknown:environment" },
	{ "declare -x HOME=/tmp; ls", CLS_UNKNOWN, "unknown:environment" },
	{ "typeset -x PYTHONPATH=.", CLS_UNKNOWN, "unknown:environment" },
	{ "local -x GIT_DIR=x", CLS_UNKNOWN, "unknown:environment" },
	{ "PATH=/tmp/x; ls", CLS_UNKNOWN, "unknown:environment" },
	{ "HOME=/tmp; cd; ls", CLS_UNKNOWN, "unknown:environment" },
	{ "IFS=x; echo a", CLS_UNKNOWN, "unknown:environment" },
	{ "CDPATH=/etc; cd x", CLS_UNKNOWN, "unknown:environment" },
	{ "XDG_DATA_HOME=x; ls", CLS_UNKNOWN, "unknown:environment" },
	{ "declare PATH=x", CLS_UNKNOWN, "unknown:environment" },
	{ "read HOME", CLS_UNKNOWN, "unknown:environment" },
	{ "read -r a PATH", CLS_UNKNOWN, "unknown:environment" },
	{ "printf -v PATH %s x", CLS_UNKNOWN, "unknown:environment" },
	{ "getopts ab IFS", CLS_UNKNOWN, "unknown:environment" },
	{ "set -a; X=1; ls", CLS_UNKNOWN, "unknown:environment" },
	{ "set -o allexport; X=1", CLS_UNKNOWN, "unknown:environment" },
	{ "set -ea", CLS_UNKNOWN, "unknown:environment" },
	{ "for i in 1; do GIT_DIR=x git log; done", CLS_UNKNOWN,
	    "unknown:environment" },
	{ "f() { HOME=/x ls; }", CLS_UNKNOWN, "unknown:environment" },
	/* Names that only change how programs print, and shell variables. */
	{ "LANG=C sort f", CLS_READ_ONLY, "read_only:sort" },
	{ "LC_ALL=C grep x f", CLS_READ_ONLY, "read_only:grep" },
	{ "LC_COLLATE=C ls", CLS_READ_ONLY, "read_only:ls" },
	{ "TZ=UTC date", CLS_READ_ONLY, "read_only:" },
	{ "CI=1 NO_COLOR=1 ls", CLS_READ_ONLY, "read_only:ls" },
	{ "COLUMNS=200 ps aux", CLS_READ_ONLY, "read_only:ps" },
	{ "LINES=50 COLUMNS=80 ls", CLS_READ_ONLY, "read_only:ls" },
	{ "TERM=dumb ls", CLS_READ_ONLY, "read_only:ls" },
	{ "SOURCE_DATE_EPOCH=0 date", CLS_READ_ONLY, "read_only:" },
	{ "export LANG=C; ls", CLS_READ_ONLY, "read_only:" },
	{ "export TZ", CLS_READ_ONLY, "read_only:" },
	{ "export LC_ALL=C LANG=C", CLS_READ_ONLY, "read_only:" },
	{ "env LC_ALL=C ls", CLS_READ_ONLY, "read_only:ls" },
	{ "env -u HOME ls", CLS_READ_ONLY, "read_only:ls" },
	{ "dir=build; ls $dir", CLS_READ_ONLY, "read_only:" },
	{ "n=3; echo $n", CLS_READ_ONLY, "read_only:" },
	{ "x=1 y=2; echo $x$y", CLS_READ_ONLY, "read_only:" },
	{ "out=$(ls); echo \"$out\"", CLS_READ_ONLY, "read_only:" },
	{ "declare -r x=1", CLS_READ_ONLY, "read_only:" },
	{ "readonly v=2", CLS_READ_ONLY, "read_only:" },
	{ "read -r line", CLS_READ_ONLY, "read_only:read" },
	{ "read -p 'name? ' name", CLS_READ_ONLY, "read_only:read" },
	{ "printf -v out %s x", CLS_READ_ONLY, "read_only:printf" },
	{ "set -e; ls", CLS_READ_ONLY, "read_only:" },
	{ "set -euo pipefail; ls", CLS_READ_ONLY, "read_only:" },
	{ "echo PATH=x", CLS_READ_ONLY, "read_only:echo" },
	{ "grep HOME=/ .env", CLS_READ_ONLY, "read_only:grep" },
	{ "for i in 1 2; do LANG=C ls; done", CLS_READ_ONLY, "read_only:" },
};

static const struct cls_policy no_policy;

/* Every row. */
static void
test_classify_env_table(void **state)
{
	(void)state;
	classify_rows(rows, sizeof rows / sizeof rows[0], NULL,
	    "classify env table");
}

/* The operator's env_allow patterns widen the list, for items too. */
static void
test_classify_env_allow(void **state)
{
	static const char *const pats[] = { "MYAPP_*", "BUILD_ID" };
	struct cls_policy	 p;
	struct cls_verdict	 v;
	char			 m1[] = "MYAPP_MODE=fast", m2[] = "BUILD_ID=7";
	char			 o1[] = "MYAPP=1";
	char			*mine[] = { m1, m2, NULL };
	char			*other[] = { o1, NULL };

	(void)state;
	memset(&p, 0, sizeof p);
	p.env_allow = pats;
	p.nenv_allow = 2;
	cls_classify(&p, "MYAPP_MODE=fast BUILD_ID=3 ls", 29, NULL, &v);
	assert_int_equal(v.risk, CLS_READ_ONLY);
	cls_classify_env(&p, &v, mine);
	assert_int_equal(v.risk, CLS_READ_ONLY);
	cls_classify_env(&p, &v, other);
	assert_int_equal(v.risk, CLS_UNKNOWN);
	assert_non_null(strstr(v.reason, "MYAPP"));
	cls_verdict_release(&v);
	cls_classify(&p, "MYAPP=1 ls", 10, NULL, &v);
	assert_int_equal(v.risk, CLS_UNKNOWN);
	cls_verdict_release(&v);
	cls_classify(&no_policy, "MYAPP_MODE=fast ls", 18, NULL, &v);
	assert_int_equal(v.risk, CLS_UNKNOWN);
	cls_verdict_release(&v);
}

/* An item's env: safe names pass; others and code in values do not. */
static void
test_classify_env_item(void **state)
{
	static const struct {
		const char	*entry;
		enum cls_risk	 risk;
		const char	*rule;
	} t[] = {
		{ "LANG=C.UTF-8", CLS_READ_ONLY, "read_only:" },
		{ "LC_ALL=C", CLS_READ_ONLY, "read_only:" },
		{ "CI=true", CLS_READ_ONLY, "read_only:" },
		{ "COLUMNS=120", CLS_READ_ONLY, "read_only:" },
		{ "TAR_OPTIONS=-v", CLS_UNKNOWN, "unknown:environment" },
		{ "HOME=/tmp", CLS_UNKNOWN, "unknown:environment" },
		{ "XDG_CONFIG_HOME=/tmp", CLS_UNKNOWN, "unknown:environment" },
		{ "GIT_SSH_COMMAND=x", CLS_UNKNOWN, "unknown:environment" },
		{ "SSH_ASKPASS=x", CLS_UNKNOWN, "unknown:environment" },
		{ "MAKEFLAGS=x", CLS_UNKNOWN, "unknown:environment" },
		{ "OPENSSL_CONF=x", CLS_UNKNOWN, "unknown:environment" },
		{ "COLUMNS=a[$(id)]", CLS_UNKNOWN, "unknown:bash-eval" },
		{ "LANG=x[`id`]", CLS_UNKNOWN, "unknown:bash-eval" },
	};
	struct cls_verdict	 v;
	char			*env[2];
	size_t			 i;

	(void)state;
	for (i = 0; i < sizeof t / sizeof t[0]; i++) {
		env[0] = (char *)t[i].entry;
		env[1] = NULL;
		cls_classify(&no_policy, "ls", 2, NULL, &v);
		cls_classify_env(&no_policy, &v, env);
		if (v.risk != t[i].risk || strncmp(v.rule, t[i].rule,
		    strlen(t[i].rule)) != 0)
			fail_msg("%s: got %s %s", t[i].entry,
			    cls_risk_name(v.risk), v.rule);
		cls_verdict_release(&v);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classify_env_table),
		cmocka_unit_test(test_classify_env_allow),
		cmocka_unit_test(test_classify_env_item),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
