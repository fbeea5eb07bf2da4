/* Skipping the shell: which commands are plain words, exec'd directly. */

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "logs/xmalloc.h"
#include "policy/shparse.h"
#include "worker/direct.h"

/* Longest command considered; longer ones keep the shell. */
#define DIRECT_MAX	4096

/*
 * Every builtin of dash and bash, and the keywords: these go through the
 * shell, whose own version may differ from a program of the same name
 * (echo -e, printf's escapes, test, true, kill, time...).
 */
static const char *const direct_builtins[] = {
	".", ":", "[", "[[", "]]", "!", "{", "}", "alias", "bg", "bind",
	"break", "builtin", "caller", "case", "cd", "chdir", "command",
	"compgen", "complete", "compopt", "continue", "coproc", "declare",
	"dirs", "disown", "do", "done", "echo", "elif", "else", "enable",
	"esac", "eval", "exec", "exit", "export", "false", "fc", "fg", "fi",
	"for", "function", "getopts", "hash", "help", "history", "if", "in",
	"jobs", "kill", "let", "local", "logout", "mapfile", "popd",
	"printf", "pushd", "pwd", "read", "readarray", "readonly", "return",
	"select", "set", "shift", "shopt", "source", "suspend", "test",
	"then", "time", "times", "trap", "true", "type", "typeset", "ulimit",
	"umask", "unalias", "unset", "until", "wait", "while", NULL
};

int
direct_builtin(const char *word)
{
	size_t	i;

	for (i = 0; direct_builtins[i] != NULL; i++)
		if (strcmp(word, direct_builtins[i]) == 0)
			return (1);
	return (0);
}

/* 1 for a byte that needs no quoting in sh and expands to nothing. */
static int
direct_plain(unsigned char c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9'))
		return (1);
	return (c != '\0' && strchr("-_./:,+=@%", c) != NULL);
}

/* 1 if shell is dash (through any links), remembered for the last one. */
static int
direct_shell_dash(const char *shell)
{
	static char	*last;
	static int	 last_ok;
	char		*real, *base;

	if (shell == NULL)
		return (0);
	if (last != NULL && strcmp(last, shell) == 0)
		return (last_ok);
	free(last);
	last = xstrdup(shell);
	last_ok = 0;
	if ((real = realpath(shell, NULL)) != NULL) {
		base = strrchr(real, '/');
		last_ok = strcmp(base != NULL ? base + 1 : real, "dash") == 0;
		free(real);
	}
	return (last_ok);
}

/* The parse of command when it is one plain simple command, else -1. */
static int
direct_parse(const char *command, struct sh_parse *p)
{
	const struct sh_cmd	*c;
	size_t			 i, len;

	memset(p, 0, sizeof *p);
	len = strlen(command);
	if (len == 0 || len > DIRECT_MAX)
		return (-1);
	/* sh -c takes such a text for its options and runs nothing. */
	if (command[0] == '-' || command[0] == '+')
		return (-1);
	for (i = 0; i < len; i++)
		if (!direct_plain((unsigned char)command[i]) &&
		    command[i] != ' ' && command[i] != '\t')
			return (-1);
	if (sh_parse(command, len, SH_POSIX, p) == -1 || !p->complete ||
	    p->ncmds != 1 || p->ops != 0)
		return (-1);
	c = &p->cmds[0];
	if (c->kind != SH_K_SIMPLE || c->flags != 0 || c->nassigns != 0 ||
	    c->nredirs != 0 || c->argc == 0 || c->depth != 0)
		return (-1);
	for (i = 0; i < c->argc; i++)
		if (c->argflags[i] != 0 || c->argv[i][0] == '\0')
			return (-1);
	if (strchr(c->argv[0], '=') != NULL || direct_builtin(c->argv[0]))
		return (-1);
	return (0);
}

int
direct_ok(const char *command, const char *shell)
{
	struct sh_parse	p;
	int		ok;

	memset(&p, 0, sizeof p);
	if (!direct_shell_dash(shell))
		return (0);
	ok = direct_parse(command, &p) == 0;
	sh_parse_release(&p);
	return (ok);
}

char **
direct_argv(const char *command, const char *shell)
{
	struct sh_parse	  p;
	char		**argv = NULL;
	size_t		  i;

	memset(&p, 0, sizeof p);
	if (direct_shell_dash(shell) && direct_parse(command, &p) == 0) {
		argv = xcalloc(p.cmds[0].argc + 1, sizeof *argv);
		for (i = 0; i < p.cmds[0].argc; i++)
			argv[i] = xstrdup(p.cmds[0].argv[i]);
	}
	sh_parse_release(&p);
	return (argv);
}

void
direct_free(char **argv)
{
	size_t	i;

	if (argv == NULL)
		return;
	for (i = 0; argv[i] != NULL; i++)
		free(argv[i]);
	free(argv);
}
