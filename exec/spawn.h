#ifndef EXECQ_SPAWN_H
#define EXECQ_SPAWN_H

/*
 * Starting a child: `shell -c command` in a new session, in its cgroup
 * leaf from the first instruction on. Child side only; no libevent.
 */

#include <sys/types.h>

struct spawn_opts {
	const char	*shell;		/* absolute path, e.g. /bin/sh */
	const char	*command;
	const char	*cwd;		/* absolute */
	char *const	*envp;
	int		 stdin_fd;	/* pipe mode: stdin, stdout, stderr */
	int		 stdout_fd;
	int		 stderr_fd;
	int		 pty_fd;	/* PTY mode: the slave, else -1 */
	int		 cgroup_fd;	/* leaf O_DIRECTORY fd, or -1 */
};

/*
 * Starts the child and returns its pid, or -1 with errno set: the errno of
 * the step that failed in the child (chdir, exec...), reported through
 * memory shared with it, in which case the child has been reaped already.
 * The caller's fds are untouched; the child keeps only 0, 1 and 2.
 */
pid_t	spawn_start(const struct spawn_opts *);
/* Which step failed in the last spawn_start() that returned -1. */
const char *spawn_failed_step(void);

/*
 * A new pseudo-terminal of rows x cols: the master (non-blocking,
 * CLOEXEC) in *master, the slave (CLOEXEC) in *slave. 0 or -1 with errno.
 */
int	spawn_openpty(unsigned rows, unsigned cols, int *master, int *slave);

#endif
