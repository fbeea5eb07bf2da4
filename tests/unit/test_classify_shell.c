/*
 * classify, the shell's grammar: loops, if, case, functions, [[ ]],
 * (( )), $'...' and arrays classified as bash and as dash read them (the
 * worker's shell decides; when it is not known, both readings count),
 * and arithmetic that evaluates a variable from outside.
 */

#include <stdio.h>
#include <string.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "exec/classify.h"

struct row {
	const char	*src;
	enum cls_shell	 shell;
	enum cls_risk	 risk;
	const char	*rule;		/* prefix of the verdict's rule */
};

#define A	CLS_SHELL_ANY
#define B	CLS_SHELL_BASH
#define P	CLS_SHELL_POSIX
#define RO	CLS_READ_ONLY
#define WR	CLS_WRITE
#define NET	CLS_NETWORK
#define UNK	CLS_UNKNOWN
#define DES	CLS_DESTRUCTIVE
#define BLK	CLS_BLOCKED

static const struct row rows[] = {
	/* Loops and conditions of read-only commands are read-only. */
	{ "for f in *.c; do wc -l \"$f\"; done", A, RO, "read_only:" },
	{ "for i in 1 2 3; do echo $i; done", A, RO, "read_only:" },
	{ "for i in 1 2 3\ndo\n  echo $i\ndone", A, RO, "read_only:" },
	{ "for f; do echo $f; done", A, RO, "read_only:" },
	{ "while read -r l; do echo \"$l\"; done < in.txt", A, RO,
	    "read_only:" },
	{ "while true; do date; sleep 1; done", A, RO, "read_only:" },
	{ "until [ -f done ]; do sleep 1; done", A, RO, "read_only:" },
	{ "if [ -f x ]; then cat x; else echo none; fi", A, RO,
	    "read_only:" },
	{ "if grep -q x f; then echo yes; elif test -d d; then ls d; fi", A,
	    RO, "read_only:" },
	{ "if ! test -e x; then echo missing; fi", A, RO, "read_only:" },
	{ "case $1 in start) echo s;; *) echo other;; esac", A, RO,
	    "read_only:" },
	{ "case x in (a|b) pwd ;; esac", A, RO, "read_only:" },
	{ "for f in *.log; do if grep -q ERROR \"$f\"; then echo \"$f\"; fi; "
	    "done", A, RO, "read_only:" },
	{ "{ ls; pwd; } | sort", A, RO, "read_only:" },
	{ "( cd src && ls )", A, RO, "read_only:" },
	{ "for i in 1 2; do echo $i; done | sort -n", A, RO, "read_only:" },
	{ "while read l; do echo $l; done <<EOF\na\nb\nEOF\n", A, RO,
	    "read_only:" },
	{ "! grep -q x f", A, RO, "read_only:" },
	/* What is inside decides. */
	{ "for f in *; do rm \"$f\"; done", A, DES, "destructive:rm" },
	{ "for d in a b; do mkdir $d; done", A, WR, "write:mkdir" },
	{ "for u in $(cat urls); do curl -O $u; done", A, NET,
	    "network:curl" },
	{ "if true; then rm -rf /; fi", A, BLK, "blocked:rm-root" },
	{ "while :; do rm -rf ~; done", A, BLK, "blocked:rm-root" },
	{ "case x in a) rm -rf /;; esac", A, BLK, "blocked:rm-root" },
	{ "until false; do mkfs.ext4 /dev/sda1; done", A, BLK,
	    "blocked:mkfs" },
	{ "if ls; then echo ok; fi > out.txt", A, WR, "redirect:write" },
	{ "for f in a b; do echo $f; done >> list", A, WR, "redirect:write" },
	{ "for f in *.c; do gcc -c $f; done", A, WR, "write:gcc" },
	{ "if [ -f x ]; then python3 x; fi", A, UNK, "unknown:interpreter" },
	{ "for i in 1; do $cmd; done", A, UNK, "unknown:dynamic" },
	{ "case $(curl -s x) in a) ls;; esac", A, NET, "network:curl" },
	{ "for f in $(rm -rf /); do :; done", A, BLK, "blocked:rm-root" },
	/* Functions: the body is classified where it is defined. */
	{ "f() { ls; }; f", A, RO, "read_only:" },
	{ "f() { ls -l \"$@\"; }; f src; f docs", A, RO, "read_only:" },
	{ "f() { rm -rf /; }", A, BLK, "blocked:rm-root" },
	{ "g() { rm -rf \"$1\"; }; g build", A, DES, "destructive:rm" },
	{ "ls() { curl -s x; }; ls", A, NET, "network:curl" },
	{ "function f { ls; }; f", B, RO, "read_only:" },
	{ "function f { ls; }; f", P, UNK, "parse:incomplete" },
	{ "f() if true; then pwd; fi; f", A, RO, "read_only:" },
	{ "eval() { :; }; eval 'rm -rf /'", A, BLK, "blocked:rm-root" },
	{ "f() { :; }; g", A, UNK, "unknown:command" },
	{ "g; g() { :; }", A, UNK, "unknown:command" },
	/* bash only: [[ ]], (( )), for (( )), select, coproc, arrays, $'' */
	{ "[[ -f x ]] && cat x", B, RO, "read_only:" },
	{ "[[ -f x ]] && cat x", P, UNK, "unknown:command" },
	{ "[[ -f x ]] && cat x", A, UNK, "unknown:command" },
	{ "[[ $a =~ ^(x|y)$ ]] && echo m", B, RO, "read_only:" },
	{ "[[ $(rm -rf /) ]]", B, BLK, "blocked:rm-root" },
	{ "(( 1 + 2 ))", B, RO, "read_only:arithmetic" },
	{ "(( i++ ))", P, UNK, "unknown:command" },
	{ "((reboot))", B, RO, "read_only:arithmetic" },
	{ "((reboot))", P, BLK, "blocked:power" },
	{ "((reboot))", A, BLK, "blocked:power" },
	{ "(( $(id) ))", B, RO, "read_only:" },
	{ "for ((i = 0; i < 3; i++)); do echo $i; done", B, RO,
	    "read_only:" },
	{ "for ((i = 0; i < 3; i++)); do echo $i; done", P, UNK,
	    "parse:incomplete" },
	{ "for ((;;)); do rm -rf /; done", B, BLK, "blocked:rm-root" },
	{ "select x in a b; do echo $x; break; done", B, RO, "read_only:" },
	{ "select x in a b; do echo $x; break; done", P, UNK, "" },
	{ "coproc cat", B, RO, "read_only:cat" },
	{ "coproc cat", P, UNK, "unknown:command" },
	{ "coproc c { rm -rf /; }", B, BLK, "blocked:rm-root" },
	{ "a=(1 2 3); echo ${a[1]}", B, RO, "read_only:" },
	{ "a=(1 2 3); echo ${a[1]}", P, UNK, "parse:incomplete" },
	{ "a=(x $(rm -rf /))", B, BLK, "blocked:rm-root" },
	{ "echo $'\\x41\\t'", B, RO, "read_only:echo" },
	{ "r$'m' -rf /", B, BLK, "blocked:rm-root" },
	{ "r$'m' -rf /", A, BLK, "blocked:rm-root" },
	{ "r$'m' -rf /", P, UNK, "unknown:command" },
	{ "$'\\x72\\x6d' -rf ~", B, BLK, "blocked:rm-root" },
	{ "time ls", B, RO, "read_only:ls" },
	{ "time -p ls -l", B, RO, "read_only:ls" },
	/* Arithmetic on a value from outside runs what the value names. */
	{ "for i in 1 2 3; do echo $((i * 2)); done", A, RO, "read_only:" },
	{ "n=5; [[ $n -gt 3 ]] && echo big", B, RO, "read_only:" },
	{ "x=y; echo $((x))", A, RO, "read_only:" },
	{ "read -r l; [[ $l == y ]] && echo yes", B, RO, "read_only:" },
	{ "read x; (( x ))", B, UNK, "unknown:bash-eval" },
	{ "read x; echo $((x + 1))", A, UNK, "unknown:bash-eval" },
	{ "read x; echo $((x + 1))", P, RO, "read_only:" },
	{ "n=$(wc -l < f); [ $((n)) -gt 1 ]", P, RO, "read_only:" },
	{ "read -r x; [[ $x -eq 1 ]]", B, UNK, "unknown:bash-eval" },
	{ "for f in *; do (( f )); done", B, UNK, "unknown:bash-eval" },
	{ "select x in a; do echo $((x)); done", B, UNK,
	    "unknown:bash-eval" },
	{ "n=$(wc -l < f); [[ $n -gt 10 ]] && echo big", B, UNK,
	    "unknown:bash-eval" },
	{ "x='a[$(id)]'; echo $((x))", A, UNK, "unknown:bash-eval" },
	{ "declare x='a[`id`]'; (( x ))", B, UNK, "unknown:bash-eval" },
	{ "read -r l < f; echo ${a[l]}", B, UNK, "unknown:bash-eval" },
	{ "getopts ab o; let \"y = o\"", B, UNK, "unknown:bash-eval" },
	{ "printf -v v %s \"$1\"; echo $((v))", A, UNK,
	    "unknown:bash-eval" },
	{ "declare -n r=x; echo $((r))", B, UNK, "unknown:bash-eval" },
	{ "echo ${x@P}", B, UNK, "unknown:bash-eval" },
	{ "test -v 'a[$(id)]'", A, UNK, "unknown:bash-eval" },
	{ "[[ -v a[$(id)] ]]", B, UNK, "unknown:bash-eval" },
	/* Syntax errors are never read-only. */
	{ "if true; then ls", A, UNK, "parse:incomplete" },
	{ "for i in a b do ls; done", A, UNK, "parse:incomplete" },
	{ "case x in a) ls", A, UNK, "parse:incomplete" },
	{ "while true; do ls; done; done", A, UNK, "parse:incomplete" },
	{ "fi", A, UNK, "parse:incomplete" },
	{ "function", B, UNK, "parse:incomplete" },
	{ "for", A, UNK, "parse:incomplete" },
	{ "case", A, UNK, "parse:incomplete" },
	{ "select", B, UNK, "parse:incomplete" },
	{ "[[", B, UNK, "parse:incomplete" },
	{ "((", B, UNK, "parse:incomplete" },
	{ "if true; then ls; fi fi", A, UNK, "parse:incomplete" },
};

