/*
 * classify, catastrophes through data flow and fork loops: a recursive
 * delete fed a root or home by xargs, a here-string, a substitution or a
 * cd; functions, loops and interpreter one-liners that fork forever;
 * and the near misses that must stay lower (a fork bomb that is only
 * text, a file moved into a system directory, a producer whose output is
 * not known). Only classified: nothing here is ever run.
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
#define UNK	CLS_UNKNOWN
#define DES	CLS_DESTRUCTIVE
#define BLK	CLS_BLOCKED

static const struct row rows[] = {
	/* xargs fed a root or a home. */
	{ "echo / | xargs rm -rf", BLK, "blocked:rm-root", A },
	{ "echo /usr | xargs rm -rf", BLK, "blocked:rm-root", A },
	{ "echo ~ | xargs rm -rf", BLK, "blocked:rm-root", A },
	{ "echo $HOME | xargs -I{} rm -rf {}", BLK, "blocked:rm-root", A },
	{ "echo a / b | xargs rm -rf", BLK, "blocked:rm-root", A },
	{ "echo -n / | xargs -0 rm -rf", BLK, "blocked:rm-root", A },
	{ "printf '%s\\n' ~ | xargs rm -rf", BLK, "blocked:rm-root", A },
	{ "printf '/\\0' | xargs -0 rm -rf", BLK, "blocked:rm-root", A },
	{ "printf 'a\\n/etc\\n' | xargs rm -r", BLK, "blocked:rm-root", A },
	{ "xargs rm -rf <<< /", BLK, "blocked:rm-root", B },
	{ "xargs rm -rf <<< '/home'", BLK, "blocked:rm-root", B },
	{ "xargs -0 rm -rf < <(printf '/\\0')", BLK, "blocked:rm-root", B },
	{ "xargs rm -rf <<EOF\n/\nEOF\n", BLK, "blocked:rm-root", A },
	{ "find / -maxdepth 0 -print0 | xargs -0 rm -rf",
	    BLK, "blocked:rm-root", A },
	{ "find /etc -name '*.conf' | xargs rm -f -r",
	    BLK, "blocked:rm-root", A },
	{ "find ~ -type d | xargs rm -rf", BLK, "blocked:rm-root", A },
	{ "cat <<< / | xargs rm -rf", BLK, "blocked:rm-root", B },
	{ "pwd | xargs rm -rf", DES, "destructive:", A },
	{ "cd / && pwd | xargs rm -rf", BLK, "blocked:rm-root", A },
	{ "echo / | sudo xargs rm -rf", BLK, "blocked:rm-root", A },
	{ "echo / | xargs chmod -R 777", BLK, "blocked:rm-root", A },
	{ "echo /usr | xargs chown -R nobody", BLK, "blocked:rm-root", A },
	{ "echo / | xargs shred", BLK, "blocked:rm-root", A },
	{ "echo / | xargs -I{} find {} -delete", BLK, "blocked:", A },
	{ "for i in 1; do echo / | xargs rm -rf; done",
	    BLK, "blocked:rm-root", A },
	{ "if true; then echo ~ | xargs rm -rf; fi",
	    BLK, "blocked:rm-root", A },
	/* Substitutions that print a literal. */
	{ "rm -rf $(echo /)", BLK, "blocked:rm-root", A },
	{ "rm -rf \"$(echo /)\"", BLK, "blocked:rm-root", A },
	{ "rm -rf `echo ~`", BLK, "blocked:rm-root", A },
	{ "rm -rf $(printf %s /etc)", BLK, "blocked:rm-root", A },
	{ "rm -rf \"$(dirname /x)\"", BLK, "blocked:rm-root", A },
	{ "rm -rf $(dirname /usr/x)", BLK, "blocked:rm-root", A },
	{ "rm -rf $(realpath /)", BLK, "blocked:rm-root", A },
	{ "cd / && rm -rf $(pwd)", BLK, "blocked:rm-root", A },
	{ "sudo rm -rf $(echo /)", BLK, "blocked:rm-root", A },
	{ "chmod -R 777 $(echo /)", BLK, "blocked:", A },
	{ "rm -rf $(echo /)/", BLK, "blocked:", A },
	/* cd to the root, a system directory or a home, then delete all. */
	{ "cd ~ && rm -rf *", BLK, "blocked:rm-root", A },
	{ "cd ~; rm -rf .", BLK, "blocked:rm-root", A },
	{ "cd && rm -rf ./*", BLK, "blocked:rm-root", A },
	{ "cd $HOME && rm -rf .", BLK, "blocked:rm-root", A },
	{ "cd \"$HOME\" && rm -rf -- *", BLK, "blocked:rm-root", A },
	{ "cd ${HOME} && rm -rf .*", BLK, "blocked:rm-root", A },
	{ "cd / ; rm -rf -- *", BLK, "blocked:rm-root", A },
	{ "cd / && rm -rf .", BLK, "blocked:rm-root", A },
	{ "cd /etc; rm -rf .", BLK, "blocked:rm-root", A },
	{ "cd /usr && rm -rf ./*", BLK, "blocked:rm-root", A },
	{ "pushd / && rm -rf *", BLK, "blocked:rm-root", A },
	{ "pushd ~ && rm -rf *", BLK, "blocked:rm-root", A },
	{ "cd ~ && sudo rm -rf *", BLK, "blocked:rm-root", A },
	{ "if true; then cd ~; fi; rm -rf *", BLK, "blocked:rm-root", A },
	{ "cd ~ && cd build && rm -rf *", DES, "destructive:rm", A },
	{ "cd ~ && rm -rf build", DES, "destructive:rm", A },
	{ "cd ~ && rm -rf '*'", DES, "destructive:rm", A },
	{ "cd ~ && ls *", RO, "read_only:", A },
	{ "cd build && rm -rf *", DES, "destructive:rm", A },
	/* Fork bombs in functions, loops and interpreters. */
	{ ":(){ :|:& };:", BLK, "blocked:fork-bomb", A },
	{ "f(){ f|f& };f", BLK, "blocked:fork-bomb", A },
	{ "f() { f | f & }; f", BLK, "blocked:fork-bomb", A },
	{ "bomb() { bomb | bomb & }; bomb", BLK, "blocked:fork-bomb", A },
	{ "function f { f|f & }; f", BLK, "blocked:fork-bomb", B },
	{ "f() { f & f; }; f", BLK, "blocked:fork-bomb", A },
	{ "f() { f | f; }; f", BLK, "blocked:fork-bomb", A },
	{ "bash -c ':(){ :|:& };:'", BLK, "blocked:fork-bomb", A },
	{ "sh -c 'f(){ f|f& };f'", BLK, "blocked:fork-bomb", A },
	{ "eval ':(){ :|:& };:'", BLK, "blocked:fork-bomb", A },
	{ "f(){ 'f'|\"f\"& };f", BLK, "blocked:fork-bomb", A },
	{ "while :; do sleep 100 & done", BLK, "blocked:fork-bomb", A },
	{ "while true; do sh -c 'sleep 9' & done",
	    BLK, "blocked:fork-bomb", A },
	{ "until false; do yes > /dev/null & done",
	    BLK, "blocked:fork-bomb", A },
	{ "while [ 1 ]; do sleep 1 & done", BLK, "blocked:fork-bomb", A },
	{ "for ((;;)); do sleep 9 & done", BLK, "blocked:fork-bomb", B },
	{ "for ((i = 0; ; i++)); do sleep 9 & done",
	    BLK, "blocked:fork-bomb", B },
	{ "while :; do (sleep 9 &); done", BLK, "blocked:fork-bomb", A },
	{ "perl -e 'fork while 1'", BLK, "blocked:fork-bomb", A },
	{ "perl -e 'while(1){fork}'", BLK, "blocked:fork-bomb", A },
	{ "perl -e 'fork while fork'", BLK, "blocked:fork-bomb", A },
	{ "python3 -c 'import os\nwhile True: os.fork()'",
	    BLK, "blocked:fork-bomb", A },
	{ "python -c \"import os; [os.fork() for _ in iter(int, 1)]\"",
	    BLK, "blocked:fork-bomb", A },
	{ "python3 -c 'import subprocess\nwhile 1: subprocess.Popen([\"sleep\","
	    " \"9\"])'", BLK, "blocked:fork-bomb", A },
	{ "ruby -e 'loop { fork }'", BLK, "blocked:fork-bomb", A },
	{ "ruby -e 'loop do fork end'", BLK, "blocked:fork-bomb", A },
	{ "node -e 'while(true) require(\"child_process\").spawn(\"sleep\", "
	    "[\"9\"])'", BLK, "blocked:fork-bomb", A },
	{ "node -e 'for(;;) require(\"child_process\").fork(__filename)'",
	    BLK, "blocked:fork-bomb", A },
	{ "nice python3 -c 'import os\nwhile True: os.fork()'",
	    BLK, "blocked:fork-bomb", A },
	/* Near misses: text, bounded loops, one fork. */
	{ "echo ':(){ :|:& };:'", RO, "read_only:echo", A },
	{ "printf '%s\\n' ':(){ :|:& };:'", RO, "read_only:printf", A },
	{ "grep -F ':(){ :|:& };:' notes.txt", RO, "read_only:grep", A },
	{ "git commit -m \"fix :(){ :|:& };: detection\"", WR, "write:git", A },
	{ "echo \"f(){ f|f& };f\" > bomb.txt", WR, "redirect:write", A },
	{ "f() { g | h & }; f", UNK, "unknown:command", A },
	{ "f() { f; }", RO, "read_only:", A },
	{ "f() { echo f & }; f", RO, "read_only:", A },
	{ "while :; do date; sleep 1; done", RO, "read_only:", A },
	{ "while :; do sleep 1; done &", RO, "read_only:", A },
	{ "while true; do sleep 1 & wait; done", RO, "read_only:", A },
	{ "for i in 1 2 3; do sleep 1 & done; wait", RO, "read_only:", A },
	{ "while read l; do sleep 1 & done < f", RO, "read_only:", A },
	{ "python3 -c 'import os; os.fork()'", UNK, "unknown:interpreter", A },
	{ "python3 -c 'while True: print(1)'", UNK, "unknown:interpreter", A },
	{ "perl -e 'print \"fork\"'", UNK, "unknown:interpreter", A },
	{ "node -e 'setTimeout(() => 1, 1)'", UNK, "unknown:interpreter", A },
	/* Moving into a system directory is destructive, not blocked. */
	{ "mv build/tool /usr/local/bin/", DES, "destructive:mv", A },
	{ "mv x /etc/", DES, "destructive:mv", A },
	{ "mv a.conf /etc/nginx/", DES, "destructive:mv", A },
	{ "mv -t /usr/bin tool", DES, "destructive:mv", A },
	{ "mv --target-directory=/usr/bin tool", DES, "destructive:mv", A },
	{ "mv /etc /tmp/x", BLK, "blocked:mv-root", A },
	{ "mv /usr/* /tmp", BLK, "blocked:mv-root", A },
	{ "mv ~ /tmp/h", BLK, "blocked:mv-root", A },
	{ "mv -t /tmp /bin", BLK, "blocked:mv-root", A },
	{ "mv a b", WR, "write:mv", A },
	/* Cross-checked against a second implementation's table. */
	{ "echo / | cat | xargs rm -rf", BLK, "blocked:rm-root", A },
	{ "xargs rm -rf <<< ~", BLK, "blocked:rm-root", B },
	{ "xargs rm -rf <<< \"$HOME\"", BLK, "blocked:rm-root", B },
	{ "echo / | xargs sudo rm -rf", BLK, "blocked:rm-root", A },
	{ "echo $HOME/ | xargs rm -rf", BLK, "blocked:rm-root", A },
	{ "echo $(date) / | xargs rm -rf", BLK, "blocked:rm-root", A },
	{ "echo /* | xargs rm -rf", BLK, "blocked:rm-root", A },
	{ "cd && pwd | xargs rm -rf", BLK, "blocked:rm-root", A },
	{ "cd / && ls | xargs rm -rf", BLK, "blocked:rm-root", A },
	{ "ls -d ~ | xargs rm -rf", BLK, "blocked:rm-root", A },
	{ "ls / | xargs rm -rf", DES, "destructive:", A },
	{ "echo / > out.txt | xargs rm -rf", DES, "destructive:", A },
	{ "echo / | xargs -a list rm -rf", DES, "destructive:", A },
	{ "rm -rf $(dirname ~/x)", BLK, "blocked:rm-root", A },
	{ "cd && rm -rf \"$(pwd)\"", BLK, "blocked:rm-root", A },
	{ "cd ~root && rm -rf *", BLK, "blocked:rm-root", A },
	{ "echo 'rm -rf /' | sh", BLK, "blocked:rm-root", A },
	{ "printf 'ls\\nrm -rf ~\\n' | bash", BLK, "blocked:rm-root", A },
	{ "bash <<< 'rm -rf /'", BLK, "blocked:rm-root", B },
	{ "sh <<EOF\nrm -rf /\nEOF\n", BLK, "blocked:rm-root", A },
	{ "echo ':(){ :|:& };:' | bash", BLK, "blocked:fork-bomb", A },
	{ "echo ls | sh", UNK, "unknown:shell", A },
	{ "echo 'rm -rf /' | sh -c 'cat'", RO, "read_only:", A },
	{ "perl -le 'fork until 0'", BLK, "blocked:fork-bomb", A },
	{ "perl -e '{fork; redo}'", BLK, "blocked:fork-bomb", A },
	{ "perl -e'fork while 1'", BLK, "blocked:fork-bomb", A },
	{ "php -r 'while(1) pcntl_fork();'", BLK, "blocked:fork-bomb", A },
	{ "perl -e 'print \"fork while 1\"'", UNK, "unknown:interpreter", A },
	{ "python3 -c '# while True: os.fork()\nprint(1)'", UNK,
	    "unknown:interpreter", A },
	{ "python3 script.py -c 'while True: os.fork()'", UNK,
	    "unknown:interpreter", A },
	{ "node -e 'console.log(\"for(;;) fork()\")'", UNK,
	    "unknown:interpreter", A },
	{ "while /bin/true; do sleep 9 & done", BLK, "blocked:fork-bomb", A },
	{ "while true; do sleep 9 & sleep 5; done", RO, "read_only:", A },
	{ "while :; do read x; sleep 9 & done", RO, "read_only:", A },
	{ "echo \\:\\(\\)\\{\\ \\:\\|\\:\\&\\ \\}\\;\\:", RO, "read_only:echo",
	    A },
	{ "ls # :(){ :|:& };:", RO, "read_only:ls", A },
	{ "python3 -c 'import os; os.system(\":(){ :|:& };:\")'", BLK,
	    "blocked:fork-bomb", A },
	{ "alias x=':(){ :|:& };:'", BLK, "blocked:fork-bomb", A },
	{ "trap ':(){ :|:& };:' EXIT", BLK, "blocked:fork-bomb", A },
	{ "cd /etc && mv ~/x.conf .", DES, "destructive:mv", A },
	{ "mv -T /tmp/x /etc", BLK, "blocked:mv-root", A },
	{ "mv x /tmp/", WR, "write:mv", A },
	{ "mv x /", DES, "destructive:mv", A },
	{ "mv x /home/u/", WR, "write:mv", A },
	{ "sudo python3 -c 'import os; os.system(\"rm -rf /\")'", BLK,
	    "blocked:rm-root", A },
	{ "sudo docker exec c rm -rf /", BLK, "blocked:rm-root", A },
	{ "sudo python3 -c 'print(1)'", DES, "wrapper:sudo", A },
	/* Unknown producers stay destructive. */
	{ "cat list.txt | xargs rm -rf", DES, "destructive:", A },
	{ "ls | xargs rm -rf", DES, "destructive:", A },
	{ "echo build | xargs rm -rf", DES, "destructive:", A },
	{ "echo $DIR | xargs rm -rf", DES, "destructive:", A },
	{ "find . -name '*.o' | xargs rm -f", DES, "destructive:", A },
	{ "echo / | xargs ls", RO, "read_only:", A },
	{ "echo / | xargs rm", DES, "destructive:", A },
	{ "rm -rf $(echo build)", DES, "destructive:rm", A },
	{ "rm -rf $(cat dirs)", DES, "destructive:rm", A },
	{ "echo $(echo /)", RO, "read_only:echo", A },
	{ "xargs rm -rf <<< build", DES, "destructive:", B },
};

/* Every row, as its shell reads it, from a cwd that is not / or a home. */
static void
test_classify_flow_table(void **state)
{
	(void)state;
	classify_rows(rows, sizeof rows / sizeof rows[0], "/srv/ws",
	    "classify flow table");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classify_flow_table),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
