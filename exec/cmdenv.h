#ifndef EXECQ_CMDENV_H
#define EXECQ_CMDENV_H

#include "logs/errcode.h"

/*
 * What a command may run with: the working directory inside the workspace
 * and the child's environment. Pure code apart from realpath(3).
 *
 * On refusal the functions return NULL, set *code to an error code
 * (docs/PROTOCOL.md) and *cause to an allocated message for the sender.
 */

/*
 * Resolves cwd (relative to the workspace, or absolute) with realpath and
 * returns the allocated absolute path when it is the workspace or inside it.
 * workspace must already be a realpath. cwd NULL or "" means the workspace.
 * Codes: cwd_outside_workspace, cwd_not_found (missing or not a directory).
 */
char	*cmdenv_resolve_cwd(const char *workspace, const char *cwd,
	    enum errcode *code, char **cause);

/*
 * Builds the child's environment: the allowed variables of parent (PATH,
 * HOME, LANG, LC_*, TERM, USER, LOGNAME, SHELL, TZ, TMPDIR), then for
 * non-PTY children TERM=dumb NO_COLOR=1 PAGER=cat GIT_PAGER=cat, then
 * extra ("NAME=value" strings, the item's env; later wins), then
 * EXECQ_SESSION_ID=id. Refuses a name that hijacks a loader or interpreter
 * (LD_*, PYTHONPATH, BASH_ENV, ...: env_forbidden) or is not a valid
 * name (bad_env). Returns a NULL-terminated array for cmdenv_env_free.
 */
char	**cmdenv_build_env(char *const *parent, char *const *extra,
	    int pty, const char *id, enum errcode *code, char **cause);
void	 cmdenv_env_free(char **);	/* NULL ok */
/*
 * A copy of env (for cmdenv_env_free) with every "NAME=value" of set
 * replacing the variable of that name, or added. Both NULL-terminated.
 */
char	**cmdenv_env_with(char *const *env, char *const *set);
/*
 * 1 if path is dir or below it (both realpaths; /srv/ws2 is not inside
 * /srv/ws).
 */
int	 cmdenv_inside(const char *dir, const char *path);
/* 1 if an item may not set this variable. */
int	 cmdenv_env_forbidden(const char *name);

#endif
