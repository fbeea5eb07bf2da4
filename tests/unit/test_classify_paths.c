/*
 * classify_paths: the path sandbox against a real tree, as the kernel
 * resolves paths. A temp dir T holds the workspace T/ws and a dir T/out
 * beside it; the workspace has symlinks out (absolute and relative), a
 * chain, loops, a chain one link too long, a link whose .. leaves, a file
 * named passwd, directories for globs. Each row is a command run from
 * T/ws and what the verdict's outside must be.
 */

#include <sys/stat.h>

#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "policy/classify.h"

/*
 * src and outside: "@" stands for T. outside NULL: inside; "": outside,
 * whatever path is named (those that cannot be resolved with certainty).
 */
struct row {
	const char	*src;
	const char	*outside;
};

static const struct row rows[] = {
	/* .. after a symlink is taken where the link leads. */
	{ "cat ol/../passwd", "@/out/passwd" },
	{ "cat passwd", NULL },
	{ "cat sub/../passwd", NULL },
	{ "cat ./sub/./../passwd", NULL },
	{ "cat etc_link/../etc/passwd", "/etc/passwd" },
	{ "cat etc_link/..", "/" },
	{ "ls dl/../f", NULL },
	{ "ls dl/../../passwd", NULL },
	{ "ls dl/../../../x", "@/x" },
	{ "cat out/passwd", "@/out/passwd" },
	{ "cat out", "@/out" },
	{ "ls chain1", NULL },
	{ "ls chain1/../passwd", NULL },
	{ "ls chainout1", "/etc" },
	{ "cat chainout1/../etc/hostname", "/etc/hostname" },
	{ "ls loop1", "" },
	{ "ls loop1/x", "" },
	{ "ls self", "" },
	{ "ls L0", "" },		/* 41 links */
	{ "ls L1", NULL },		/* 40 links */
	{ "cat nothere/../passwd", "" },	/* .. after a missing name */
	{ "cat nothere/x", NULL },
	{ "cat ./nothere", NULL },
	{ "cat sub/f/../f", "" },	/* nothing is under a file */
	{ "cat /etc/../etc/passwd", "/etc/passwd" },
	{ "cat @/ws/sub/f", NULL },
	{ "cat @/ws/../out/passwd", "@/out/passwd" },
	{ "cat @/ws/ol/../passwd", "@/out/passwd" },
	{ "ls up", "@" },
	{ "ls up/ws/sub", NULL },
	{ "cat .//sub///f", NULL },
	{ "ls ..", "@" },
	{ "ls .", NULL },
	{ "ls /", "/" },
	{ "echo x > ol/../passwd", "@/out/passwd" },
	{ "wc -l < ol/../passwd", "@/out/passwd" },
	{ "ls abs_sub", NULL },
	{ "ls abs_sub/../../out", "@/out" },
	{ "ls sub/deep/../../ol/..", "@/out" },
	{ "cat rel_up/passwd", "@/out/passwd" },
	{ "ls /dev/fd/../../etc", "" },	/* /proc/etc: fd is a link */
	{ "cat /dev/null", NULL },

	/* Globs and brace expansion against the file system. */
	{ "cat /e*c/passwd", "/" },	/* lists /: no name in it */
	{ "cat /e?c/passwd", "/" },
	{ "cat /[e]tc/passwd", "/" },
	{ "cat name[e]", "@/out/passwd" },
	{ "cat name?", "@/out/passwd" },
	{ "cat 'name[e]'", NULL },
	{ "cat \"name[e]\"", NULL },
	{ "cat name\\[e\\]", NULL },
	{ "ls ../*", "" },
	{ "ls ../nomatch*", "@" },
	{ "ls /e*c/nonexistent", "/" },
	/* A glob never lists nor looks up names outside: the dir it would. */
	{ "ls out/*", "@/out" },
	{ "ls ../out/p*", "@/out" },
	{ "cat ou?/passwd", "@/out" },
	{ "cat ou?/nothere", "@/out" },
	{ "ls etc_link/pass*", "/etc" },
	{ "ls sub/*/g", NULL },
	{ "ls sub/*", NULL },
	{ "ls *", "" },
	{ "ls g*/*", NULL },
	{ "ls gdir/?", NULL },
	{ "ls gdir/*/..", NULL },
	{ "ls o*", "" },
	{ "ls sub/*/../../..", "@" },
	{ "ls '*'", NULL },
	{ "ls mt/*", NULL },
	{ "ls \"$X\"*", NULL },
	{ "ls .*", "@" },		/* dash's .* matches .. */
	{ "cat {passwd,sub/f}", NULL },
	{ "cat {passwd,ol/../passwd}", "@/out/passwd" },
	{ "cat {/etc/passwd,x}", "/etc/passwd" },
	{ "cp f {a,/etc/newfile}", "/etc/newfile" },
	{ "cat l{o,p}op1", "" },
	{ "cat {a..c}", NULL },
	{ "cat ol{,}/../passwd", "@/out/passwd" },
	{ "cat n{a..a}mee", "@/out/passwd" },
	{ "cat gdir/{a,b}/../../passwd", NULL },
	{ "cat x{1..3}/../../y", "" },
	{ "echo {1..100000}", "" },
	{ "echo {a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}", "" },
	{ "echo {x}", NULL },

	/* Directory options: the value is checked, the command runs there. */
	{ "env -C /etc cat passwd", "/etc" },
	{ "env -C sub cat ../passwd", NULL },
	{ "env -C sub cat ../../x", "@/x" },
	{ "env --chdir=sub cat ../passwd", NULL },
	{ "env --chdir sub cat ../../x", "@/x" },
	{ "env -Csub cat ../../x", "@/x" },
	{ "env -C ol cat ../passwd", "@/out/x" },
	{ "env -C dl cat ../f", NULL },
	{ "env -C sub env -C deep cat ../../passwd", NULL },
	{ "env -C sub env -C deep cat ../../../x", "@/x" },
	{ "env -C $D cat ../x", "" },
	{ "env -C $D cat x", NULL },
	{ "sudo -D sub cat ../../x", "@/x" },
	{ "sudo --chdir=.. ls", "@" },
	{ "git -C sub log ../passwd", NULL },
	{ "git -C sub log ../../x", "@/x" },
	{ "git -C .. status", "@" },
	{ "git -C sub -C deep log ../../passwd", NULL },
	{ "make -C sub", NULL },
	{ "make -C ../out", "@/out" },
	{ "make --directory=.. all", "@" },
	{ "make -Csub -f ../Makefile", NULL },
	{ "ninja -C ..", "@" },
	{ "ninja -C sub/deep", NULL },
	{ "tar -C /tmp -xf a.tar", "/tmp" },
	{ "tar -xf a.tar -C sub", NULL },
	{ "tar -C sub -cf ../a.tar ../passwd", NULL },
	{ "tar -C sub -cf ../../a.tar .", "@/a.tar" },
	{ "tar --directory=ol -cf x.tar .", "@/out/x" },
	{ "npm --prefix .. install", "@" },
	{ "npm --prefix sub install", NULL },
	{ "cmake -S . -B build", NULL },
	{ "cmake -S . -B../build", "@/build" },
	{ "cmake -B/tmp/b", "/tmp/b" },

	/* cd -L (lexical, bash's default), cd -P, pushd and popd. */
	{ "cd sub && cat ../passwd", NULL },
	{ "cd sub && cat ../../x", "@/x" },
	{ "cd -P dl && cat ../f", NULL },
	{ "cd dl && cat ../f", NULL },
	{ "cd dl && cd .. && cat passwd", NULL },
	{ "cd -P dl && cd -P .. && cat ../../x", "@/x" },
	{ "cd ol/..", NULL },
	{ "cd ol/.. && cat passwd", NULL },
	{ "cd -L ol/.. && ls", NULL },
	{ "cd -P ol/..", "@/out" },
	{ "cd -LP ol/..", "@/out" },
	{ "cd -PL ol/..", NULL },
	{ "cd -P ol && cat ../passwd", "@/out/x" },
	{ "cd etc_link", "/etc" },
	{ "pushd sub && popd && cat ../x", "@/x" },
	{ "pushd sub && cat ../passwd", NULL },
	{ "pushd sub && pushd deep && popd && cat ../passwd", NULL },
	{ "pushd sub && pushd deep && popd && popd && cat ../x", "@/x" },
	{ "pushd -n sub && cat ../x", "@/x" },
	{ "pushd ..", "@" },
	{ "popd && cat ../x", "@/x" },
	{ "pushd sub && pushd && cat ../x", "@/x" },
	{ "pushd sub && pushd +1 && cat ../x", "" },
	{ "cd $D && cat ../x", "" },
	{ "cd $D && cat x", NULL },
	{ "cd - && cat ../x", "" },
	{ "cd && ls", "~" },
	{ "cd ~user", "~user" },
	{ "mkdir -p b/c && cd b/c && cmake ../..", NULL },
	{ "mkdir b && cd b && cat ../../x", "@/x" },
	{ "sh -c 'cd sub' && cat ../x", "@/x" },
	{ "sh -c 'cd sub && cat ../passwd'", NULL },
	{ "bash -c 'cd sub; cat ../../x'", "@/x" },
	{ "eval 'cd sub' && cat ../passwd", NULL },
	{ "(cd sub) && cat ../x", "@/x" },
	{ "(cd $D) && cat ../x", "" },
	{ "(cd ..; ls)", "@" },
	/* Stricter than the shell: where a subshell ends is not known. */
	{ "(cd sub && cat ../passwd)", "@/passwd" },

	/* Computed words: only what is certain counts. */
	{ "cat $X/../etc", "" },
	{ "cat \"$X/../etc\"", "" },
	{ "cat $HOME/.ssh/id_rsa", "$HOME/.ssh/id_rsa" },
	{ "cat ${HOME}", "${HOME}" },
	{ "cat $HOMEDIR/x", NULL },
	{ "cat /etc/$F", "/etc" },
	{ "cat sub/$F", NULL },
	{ "cat ol/$F", "@/out/x" },
	{ "cat $PWD/passwd", NULL },
	{ "cat ${PWD}/../x", "@/x" },
	{ "cat \"$(pwd)/x\"", NULL },
	{ "cat ~user/x", "~user/x" },
	{ "cat $F", NULL },
	{ "sed -e \"s/$a/b/\" passwd", NULL },

	/* Words that are not paths stay quiet. */
	{ "echo hello", NULL },
	{ "grep -r foo .", NULL },
	{ "git commit -m 'fix ../x'", NULL },
	{ "printf '%s\\n' a/b", NULL },
	{ "ls --color=auto", NULL },
	{ "ls a..b .../x", NULL },
	{ "ls /usr/include/std*.h", NULL },	/* an allowed root */
	{ "ls /usr/*/*/*/*", "" },		/* too many matches */
};