/* Every row, as its shell reads it. */
static void
test_classify_shell_table(void **state)
{
	struct cls_policy	 p;
	struct cls_verdict	 v;
	size_t			 i, bad = 0;

	(void)state;
	for (i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		memset(&p, 0, sizeof p);
		p.shell = rows[i].shell;
		cls_classify(&p, rows[i].src, strlen(rows[i].src), NULL, &v);
		if (v.risk != rows[i].risk || v.rule == NULL ||
		    strncmp(v.rule, rows[i].rule, strlen(rows[i].rule)) != 0) {
			print_error("row %zu (shell %d): %s\n  want %s %s, got "
			    "%s %s (%s)\n", i, rows[i].shell, rows[i].src,
			    cls_risk_name(rows[i].risk), rows[i].rule,
			    cls_risk_name(v.risk), v.rule, v.reason);
			bad++;
		}
		cls_verdict_release(&v);
	}
	print_message("classify shell table: %zu rows\n",
	    sizeof rows / sizeof rows[0]);
	assert_int_equal(bad, 0);
}

/* The worker's shell is found through its symlinks. */
static void
test_classify_shell_of(void **state)
{
	(void)state;
	assert_int_equal(cls_shell_of("/bin/bash"), CLS_SHELL_BASH);
	assert_int_equal(cls_shell_of("/bin/dash"), CLS_SHELL_POSIX);
	assert_int_equal(cls_shell_of("/nonexistent/zsh"), CLS_SHELL_ANY);
	assert_int_equal(cls_shell_of(NULL), CLS_SHELL_ANY);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classify_shell_table),
		cmocka_unit_test(test_classify_shell_of),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
