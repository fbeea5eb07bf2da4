/*
 * shparse: a table of commands and what the parser lists for them, the
 * operators it reports, here-doc bodies, limits, and random bytes that
 * must neither crash nor leak (run under ASan and valgrind).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "policy/shparse.h"
#include "logs/xmalloc.h"

/*
 * One row: the source, how many simple commands, their rendering and
 * whether the parse is complete. A command renders as its assignments
 * (each followed by a space), its argv joined by "|", each redirection as
 * " <fd><op><target>", then "[flags]" when any is set: D dynamic, G glob,
 * S substituted, P subshell or group, N negated, T timed, C control
 * structure, F function body, B background, E endless loop, "@n" depth. A command of another kind than
 * simple starts with "for:", "select:", "case:", "arith:", "cond:" or
 * "func:".
 * Commands are joined by " ; ".
 */
struct row {
	const char	*src;
	size_t		 ncmds;
	const char	*expect;
	int		 complete;
};

static const struct row rows[] = {
	{ "", 0, "", 1 },
	{ "   ", 0, "", 1 },
	{ "\n\n  \n", 0, "", 1 },
	{ "ls", 1, "ls", 1 },
	{ "ls -la /tmp", 1, "ls|-la|/tmp", 1 },
	{ "  ls\t-l  ", 1, "ls|-l", 1 },
	{ "echo 'a b'", 1, "echo|a b", 1 },
	{ "echo \"a b\"", 1, "echo|a b", 1 },
	{ "echo a\"b c\"d", 1, "echo|ab cd", 1 },
	{ "echo a'b c'd", 1, "echo|ab cd", 1 },
	{ "echo '' \"\"", 1, "echo||", 1 },
	{ "echo ''", 1, "echo|", 1 },
	{ "echo 'it'\\''s'", 1, "echo|it's", 1 },
	{ "echo \"a\\\"b\"", 1, "echo|a\"b", 1 },
	{ "echo \"a\\$b\"", 1, "echo|a$b", 1 },
	{ "echo \"a\\\\b\"", 1, "echo|a\\b", 1 },
	{ "echo \"a\\nb\"", 1, "echo|a\\nb", 1 },
	{ "echo \"a\\`b\"", 1, "echo|a`b", 1 },
	{ "echo '$HOME'", 1, "echo|$HOME", 1 },
	{ "echo \"$HOME\"", 1, "echo|$HOME[D]", 1 },
	{ "echo a\\ b", 1, "echo|a b", 1 },
	{ "echo a\\;b", 1, "echo|a;b", 1 },
	{ "echo a\\|b a\\&b a\\>b", 1, "echo|a|b|a&b|a>b", 1 },
	{ "echo \\'x", 1, "echo|'x", 1 },
	{ "ec\\\nho hi", 1, "echo|hi", 1 },
	{ "echo a \\\n b", 1, "echo|a|b", 1 },
	{ "echo \"a\\\nb\"", 1, "echo|ab", 1 },
	{ "echo 'a\\\nb'", 1, "echo|a\\\nb", 1 },
	{ "echo \"multi\nline\"", 1, "echo|multi\nline", 1 },
	{ "echo $", 1, "echo|$", 1 },
	{ "echo a$", 1, "echo|a$", 1 },
	{ "echo \"$\"", 1, "echo|$", 1 },
	{ "echo $\"hi\"", 1, "echo|hi", 1 },
	{ "echo $'a\\nb'", 1, "echo|a\nb", 1 },
	{ "echo \"$'x'\"", 1, "echo|$'x'", 1 },
	{ "echo $1 $@ $? $$", 1, "echo|$1|$@|$?|$$[D]", 1 },
	{ "echo ${HOME}/x", 1, "echo|${HOME}/x[D]", 1 },
	{ "echo ${a:-${b}}", 1, "echo|${a:-${b}}[D]", 1 },
	{ "echo ${a:-$(id)}", 1, "echo", 0 },
	{ "echo ${a:-'x'}", 1, "echo", 0 },
	{ "echo ${a", 1, "echo", 0 },
	{ "echo $((1 + 2))", 1, "echo|$((1 + 2))[D]", 1 },
	{ "echo $(( (1+2)*3 ))", 1, "echo|$(( (1+2)*3 ))[D]", 1 },
	{ "echo $(( $(id) ))", 2, "echo|$(( $(id) ))[D] ; id[S@1]", 1 },
	{ "echo $((1+2)", 1, "echo", 0 },
	{ "echo $[1+2]", 1, "echo", 0 },
	{ "echo ~", 1, "echo|~[D]", 1 },
	{ "echo ~/x", 1, "echo|~/x[D]", 1 },
	{ "echo '~'", 1, "echo|~", 1 },
	{ "echo a~b", 1, "echo|a~b", 1 },
	{ "rm -rf \"$HOME\"", 1, "rm|-rf|$HOME[D]", 1 },
	{ "rm -rf $HOME/", 1, "rm|-rf|$HOME/[D]", 1 },
	{ "rm *", 1, "rm|*[DG]", 1 },
	{ "rm '*'", 1, "rm|*", 1 },
	{ "rm \"*.c\"", 1, "rm|*.c", 1 },
	{ "ls a?c", 1, "ls|a?c[DG]", 1 },
	{ "ls [ab]c", 1, "ls|[ab]c[DG]", 1 },
	{ "[ -f x ]", 1, "[|-f|x|]", 1 },
	{ "echo {a,b}", 1, "echo|{a,b}[DG]", 1 },
	{ "echo {1..3}", 1, "echo|{1..3}[DG]", 1 },
	{ "find . -exec rm {} \\;", 1, "find|.|-exec|rm|{}|;", 1 },
	{ "echo '{a,b}'", 1, "echo|{a,b}", 1 },
	{ "sudo rm -rf /", 1, "sudo|rm|-rf|/", 1 },
	{ "env A=1 rm x", 1, "env|A=1|rm|x", 1 },
	{ "a | b", 2, "a ; b", 1 },
	{ "a | b | c", 3, "a ; b ; c", 1 },
	{ "a && b", 2, "a ; b", 1 },
	{ "a || b", 2, "a ; b", 1 },
	{ "a ; b", 2, "a ; b", 1 },
	{ "a;b", 2, "a ; b", 1 },
	{ "a & b", 2, "a[B] ; b", 1 },
	{ "a&", 1, "a[B]", 1 },
	{ "a ;", 1, "a", 1 },
	{ "a\nb", 2, "a ; b", 1 },
	{ "a\n\nb\n", 2, "a ; b", 1 },
	{ "a |& b", 2, "a ; b", 1 },
	{ "a && b || c ; d & e | f", 6, "a ; b ; c ; d[B] ; e ; f", 1 },
	{ "a &&\n b", 2, "a ; b", 1 },
	{ "a |\n b", 2, "a ; b", 1 },
	{ "a ||\n\n b", 2, "a ; b", 1 },
	{ "a|b&&c", 3, "a ; b ; c", 1 },
	{ "a |", 1, "a", 0 },
	{ "a &&", 1, "a", 0 },
	{ "| a", 0, "", 0 },
	{ "; a", 0, "", 0 },
	{ "a ;; b", 1, "a", 0 },
	{ "a & & b", 1, "a[B]", 0 },
	{ "&& a", 0, "", 0 },
	{ "ls > out", 1, "ls 1>out", 1 },
	{ "ls >> out", 1, "ls 1>>out", 1 },
	{ "ls >| out", 1, "ls 1>|out", 1 },
	{ "ls 2>&1", 1, "ls 2>&1", 1 },
	{ "ls 2>/dev/null >x", 1, "ls 2>/dev/null 1>x", 1 },
	{ "ls &> out", 1, "ls -1&>out", 1 },
	{ "ls &>> out", 1, "ls -1&>>out", 1 },
	{ "cat < in", 1, "cat 0<in", 1 },
	{ "cat <> f", 1, "cat 0<>f", 1 },
	{ "cat 3<> f", 1, "cat 3<>f", 1 },
	{ "ls 3>file", 1, "ls 3>file", 1 },
	{ "ls >&2", 1, "ls 1>&2", 1 },
	{ "cat <&3", 1, "cat 0<&3", 1 },
	{ "exec 3>&-", 1, "exec 3>&-", 1 },
	{ "ls >f1 a >f2 b", 1, "ls|a|b 1>f1 1>f2", 1 },
	{ "ls>f", 1, "ls 1>f", 1 },
	{ "ls 12>f", 1, "ls 12>f", 1 },
	{ "ls a2>f", 1, "ls|a2 1>f", 1 },
	{ "ls > \"$f\"", 1, "ls 1>$f[D]", 1 },
	{ "ls > 'a b'", 1, "ls 1>a b", 1 },
	{ "> f", 1, " 1>f", 1 },
	{ ">f ls", 1, "ls 1>f", 1 },
	{ "cat <<< hello", 1, "cat 0<<<hello", 1 },
	{ "cat <<< \"$x\"", 1, "cat 0<<<$x[D]", 1 },
	{ "ls >", 1, "ls", 0 },
	{ "ls > ;", 1, "ls", 0 },
	{ "cat <<EOF\nhello\nEOF", 1, "cat 0<<EOF", 1 },
	{ "cat <<EOF\nhello\nEOF\nls", 2, "cat 0<<EOF ; ls", 1 },
	{ "cat <<EOF > out\nhello\nEOF\n", 1, "cat 0<<EOF 1>out", 1 },
	{ "cat <<-EOF\n\thello\n\tEOF\nls", 2, "cat 0<<EOF ; ls", 1 },
	{ "cat <<'EOF'\n$(rm -rf /)\nEOF", 1, "cat 0<<EOF", 1 },
	{ "cat <<\"EOF\"\n`id`\nEOF", 1, "cat 0<<EOF", 1 },
	{ "cat <<\\EOF\n$(id)\nEOF", 1, "cat 0<<EOF", 1 },
	{ "cat <<EOF\n$(whoami) `id`\nEOF", 3, "cat 0<<EOF[D] ; whoami[S@1] ; id[S@1]", 1 },
	{ "cat <<EOF\n$HOME\nEOF", 1, "cat 0<<EOF[D]", 1 },
	{ "cat <<EOF\nhello\n", 1, "cat 0<<EOF", 0 },
	{ "cat <<EOF", 1, "cat 0<<EOF", 0 },
	{ "cat <<A <<B\na\nA\nb\nB\nls", 2, "cat 0<<A 0<<B ; ls", 1 },
	{ "cat <<EOF | grep x\nbody\nEOF", 2, "cat 0<<EOF ; grep|x", 1 },
	{ "A=1", 1, "A=1 ", 1 },
	{ "A=1 B=2 cmd x", 1, "A=1 B=2 cmd|x", 1 },
	{ "A=$(whoami) cmd", 2, "A=$(whoami) cmd[D] ; whoami[S@1]", 1 },
	{ "A=1 B=\"x y\"", 1, "A=1 B=x y ", 1 },
	{ "A+=1 cmd", 1, "A+=1 cmd", 1 },
	{ "cmd A=1", 1, "cmd|A=1", 1 },
	{ "\"A\"=1 cmd", 1, "A=1|cmd", 1 },
	{ "1A=1 cmd", 1, "1A=1|cmd", 1 },
	{ "=x cmd", 1, "=x|cmd", 1 },
	{ "a=(1 2)", 1, "a=(...) ", 1 },
	{ "echo $(whoami)", 2, "echo|$(whoami)[D] ; whoami[S@1]", 1 },
	{ "echo $(echo $(id -u))", 3, "echo|$(echo $(id -u))[D] ; echo|$(id -u)[DS@1] ; id|-u[S@2]", 1 },
	{ "echo `id`", 2, "echo|`id`[D] ; id[S@1]", 1 },
	{ "echo `echo \\`id\\``", 3, "echo|`echo \\`id\\``[D] ; echo|`id`[DS@1] ; id[S@2]", 1 },
	{ "echo $(echo `id`)", 3, "echo|$(echo `id`)[D] ; echo|`id`[DS@1] ; id[S@2]", 1 },
	{ "echo \"x $(rm -rf /) y\"", 2, "echo|x $(rm -rf /) y[D] ; rm|-rf|/[S@1]", 1 },
	{ "echo \"`rm a`\"", 2, "echo|`rm a`[D] ; rm|a[S@1]", 1 },
	{ "echo $(a | b; c)", 4, "echo|$(a | b; c)[D] ; a[S@1] ; b[S@1] ; c[S@1]", 1 },
	{ "echo $(", 1, "echo", 0 },
	{ "echo $(ls", 2, "echo ; ls[S@1]", 0 },
	{ "echo `ls", 1, "echo", 0 },
	{ "echo $(ls ))", 2, "echo|$(ls )[D] ; ls[S@1]", 0 },
	{ "echo $( )", 1, "echo|$( )[D]", 1 },
	{ "echo $(# c\n)", 1, "echo|$(# c\n)[D]", 1 },
	{ "echo $(ls # )\n)", 2, "echo|$(ls # )\n)[D] ; ls[S@1]", 1 },
	{ "diff <(ls a) <(ls b)", 3, "diff|<(ls a)|<(ls b)[D] ; ls|a[S@1] ; ls|b[S@1]", 1 },
	{ "tee >(gzip > f)", 2, "tee|>(gzip > f)[D] ; gzip 1>f[S@1]", 1 },
	{ "cat < <(ls)", 2, "cat 0<<(ls)[D] ; ls[S@1]", 1 },
	{ "(cd /tmp && ls)", 2, "cd|/tmp[P@1] ; ls[P@1]", 1 },
	{ "( ls ) > out", 1, "ls 1>out[P@1]", 1 },
	{ "(a; b) 2>&1 | c", 3, "a 2>&1[P@1] ; b 2>&1[P@1] ; c", 1 },
	{ "{ ls; pwd; }", 2, "ls[P@1] ; pwd[P@1]", 1 },
	{ "{ ls; } > f", 1, "ls 1>f[P@1]", 1 },
	{ "{ ls\n}", 1, "ls[P@1]", 1 },
	{ "{ ls & }", 1, "ls[PB@1]", 1 },
	{ "{ ls }", 1, "ls|}[P@1]", 0 },
	{ "{ ls;", 1, "ls[P@1]", 0 },
	{ "( ls", 1, "ls[P@1]", 0 },
	{ "ls )", 1, "ls", 0 },
	{ "( )", 0, "", 0 },
	{ "((x++))", 1, "arith:x++", 1 },
	{ "( (ls) )", 1, "ls[P@2]", 1 },
	{ "(ls) x", 1, "ls[P@1]", 0 },
	{ "echo a}", 1, "echo|a}", 1 },
	{ "echo }", 1, "echo|}", 1 },
	{ "{ls", 1, "{ls", 1 },
	{ "ls # comment", 1, "ls", 1 },
	{ "# only a comment", 0, "", 1 },
	{ "ls #c\npwd", 2, "ls ; pwd", 1 },
	{ "echo a#b", 1, "echo|a#b", 1 },
	{ "echo '#x'", 1, "echo|#x", 1 },
	{ "echo \"x", 1, "echo|x", 0 },
	{ "echo 'x", 1, "echo", 0 },
	{ "echo x\\", 1, "echo|x", 0 },
	{ "! ls", 1, "ls[N]", 1 },
	{ "time ls -l", 1, "ls|-l[T]", 1 },
	{ "time -p ls", 1, "ls[T]", 1 },
	{ "! time ls | wc", 2, "ls[NT] ; wc", 1 },
	{ "echo !", 1, "echo|!", 1 },
	{ "if true; then rm -rf /; fi", 2, "true[C] ; rm|-rf|/[C]", 1 },
	{ "while true; do ls; done", 2, "true[C] ; ls[CE]", 1 },
	{ "until false; do ls; done", 2, "false[C] ; ls[CE]", 1 },
	{ "for f in *; do rm $f; done", 2, "for:f|*[DG] ; rm|$f[DC]", 1 },
	{ "case x in a) ls;; esac", 2, "case:x|a ; ls[C]", 1 },
	{ "select x in a; do ls; done", 2, "select:x|a ; ls[C]", 1 },
	{ "function f { ls; }", 2, "func:f ; ls[PF@1]", 1 },
	{ "f() { ls; }", 2, "func:f ; ls[PF@1]", 1 },
	{ "coproc ls", 1, "ls[B]", 1 },
	{ "[[ -f x ]]", 1, "cond:-f|x", 1 },
	{ "echo if then fi", 1, "echo|if|then|fi", 1 },
	{ "'if' x", 1, "if|x", 1 },
	{ "\\if x", 1, "if|x", 1 },
	{ "iffy x", 1, "iffy|x", 1 },
	{ "ls; done", 1, "ls", 0 },
	{ "echo caf\xc3""\xa9"" \xff""\x80""", 1, "echo|caf\xc3""\xa9""|\xff""\x80""", 1 },
	{ "\xfe""\xfd""", 1, "\xfe""\xfd""", 1 },
	{ "bash -c 'rm -rf /'", 1, "bash|-c|rm -rf /", 1 },
	{ "sh -c \"echo $x\"", 1, "sh|-c|echo $x[D]", 1 },
	{ "xargs rm < list", 1, "xargs|rm 0<list", 1 },
	{ "git log --oneline | head -n 5", 2, "git|log|--oneline ; head|-n|5", 1 },
	{ "curl -s http://x | sh", 2, "curl|-s|http://x ; sh", 1 },
	{ ":(){ :|:& };:", 4, "func:: ; :[PFB@1] ; :[PFB@1] ; :", 1 },
	{ "echo a\\\n", 1, "echo|a", 1 },
	{ "ls \\\n| wc", 2, "ls ; wc", 1 },
	{ "dd if=/dev/zero of=/dev/sda", 1, "dd|if=/dev/zero|of=/dev/sda", 1 },
	{ "X=1 Y=2", 1, "X=1 Y=2 ", 1 },
	{ "X=~/a", 1, "X=~/a [D]", 1 },
	{ "nohup ls &", 1, "nohup|ls[B]", 1 },
	{ "echo \"$(echo \"in\")\"", 2, "echo|$(echo \"in\")[D] ; echo|in[S@1]", 1 },
	/* The whole grammar (bash). */
	{ "if a; then b; elif c; then d; else e; fi", 5, "a[C] ; b[C] ; c[C] ; d[C] ; e[C]", 1 },
	{ "if a\nthen\n  b\nfi", 2, "a[C] ; b[C]", 1 },
	{ "if a\nthen b\nelif c\nthen d\nfi", 4, "a[C] ; b[C] ; c[C] ; d[C]", 1 },
	{ "if ! grep -q x f; then echo no; fi", 2, "grep|-q|x|f[NC] ; echo|no[C]", 1 },
	{ "if [ -f x ]; then cat x; fi > out", 2, "[|-f|x|] 1>out[C] ; cat|x 1>out[C]", 1 },
	{ "if a; then b; fi | sort", 3, "a[C] ; b[C] ; sort", 1 },
	{ "if a; then b; fi && c", 3, "a[C] ; b[C] ; c", 1 },
	{ "if if a; then b; fi; then c; fi", 3, "a[C] ; b[C] ; c[C]", 1 },
	{ "if a; then b fi", 2, "a[C] ; b|fi[C]", 0 },
	{ "if a; then b; fi fi", 2, "a[C] ; b[C]", 0 },
	{ "if a; b; fi", 2, "a[C] ; b[C]", 0 },
	{ "if; then a; fi", 0, "", 0 },
	{ "fi", 0, "", 0 },
	{ "then ls", 0, "", 0 },
	{ "else", 0, "", 0 },
	{ "echo fi then else done", 1, "echo|fi|then|else|done", 1 },
	{ "while read -r l; do echo \"$l\"; done < in.txt", 2, "read|-r|l 0<in.txt[C] ; echo|$l 0<in.txt[DC]", 1 },
	{ "while read l; do echo $l; done <<EOF\nx\nEOF\n", 2, "read|l 0<<EOF[C] ; echo|$l[DC]", 1 },
	{ "while :; do sleep 1; done &", 2, ":[CB] ; sleep|1[CBE]", 1 },
	{ "until [ -f done ]; do sleep 1; done", 2, "[|-f|done|][C] ; sleep|1[C]", 1 },
	{ "while true; do break; done; ls", 3, "true[C] ; break[CE] ; ls", 1 },
	{ "while a; do b", 2, "a[C] ; b[C]", 0 },
	{ "while a; do b; done; done", 2, "a[C] ; b[C]", 0 },
	{ "for i in 1 2 3; do echo $i; done", 2, "for:i|1|2|3 ; echo|$i[DC]", 1 },
	{ "for i in 1 2 3\ndo\n  echo $i\ndone", 2, "for:i|1|2|3 ; echo|$i[DC]", 1 },
	{ "for i\nin a b\ndo echo $i\ndone", 2, "for:i|a|b ; echo|$i[DC]", 1 },
	{ "for i; do echo $i; done", 2, "for:i[D] ; echo|$i[DC]", 1 },
	{ "for i do echo $i; done", 2, "for:i[D] ; echo|$i[DC]", 1 },
	{ "for i in; do ls; done", 2, "for:i ; ls[C]", 1 },
	{ "for i in $(ls); do cat $i; done", 3, "for:i|$(ls)[D] ; ls[S@1] ; cat|$i[DC]", 1 },
	{ "for i in a b; do for j in c d; do echo $i$j; done; done", 3, "for:i|a|b ; for:j|c|d[C] ; echo|$i$j[DC]", 1 },
	{ "for 1 in a; do ls; done", 1, "for:", 0 },
	{ "for i in a b do echo; done", 1, "for:i|a|b|do|echo", 0 },
	{ "for i in a (b); do ls; done", 1, "for:i|a", 0 },
	{ "for ((i = 0; i < 3; i++)); do echo $i; done", 2, "arith:i = 0; i < 3; i++ ; echo|$i[DC]", 1 },
	{ "for ((;;)); do ls; done", 2, "arith:;; ; ls[CE]", 1 },
	{ "for ((i = 0; i < $(nproc); i++)); do ls; done", 3, "arith:i = 0; i < $(nproc); i++[D] ; nproc[S@1] ; ls[C]", 1 },
	{ "case $x in a|b) ls;; *) pwd;; esac", 3, "case:$x|a|b|*[D] ; ls[C] ; pwd[C]", 1 },
	{ "case x in (a) ls ;; esac", 2, "case:x|a ; ls[C]", 1 },
	{ "case x in\n  a) ls\n  ;;\n  b) pwd\nesac", 3, "case:x|a|b ; ls[C] ; pwd[C]", 1 },
	{ "case x in a) ls;& b) pwd;;& esac", 3, "case:x|a|b ; ls[C] ; pwd[C]", 1 },
	{ "case x in esac", 1, "case:x", 1 },
	{ "case x in a) ;; esac", 1, "case:x|a", 1 },
	{ "case $(id) in a) ls;; esac", 3, "case:$(id)|a[D] ; id[S@1] ; ls[C]", 1 },
	{ "case x in $(whoami)) ls;; esac", 3, "case:x|$(whoami)[D] ; whoami[S@1] ; ls[C]", 1 },
	{ "case x a) ls;; esac", 1, "case:x", 0 },
	{ "case x in a) ls", 2, "case:x|a ; ls[C]", 0 },
	{ "case x in a) case y in b) ls;; esac;; esac", 3, "case:x|a ; case:y|b[C] ; ls[C]", 1 },
	{ "case x in a) rm -rf /;; esac", 2, "case:x|a ; rm|-rf|/[C]", 1 },
	{ "f() { ls; }; f", 3, "func:f ; ls[PF@1] ; f", 1 },
	{ "f () { ls; }", 2, "func:f ; ls[PF@1]", 1 },
	{ "f()\n{\n  ls\n}", 2, "func:f ; ls[PF@1]", 1 },
	{ "f() ( cd /tmp; ls )", 3, "func:f ; cd|/tmp[PF@1] ; ls[PF@1]", 1 },
	{ "function f() { rm x; }", 2, "func:f ; rm|x[PF@1]", 1 },
	{ "function f { ls; } > out", 2, "func:f ; ls 1>out[PF@1]", 1 },
	{ "function f\n{\n  ls\n}", 2, "func:f ; ls[PF@1]", 1 },
	{ "f() { ls; } >out; f", 3, "func:f ; ls 1>out[PF@1] ; f", 1 },
	{ "f() if a; then b; fi", 3, "func:f ; a[CF] ; b[CF]", 1 },
	{ "'f'() { ls; }", 1, "f", 0 },
	{ "$f() { ls; }", 1, "$f[D]", 0 },
	{ "f()", 1, "func:f", 0 },
	{ "f() { f; }; f", 3, "func:f ; f[PF@1] ; f", 1 },
	{ "(( i = 1 + 2 ))", 1, "arith: i = 1 + 2 ", 1 },
	{ "(( $(id) ))", 2, "arith: $(id) [D] ; id[S@1]", 1 },
	{ "((a) b)", 1, "a[P@2]", 0 },
	{ "(( (1 + 2) * 3 ))", 1, "arith: (1 + 2) * 3 ", 1 },
	{ "(( x = `id` ))", 2, "arith: x = `id` [D] ; id[S@1]", 1 },
	{ "(( \"1\" + 2 ))", 1, "arith: \"1\" + 2 ", 1 },
	{ "(( '1' ))", 1, "arith:", 0 },
	{ "(( 1 + 2 )) > f", 1, "arith: 1 + 2  1>f", 1 },
	{ "echo $(( (1 + 2) ))", 1, "echo|$(( (1 + 2) ))[D]", 1 },
	{ "echo $((x[$(id)]))", 2, "echo|$((x[$(id)]))[D] ; id[S@1]", 1 },
	{ "echo $(( \"$x\" + 1 ))", 1, "echo|$(( \"$x\" + 1 ))[D]", 1 },
	{ "[[ -f x && -d y ]]", 1, "cond:-f|x|&&|-d|y", 1 },
	{ "[[ $a == b* ]]", 1, "cond:$a|==|b*[D]", 1 },
	{ "[[ $a =~ ^(a|b)$ ]]", 1, "cond:$a|=~|^(a|b)$[D]", 1 },
	{ "[[ $a =~ x\\ y ]] && ls", 2, "cond:$a|=~|x y[D] ; ls", 1 },
	{ "[[ $a < $b ]]", 1, "cond:$a|<|$b[D]", 1 },
	{ "[[ ! -e x || ( -f y ) ]]", 1, "cond:!|-e|x||||(|-f|y|)", 1 },
	{ "[[ $(id) = x ]]", 2, "cond:$(id)|=|x[D] ; id[S@1]", 1 },
	{ "[[ -f x ]] && cat x", 2, "cond:-f|x ; cat|x", 1 },
	{ "[[ \"\" = x ]]", 1, "cond:|=|x", 1 },
	{ "[[ > \"\" ]]", 1, "cond:>|", 1 },
	/* A substitution in a compound command's redirection (fuzzer). */
	{ "{ ls; } > `echo f`", 2, "ls 1>`echo f`[DP@1] ; echo|f[S@1]", 1 },
	{ "( ls ) > $(echo f) 2>&1", 2, "ls 1>$(echo f) 2>&1[DP@1] ; echo|f[S@1]", 1 },
	{ "{ ls; } > >(cat) <<EOF\nx\nEOF\n", 2, "ls 1>>(cat) 0<<EOF[DP@1] ; cat[S@1]", 1 },
	{ "for i in a; do ls; done > $(echo f)", 3, "for:i|a 1>$(echo f)[D] ; ls 1>$(echo f)[DC] ; echo|f[S@1]", 1 },
	{ "[[ -f x\n]]", 1, "cond:-f|x", 1 },
	{ "[[ -f x", 1, "cond:-f|x", 0 },
	{ "[[ x & y ]]", 1, "cond:x", 0 },
	{ "echo $'\\x41\\102\\u00e9\\t'", 1, "echo|ABé\t", 1 },
	{ "echo $'it\\'s'", 1, "echo|it's", 1 },
	{ "echo $'a\\0b'", 1, "echo|a", 0 },
	{ "echo $'\\q'", 1, "echo|\\q", 1 },
	{ "echo $'\\x'", 1, "echo|\\x", 1 },
	{ "echo $'abc", 1, "echo|abc", 0 },
	{ "echo \"$'x'\"", 1, "echo|$'x'", 1 },
	{ "echo $\"hello\"", 1, "echo|hello", 1 },
	{ "r$'m' -rf /", 1, "rm|-rf|/", 1 },
	{ "select x in a b; do echo $x; break; done", 3, "select:x|a|b ; echo|$x[DC] ; break[C]", 1 },
	{ "coproc cat", 1, "cat[B]", 1 },
	{ "coproc NAME { cat; }", 1, "cat[PB@1]", 1 },
	{ "coproc ( ls )", 1, "ls[PB@1]", 1 },
	{ "time ls | wc -l", 2, "ls[T] ; wc|-l", 1 },
	{ "time -p ls", 1, "ls[T]", 1 },
	{ "! ls", 1, "ls[N]", 1 },
	{ "! ! ls", 1, "ls[N]", 1 },
	{ "! if a; then b; fi", 2, "a[NC] ; b[C]", 1 },
	{ "{ ls; pwd; } > out", 2, "ls 1>out[P@1] ; pwd 1>out[P@1]", 1 },
	{ "{ ls; }; { pwd; }", 2, "ls[P@1] ; pwd[P@1]", 1 },
	{ "{ ls }", 1, "ls|}[P@1]", 0 },
	{ "a=(1 $(id) 3) ls", 2, "a=(...) ls[D] ; id[S@1]", 1 },
	{ "arr+=(x y)", 1, "arr+=(...) ", 1 },
	{ "a=( 1\n2 )", 1, "a=(...) ", 1 },
	{ "a=( 1", 1, "a= ", 0 },
	{ "echo a=(1)", 1, "echo|a=", 0 },
	{ "x=1 f() { :; }", 1, "x=1 f", 0 },
	{ "while read l; do rm \"$l\"; done < list", 2, "read|l 0<list[C] ; rm|$l 0<list[DC]", 1 },
	{ "for f in *.txt; do mv \"$f\" \"${f%.txt}.md\"; done", 2, "for:f|*.txt[DG] ; mv|$f|${f%.txt}.md[DC]", 1 },
	{ "if true; then cd /; fi; ls", 3, "true[C] ; cd|/[C] ; ls", 1 },
	{ "{ echo; } <<EOF\nbody $(id)\nEOF\n", 2, "echo 0<<EOF[DP@1] ; id[S@1]", 1 },
	{ "for i in 1 2; do echo $i; done <<EOF\nx\nEOF\n", 2, "for:i|1|2 0<<EOF ; echo|$i[DC]", 1 },
};