static char	*tdir;		/* T */

/* nftw callback: removes one entry. */
static int
rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return (remove(path));
}

/* "@" in s replaced by T (allocated). */
static char *
subst(const char *s)
{
	char	*out, *o;

	out = o = malloc(strlen(s) * (strlen(tdir) + 1) + 1);
	assert_non_null(out);
	for (; *s != '\0'; s++) {
		if (*s == '@') {
			strcpy(o, tdir);
			o += strlen(tdir);
		} else
			*o++ = *s;
	}
	*o = '\0';
	return (out);
}

/* Makes T/<rel> a symlink to target. */
static void
mklink(const char *target, const char *rel)
{
	char	path[PATH_MAX];

	snprintf(path, sizeof path, "%s/%s", tdir, rel);
	assert_int_equal(symlink(target, path), 0);
}

/* Makes T/<rel> a directory, or a file if it has no trailing slash. */
static void
mkentry(const char *rel)
{
	char	path[PATH_MAX];
	FILE	*f;

	snprintf(path, sizeof path, "%s/%s", tdir, rel);
	if (path[strlen(path) - 1] == '/') {
		assert_int_equal(mkdir(path, 0700), 0);
		return;
	}
	assert_non_null(f = fopen(path, "w"));
	fclose(f);
}

/* The tree: T/out and T/ws with its links. */
static void
mktree(void)
{
	static const char *const entries[] = { "out/", "out/passwd",
	    "out/x/", "ws/", "ws/passwd", "ws/sub/", "ws/sub/f",
	    "ws/sub/deep/", "ws/sub/deep/g", "ws/gdir/", "ws/gdir/a/",
	    "ws/gdir/b/", "ws/mt/", "ws/Makefile", NULL };
	char		 target[PATH_MAX], name[32];
	size_t		 i;

	for (i = 0; entries[i] != NULL; i++)
		mkentry(entries[i]);
	mklink("/etc", "ws/etc_link");
	mklink("../out", "ws/out");
	mklink("../out/x", "ws/ol");
	mklink("..", "ws/up");
	mklink("sub/deep", "ws/dl");
	mklink("chain2", "ws/chain1");
	mklink("chain3", "ws/chain2");
	mklink("sub", "ws/chain3");
	mklink("chainout2", "ws/chainout1");
	mklink("/etc", "ws/chainout2");
	mklink("loop2", "ws/loop1");
	mklink("loop1", "ws/loop2");
	mklink("self", "ws/self");
	mklink("../out/passwd", "ws/namee");
	mklink("sub/..//../out", "ws/rel_up");
	snprintf(target, sizeof target, "%s/ws/sub", tdir);
	mklink(target, "ws/abs_sub");
	for (i = 0; i <= 40; i++) {	/* L0 -> L1 -> ... -> L40 -> sub */
		snprintf(name, sizeof name, "ws/L%zu", i);
		if (i < 40)
			snprintf(target, sizeof target, "L%zu", i + 1);
		else
			snprintf(target, sizeof target, "sub");
		mklink(target, name);
	}
}

