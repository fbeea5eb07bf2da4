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
#define UNK	CLS_UNKNOWN
#define DES	CLS_DESTRUCTIVE
#define BLK	CLS_BLOCKED

static const struct row rows[] = {
	/* xargs fed a root or a home. */
	{ "echo / | xargs rm -rf", A, BLK, "blocked:rm-root" },
	{ "echo /usr | xargs rm -rf", A, BLK, "blocked:rm-root" },
	{ "echo ~ | xargs rm -rf", A, BLK, "blocked:rm-root" },
	{ "echo $HOME | xargs -I{} rm -rf {}", A, BLK, "blocked:rm-root" },
	{ "echo a / b | xargs rm -rf", A, BLK, "blocked:rm-root" },
	{ "echo -n / | xargs -0 rm -rf", A, BLK, "blocked:rm-root" },
	{ "printf '%s\\n' ~ | xargs rm -rf", A, BLK, "blocked:rm-root" },
	{ "printf '/\\0' | xargs -0 rm -rf", A, BLK, "blocked:rm-root" },
	{ "printf 'a\\n/etc\\n' | xargs rm -r", A, BLK, "blocked:rm-root" },
	{ "xargs rm -rf <<< /", B, BLK, "blocked:rm-root" },
	{ "xargs rm -rf <<< '/home'", B, BLK, "blocked:rm-root" },
	{ "xargs -0 rm -rf < <(printf '/\\0')", B, BLK, "blocked:rm-root" },
	{ "xargs rm -rf <<EOF\n/\nEOF\n", A, BLK, "blocked:rm-root" },
	{ "find / -maxdepth 0 -print0 | xargs -0 rm -rf", A, BLK,
	    "blocked:rm-root" },
	{ "find /etc -name '*.conf' | xargs rm -f -r", A, BLK,
	    "blocked:rm-root" },
	{ "find ~ -type d | xargs rm -rf", A, BLK, "blocked:rm-root" },
	{ "cat <<< / | xargs rm -rf", B, BLK, "blocked:rm-root" },
	{ "pwd | xargs rm -rf", A, DES, "destructive:" },
	{ "cd / && pwd | xargs rm -rf", A, BLK, "blocked:rm-root" },
	{ "echo / | sudo xargs rm -rf", A, BLK, "blocked:rm-root" },
	{ "echo / | xargs chmod -R 777", A, BLK, "blocked:rm-root" },
	{ "echo /usr | xargs chown -R nobody", A, BLK, "blocked:rm-root" },
	{ "echo / | xargs shred", A, BLK, "blocked:rm-root" },
	{ "echo / | xargs -I{} find {} -delete", A, BLK, "blocked:" },
	{ "for i in 1; do echo / | xargs rm -rf; done", A, BLK,
	    "blocked:rm-root" },
	{ "if true; then echo ~ | xargs rm -rf; fi", A, BLK,
	    "blocked:rm-root" },
	/* Substitutions that print a literal. */
	{ "rm -rf $(echo /)", A, BLK, "blocked:rm-root" },
	{ "rm -rf \"$(echo /)\"", A, BLK, "blocked:rm-root" },
	{ "rm -rf `echo ~`", A, BLK, "blocked:rm-root" },
	{ "rm -rf $(printf %s /etc)", A, BLK, "blocked:rm-root" },
	{ "rm -rf \"$(dirname /x)\"", A, BLK, "blocked:rm-root" },
	{ "rm -rf $(dirname /usr/x)", A, BLK, "blocked:rm-root" },
	{ "rm -rf $(realpath /)", A, BLK, "blocked:rm-root" },
	{ "cd / && rm -rf $(pwd)", A, BLK, "blocked:rm-root" },
	{ "sudo rm -rf $(echo /)", A, BLK, "blocked:rm-root" },
	{ "chmod -R 777 $(echo /)", A, BLK, "blocked:" },
	{ "rm -rf $(echo /)/", A, BLK, "blocked:" },
	/* cd to the root, a system directory or a home, then delete all. */
	{ "cd ~ && rm -rf *", A, BLK, "blocked:rm-root" },
	{ "cd ~; rm -rf .", A, BLK, "blocked:rm-root" },
	{ "cd && rm -rf ./*", A, BLK, "blocked:rm-root" },
	{ "cd $HOME && rm -rf .", A, BLK, "blocked:rm-root" },
	{ "cd \"$HOME\" && rm -rf -- *", A, BLK, "blocked:rm-root" },
	{ "cd ${HOME} && rm -rf .*", A, BLK, "blocked:rm-root" },
	{ "cd / ; rm -rf -- *", A, BLK, "blocked:rm-root" },
	{ "cd / && rm -rf .", A, BLK, "blocked:rm-root" },
	{ "cd /etc; rm -rf .", A, BLK, "blocked:rm-root" },
	{ "cd /usr && rm -rf ./*", A, BLK, "blocked:rm-root" },
	{ "pushd / && rm -rf *", A, BLK, "blocked:rm-root" },
	{ "pushd ~ && rm -rf *", A, BLK, "blocked:rm-root" },
	{ "cd ~ && sudo rm -rf *", A, BLK, "blocked:rm-root" },
	{ "if true; then cd ~; fi; rm -rf *", A, BLK, "blocked:rm-root" },
	{ "cd ~ && cd build && rm -rf *", A, DES, "destructive:rm" },
	{ "cd ~ && rm -rf build", A, DES, "destructive:rm" },
	{ "cd ~ && rm -rf '*'", A, DES, "destructive:rm" },
	{ "cd ~ && ls *", A, RO, "read_only:" },
	{ "cd build && rm -rf *", A, DES, "destructive:rm" },
	/* Fork bombs in functions, loops and interpreters. */
	{ ":(){ :|:& };:", A, BLK, "blocked:fork-bomb" },
	{ "f(){ f|f& };f", A, BLK, "blocked:fork-bomb" },
	{ "f() { f | f & }; f", A, BLK, "blocked:fork-bomb" },
	{ "bomb() { bomb | bomb & }; bomb", A, BLK, "blocked:fork-bomb" },
	{ "function f { f|f & }; f", B, BLK, "blocked:fork-bomb" },
	{ "f() { f & f; }; f", A, BLK, "blocked:fork-bomb" },
	{ "f() { f | f; }; f", A, BLK, "blocked:fork-bomb" },
	{ "bash -c ':(){ :|:& };:'", A, BLK, "blocked:fork-bomb" },
	{ "sh -c 'f(){ f|f& };f'", A, BLK, "blocked:fork-bomb" },
	{ "eval ':(){ :|:& };:'", A, BLK, "blocked:fork-bomb" },
	{ "f(){ 'f'|\"f\"& };f", A, BLK, "blocked:fork-bomb" },
	{ "while :; do sleep 100 & done", A, BLK, "blocked:fork-bomb" },
	{ "while true; do sh -c 'sleep 9' & done", A, BLK,
	    "blocked:fork-bomb" },
	{ "until false; do yes > /dev/null & done", A, BLK,
	    "blocked:fork-bomb" },
	{ "while [ 1 ]; do sleep 1 & done", A, BLK, "blocked:fork-bomb" },
	{ "for ((;;)); do sleep 9 & done", B, BLK, "blocked:fork-bomb" },
	{ "for ((i = 0; ; i++)); do sleep 9 & done", B, BLK,
	    "blocked:fork-bomb" },
	{ "while :; do (sleep 9 &); done", A, BLK, "blocked:fork-bomb" },
	{ "perl -e 'fork while 1'", A, BLK, "blocked:fork-bomb" },
	{ "perl -e 'while(1){fork}'", A, BLK, "blocked:fork-bomb" },
	{ "perl -e 'fork while fork'", A, BLK, "blocked:fork-bomb" },
	{ "python3 -c 'import os\nwhile True: os.fork()'", A, BLK,
	    "blocked:fork-bomb" },
	{ "python -c \"import os; [os.fork() for _ in iter(int, 1)]\"", A,
	    BLK, "blocked:fork-bomb" },
	{ "python3 -c 'import subprocess\nwhile 1: subprocess.Popen([\"sleep\","
	    " \"9\"])'", A, BLK, "blocked:fork-bomb" },
	{ "ruby -e 'loop { fork }'", A, BLK, "blocked:fork-bomb" },
	{ "ruby -e 'loop do fork end'", A, BLK, "blocked:fork-bomb" },
	{ "node -e 'while(true) require(\"child_process\").spawn(\"sleep\", "
	    "[\"9\"])'", A, BLK, "blocked:fork-bomb" },
	{ "node -e 'for(;;) require(\"child_process\").fork(__filename)'", A,
	    BLK, "blocked:fork-bomb" },
	{ "nice python3 -c 'import os\nwhile True: os.fork()'", A, BLK,
	    "blocked:fork-bomb" },
	/* Near misses: text, bounded loops, one fork. */
	{ "echo ':(){ :|:& };:'", A, RO, "read_only:echo" },
	{ "printf '%s\\n' ':(){ :|:& };:'", A, RO, "read_only:printf" },
	{ "grep -F ':(){ :|:& };:' notes.txt", A, RO, "read_only:grep" },
	{ "git commit -m \"fix :(){ :|:& };: detection\"", A, WR,
	    "write:git" },
	{ "echo \"f(){ f|f& };f\" > bomb.txt", A, WR, "redirect:write" },
	{ "f() { g | h & }; f", A, UNK, "unknown:command" },
	{ "f() { f; }", A, RO, "read_only:" },
	{ "f() { echo f & }; f", A, RO, "read_only:" },
	{ "while :; do date; sleep 1; done", A, RO, "read_only:" },
	{ "while :; do sleep 1; done &", A, RO, "read_only:" },
	{ "while true; do sleep 1 & wait; done", A, RO, "read_only:" },
	{ "for i in 1 2 3; do sleep 1 & done; wait", A, RO, "read_only:" },
	{ "while read l; do sleep 1 & done < f", A, RO, "read_only:" },
	{ "python3 -c 'import os; os.fork()'", A, UNK,
	    "unknown:interpreter" },
	{ "python3 -c 'while True: print(1)'", A, UNK,
	    "unknown:interpreter" },
	{ "perl -e 'print \"fork\"'", A, UNK, "unknown:interpreter" },
	{ "node -e 'setTimeout(() => 1, 1)'", A, UNK, "unknown:interpreter" },
	/* Moving into a system directory is destructive, not blocked. */
	{ "mv build/tool /usr/local/bin/", A, DES, "destructive:mv" },
	{ "mv x /etc/", A, DES, "destructive:mv" },
	{ "mv a.conf /etc/nginx/", A, DES, "destructive:mv" },
	{ "mv -t /usr/bin tool", A, DES, "destructive:mv" },
	{ "mv --target-directory=/usr/bin tool", A, DES, "destructive:mv" },
	{ "mv /etc /tmp/x", A, BLK, "blocked:mv-root" },
	{ "mv /usr/* /tmp", A, BLK, "blocked:mv-root" },
	{ "mv ~ /tmp/h", A, BLK, "blocked:mv-root" },
	{ "mv -t /tmp /bin", A, BLK, "blocked:mv-root" },
	{ "mv a b", A, WR, "write:mv" },
	/* Unknown producers stay destructive. */
	{ "cat list.txt | xargs rm -rf", A, DES, "destructive:" },
	{ "ls | xargs rm -rf", A, DES, "destructive:" },
	{ "echo build | xargs rm -rf", A, DES, "destructive:" },
	{ "echo $DIR | xargs rm -rf", A, DES, "destructive:" },
	{ "find . -name '*.o' | xargs rm -f", A, DES, "destructive:" },
	{ "echo / | xargs ls", A, RO, "read_only:" },
	{ "echo / | xargs rm", A, DES, "destructive:" },
	{ "rm -rf $(echo build)", A, DES, "destructive:rm" },
	{ "rm -rf $(cat dirs)", A, DES, "destructive:rm" },
	{ "echo $(echo /)", A, RO, "read_only:echo" },
	{ "xargs rm -rf <<< build", B, DES, "destructive:" },
};

/* Every row, as its shell reads it. */
static void
test_classify_flow_table(void **state)
{
	struct cls_policy	 p;
	struct cls_verdict	 v;
	size_t			 i, bad = 0;

	(void)state;
	for (i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		memset(&p, 0, sizeof p);
		p.shell = rows[i].shell;
		cls_classify(&p, rows[i].src, strlen(rows[i].src), "/srv/ws",
		    &v);
		if (v.risk != rows[i].risk || v.rule == NULL ||
		    strncmp(v.rule, rows[i].rule, strlen(rows[i].rule)) != 0) {
			print_error("row %zu: %s\n  want %s %s, got %s %s (%s)\n",
			    i, rows[i].src, cls_risk_name(rows[i].risk),
			    rows[i].rule, cls_risk_name(v.risk), v.rule,
			    v.reason);
			bad++;
		}
		cls_verdict_release(&v);
	}
	print_message("classify flow table: %zu rows\n",
	    sizeof rows / sizeof rows[0]);
	assert_int_equal(bad, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classify_flow_table),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