/* The same constructs as dash reads them: (( is two subshells, [[ a
 * command, $'x' the word $x; function, select and coproc plain words. */
static const struct row posix_rows[] = {
	{ "((reboot))", 1, "reboot[P@2]", 1 },
	{ "((a) b)", 1, "a[P@2]", 0 },
	{ "(( i++ ))", 1, "i++[P@2]", 1 },
	{ "[[ -f x ]]", 1, "[[|-f|x|]]", 1 },
	{ "echo $'rm'", 1, "echo|$rm", 1 },
	{ "echo $\"x\"", 1, "echo|$x", 1 },
	{ "function f { ls; }", 1, "function|f|{|ls", 0 },
	{ "select x in a; do ls; done", 1, "select|x|in|a", 0 },
	{ "coproc ls", 1, "coproc|ls", 1 },
	{ "time ls", 1, "time|ls", 1 },
	{ "a=(1 2)", 1, "a= ", 0 },
	{ "f() { ls; }; f", 3, "func:f ; ls[PF@1] ; f", 1 },
	{ "for i in 1 2; do echo $i; done", 2, "for:i|1|2 ; echo|$i[DC]", 1 },
	{ "case x in a) ls;; esac", 2, "case:x|a ; ls[C]", 1 },
	{ "if a; then b; fi", 2, "a[C] ; b[C]", 1 },
	{ "echo $((1 + 2))", 1, "echo|$((1 + 2))[D]", 1 },
};

