/*
 * classify, the tools' options: every read-only tool's options come from
 * a table; an option it does not know makes the tool unknown, and options
 * that run a program, write a file, follow symlinks or read a list of
 * paths raise it. git is also judged by the repository's config (a real
 * repository in a temp directory).
 */

#include <sys/stat.h>

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
#include "tests/unit/classify_rows.h"

#define RO	CLS_READ_ONLY
#define WR	CLS_WRITE
#define NET	CLS_NETWORK
#define UNK	CLS_UNKNOWN
#define DES	CLS_DESTRUCTIVE

static const struct row rows[] = {
	/* Known options stay read-only, in every spelling getopt takes. */
	{ "ls -la --color=auto src", RO, "read_only:ls" },
	{ "ls -l --sort=time --reverse", RO, "read_only:ls" },
	{ "ls --hyperlink=never -1", RO, "read_only:ls" },
	{ "ls -w 80 -T 4", RO, "read_only:ls" },
	{ "ls -I '*.o' --ignore=tmp", RO, "read_only:ls" },
	{ "ls --almost", RO, "read_only:ls" },
	{ "head -n 5 f", RO, "read_only:head" },
	{ "head -20 f", RO, "read_only:head" },
	{ "head -c100 f", RO, "read_only:head" },
	{ "tail -n +2 -f app.log", RO, "read_only:tail" },
	{ "tail --pid=42 -F log", RO, "read_only:tail" },
	{ "grep -rn --include='*.c' TODO src", RO, "read_only:grep" },
	{ "grep -e -x -- -y f", RO, "read_only:grep" },
	{ "grep -A3 -B 2 -C1 x f", RO, "read_only:grep" },
	{ "grep -Ei 'a|b' f", RO, "read_only:grep" },
	{ "grep --exclude-dir=.git -rl x .", RO, "read_only:grep" },
	{ "egrep -c x f", RO, "read_only:egrep" },
	{ "wc -lw f", RO, "read_only:wc" },
	{ "cat -An f", RO, "read_only:cat" },
	{ "sort -k2,2 -t, -nr f", RO, "read_only:sort" },
	{ "sort -u --parallel=2 f", RO, "read_only:sort" },
	{ "uniq -c -f1 f", RO, "read_only:uniq" },
	{ "cut -d: -f1,3 /dev/null", RO, "read_only:cut" },
	{ "du -sh --max-depth=1 .", RO, "read_only:du" },
	{ "df -hT", RO, "read_only:df" },
	{ "diff -ruN a b", RO, "read_only:diff" },
	{ "diff --unified=3 a b", RO, "read_only:diff" },
	{ "stat -c %s f", RO, "read_only:stat" },
	{ "file -b --mime-type f", RO, "read_only:file" },
	{ "od -An -tx1 f", RO, "read_only:od" },
	{ "seq -w -5 5", RO, "read_only:seq" },
	{ "sha256sum f g", RO, "read_only:sha256sum" },
	{ "md5sum --tag f", RO, "read_only:md5sum" },
	{ "base64 -d -w0 f", RO, "read_only:base64" },
	{ "jq -r --arg k v '.[$k]' f.json", RO, "read_only:jq" },
	{ "jq --slurpfile a a.json --argjson n 1 -n '$a'", RO,
	    "read_only:jq" },
	{ "tr -d '\\r'", RO, "read_only:tr" },
	{ "realpath -m --relative-to=. x", RO, "read_only:realpath" },
	{ "readlink -f x", RO, "read_only:readlink" },
	{ "xxd -l 64 f", RO, "read_only:xxd" },
	{ "nm -C a.o", RO, "read_only:nm" },
	{ "objdump -d a.o", RO, "read_only:objdump" },
	{ "readelf -h a.out", RO, "read_only:readelf" },
	{ "strings -n 8 a.out", RO, "read_only:strings" },
	{ "ps -eo pid,cmd --sort=-pcpu", RO, "read_only:ps" },
	{ "ps aux", RO, "read_only:ps" },
	{ "pgrep -fl worker", RO, "read_only:pgrep" },
	{ "rg -n --hidden -g '!.git' TODO", RO, "read_only:rg" },
	{ "rg -tc -w foo", RO, "read_only:rg" },
	{ "tree -L 2 -a", RO, "read_only:tree" },
	{ "tee /dev/null", RO, "read_only:tee" },
	{ "tar -tvf a.tar", RO, "read_only:tar" },
	{ "tar tzf a.tgz --wildcards '*.c'", RO, "read_only:tar" },
	{ "tar --list --file=a.tar", RO, "read_only:tar" },
	{ "tar -tf host:a.tar", UNK, "unknown:option" },
	{ "tar tf backup@h:/a.tar", UNK, "unknown:option" },
	{ "tar -tf h:a.tar --force-local", RO, "read_only:tar" },
	{ "tar -tf ./a:b.tar", RO, "read_only:tar" },
	{ "find . -name '*.c' -type f", RO, "read_only:find" },
	/* An option the table does not know: unknown. */
	{ "ls --frobnicate", UNK, "unknown:option" },
	{ "ls -j", UNK, "unknown:option" },
	{ "cat --pre=x f", UNK, "unknown:option" },
	{ "head -Q f", UNK, "unknown:option" },
	{ "grep --no-such x f", UNK, "unknown:option" },
	{ "wc --lines=3 f", UNK, "unknown:option" },
	{ "sort --co=x f", UNK, "unknown:option" },
	{ "du --d f", UNK, "unknown:option" },
	{ "uname --kernel-nam", RO, "read_only:uname" },
	{ "md5 f", RO, "read_only:md5" },
	{ "md5 -r f", UNK, "unknown:option" },
	{ "tar -tf a.tar --frob", UNK, "unknown:option" },
	{ "tar -tqf a.tar", UNK, "unknown:option" },
	/* Options that follow symlinks out of the workspace. */
	{ "find -L . -name x", UNK, "unknown:option" },
	{ "find -H . -type f", UNK, "unknown:option" },
	{ "find . -follow -name x", UNK, "unknown:option" },
	{ "du -L -sh .", UNK, "unknown:option" },
	{ "du --dereference .", UNK, "unknown:option" },
	{ "du -shL .", UNK, "unknown:option" },
	{ "grep -R x .", UNK, "unknown:option" },
	{ "grep -nR x .", UNK, "unknown:option" },
	{ "grep --dereference-recursive x .", UNK, "unknown:option" },
	{ "grep --deref x .", UNK, "unknown:option" },
	{ "rg -L x", UNK, "unknown:option" },
	{ "rg --follow x", UNK, "unknown:option" },
	{ "tree -l", UNK, "unknown:option" },
	{ "cp -L a b", UNK, "unknown:option" },
	{ "cp -rL a b", UNK, "unknown:option" },
	{ "cp --dereference a b", UNK, "unknown:option" },
	{ "rsync -aL a/ b/", UNK, "unknown:option" },
	/* Options that run a program. */
	{ "rg --pre ./x foo", UNK, "unknown:option" },
	{ "rg --pre=./x foo", UNK, "unknown:option" },
	{ "rg --pre-glob '*.pdf' --pre x foo", UNK, "unknown:option" },
	{ "rg -z foo", UNK, "unknown:option" },
	{ "rg --search-zip foo", UNK, "unknown:option" },
	{ "rg --hostname-bin ./x foo", UNK, "unknown:option" },
	{ "sort --compress-program=./x f", UNK, "unknown:option" },
	{ "sort --compress=./x f", UNK, "unknown:option" },
	{ "file -z f.gz", UNK, "unknown:option" },
	{ "file --uncompress f.gz", UNK, "unknown:option" },
	{ "nm --plugin ./x.so a.o", UNK, "unknown:option" },
	{ "objdump --plugin=./x.so -d a.o", UNK, "unknown:option" },
	{ "tar -tf a.tar -I ./x", UNK, "unknown:option" },
	{ "tar -tf a.tar --use-compress-program=./x", UNK, "unknown:option" },
	{ "tar -tf a.tar --to-command=./x", UNK, "unknown:option" },
	{ "tar -tf a.tar --rsh-command=./x", UNK, "unknown:option" },
	{ "tar -tf a.tar --rmt-command=./x", UNK, "unknown:option" },
	{ "tar -tf a.tar -F ./x", UNK, "unknown:option" },
	{ "tar -tf a.tar --info-script=./x", UNK, "unknown:option" },
	{ "tar -tf a.tar --new-volume-script=./x", UNK, "unknown:option" },
	{ "tar -tf a.tar --checkpoint-action=exec=./x", UNK,
	    "unknown:option" },
	{ "tar xf a.tar --to-command=./x", UNK, "unknown:option" },
	{ "rsync -e 'sh -c x' a b", UNK, "unknown:" },
	{ "rsync -e ssh a h:b", UNK, "unknown:option" },
	{ "rsync --rsh=x a h:b", UNK, "unknown:option" },
	{ "scp -o ProxyCommand=x a h:b", UNK, "unknown:option" },
	{ "scp -S ./x a h:b", UNK, "unknown:option" },
	{ "zip -TT ./x a.zip f", UNK, "unknown:option" },
	{ "zip -T a.zip f", UNK, "unknown:option" },
	{ "zip -r a.zip d", WR, "write:zip" },
	{ "split --filter='sh -c x' f", UNK, "unknown:option" },
	{ "wget --use-askpass=./x http://h", UNK, "unknown:option" },
	{ "wget -e 'use_proxy=on' http://h", UNK, "unknown:option" },
	{ "curl -K ./c http://h", UNK, "unknown:option" },
	{ "git diff --ext-diff", UNK, "unknown:git-option" },
	{ "git log --show-signature", UNK, "unknown:git-option" },
	{ "git verify-commit HEAD", UNK, "unknown:git-option" },
	{ "git verify-tag v1", UNK, "unknown:git-option" },
	{ "git difftool", UNK, "unknown:git-option" },
	{ "git -c core.pager=x log", UNK, "unknown:git-config" },
	{ "git --git-dir=/x status", UNK, "unknown:git-config" },
	{ "git --git-dir /x status", UNK, "unknown:git-config" },
	{ "git --work-tree=/x status", UNK, "unknown:git-config" },
	{ "git --exec-path=/x status", UNK, "unknown:git-config" },
	{ "git --config-env=a.b=X log", UNK, "unknown:git-config" },
	{ "git --namespace=x log", RO, "read_only:git" },
	/* Options that write a file. */
	{ "file -C -m x.magic", WR, "write:option" },
	{ "file --compile", WR, "write:option" },
	{ "sort -T /tmp/x f", WR, "write:option" },
	{ "sort --output=o f", WR, "write:option" },
	{ "tree -o t.txt", WR, "write:option" },
	{ "tar -tf a.tar -g snap", WR, "write:option" },
	{ "tar -tf a.tar --index-file=i", WR, "write:option" },
	{ "tar -tf a.tar --volno-file=v", WR, "write:option" },
	{ "nohup ls", WR, "write:nohup" },
	{ "nohup make", WR, "write:" },
	{ "make --eval='x:=1'", WR, "write:" },
	/* Options that read paths from a file the sandbox cannot check. */
	{ "du --files0-from=list", UNK, "unknown:option" },
	{ "wc --files0-from=-", UNK, "unknown:option" },
	{ "sort --files0-from=l", UNK, "unknown:option" },
	{ "file -f names", UNK, "unknown:option" },
	{ "sha256sum -c sums", UNK, "unknown:option" },
	{ "md5sum --check sums", UNK, "unknown:option" },
	{ "b2sum -c x", UNK, "unknown:option" },
	/* Near misses. */
	{ "grep -r x .", RO, "read_only:grep" },
	{ "grep -l -L x f", RO, "read_only:grep" },
	{ "ls -L", RO, "read_only:ls" },
	{ "ls -RL", RO, "read_only:ls" },
	{ "du -H .", RO, "read_only:du" },
	{ "sha256sum --check-not f", UNK, "unknown:option" },
	{ "sort -c f", RO, "read_only:sort" },
	{ "cp -r a b", WR, "write:cp" },
	{ "file -L x", RO, "read_only:file" },
	{ "rg --pretty x", RO, "read_only:rg" },
	{ "rg --no-pcre2-unicode x", RO, "read_only:rg" },
	{ "rg -e --pre x", RO, "read_only:rg" },
	{ "grep -e --dereference-recursive x", RO, "read_only:grep" },
	{ "tar -tf --to-command", RO, "read_only:tar" },
};

