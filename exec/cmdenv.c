/*
 * What a command may run with: a working directory that realpath(3) puts
 * inside the workspace, and an environment built from an allowlist of the
 * worker's own variables plus the item's env, minus anything that lets a
 * value load code into the programs the command runs.
 */

#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "exec/cmdenv.h"
#include "logs/errcode.h"
#include "logs/log.h"
#include "logs/xmalloc.h"

/* A growing NULL-terminated "NAME=value" array without duplicate names. */
struct cmdenv_env {
	char	**v;
	size_t	  n;
	size_t	  alloc;
};

/* A refused name, or name prefix, and why: the text the sender reads. */
struct cmdenv_refusal {
	const char	*name;
	const char	*why;
};

#define CMDENV_WHY_LOADER \
	"it can inject code into every program the command runs"
#define CMDENV_WHY_SHELL \
	"it makes the shell run code or parse the command differently"
#define CMDENV_WHY_INTERP \
	"it makes an interpreter load code the command did not ask for"
#define CMDENV_WHY_LIBC \
	"it makes the C library load files from another place"

/*
 * Exact names an item may not set, sorted by strcmp() for bsearch().
 * Groups:
 *  - shell start-up and parsing (bash, dash and sh read these before or
 *    while running the command): BASH_ENV, ENV, BASHOPTS, SHELLOPTS, PS4,
 *    PROMPT_COMMAND, IFS, CDPATH;
 *  - glibc: GCONV_PATH, LOCPATH, NLSPATH load modules or data files,
 *    GLIBC_TUNABLES changes the allocator, HOSTALIASES and RESOLV_HOST_CONF
 *    the resolver;
 *  - interpreters that load code from a path or an option: PYTHON*,
 *    NODE_*, PERL*, RUBY*, the JVM's option variables;
 *  - less(1) runs LESSOPEN/LESSCLOSE as commands.
 * PATH and PAGER stay allowed: commands need PATH, and PAGER only matters
 * to a program that was going to run a pager anyway.
 */
static const struct cmdenv_refusal cmdenv_forbidden[] = {
	{ "BASHOPTS", CMDENV_WHY_SHELL },
	{ "BASH_ENV", CMDENV_WHY_SHELL },
	{ "CDPATH", CMDENV_WHY_SHELL },
	{ "ENV", CMDENV_WHY_SHELL },
	{ "GCONV_PATH", CMDENV_WHY_LIBC },
	{ "GLIBC_TUNABLES", CMDENV_WHY_LIBC },
	{ "HOSTALIASES", CMDENV_WHY_LIBC },
	{ "IFS", CMDENV_WHY_SHELL },
	{ "JAVA_TOOL_OPTIONS", CMDENV_WHY_INTERP },
	{ "JDK_JAVA_OPTIONS", CMDENV_WHY_INTERP },
	{ "LESSCLOSE", "less(1) runs it as a command" },
	{ "LESSOPEN", "less(1) runs it as a command" },
	{ "LOCPATH", CMDENV_WHY_LIBC },
	{ "NLSPATH", CMDENV_WHY_LIBC },
	{ "NODE_OPTIONS", CMDENV_WHY_INTERP },
	{ "NODE_PATH", CMDENV_WHY_INTERP },
	{ "PERL5DB", CMDENV_WHY_INTERP },
	{ "PERL5LIB", CMDENV_WHY_INTERP },
	{ "PERL5OPT", CMDENV_WHY_INTERP },
	{ "PERLLIB", CMDENV_WHY_INTERP },
	{ "PROMPT_COMMAND", CMDENV_WHY_SHELL },
	{ "PS4", CMDENV_WHY_SHELL },
	{ "PYTHONBREAKPOINT", CMDENV_WHY_INTERP },
	{ "PYTHONHOME", CMDENV_WHY_INTERP },
	{ "PYTHONPATH", CMDENV_WHY_INTERP },
	{ "PYTHONSTARTUP", CMDENV_WHY_INTERP },
	{ "PYTHONUSERBASE", CMDENV_WHY_INTERP },
	{ "RESOLV_HOST_CONF", CMDENV_WHY_LIBC },
	{ "RUBYLIB", CMDENV_WHY_INTERP },
	{ "RUBYOPT", CMDENV_WHY_INTERP },
	{ "SHELLOPTS", CMDENV_WHY_SHELL },
	{ "_JAVA_OPTIONS", CMDENV_WHY_INTERP },
};

/*
 * Refused prefixes: the dynamic loaders (LD_PRELOAD, LD_LIBRARY_PATH, LD_AUDIT
 * and every other LD_ or DYLD_ knob), bash's exported functions
 * ("BASH_FUNC_name%%", refused before the name is checked so the sender
 * reads why), and the worker's own EXECQ_ namespace.
 */
static const struct cmdenv_refusal cmdenv_forbidden_prefix[] = {
	{ "BASH_FUNC_", "it defines a function inside every bash the "
	    "command starts" },
	{ "DYLD_", CMDENV_WHY_LOADER },
	{ "EXECQ_", "names starting with EXECQ_ are reserved for the worker" },
	{ "LD_", CMDENV_WHY_LOADER },
};

