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

#include "policy/classify.h"
#include "tests/unit/classify_rows.h"

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
	{ "for f in *.c; do wc -l \"$f\"; done", RO, "read_only:", A },
	{ "for i in 1 2 3; do echo $i; done", RO, "read_only:", A },
	{ "for i in 1 2 3\ndo\n  echo $i\ndone", RO, "read_only:", A },
	{ "for f; do echo $f; done", RO, "read_only:", A },
	{ "while read -r l; do echo \"$l\"; done < in.txt",
	    RO, "read_only:", A },
	{ "while true; do date; sleep 1; done", RO, "read_only:", A },
	{ "until [ -f done ]; do sleep 1; done", RO, "read_only:", A },
	{ "if [ -f x ]; then cat x; else echo none; fi", RO, "read_only:", A },
	{ "if grep -q x f; then echo yes; elif test -d d; then ls d; fi",
	    RO, "read_only:", A },
	{ "if ! test -e x; then echo missing; fi", RO, "read_only:", A },
	{ "case $1 in start) echo s;; *) echo other;; esac",
	    RO, "read_only:", A },
	{ "case x in (a|b) pwd ;; esac", RO, "read_only:", A },
	{ "for f in *.log; do if grep -q ERROR \"$f\"; then echo \"$f\"; fi; "
	    "done", RO, "read_only:", A },
	{ "{ ls; pwd; } | sort", RO, "read_only:", A },
	{ "( cd src && ls )", RO, "read_only:", A },
	{ "for i in 1 2; do echo $i; done | sort -n", RO, "read_only:", A },
	{ "while read l; do echo $l; done <<EOF\na\nb\nEOF\n",
	    RO, "read_only:", A },
	{ "! grep -q x f", RO, "read_only:", A },
	/* What is inside decides. */
	{ "for f in *; do rm \"$f\"; done", DES, "destructive:rm", A },
	{ "for d in a b; do mkdir $d; done", WR, "write:mkdir", A },
	{ "for u in $(cat urls); do curl -O $u; done", NET, "network:curl", A },
	{ "if true; then rm -rf /; fi", BLK, "blocked:rm-root", A },
	{ "while :; do rm -rf ~; done", BLK, "blocked:rm-root", A },
	{ "case x in a) rm -rf /;; esac", BLK, "blocked:rm-root", A },
	{ "until false; do mkfs.ext4 /dev/sda1; done", BLK, "blocked:mkfs", A },
	{ "if ls; then echo ok; fi > out.txt", WR, "redirect:write", A },
	{ "for f in a b; do echo $f; done >> list", WR, "redirect:write", A },
	{ "for f in *.c; do gcc -c $f; done", WR, "write:gcc", A },
	{ "if [ -f x ]; then python3 x; fi", UNK, "unknown:interpreter", A },
	{ "for i in 1; do $cmd; done", UNK, "unknown:dynamic", A },
	{ "case $(curl -s x) in a) ls;; esac", NET, "network:curl", A },
	{ "for f in $(rm -rf /); do :; done", BLK, "blocked:rm-root", A },
	/* Functions: the body is classified where it is defined. */
	{ "f() { ls; }; f", RO, "read_only:", A },
	{ "f() { ls -l \"$@\"; }; f src; f docs", RO, "read_only:", A },
	{ "f() { rm -rf /; }", BLK, "blocked:rm-root", A },
	{ "g() { rm -rf \"$1\"; }; g build", DES, "destructive:rm", A },
	{ "ls() { curl -s x; }; ls", NET, "network:curl", A },
	{ "function f { ls; }; f", RO, "read_only:", B },
	{ "function f { ls; }; f", UNK, "parse:incomplete", P },
	{ "f() if true; then pwd; fi; f", RO, "read_only:", A },
	{ "eval() { :; }; eval 'rm -rf /'", BLK, "blocked:rm-root", A },
	{ "f() { :; }; g", UNK, "unknown:command", A },
	{ "g; g() { :; }", UNK, "unknown:command", A },
	/* bash only: [[ ]], (( )), for (( )), select, coproc, arrays, $'' */
	{ "[[ -f x ]] && cat x", RO, "read_only:", B },
	{ "[[ -f x ]] && cat x", UNK, "unknown:command", P },
	{ "[[ -f x ]] && cat x", UNK, "unknown:command", A },
	{ "[[ $a =~ ^(x|y)$ ]] && echo m", RO, "read_only:", B },
	{ "[[ $(rm -rf /) ]]", BLK, "blocked:rm-root", B },
	{ "(( 1 + 2 ))", RO, "read_only:arithmetic", B },
	{ "(( i++ ))", UNK, "unknown:command", P },
	{ "((reboot))", RO, "read_only:arithmetic", B },
	{ "((reboot))", BLK, "blocked:power", P },
	{ "((reboot))", BLK, "blocked:power", A },
	{ "(( $(id) ))", RO, "read_only:", B },
	{ "for ((i = 0; i < 3; i++)); do echo $i; done", RO, "read_only:", B },
	{ "for ((i = 0; i < 3; i++)); do echo $i; done",
	    UNK, "parse:incomplete", P },
	{ "for ((;;)); do rm -rf /; done", BLK, "blocked:rm-root", B },
	{ "select x in a b; do echo $x; break; done", RO, "read_only:", B },
	{ "select x in a b; do echo $x; break; done", UNK, "", P },
	{ "coproc cat", RO, "read_only:cat", B },
	{ "coproc cat", UNK, "unknown:command", P },
	{ "coproc c { rm -rf /; }", BLK, "blocked:rm-root", B },
	{ "a=(1 2 3); echo ${a[1]}", RO, "read_only:", B },
	{ "a=(1 2 3); echo ${a[1]}", UNK, "parse:incomplete", P },
	{ "a=(x $(rm -rf /))", BLK, "blocked:rm-root", B },
	{ "echo $'\\x41\\t'", RO, "read_only:echo", B },
	{ "r$'m' -rf /", BLK, "blocked:rm-root", B },
	{ "r$'m' -rf /", BLK, "blocked:rm-root", A },
	{ "r$'m' -rf /", UNK, "unknown:command", P },
	{ "$'\\x72\\x6d' -rf ~", BLK, "blocked:rm-root", B },
	{ "time ls", RO, "read_only:ls", B },
	{ "time -p ls -l", RO, "read_only:ls", B },
	/* Arithmetic on a value from outside runs what the value names. */
	{ "for i in 1 2 3; do echo $((i * 2)); done", RO, "read_only:", A },
	{ "n=5; [[ $n -gt 3 ]] && echo big", RO, "read_only:", B },
	{ "x=y; echo $((x))", RO, "read_only:", A },
	{ "read -r l; [[ $l == y ]] && echo yes", RO, "read_only:", B },
	{ "read x; (( x ))", UNK, "unknown:bash-eval", B },
	{ "read x; echo $((x + 1))", UNK, "unknown:bash-eval", A },
	{ "read x; echo $((x + 1))", RO, "read_only:", P },
	{ "n=$(wc -l < f); [ $((n)) -gt 1 ]", RO, "read_only:", P },
	{ "read -r x; [[ $x -eq 1 ]]", UNK, "unknown:bash-eval", B },
	{ "for f in *; do (( f )); done", UNK, "unknown:bash-eval", B },
	{ "select x in a; do echo $((x)); done", UNK, "unknown:bash-eval", B },
	{ "n=$(wc -l < f); [[ $n -gt 10 ]] && echo big",
	    UNK, "unknown:bash-eval", B },
	{ "x='a[$(id)]'; echo $((x))", UNK, "unknown:bash-eval", A },
	{ "declare x='a[`id`]'; (( x ))", UNK, "unknown:bash-eval", B },
	{ "read -r l < f; echo ${a[l]}", UNK, "unknown:bash-eval", B },
	{ "getopts ab o; let \"y = o\"", UNK, "unknown:bash-eval", B },
	{ "printf -v v %s \"$1\"; echo $((v))", UNK, "unknown:bash-eval", A },
	{ "declare -n r=x; echo $((r))", UNK, "unknown:bash-eval", B },
	{ "echo ${x@P}", UNK, "unknown:bash-eval", B },
	{ "test -v 'a[$(id)]'", UNK, "unknown:bash-eval", A },
	{ "[[ -v a[$(id)] ]]", UNK, "unknown:bash-eval", B },
	/* Every other expansion that evaluates a value from outside. */
	{ "read x; echo ${!x}", UNK, "unknown:bash-eval", B },
	{ "read x; echo \"${!x}\"", UNK, "unknown:bash-eval", B },
	{ "y=abc; read x; echo ${y:x}", UNK, "unknown:bash-eval", B },
	{ "read x; echo ${y:0:x}", UNK, "unknown:bash-eval", B },
	{ "read x; echo ${@: -1:x}", UNK, "unknown:bash-eval", B },
	{ "read x; y=x; echo $((y))", UNK, "unknown:bash-eval", B },
	{ "read x; declare a[x]=1", UNK, "unknown:bash-eval", B },
	{ "read x; declare \"$x\"=1", UNK, "unknown:bash-eval", B },
	{ "read x; read \"$x\"", UNK, "unknown:bash-eval", B },
	{ "read x; printf -v \"$x\" %s 1", UNK, "unknown:bash-eval", B },
	{ "read x; unset a[x]", UNK, "unknown:bash-eval", B },
	{ "read x; test -v \"a[$x]\"", UNK, "unknown:bash-eval", B },
	{ "read x; [[ -v a[x] ]]", UNK, "unknown:bash-eval", B },
	{ "declare -i n; read n", UNK, "unknown:bash-eval", B },
	{ "local -i n=1", UNK, "unknown:bash-eval", B },
	{ "declare -n r=x", UNK, "unknown:bash-eval", B },
	{ "typeset -n r", UNK, "unknown:bash-eval", B },
	{ "declare -n r=x", RO, "read_only:", P },
	{ "x=a; echo ${!x} ${x:1} ${x:-y} ${x: -1}", RO, "read_only:", B },
	{ "read -r l; printf '%s\\n' \"$l\"; echo \"${l:-none}\"", RO,
	    "read_only:", B },
	{ "read -r l; [ \"$l\" = y ]; read -r l", RO, "read_only:", B },
	{ "echo ${x@E} ${x@Q} ${x@A}", RO, "read_only:", B },
	/* Syntax errors are never read-only. */
	{ "if true; then ls", UNK, "parse:incomplete", A },
	{ "for i in a b do ls; done", UNK, "parse:incomplete", A },
	{ "case x in a) ls", UNK, "parse:incomplete", A },
	{ "while true; do ls; done; done", UNK, "parse:incomplete", A },
	{ "fi", UNK, "parse:incomplete", A },
	{ "function", UNK, "parse:incomplete", B },
	{ "for", UNK, "parse:incomplete", A },
	{ "case", UNK, "parse:incomplete", A },
	{ "select", UNK, "parse:incomplete", B },
	{ "[[", UNK, "parse:incomplete", B },
	{ "((", UNK, "parse:incomplete", B },
	{ "if true; then ls; fi fi", UNK, "parse:incomplete", A },
};

/* Every row, as its shell reads it. */
static void
test_classify_shell_table(void **state)
{
	(void)state;
	classify_rows(rows, sizeof rows / sizeof rows[0], NULL,
	    "classify shell table");
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