/* The operator's spelling in a rendering. */
static const char *
test_shparse_opname(enum sh_redir_op op)
{
	static const char *const names[] = {
		"<", ">", ">>", ">|", "<&", ">&", "<>", "<<", "<<<", "&>", "&>>"
	};

	if ((size_t)op >= sizeof names / sizeof names[0])
		return ("?");
	return (names[op]);
}

/* Appends a string to a growing buffer. */
static void
test_shparse_cat(char **buf, size_t *len, const char *s)
{
	size_t	n = strlen(s);

	*buf = xrealloc(*buf, *len + n + 1);
	memcpy(*buf + *len, s, n + 1);
	*len += n;
}

/* Renders a parse as described above rows[]; the caller frees it. */
static char *
test_shparse_render(const struct sh_parse *p)
{
	const struct sh_cmd	*c;
	char			*buf = xstrdup(""), *tmp;
	size_t			 len = 0, i, j;

	for (i = 0; i < p->ncmds; i++) {
		c = &p->cmds[i];
		if (i > 0)
			test_shparse_cat(&buf, &len, " ; ");
		for (j = 0; j < c->nassigns; j++) {
			test_shparse_cat(&buf, &len, c->assigns[j]);
			test_shparse_cat(&buf, &len, " ");
		}
		if (c->kind != SH_K_SIMPLE) {
			static const char *const kinds[] = { "", "for:",
			    "select:", "case:", "arith:", "cond:", "func:" };

			test_shparse_cat(&buf, &len, kinds[c->kind]);
		}
		for (j = 0; j < c->argc; j++) {
			if (j > 0)
				test_shparse_cat(&buf, &len, "|");
			test_shparse_cat(&buf, &len, c->argv[j]);
		}
		for (j = 0; j < c->nredirs; j++) {
			xasprintf(&tmp, " %d%s%s", c->redirs[j].fd,
			    test_shparse_opname(c->redirs[j].op),
			    c->redirs[j].target);
			test_shparse_cat(&buf, &len, tmp);
			free(tmp);
		}
		if (c->flags != 0 || c->depth != 0) {
			xasprintf(&tmp, "[%s%s%s%s%s%s%s%s%s%s",
			    (c->flags & SH_DYNAMIC) ? "D" : "",
			    (c->flags & SH_GLOB) ? "G" : "",
			    (c->flags & SH_SUBSTITUTED) ? "S" : "",
			    (c->flags & SH_SUBSHELL) ? "P" : "",
			    (c->flags & SH_NEGATED) ? "N" : "",
			    (c->flags & SH_TIMED) ? "T" : "",
			    (c->flags & SH_CONTROL) ? "C" : "",
			    (c->flags & SH_IN_FUNC) ? "F" : "",
			    (c->flags & SH_BACKGROUND) ? "B" : "",
			    (c->flags & SH_ENDLESS) ? "E" : "");
			test_shparse_cat(&buf, &len, tmp);
			free(tmp);
			if (c->depth != 0) {
				xasprintf(&tmp, "@%d", c->depth);
				test_shparse_cat(&buf, &len, tmp);
				free(tmp);
			}
			test_shparse_cat(&buf, &len, "]");
		}
	}
	return (buf);
}

