#ifndef EXECQ_DIRECT_H
#define EXECQ_DIRECT_H

/*
 * Skipping the shell (issue 25, item 3): a command that is one simple
 * command of plain literal words (no expansion, quoting, redirection,
 * assignment, operator, builtin or keyword) runs as its words, exec'd
 * directly, as bash does for `bash -c 'cmd'`. Only when the worker's
 * shell is dash, the shell whose behaviour exec/spawn.c reproduces (it
 * falls back to the shell for anything it does not find and exec).
 */

/*
 * 1 if command may skip shell (the worker's shell, a path), else 0. Pure
 * but for the look at shell (realpath, remembered for the last shell).
 */
int	 direct_ok(const char *command, const char *shell);
/*
 * command's words (NULL-terminated, for direct_free), or NULL when it
 * must go through shell: direct_ok's decision.
 */
char	**direct_argv(const char *command, const char *shell);
void	 direct_free(char **);	/* NULL ok */
/* 1 if word is a dash or bash builtin or a shell keyword. */
int	 direct_builtin(const char *word);

#endif