/* What a command may inherit from the worker; LC_* is checked apart. */
static const char *const cmdenv_allowed[] = {
	"HOME", "LANG", "LANGUAGE", "LOGNAME", "PATH", "SHELL", "TERM",
	"TMPDIR", "TZ", "USER",
};

#define CMDENV_DEFAULT_PATH	"/usr/local/bin:/usr/bin:/bin"
#define CMDENV_NITEMS(a)	(sizeof (a) / sizeof (a)[0])

/* bsearch() comparator: a name against a table entry. */
static int
cmdenv_refusal_cmp(const void *key, const void *entry)
{
	const struct cmdenv_refusal	*r = entry;

	return (strcmp(key, r->name));
}

/* Why name is refused, or NULL if an item may set it. */
static const char *
cmdenv_env_why(const char *name)
{
	const struct cmdenv_refusal	*r;
	size_t				 i, len;

	r = bsearch(name, cmdenv_forbidden, CMDENV_NITEMS(cmdenv_forbidden),
	    sizeof cmdenv_forbidden[0], cmdenv_refusal_cmp);
	if (r != NULL)
		return (r->why);
	for (i = 0; i < CMDENV_NITEMS(cmdenv_forbidden_prefix); i++) {
		r = &cmdenv_forbidden_prefix[i];
		len = strlen(r->name);
		if (strncmp(name, r->name, len) == 0)
			return (r->why);
	}
	return (NULL);
}

/* 1 if an item may not set this variable. */
int
cmdenv_env_forbidden(const char *name)
{
	return (cmdenv_env_why(name) != NULL);
}

/* 1 if the first len bytes of s are a shell variable name. */
static int
cmdenv_env_valid_name(const char *s, size_t len)
{
	size_t	i;

	if (len == 0 || (s[0] >= '0' && s[0] <= '9'))
		return (0);
	for (i = 0; i < len; i++) {
		if (s[i] != '_' && !(s[i] >= 'A' && s[i] <= 'Z') &&
		    !(s[i] >= 'a' && s[i] <= 'z') &&
		    !(s[i] >= '0' && s[i] <= '9'))
			return (0);
	}
	return (1);
}

/* 1 if the worker passes its own variable name (len bytes) to commands. */
static int
cmdenv_env_allowed(const char *name, size_t len)
{
	size_t	i;

	if (len > 3 && strncmp(name, "LC_", 3) == 0)
		return (1);
	for (i = 0; i < CMDENV_NITEMS(cmdenv_allowed); i++) {
		if (strlen(cmdenv_allowed[i]) == len &&
		    strncmp(name, cmdenv_allowed[i], len) == 0)
			return (1);
	}
	return (0);
}

/* Index of the variable named like entry ("NAME=value" or "NAME"), or -1. */
static ssize_t
cmdenv_env_find(const struct cmdenv_env *e, const char *entry)
{
	size_t	i, len;

	len = strcspn(entry, "=");
	for (i = 0; i < e->n; i++) {
		if (strncmp(e->v[i], entry, len) == 0 && e->v[i][len] == '=')
			return ((ssize_t)i);
	}
	return (-1);
}

/* Adds "NAME=value", replacing an entry of that name where it stands. */
static void
cmdenv_env_put(struct cmdenv_env *e, const char *entry)
{
	ssize_t	i;

	if ((i = cmdenv_env_find(e, entry)) != -1) {
		free(e->v[i]);
		e->v[i] = xstrdup(entry);
		return;
	}
	if (e->n + 2 > e->alloc) {
		e->alloc = e->alloc == 0 ? 32 : e->alloc * 2;
		e->v = xreallocarray(e->v, e->alloc, sizeof *e->v);
	}
	e->v[e->n++] = xstrdup(entry);
	e->v[e->n] = NULL;
}

/* cmdenv_env_put() of name=value. */
static void
cmdenv_env_set(struct cmdenv_env *e, const char *name, const char *value)
{
	char	*entry;

	xasprintf(&entry, "%s=%s", name, value);
	cmdenv_env_put(e, entry);
	free(entry);
}

/* Copies the allowed variables of parent and fills in the defaults. */
static void
cmdenv_env_base(struct cmdenv_env *e, char *const *parent, int pty)
{
	size_t	len;

	for (; parent != NULL && *parent != NULL; parent++) {
		len = strcspn(*parent, "=");
		if ((*parent)[len] == '=' && cmdenv_env_allowed(*parent, len))
			cmdenv_env_put(e, *parent);
	}
	if (cmdenv_env_find(e, "PATH") == -1)
		cmdenv_env_set(e, "PATH", CMDENV_DEFAULT_PATH);
	if (pty) {
		if (cmdenv_env_find(e, "TERM") == -1)
			cmdenv_env_set(e, "TERM", "xterm-256color");
		return;
	}
	/* No terminal: ask programs for plain text and no interactive pager. */
	cmdenv_env_set(e, "TERM", "dumb");
	cmdenv_env_set(e, "NO_COLOR", "1");
	cmdenv_env_set(e, "PAGER", "cat");
	cmdenv_env_set(e, "GIT_PAGER", "cat");
}