/* Checks the invariants every parse keeps, whatever the input. */
static void
test_shparse_invariants(const struct sh_parse *p)
{
	const struct sh_cmd	*c;
	size_t			 i;

	assert_true(p->complete == 0 || p->complete == 1);
	assert_true(p->complete || p->why != NULL);
	for (i = 0; i < p->ncmds; i++) {
		c = &p->cmds[i];
		assert_non_null(c->argv);
		assert_null(c->argv[c->argc]);
		assert_non_null(c->assigns);
		assert_null(c->assigns[c->nassigns]);
		assert_true(c->nredirs == 0 || c->redirs != NULL);
		assert_true(c->depth >= 0 && c->depth <= SH_PARSE_DEPTH);
	}
}

/* Every row of a table, parsed as dialect. */
static void
test_shparse_rows(const struct row *table, size_t n, int dialect)
{
	struct sh_parse	 p;
	const struct row *r;
	char		*got;
	size_t		 i, bad = 0;

	for (i = 0; i < n; i++) {
		r = &table[i];
		assert_int_equal(sh_parse(r->src, strlen(r->src), dialect, &p),
		    0);
		test_shparse_invariants(&p);
		got = test_shparse_render(&p);
		if (p.ncmds != r->ncmds || strcmp(got, r->expect) != 0 ||
		    p.complete != r->complete) {
			print_error("row %zu: [%s]\n"
			    "  want %zu {%s} complete %d\n"
			    "  got  %zu {%s} complete %d (%s)\n", i, r->src,
			    r->ncmds, r->expect, r->complete, p.ncmds, got,
			    p.complete, p.why != NULL ? p.why : "");
			bad++;
		}
		free(got);
		sh_parse_release(&p);
	}
	assert_int_equal(bad, 0);
}