/* Sets up T and the tree; *state is the policy. */
static int
setup(void **state)
{
	static struct cls_policy	 p;
	static const char		*allow[1];
	static char			 ws[PATH_MAX];
	char				 tmpl[] = "/tmp/test_cp.XXXXXX";

	if (mkdtemp(tmpl) == NULL || (tdir = realpath(tmpl, NULL)) == NULL)
		return (-1);
	mktree();
	snprintf(ws, sizeof ws, "%s/ws", tdir);
	memset(&p, 0, sizeof p);
	p.workspace = ws;
	allow[0] = "/usr";
	p.allow_paths = allow;
	p.nallow = 1;
	*state = &p;
	return (0);
}

/* Removes T. */
static int
teardown(void **state)
{
	(void)state;
	nftw(tdir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
	free(tdir);
	return (0);
}

/* Every row: inside, outside (at the path given), or outside unresolved. */
static void
test_classify_paths_table(void **state)
{
	const struct cls_policy	*p = *state;
	struct cls_verdict	 v;
	char			*src, *want;
	size_t			 i, bad = 0;

	for (i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		src = subst(rows[i].src);
		want = rows[i].outside != NULL ? subst(rows[i].outside) : NULL;
		cls_classify(p, src, strlen(src), p->workspace, &v);
		if (want == NULL && v.outside != NULL) {
			print_message("%s: outside %s (%s)\n", src, v.outside,
			    v.outside_reason);
			bad++;
		} else if (want != NULL && v.outside == NULL) {
			print_message("%s: not seen as outside\n", src);
			bad++;
		} else if (want != NULL && *want != '\0' &&
		    strcmp(v.outside, want) != 0) {
			print_message("%s: outside %s, want %s\n", src,
			    v.outside, want);
			bad++;
		}
		if (getenv("TEST_VERBOSE") != NULL)
			print_message("%s -> %s\n", src, v.outside_reason ?
			    v.outside_reason : "inside");
		if (v.outside != NULL)
			assert_non_null(strstr(v.outside_reason,
			    p->workspace));
		cls_verdict_release(&v);
		free(src);
		free(want);
	}
	if (bad > 0)
		fail_msg("%zu of %zu rows wrong", bad, i);
}

/* An unknown cwd: only .. is known to leave. */
static void
test_classify_paths_unknown_cwd(void **state)
{
	const struct cls_policy	*p = *state;
	struct cls_verdict	 v;
	char			 cwd[PATH_MAX];

	snprintf(cwd, sizeof cwd, "%s/ws/nothere", tdir);
	cls_classify(p, "cat ../passwd", 13, cwd, &v);
	assert_null(v.outside);		/* a cwd is a real directory */
	cls_verdict_release(&v);
	snprintf(cwd, sizeof cwd, "%s/ws/loop1", tdir);
	cls_classify(p, "cat x", 5, cwd, &v);
	assert_non_null(v.outside);	/* the cwd cannot be resolved */
	cls_verdict_release(&v);
}

/* A 1 MiB command classifies quickly; paths past the caps are outside. */
static void
test_classify_paths_bounded(void **state)
{
	const struct cls_policy	*p = *state;
	static const char *const words[] = { " a/b", " x", " s*/*",
	    " {a,b}{c,d}", " sub/../sub/f" };
	struct cls_verdict	 v;
	struct timespec		 t0, t1;
	char			*buf;
	size_t			 len = 1024 * 1024, off, i, n;
	double			 secs;

	buf = malloc(len + 1);
	assert_non_null(buf);
	for (i = 0; i < sizeof words / sizeof words[0]; i++) {
		memcpy(buf, "ls", 2);
		n = strlen(words[i]);
		for (off = 2; off + n < len; off += n)
			memcpy(buf + off, words[i], n);
		buf[off] = '\0';
		clock_gettime(CLOCK_MONOTONIC, &t0);
		cls_classify(p, buf, off, p->workspace, &v);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		secs = (double)(t1.tv_sec - t0.tv_sec) +
		    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
		if (secs > 5.0)
			fail_msg("%s x %zu: %.2f s", words[i], off / n, secs);
		assert_non_null(v.outside);
		cls_verdict_release(&v);
	}
	free(buf);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classify_paths_table),
		cmocka_unit_test(test_classify_paths_unknown_cwd),
		cmocka_unit_test(test_classify_paths_bounded),
	};

	return (cmocka_run_group_tests(tests, setup, teardown));
}