/* Adds one item variable; 0, or -1 with *code and *cause set. */
static int
cmdenv_env_extra(struct cmdenv_env *e, const char *entry, enum errcode *code,
    char **cause)
{
	const char	*why;
	char		*name;
	size_t		 len;

	len = strcspn(entry, "=");
	if (entry[len] != '=') {
		*code = ERR_BAD_ENV;
		xasprintf(cause, "env entry '%s' is not NAME=value", entry);
		return (-1);
	}
	name = xstrndup(entry, len);
	if ((why = cmdenv_env_why(name)) != NULL) {
		*code = ERR_ENV_FORBIDDEN;
		xasprintf(cause, "env %s is refused: %s", name, why);
	} else if (!cmdenv_env_valid_name(name, len)) {
		*code = ERR_BAD_ENV;
		xasprintf(cause, "env name '%s' is not a valid variable name",
		    name);
	} else
		cmdenv_env_put(e, entry);
	free(name);
	return (*code == ERR_NONE ? 0 : -1);
}

/* Builds the child's environment; see policy.h. */
char **
cmdenv_build_env(char *const *parent, char *const *extra, int pty,
    const char *id, enum errcode *code, char **cause)
{
	struct cmdenv_env	e = { NULL, 0, 0 };

	*code = ERR_NONE;
	*cause = NULL;
	cmdenv_env_base(&e, parent, pty);
	for (; extra != NULL && *extra != NULL; extra++) {
		if (cmdenv_env_extra(&e, *extra, code, cause) == -1)
			goto fail;
	}
	/* Appended last: nothing before it may carry an EXECQ_ name. */
	cmdenv_env_set(&e, "EXECQ_SESSION_ID", id);
	return (e.v);

fail:
	cmdenv_env_free(e.v);
	return (NULL);
}

/* A copy of env with each of set's "NAME=value" put in; see policy.h. */
char **
cmdenv_env_with(char *const *env, char *const *set)
{
	struct cmdenv_env	e = { NULL, 0, 0 };

	for (; env != NULL && *env != NULL; env++)
		cmdenv_env_put(&e, *env);
	for (; set != NULL && *set != NULL; set++)
		cmdenv_env_put(&e, *set);
	return (e.v);
}

/* Frees an array from cmdenv_build_env(); NULL ok. */
void
cmdenv_env_free(char **env)
{
	char	**p;

	if (env == NULL)
		return;
	for (p = env; *p != NULL; p++)
		free(*p);
	free(env);
}

/* 1 if path (a realpath) is workspace (a realpath) or below it. */
int
cmdenv_inside(const char *workspace, const char *path)
{
	size_t	len;

	len = strlen(workspace);
	while (len > 0 && workspace[len - 1] == '/')
		len--;
	/*
	 * A plain prefix test would put /srv/ws2 inside /srv/ws. For "/",
	 * len is 0 and every absolute path passes.
	 */
	return (strncmp(path, workspace, len) == 0 &&
	    (path[len] == '\0' || path[len] == '/'));
}

/* Sets *code and *cause for a cwd that realpath() or stat() refused. */
static void
cmdenv_cwd_error(const char *cwd, int error, enum errcode *code, char **cause)
{
	*code = ERR_CWD_NOT_FOUND;
	if (error == ENOENT)
		xasprintf(cause, "cwd '%s' does not exist in the workspace",
		    cwd);
	else if (error == ENOTDIR)
		xasprintf(cause, "cwd '%s' is not a directory", cwd);
	else
		xasprintf(cause, "cwd '%s': %s", cwd, strerror(error));
}

/* Resolves cwd inside workspace; see policy.h. */
char *
cmdenv_resolve_cwd(const char *workspace, const char *cwd, enum errcode *code,
    char **cause)
{
	struct stat	 sb;
	char		*joined, *real;

	*code = ERR_NONE;
	*cause = NULL;
	if (cwd == NULL || *cwd == '\0')
		return (xstrdup(workspace));
	if (*cwd == '/')
		joined = xstrdup(cwd);
	else
		xasprintf(&joined, "%s/%s", workspace, cwd);
	if ((real = realpath(joined, NULL)) == NULL) {
		if (errno == ENOMEM)
			fatal("out of memory");
		cmdenv_cwd_error(cwd, errno, code, cause);
	} else if (!cmdenv_inside(workspace, real)) {
		/* Name the workspace, never where a symlink led. */
		*code = ERR_CWD_OUTSIDE_WORKSPACE;
		xasprintf(cause, "cwd '%s' resolves outside the workspace %s",
		    cwd, workspace);
	} else if (stat(real, &sb) == -1)
		cmdenv_cwd_error(cwd, errno, code, cause);
	else if (!S_ISDIR(sb.st_mode))
		cmdenv_cwd_error(cwd, ENOTDIR, code, cause);
	free(joined);
	if (*code != ERR_NONE) {
		free(real);
		return (NULL);
	}
	return (real);
}