/* Every row of the bash table. */
static void
test_shparse_table(void **state)
{
	(void)state;
	test_shparse_rows(rows, sizeof rows / sizeof rows[0], SH_BASH);
}

/* Every row of the dash table. */
static void
test_shparse_posix(void **state)
{
	(void)state;
	test_shparse_rows(posix_rows, sizeof posix_rows / sizeof posix_rows[0],
	    SH_POSIX);
}

/* Each command knows its stage in its own pipeline. */
static void
test_shparse_pipepos(void **state)
{
	static const struct {
		const char	*src;
		unsigned	 pos[6];
	} t[] = {
		{ "echo / | xargs rm -rf", { 0, 1 } },
		{ "a | b | c; d", { 0, 1, 2, 0 } },
		{ "a | { b; c; } | d", { 0, 0, 0, 2 } },
		{ "echo $(a | b) | c", { 0, 0, 1, 1 } },
		{ "for i in 1; do a | b; done | c", { 0, 0, 1, 1 } },
	};
	struct sh_parse	p;
	size_t		i, k;

	(void)state;
	for (i = 0; i < sizeof t / sizeof t[0]; i++) {
		assert_int_equal(sh_parse(t[i].src, strlen(t[i].src), SH_BASH,
		    &p), 0);
		assert_true(p.complete);
		for (k = 0; k < p.ncmds; k++)
			if (p.cmds[k].pipepos != t[i].pos[k])
				fail_msg("%s: command %zu at stage %u, want %u",
				    t[i].src, k, p.cmds[k].pipepos, t[i].pos[k]);
		sh_parse_release(&p);
	}
}

