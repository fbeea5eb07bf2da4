#ifndef EXECQ_SPAWN_H
#define EXECQ_SPAWN_H

/*
 * Starting a child: `shell -c command` (or the command's words, exec'd
 * directly) in a new session, in its cgroup
 * leaf from the first instruction on. Child side only; no libevent.
 */

#include <sys/types.h>

/*
 * What the child applies to itself before exec, in this order: joins the
 * cgroup v1 leaves, the namespaces, drops privileges, restricts itself
 * with Landlock, then seccomp. Plain data prepared by the parent
 * (exec/confine.h); every fd is the parent's and stays open.
 */
struct spawn_confine {
	int		 cgroup_v1_fds[2];	/* cgroup.procs (pids, memory), or -1 */
	int		 mntns_fd;		/* setns, or -1 */
	int		 netns_fd;		/* setns, or -1 */
	char		*grant_path;		/* writable in a mount namespace
						   of its own, or NULL */
	int		 grant_tree;		/* its file as a detached mount
						   (open_tree), moved there */
	char		*grant_mnt;		/* made writable to make the
						   mount point, or NULL */
	unsigned long	 grant_mnt_flags;	/* grant_mnt's, read-only */
	char		**grant_dirs;		/* made first (NULL-terminated),
						   or NULL */
	int		 drop_privs;		/* bounding set, securebits,
						   capset 0 (we have them) */
	int		 no_new_privs;		/* ambient cleared, NNP */
	int		 last_cap;		/* CAP_LAST_CAP of the kernel */
	int		 set_ids;		/* then run as uid/gid */
	uid_t		 uid;
	gid_t		 gid;
	int		 ruleset_fd;		/* landlock_restrict_self, or -1 */
	int		 ruleset_kept;		/* its tmp slot's: not closed */
	const void	*seccomp;		/* struct sock_fprog *, or NULL */
};

struct spawn_opts {
	const char	*shell;		/* absolute path, e.g. /bin/sh */
	const char	*command;
	char *const	*argv;		/* NULL: shell -c command; else the
					   command's words, exec'd directly:
					   looked up in envp's PATH as dash
					   does, and when not found or not
					   exec'd, shell -c command after all
					   (its messages, its exit codes) */
	const char	*cwd;		/* absolute */
	char *const	*envp;
	int		 stdin_fd;	/* pipe mode: stdin, stdout, stderr */
	int		 stdout_fd;
	int		 stderr_fd;
	int		 pty_fd;	/* PTY mode: the slave, else -1 */
	int		 cgroup_fd;	/* leaf O_DIRECTORY fd, or -1 */
	const struct spawn_confine *confine;	/* NULL: none */
};

/*
 * Starts the child and returns its pid, or -1 with errno set: the errno of
 * the step that failed in the child (chdir, exec...), reported through
 * memory shared with it, in which case the child has been reaped already.
 * The caller's fds are untouched; the child keeps only 0, 1 and 2.
 *
 * With pidfd, *pidfd (CLOEXEC) is a pidfd of the child, readable when it
 * ends: reap it with waitid(P_PIDFD). Where clone3 is refused it is -1.
 * Either way the child's end also raises SIGCHLD (execve makes a child's
 * exit signal SIGCHLD whatever clone said).
 */
pid_t	spawn_start(const struct spawn_opts *, int *pidfd);
/* Which step failed in the last spawn_start() that returned -1. */
const char *spawn_failed_step(void);

/*
 * A new pseudo-terminal of rows x cols: the master (non-blocking,
 * CLOEXEC) in *master, the slave (CLOEXEC) in *slave. 0 or -1 with errno.
 */
int	spawn_openpty(unsigned rows, unsigned cols, int *master, int *slave);

#endif
