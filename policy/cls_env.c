/*
 * The classifier's environment: which variable names a command or an
 * item may set. The environment is an allowlist: a name a program reads
 * to decide what to run, load or write (PATH, HOME, XDG_CONFIG_HOME,
 * GIT_*, TAR_OPTIONS, MAKEFLAGS, SSH_ASKPASS, OPENSSL_CONF, ...) is not
 * on it, and nobody can list them all. Only names that change how
 * programs print are safe; the operator adds more with env_allow.
 *
 * A plain shell variable ("n=3", "dir=build") is not in any program's
 * environment and may be anything, unless its name is one the shell
 * itself reads (IFS, CDPATH, ...) or one already exported to commands
 * (PATH, HOME, ...): then assigning it changes what later commands get.
 */

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/classify.h"
#include "policy/cls.h"
#include "policy/shparse.h"
#include "logs/xmalloc.h"

/* Names any command may export: how programs print, not what they do. */
static const char *const cls_env_safe_names[] = { "LANG", "LANGUAGE",
    "TZ", "CI", "COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "CLICOLOR",
    "CLICOLOR_FORCE", "TERM", "COLORTERM", "LS_COLORS", "GREP_COLORS",
    "POSIXLY_CORRECT", "SOURCE_DATE_EPOCH", "TIME_STYLE", "QUOTING_STYLE",
    "BLOCK_SIZE", "DF_BLOCK_SIZE", "DU_BLOCK_SIZE", "LS_BLOCK_SIZE",
    "TABSIZE", "DEBIAN_FRONTEND", "PYTHONUNBUFFERED",
    "PYTHONDONTWRITEBYTECODE", "PYTHONIOENCODING", "RUST_BACKTRACE",
    "CARGO_TERM_COLOR", "TIMEFORMAT", NULL };

/*
 * Names commands already get from the worker, and names the shell reads
 * itself: assigning one without "export" still changes what runs.
 */
static const char *const cls_env_shell_names[] = { "HOME", "LOGNAME",
    "PATH", "SHELL", "TMPDIR", "USER", "PAGER", "GIT_PAGER", "IFS", "ENV",
    "BASH_ENV", "CDPATH", "SHELLOPTS", "BASHOPTS", "PS4", "PS1",
    "PROMPT_COMMAND", "GLOBIGNORE", "BASH_XTRACEFD", "EXECIGNORE",
    "FUNCNEST", "HISTFILE", "BASH_COMPAT", "OLDPWD", "MAILPATH", "MAIL",
    "BASH_LOADABLES_PATH", "INPUTRC", NULL };

/* 1 if name[0..len) may be exported by an item or a command. */
int
cls_env_safe(const struct cls_policy *p, const char *name, size_t len)
{
	char	buf[128];
	size_t	i;

	if (len == 0 || len >= sizeof buf)
		return (0);
	memcpy(buf, name, len);
	buf[len] = '\0';
	if ((len > 3 && strncmp(buf, "LC_", 3) == 0) ||
	    cls_in(buf, cls_env_safe_names))
		return (1);
	for (i = 0; p != NULL && i < p->nenv_allow; i++)
		if (fnmatch(p->env_allow[i], buf, 0) == 0)
			return (1);
	return (0);
}

/* 1 if assigning name[0..len) in the shell reaches commands. */
static int
cls_env_reaches(const char *name, size_t len)
{
	char	buf[64];

	if (len >= sizeof buf)
		return (1);
	memcpy(buf, name, len);
	buf[len] = '\0';
	return (cls_in(buf, cls_env_shell_names) ||
	    strncmp(buf, "XDG_", 4) == 0 || strncmp(buf, "LD_", 3) == 0 ||
	    strncmp(buf, "BASH_FUNC_", 10) == 0);
}

/*
 * The first of n words (NAME=value, or NAME alone when names is set)
 * whose name is not safe; with shell, only names that reach commands
 * count (a plain assignment). NULL if none.
 */
const char *
cls_env_unsafe(const struct cls_policy *p, char *const *w, size_t n,
    int names, int shell)
{
	size_t	i, len;

	for (i = 0; i < n; i++) {
		len = strcspn(w[i], "+=[");
		if (w[i][len] == '\0' && !names)
			continue;
		if (w[i][0] == '-' || len == 0)
			continue;		/* an option of export */
		if (shell && !cls_env_reaches(w[i], len))
			continue;
		if (!cls_env_safe(p, w[i], len))
			return (w[i]);
	}
	return (NULL);
}

/* 1 if a declare/typeset/local word list exports (-x). */
static int
cls_env_exports(const struct sh_cmd *c)
{
	size_t	i;

	for (i = 1; i < c->argc; i++)
		if (c->argv[i][0] == '-' && strchr(c->argv[i], 'x') != NULL)
			return (1);
	return (0);
}

/*
 * The names one simple command sets: "NAME=v cmd" (NAME goes to cmd's
 * environment), "export NAME[=v]", "declare -x", plain "NAME=v" and
 * read/printf -v/getopts targets (only names that reach commands), and
 * "set -a" (every later assignment is exported). Raises r to unknown.
 */
void
cls_env_check(struct cls_ctx *ctx, const struct sh_cmd *c, struct cls_res *r)
{
	const struct cls_policy	*p = ctx->p;
	const char		*bad = NULL, *cmd = c->argc > 0 ? c->argv[0] :
				    "";
	size_t			 i;

	if (c->kind != SH_K_SIMPLE)
		return;
	bad = cls_env_unsafe(p, c->assigns, c->nassigns, 0, c->argc == 0);
	if (bad == NULL && (strcmp(cmd, "export") == 0 || (cls_in(cmd,
	    (const char *const[]){ "declare", "typeset", "local", NULL }) &&
	    cls_env_exports(c))))
		bad = cls_env_unsafe(p, c->argv + 1, c->argc - 1, 1, 0);
	else if (bad == NULL && cls_in(cmd, (const char *const[]){ "declare",
	    "typeset", "local", "readonly", NULL }))
		bad = cls_env_unsafe(p, c->argv + 1, c->argc - 1, 0, 1);
	for (i = 1; bad == NULL && i < c->argc; i++) {
		if ((cls_in(cmd, (const char *const[]){ "read", "mapfile",
		    "readarray", NULL }) && c->argv[i][0] != '-') ||
		    (strcmp(cmd, "printf") == 0 && i > 1 &&
		    strcmp(c->argv[i - 1], "-v") == 0) ||
		    (strcmp(cmd, "getopts") == 0 && i == 2))
			bad = cls_env_unsafe(p, c->argv + i, 1, 1, 1);
		else if (strcmp(cmd, "set") == 0 && ((c->argv[i][0] == '-' &&
		    strchr(c->argv[i], 'a') != NULL) ||
		    strcmp(c->argv[i], "allexport") == 0)) {
			cls_raise(r, CLS_UNKNOWN, "unknown:environment", "set "
			    "-a exports every variable assigned after it");
			return;
		}
	}
	if (bad != NULL)
		cls_raise(r, CLS_UNKNOWN, "unknown:environment", "it sets "
		    "%.*s, which is not on the environment's safe list (a "
		    "program may read it to decide what to run, load or "
		    "write)", (int)strcspn(bad, "+=["), bad);
}