/* Operators are reported wherever they appear. */
static void
test_shparse_ops(void **state)
{
	static const struct {
		const char	*src;
		unsigned	 ops;
	} t[] = {
		{ "ls", 0 },
		{ "a | b", SH_OP_PIPE },
		{ "a |& b", SH_OP_PIPE|SH_OP_PIPE_ERR },
		{ "a && b", SH_OP_AND },
		{ "a || b", SH_OP_OR },
		{ "a; b", SH_OP_SEQ },
		{ "a\nb", SH_OP_SEQ },
		{ "a;", 0 },
		{ "a\n", 0 },
		{ "a &", SH_OP_BG },
		{ "a & b", SH_OP_BG },
		{ "echo $(a | b)", SH_OP_PIPE },
		{ "(a && b) || c", SH_OP_AND|SH_OP_OR },
		{ "a &> f", 0 },
		{ "a 2>&1", 0 },
		{ "a && b || c; d & e | f",
		    SH_OP_AND|SH_OP_OR|SH_OP_SEQ|SH_OP_BG|SH_OP_PIPE },
	};
	struct sh_parse	p;
	size_t		i;

	(void)state;
	for (i = 0; i < sizeof t / sizeof t[0]; i++) {
		assert_int_equal(sh_parse(t[i].src, strlen(t[i].src), SH_BASH, &p), 0);
		if (p.ops != t[i].ops)
			fail_msg("%s: ops %#x, want %#x", t[i].src, p.ops,
			    t[i].ops);
		assert_true(p.complete);
		sh_parse_release(&p);
	}
}