/* Every row. */
static void
test_classify_tools_table(void **state)
{
	(void)state;
	classify_rows(rows, sizeof rows / sizeof rows[0], NULL,
	    "classify tools table");
}

/* Writes text into dir/name. */
static void
test_put(const char *dir, const char *name, const char *text)
{
	char	 path[PATH_MAX];
	FILE	*f;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	assert_non_null(f = fopen(path, "w"));
	fputs(text, f);
	fclose(f);
}

/* Classifies src in ws (the workspace) and returns its risk. */
static enum cls_risk
test_git(const char *ws, const char *cwd, const char *src)
{
	struct cls_policy	 p;
	struct cls_verdict	 v;
	enum cls_risk		 risk;

	memset(&p, 0, sizeof p);
	p.workspace = ws;
	cls_classify(&p, src, strlen(src), cwd, &v);
	risk = v.risk;
	cls_verdict_release(&v);
	return (risk);
}

/* A repository whose config names a program makes read-only git unknown. */
static void
test_classify_tools_git_config(void **state)
{
	static const char *const bad[] = {
		"[core]\n\tfsmonitor = ./x\n",
		"[core]\n\tFSMonitor=./x\n",
		"[diff \"pdf\"]\n\ttextconv = ./x\n",
		"[filter \"lfs\"]\n\tclean = ./x %f\n",
		"[alias]\n\tst = !./x\n",	/* a shell alias */
		"[include]\n\tpath = /etc/passwd\n",	/* outside */
		"[includeIf \"gitdir:/\"]\n\tpath = ~/x\n",
		"[gpg]\n\tprogram = ./x\n",
		"[core]\n\tsshCommand = ./x\n",
		"[diff]\n\texternal = ./x\n",
	};
	char	 tmpl[] = "/tmp/execq-git-XXXXXX", ws[PATH_MAX], sub[2 * PATH_MAX];
	char	 gitdir[PATH_MAX + 8];
	size_t	 i;

	(void)state;
	assert_non_null(mkdtemp(tmpl));
	assert_non_null(realpath(tmpl, ws));
	snprintf(gitdir, sizeof gitdir, "%s/.git", ws);
	snprintf(sub, sizeof sub, "%s/src", ws);
	assert_int_equal(mkdir(gitdir, 0700), 0);
	assert_int_equal(mkdir(sub, 0700), 0);
	/* No config file, and a plain one: read-only. */
	assert_int_equal(test_git(ws, NULL, "git status"), CLS_READ_ONLY);
	test_put(gitdir, "config", "[core]\n\tbare = false\n"
	    "[remote \"origin\"]\n\turl = https://x\n# fsmonitor = x\n");
	assert_int_equal(test_git(ws, NULL, "git status"), CLS_READ_ONLY);
	assert_int_equal(test_git(ws, sub, "git log -p"), CLS_READ_ONLY);
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		test_put(gitdir, "config", bad[i]);
		if (test_git(ws, sub, "git diff") != CLS_UNKNOWN)
			fail_msg("config %s: git diff stayed low", bad[i]);
		assert_int_equal(test_git(ws, NULL, "git -C src status"),
		    CLS_UNKNOWN);
		/* Higher risks are not lowered. */
		assert_int_equal(test_git(ws, NULL, "git push --force"),
		    CLS_DESTRUCTIVE);
	}
	/* A cwd that is not known: not read-only. */
	assert_int_equal(test_git(ws, NULL, "cd \"$X\"; git status"),
	    CLS_UNKNOWN);
	snprintf(sub, sizeof sub, "%s/config", gitdir);
	unlink(sub);
	rmdir(gitdir);
	/* .git as a file naming a git dir outside: not read, unknown. */
	test_put(ws, ".git", "gitdir: /elsewhere\n");
	assert_int_equal(test_git(ws, NULL, "git status"), CLS_UNKNOWN);
	snprintf(sub, sizeof sub, "%s/.git", ws);
	unlink(sub);
	snprintf(sub, sizeof sub, "%s/src", ws);
	rmdir(sub);
	assert_int_equal(rmdir(ws), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classify_tools_table),
		cmocka_unit_test(test_classify_tools_git_config),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