/* Word flags tell an expanded "$HOME" from a literal '$HOME'. */
static void
test_shparse_word_flags(void **state)
{
	struct sh_parse	 p;
	const char	*src = "rm \"$HOME\" '$HOME' a\\b * 'x'";

	(void)state;
	assert_int_equal(sh_parse(src, strlen(src), SH_BASH, &p), 0);
	assert_int_equal(p.ncmds, 1);
	assert_int_equal(p.cmds[0].argc, 6);
	assert_int_equal(p.cmds[0].argflags[0], 0);
	assert_int_equal(p.cmds[0].argflags[1], SH_W_DYNAMIC|SH_W_QUOTED);
	assert_int_equal(p.cmds[0].argflags[2], SH_W_QUOTED);
	assert_int_equal(p.cmds[0].argflags[3], SH_W_QUOTED);
	assert_int_equal(p.cmds[0].argflags[4], SH_W_GLOB|SH_W_DYNAMIC);
	assert_int_equal(p.cmds[0].argflags[5], SH_W_QUOTED);
	sh_parse_release(&p);
}

/* Here-doc bodies are kept, stripped for <<-, and not run as commands. */
static void
test_shparse_heredoc_body(void **state)
{
	struct sh_parse	 p;
	const char	*src = "cat <<-EOF >f\n\tline 1\n\t\tline 2\n\tEOF\n"
	    "bash <<'X'\nrm -rf /\nX\n";

	(void)state;
	assert_int_equal(sh_parse(src, strlen(src), SH_BASH, &p), 0);
	assert_true(p.complete);
	assert_int_equal(p.ncmds, 2);
	assert_int_equal(p.cmds[0].nredirs, 2);
	assert_int_equal(p.cmds[0].redirs[0].op, SH_R_HEREDOC);
	assert_string_equal(p.cmds[0].redirs[0].target, "EOF");
	assert_string_equal(p.cmds[0].redirs[0].body, "line 1\nline 2\n");
	assert_null(p.cmds[0].redirs[1].body);
	assert_string_equal(p.cmds[1].argv[0], "bash");
	assert_string_equal(p.cmds[1].redirs[0].body, "rm -rf /\n");
	assert_int_equal(p.cmds[1].redirs[0].dynamic, 0);
	sh_parse_release(&p);
}

/* Incomplete parses say why and where. */
static void
test_shparse_incomplete_reason(void **state)
{
	struct sh_parse	 p;
	const char	*src = "ls; echo 'x";

	(void)state;
	assert_int_equal(sh_parse(src, strlen(src), SH_BASH, &p), 0);
	assert_false(p.complete);
	assert_string_equal(p.why, "unterminated '");
	assert_int_equal(p.where, strlen(src));
	sh_parse_release(&p);
}

/* A NUL byte cannot reach sh -c intact: never parsed. */
static void
test_shparse_nul_byte(void **state)
{
	struct sh_parse	p;

	(void)state;
	assert_int_equal(sh_parse("ls\0rm -rf /", 11, SH_BASH, &p), 0);
	assert_false(p.complete);
	assert_int_equal(p.ncmds, 0);
	sh_parse_release(&p);
	assert_int_equal(sh_parse(NULL, 5, SH_BASH, &p), 0);
	assert_true(p.complete);
	assert_int_equal(p.ncmds, 0);
	sh_parse_release(&p);
	sh_parse_release(NULL);
}

/* Long but legal input parses completely; over 1 MiB is refused. */
static void
test_shparse_long_input(void **state)
{
	struct sh_parse	 p;
	char		*buf;
	size_t		 i, n = 200000;

	(void)state;
	buf = xmalloc(n * 5 + 1);
	for (i = 0; i < n; i++)
		memcpy(buf + i * 5, "ls;\n ", 5);
	buf[n * 5] = '\0';
	assert_int_equal(sh_parse(buf, n * 5, SH_BASH, &p), 0);
	assert_true(p.complete);
	assert_int_equal(p.ncmds, n);
	sh_parse_release(&p);
	free(buf);

	n = SH_PARSE_MAX + 1;
	buf = xmalloc(n);
	memset(buf, 'a', n);
	assert_int_equal(sh_parse(buf, n, SH_BASH, &p), -1);
	assert_false(p.complete);
	sh_parse_release(&p);
	memset(buf, 'a', SH_PARSE_MAX);		/* one long word is fine */
	assert_int_equal(sh_parse(buf, SH_PARSE_MAX, SH_BASH, &p), 0);
	assert_true(p.complete);
	assert_int_equal(p.ncmds, 1);
	assert_int_equal(strlen(p.cmds[0].argv[0]), SH_PARSE_MAX);
	sh_parse_release(&p);
	free(buf);
}

/* Builds n nested levels of open + "ls" + close. */
static char *
test_shparse_nest(int n, const char *open, const char *close)
{
	char	*buf;
	size_t	 lo = strlen(open), lc = strlen(close), len = 0;
	int	 i;

	buf = xmalloc(n * (lo + lc) + 3);
	for (i = 0; i < n; i++, len += lo)
		memcpy(buf + len, open, lo);
	memcpy(buf + len, "ls", 2);
	len += 2;
	for (i = 0; i < n; i++, len += lc)
		memcpy(buf + len, close, lc);
	buf[len] = '\0';
	return (buf);
}

/* 64 levels are parsed, 65 are absurd, and a million is not a crash. */
static void
test_shparse_deep_nesting(void **state)
{
	static const char *const kinds[][2] = {
		{ "echo $(", ")" }, { "( ", " )" }, { "{ ", "; }" },
		{ "cat <(", ")" }, { "\"$(", ")\"" },
	};
	struct sh_parse	 p;
	char		*buf;
	size_t		 k;

	(void)state;
	for (k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
		buf = test_shparse_nest(SH_PARSE_DEPTH, kinds[k][0],
		    kinds[k][1]);
		assert_int_equal(sh_parse(buf, strlen(buf), SH_BASH, &p), 0);
		if (!p.complete)
			fail_msg("%s: %s", kinds[k][0], p.why);
		assert_int_equal(p.cmds[p.ncmds - 1].depth, SH_PARSE_DEPTH);
		sh_parse_release(&p);
		free(buf);

		buf = test_shparse_nest(SH_PARSE_DEPTH + 1, kinds[k][0],
		    kinds[k][1]);
		assert_int_equal(sh_parse(buf, strlen(buf), SH_BASH, &p), -1);
		assert_false(p.complete);
		sh_parse_release(&p);
		free(buf);

		buf = test_shparse_nest(100000, kinds[k][0], kinds[k][1]);
		assert_int_equal(sh_parse(buf, strlen(buf), SH_BASH, &p), -1);
		sh_parse_release(&p);
		free(buf);
	}
}

/*
 * "$((" that turns out to be a substitution of a subshell, nested: each
 * level is decided by a scan, not by parsing twice (which doubled the
 * work at every level: 2^64 at the nesting limit).
 */
static void
test_shparse_arith_or_subshell(void **state)
{
	struct sh_parse	 p;
	char		*buf;

	(void)state;
	buf = test_shparse_nest(20, "$((", ") )");
	assert_int_equal(sh_parse(buf, strlen(buf), SH_BASH, &p), 0);
	assert_true(p.complete);
	assert_int_equal(p.ncmds, 21);	/* each level's word, then ls */
	assert_string_equal(p.cmds[20].argv[0], "ls");
	sh_parse_release(&p);
	free(buf);
	buf = test_shparse_nest(SH_PARSE_DEPTH, "$((", ") )");
	assert_int_equal(sh_parse(buf, strlen(buf), SH_BASH, &p), -1);
	sh_parse_release(&p);
	free(buf);
	/* "((((ls) )) )": a subshell around "(((ls) ))", which ends in "))"
	 * and so is arithmetic, as bash reads it: ls is never run. */
	buf = test_shparse_nest(2, "((", ") )");
	assert_int_equal(sh_parse(buf, strlen(buf), SH_BASH, &p), 0);
	assert_true(p.complete);
	assert_int_equal(p.ncmds, 1);
	assert_int_equal(p.cmds[0].kind, SH_K_ARITH);
	sh_parse_release(&p);
	free(buf);
}

/* Backticks nest through escaping: 2^n backslashes, so only a few. */
static void
test_shparse_backtick_nesting(void **state)
{
	struct sh_parse	 p;
	const char	*src = "echo `a \\`b \\\\\\`c\\\\\\`\\``";

	(void)state;
	assert_int_equal(sh_parse(src, strlen(src), SH_BASH, &p), 0);
	assert_true(p.complete);
	assert_int_equal(p.ncmds, 4);
	assert_string_equal(p.cmds[3].argv[0], "c");
	assert_int_equal(p.cmds[3].depth, 3);
	sh_parse_release(&p);
}

/* A small deterministic generator for the no-crash loop. */
static uint32_t
test_shparse_rand(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return (*s);
}

/* Random bytes, and random shell-ish tokens: return, free, never crash. */
static void
test_shparse_random_no_crash(void **state)
{
	static const char *const toks[] = {
		" ", "\n", "a", "ls", "'", "\"", "\\", "`", "$", "$(", "((",
		"(", ")", "{", "}", "{ ", " }", ";", ";;", "&", "&&", "|",
		"||", "|&", "<", ">", ">>", "<<", "<<-", "<<<", "EOF",
		"\nEOF\n",
		"2>&1", "&>", "<(", ">(", "${", "$((", "#", "=", "A=", "*",
		"~", "if ", "then ", "fi", "for ", "case ", "!", "time ",
		"\\\n", "\t", "$'", "\xff", "[[", "-", "x", "<&", ">|", "<>",
		"while ", "until ", "do ", "done", "in ", "esac", "elif ",
		"else ", "select ", "function ", "coproc ", "]]", "f()", "))",
		"=~", "\\x41", "a=(", ";&", ";;&", "{ ", "for ((", " in ",
	};
	struct sh_parse	 p;
	char		 buf[256];
	uint32_t	 seed = 0x2545f491;
	size_t		 len, i, ntok = sizeof toks / sizeof toks[0], tl;
	int		 iter;

	(void)state;
	for (iter = 0; iter < 4000; iter++) {
		len = test_shparse_rand(&seed) % sizeof buf;
		for (i = 0; i < len; i++)
			buf[i] = (char)test_shparse_rand(&seed);
		sh_parse(buf, len, iter & 1, &p);
		test_shparse_invariants(&p);
		sh_parse_release(&p);
	}
	for (iter = 0; iter < 20000; iter++) {
		len = 0;
		while (len < sizeof buf - 16 &&
		    test_shparse_rand(&seed) % 24 != 0) {
			tl = strlen(toks[test_shparse_rand(&seed) % ntok]);
			memcpy(buf + len, toks[seed % ntok], tl);
			len += tl;
		}
		sh_parse(buf, len, iter & 1, &p);
		test_shparse_invariants(&p);
		sh_parse_release(&p);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shparse_table),
		cmocka_unit_test(test_shparse_posix),
		cmocka_unit_test(test_shparse_pipepos),
		cmocka_unit_test(test_shparse_arith_or_subshell),
		cmocka_unit_test(test_shparse_ops),
		cmocka_unit_test(test_shparse_word_flags),
		cmocka_unit_test(test_shparse_heredoc_body),
		cmocka_unit_test(test_shparse_incomplete_reason),
		cmocka_unit_test(test_shparse_nul_byte),
		cmocka_unit_test(test_shparse_long_input),
		cmocka_unit_test(test_shparse_deep_nesting),
		cmocka_unit_test(test_shparse_backtick_nesting),
		cmocka_unit_test(test_shparse_random_no_crash),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
