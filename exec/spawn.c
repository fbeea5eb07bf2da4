/* Starting a child: clone3 into its cgroup, raw system calls until exec. */

#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/sched.h>
#include <linux/securebits.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "exec/spawn.h"

/* move_mount's flag (Linux 5.2); <linux/mount.h> clashes with glibc's. */
#ifndef MOVE_MOUNT_F_EMPTY_PATH
#define MOVE_MOUNT_F_EMPTY_PATH	0x00000004
#endif
#ifndef SYS_move_mount
#define SYS_move_mount		429
#endif

/* clone3's flag (Linux 5.7), in <linux/sched.h> only from then on. */
#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

/*
 * Raw system calls for the child: they return -errno. On x86_64 they
 * touch neither errno (thread-local, shared with the parent under
 * CLONE_VM) nor any libc state; elsewhere syscall(2) may set the parent's
 * errno, which is harmless while CLONE_VFORK keeps the parent suspended.
 */
#if defined(__x86_64__)
static inline long __attribute__((always_inline))
spawn_raw6(long n, long a, long b, long c, long d, long e)
{
	/* Five arguments, the unused ones 0: prctl checks them. */
	register long	r10 __asm__("r10") = d;
	register long	r8 __asm__("r8") = e;
	long		ret;

	__asm__ volatile("syscall" : "=a" (ret) : "a" (n), "D" (a), "S" (b),
	    "d" (c), "r" (r10), "r" (r8) : "rcx", "r11", "memory");
	return (ret);
}
#else
static inline long __attribute__((always_inline))
spawn_raw6(long n, long a, long b, long c, long d, long e)
{
	long	ret = syscall(n, a, b, c, d, e);

	return (ret == -1 ? -errno : ret);
}
#endif
#define spawn_raw1(n, a)		spawn_raw6((n), (a), 0, 0, 0, 0)
#define spawn_raw3(n, a, b, c)		spawn_raw6((n), (a), (b), (c), 0, 0)
#define spawn_raw4(n, a, b, c, d)	spawn_raw6((n), (a), (b), (c), (d), 0)
#define spawn_raw5(n, a, b, c, d, e)	spawn_raw6((n), (a), (b), (c), (d), (e))

/*
 * Where the child reports a failure. It is a MAP_SHARED page, so the
 * child's write is seen by the parent whether or not they share memory;
 * CLONE_VFORK keeps the parent suspended until the child has exec'd or
 * exited, so there is no race.
 */
struct spawn_report {
	int	err;
	int	step;
};

enum spawn_step {
	SPAWN_OK = 0,
	SPAWN_DUP,
	SPAWN_SETSID,
	SPAWN_CTTY,
	SPAWN_CHDIR,
	SPAWN_EXEC,
	SPAWN_CLONE,
	SPAWN_CGROUP,
	SPAWN_CGROUP_V1,
	SPAWN_SETNS,
	SPAWN_PRIVS,
	SPAWN_IDS,
	SPAWN_LANDLOCK,
	SPAWN_SECCOMP,		/* the last: spawn_step_names runs to it */
};

static struct spawn_report	*spawn_report;
static int			 spawn_last_step;

static const int	 spawn_reset_signals[] = {
	SIGPIPE, SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGCHLD, SIGALRM,
	SIGUSR1, SIGUSR2, SIGTSTP, SIGTTIN, SIGTTOU, SIGXFSZ, 0
};

/* Indexed by the enum: a reordering cannot mislabel a step. */
static const char *const spawn_step_names[SPAWN_SECCOMP + 1] = {
	[SPAWN_OK] = "ok",
	[SPAWN_DUP] = "dup2",
	[SPAWN_SETSID] = "setsid",
	[SPAWN_CTTY] = "controlling tty",
	[SPAWN_CHDIR] = "chdir",
	[SPAWN_EXEC] = "exec",
	[SPAWN_CLONE] = "clone",
	[SPAWN_CGROUP] = "cgroup",
	[SPAWN_CGROUP_V1] = "cgroup v1 limits",
	[SPAWN_SETNS] = "namespaces",
	[SPAWN_PRIVS] = "dropping privileges",
	[SPAWN_IDS] = "run_as user",
	[SPAWN_LANDLOCK] = "landlock",
	[SPAWN_SECCOMP] = "seccomp",
};

const char *
spawn_failed_step(void)
{
	return (spawn_step_names[spawn_last_step]);
}

/*
 * The child side runs on its own small stack while sharing the parent's
 * memory (CLONE_VM): it makes raw system calls only (no libc wrapper that
 * could take a lock, no sanitizer interceptor) and is not instrumented, so
 * ASan and UBSan builds stay correct.
 */
#define SPAWN_CHILD_ATTR \
	__attribute__((noreturn, no_sanitize("address,undefined")))
#define SPAWN_CHILD_HELPER \
	__attribute__((no_sanitize("address,undefined")))

/* The kernel's struct sigaction, for rt_sigaction without libc. */
struct spawn_ksigaction {
	void		(*handler)(int);
	unsigned long	 flags;
	void		(*restorer)(void);
	uint64_t	 mask;
};

/* Records the failed step and errno for the parent, and exits. */
static void SPAWN_CHILD_ATTR
spawn_child_fail(int step, long rc)
{
	spawn_report->err = (int)-rc;
	spawn_report->step = step;
	for (;;)
		spawn_raw1(SYS_exit, 127);
}

/* What the child needs, on the parent's (suspended) stack. */
struct spawn_child_args {
	const struct spawn_opts	*o;
	const sigset_t		*mask;
	char *const		*argv;
	int			 join_cgroup;	/* no CLONE_INTO_CGROUP */
};

/* dup2 as dup3 (not on every architecture): from onto to, no CLOEXEC. */
static long SPAWN_CHILD_HELPER
spawn_dup_onto(int from, int to)
{
	if (from == to)		/* keep it, but open across exec */
		return (spawn_raw3(SYS_fcntl, from, F_SETFD, 0));
	return (spawn_raw3(SYS_dup3, from, to, 0));
}

/* Moves the calling process into the leaf (clone3 fallback). */
static long SPAWN_CHILD_HELPER
spawn_join_cgroup(int cgroup_fd)
{
	static const char	procs[] = "cgroup.procs";
	long			fd, rc;

	fd = spawn_raw4(SYS_openat, cgroup_fd, (long)procs,
	    O_WRONLY|O_CLOEXEC, 0);
	if (fd < 0)
		return (fd);
	rc = spawn_raw3(SYS_write, fd, (long)"0", 1);
	spawn_raw1(SYS_close, fd);
	return (rc < 0 ? rc : 0);
}

/* Joins the cgroup v1 leaves that limit pids and memory. */
static void SPAWN_CHILD_HELPER
spawn_child_limits(const struct spawn_confine *c)
{
	long	rc;
	int	i;

	for (i = 0; i < 2; i++) {
		if (c->cgroup_v1_fds[i] == -1)
			continue;
		rc = spawn_raw4(SYS_pwrite64, c->cgroup_v1_fds[i], (long)"0", 1,
		    0);
		if (rc < 0)
			spawn_child_fail(SPAWN_CGROUP_V1, rc);
	}
}

/*
 * SECBIT_NOROOT set and locked (uid 0 gains nothing at exec), KEEP_CAPS
 * and NO_SETUID_FIXUP locked clear (a uid change drops the rest), no
 * ambient raise, locked.
 */
#define SPAWN_SECUREBITS	(SECBIT_NOROOT|SECBIT_NOROOT_LOCKED| \
				 SECBIT_NO_SETUID_FIXUP_LOCKED| \
				 SECBIT_KEEP_CAPS_LOCKED| \
				 SECBIT_NO_CAP_AMBIENT_RAISE| \
				 SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED)

/* The kernel's capability header and data, for capset without libc. */
struct spawn_cap_header {
	uint32_t	version;
	int		pid;
};
struct spawn_cap_data {
	uint32_t	effective, permitted, inheritable;
};

/*
 * The grant's mount point, in the command's copy of the namespace, where
 * the commands' root lacks it: grant_mnt writable a moment, the
 * directories and the file made (empty, the names only), read-only
 * again. 0 or -errno.
 */
static long SPAWN_CHILD_HELPER
spawn_grant_point(const struct spawn_confine *c)
{
	long	rc, fd;
	int	i;

	if (c->grant_mnt == NULL)
		return (0);
	if ((rc = spawn_raw4(SYS_mount, 0, (long)c->grant_mnt, 0,
	    MS_REMOUNT|MS_BIND|(c->grant_mnt_flags & ~MS_RDONLY))) < 0)
		return (rc);
	for (i = 0; c->grant_dirs != NULL && c->grant_dirs[i] != NULL; i++)
		if ((rc = spawn_raw4(SYS_mkdirat, AT_FDCWD,
		    (long)c->grant_dirs[i], 0755, 0)) < 0 && rc != -EEXIST)
			return (rc);
	fd = spawn_raw4(SYS_openat, AT_FDCWD, (long)c->grant_path,
	    O_WRONLY|O_CREAT|O_NOFOLLOW|O_CLOEXEC, 0600);
	if (fd < 0)
		return (fd);
	spawn_raw1(SYS_close, fd);
	return (spawn_raw4(SYS_mount, 0, (long)c->grant_mnt, 0,
	    MS_REMOUNT|MS_BIND|MS_RDONLY|c->grant_mnt_flags));
}

/* Namespaces, then privileges: everything before the cwd is entered. */
static void SPAWN_CHILD_HELPER
spawn_child_enter(const struct spawn_confine *c)
{
	long	rc;

	/* setns(mnt) also moves root and cwd: chdir comes after. */
	if (c->mntns_fd != -1 &&
	    (rc = spawn_raw3(SYS_setns, c->mntns_fd, CLONE_NEWNS, 0)) < 0)
		spawn_child_fail(SPAWN_SETNS, rc);
	if (c->netns_fd != -1 &&
	    (rc = spawn_raw3(SYS_setns, c->netns_fd, CLONE_NEWNET, 0)) < 0)
		spawn_child_fail(SPAWN_SETNS, rc);
	/*
	 * SysV shared memory, queues and semaphores of its own: nothing one
	 * command makes there is seen by the next, and all of it goes with
	 * the command's last process (no segment left charged to a pooled
	 * cgroup leaf).
	 */
	if (c->mntns_fd != -1 &&
	    (rc = spawn_raw1(SYS_unshare, CLONE_NEWIPC)) < 0)
		spawn_child_fail(SPAWN_SETNS, rc);
	/* An approved outside path: writable in a copy of the namespace. */
	if (c->grant_path != NULL &&
	    ((rc = spawn_raw1(SYS_unshare, CLONE_NEWNS)) < 0 ||
	    (rc = spawn_grant_point(c)) < 0 ||
	    (rc = spawn_raw5(SYS_move_mount, c->grant_tree, (long)"",
	    AT_FDCWD, (long)c->grant_path, MOVE_MOUNT_F_EMPTY_PATH)) < 0 ||
	    (rc = spawn_raw4(SYS_mount, 0, (long)c->grant_path, 0,
	    MS_REMOUNT|MS_BIND|MS_NOSUID|MS_NODEV)) < 0))
		spawn_child_fail(SPAWN_SETNS, rc);
}

/* No capability, no way to get one back, no privilege gained by exec. */
static void SPAWN_CHILD_HELPER
spawn_child_drop(const struct spawn_confine *c)
{
	struct spawn_cap_header	hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct spawn_cap_data	data[2] = { { 0, 0, 0 }, { 0, 0, 0 } };
	long			rc;
	int			cap;

	if (c->drop_privs) {
		rc = spawn_raw3(SYS_prctl, PR_SET_SECUREBITS,
		    SPAWN_SECUREBITS, 0);
		if (rc < 0)
			spawn_child_fail(SPAWN_PRIVS, rc);
		for (cap = 0; cap <= c->last_cap; cap++) {
			rc = spawn_raw3(SYS_prctl, PR_CAPBSET_DROP, cap,
			    0);
			if (rc < 0 && rc != -EINVAL)
				spawn_child_fail(SPAWN_PRIVS, rc);
		}
	}
	if (c->no_new_privs) {
		rc = spawn_raw3(SYS_prctl, PR_CAP_AMBIENT,
		    PR_CAP_AMBIENT_CLEAR_ALL, 0);
		if (rc < 0 && rc != -EINVAL)
			spawn_child_fail(SPAWN_PRIVS, rc);
	}
	if (c->set_ids) {
		if ((rc = spawn_raw3(SYS_setgroups, 0, 0, 0)) < 0 ||
		    (rc = spawn_raw3(SYS_setresgid, c->gid, c->gid,
		    c->gid)) < 0 ||
		    (rc = spawn_raw3(SYS_setresuid, c->uid, c->uid,
		    c->uid)) < 0)
			spawn_child_fail(SPAWN_IDS, rc);
	}
	/* Giving up capabilities needs none: whoever we are, none left. */
	if ((c->drop_privs || c->no_new_privs) &&
	    (rc = spawn_raw3(SYS_capset, (long)&hdr, (long)data, 0)) < 0)
		spawn_child_fail(SPAWN_PRIVS, rc);
	if (c->no_new_privs &&
	    (rc = spawn_raw3(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0)) < 0)
		spawn_child_fail(SPAWN_PRIVS, rc);
	if (c->ruleset_fd != -1 &&
	    (rc = spawn_raw3(SYS_landlock_restrict_self, c->ruleset_fd, 0,
	    0)) < 0)
		spawn_child_fail(SPAWN_LANDLOCK, rc);
}

/*
 * Tries to exec o->argv as dash would find it: a name with a slash as it
 * is, else in each directory of envp's PATH ("" is the cwd). Returns when
 * it could not: on anything but a clean miss (the file is not there), a
 * PATH dash reads otherwise (none, a %option), a name too long, or no
 * file found at all; the shell then runs the command and fails or
 * succeeds as it would have (126, 127, its own messages, a script without
 * #! run as a shell script).
 */
static void SPAWN_CHILD_HELPER
spawn_child_direct(const struct spawn_opts *o)
{
	static const char	 key[] = "PATH=";
	char			 buf[4096];
	const char		*name = o->argv[0], *path = NULL, *p;
	size_t			 i, n, dir;
	long			 rc;

	for (n = 0; name[n] != '\0'; n++)
		if (name[n] == '/') {
			spawn_raw3(SYS_execve, (long)name, (long)o->argv,
			    (long)o->envp);
			return;
		}
	for (i = 0; o->envp[i] != NULL && path == NULL; i++) {
		for (p = o->envp[i], dir = 0; dir < 5 && p[dir] == key[dir];
		    dir++)
			;
		if (dir == 5)
			path = p + 5;
	}
	if (path == NULL)
		return;
	for (p = path; *p != '\0'; p++)
		if (*p == '%')
			return;
	for (p = path;;) {
		for (dir = 0; p[dir] != '\0' && p[dir] != ':'; dir++)
			;
		if (dir + n + 2 > sizeof buf)
			return;
		for (i = 0; i < dir; i++)
			buf[i] = p[i];
		if (dir > 0)
			buf[i++] = '/';
		for (rc = 0; rc <= (long)n; rc++)	/* with its NUL */
			buf[i + rc] = name[rc];
		rc = spawn_raw3(SYS_execve, (long)buf, (long)o->argv,
		    (long)o->envp);
		if (rc != -ENOENT && rc != -ENOTDIR)
			return;
		/* There but not exec'able (a missing interpreter): dash's. */
		if (spawn_raw4(SYS_faccessat, AT_FDCWD, (long)buf, F_OK, 0) ==
		    0)
			return;
		if (p[dir] == '\0')
			return;
		p += dir + 1;
	}
}

/* Runs between clone and exec. */
static void SPAWN_CHILD_ATTR
spawn_child(const struct spawn_child_args *a)
{
	const struct spawn_opts	*o = a->o;
	struct spawn_ksigaction	 dfl = { SIG_DFL, 0, NULL, 0 };
	long			 rc;
	int			 i;

	/* Before anything can fork: its children must be inside too. */
	if (a->join_cgroup && (rc = spawn_join_cgroup(o->cgroup_fd)) < 0)
		spawn_child_fail(SPAWN_CGROUP, rc);
	if (o->confine != NULL)
		spawn_child_limits(o->confine);
	if ((rc = spawn_raw1(SYS_setsid, 0)) < 0)
		spawn_child_fail(SPAWN_SETSID, rc);
	if (o->pty_fd != -1) {
		if ((rc = spawn_raw3(SYS_ioctl, o->pty_fd, TIOCSCTTY, 0)) < 0)
			spawn_child_fail(SPAWN_CTTY, rc);
		for (i = 0; i <= 2; i++)
			if ((rc = spawn_dup_onto(o->pty_fd, i)) < 0)
				spawn_child_fail(SPAWN_DUP, rc);
	} else if ((rc = spawn_dup_onto(o->stdin_fd, 0)) < 0 ||
	    (rc = spawn_dup_onto(o->stdout_fd, 1)) < 0 ||
	    (rc = spawn_dup_onto(o->stderr_fd, 2)) < 0)
		spawn_child_fail(SPAWN_DUP, rc);
	if (o->confine != NULL)
		spawn_child_enter(o->confine);
	if ((rc = spawn_raw1(SYS_chdir, (long)o->cwd)) < 0)
		spawn_child_fail(SPAWN_CHDIR, rc);
	if (o->confine != NULL)
		spawn_child_drop(o->confine);
	spawn_raw3(SYS_close_range, 3, ~0U, 0);
	/* exec keeps SIG_IGN (the worker ignores SIGPIPE): undo it. */
	for (i = 0; spawn_reset_signals[i] != 0; i++)
		spawn_raw4(SYS_rt_sigaction, spawn_reset_signals[i], (long)&dfl,
		    0, 8);
	spawn_raw4(SYS_rt_sigprocmask, SIG_SETMASK, (long)a->mask, 0, 8);
	/* Last: from here on only what the program may do is allowed. */
	if (o->confine != NULL && o->confine->seccomp != NULL &&
	    (rc = spawn_raw3(SYS_seccomp, 1 /* SECCOMP_SET_MODE_FILTER */, 0,
	    (long)o->confine->seccomp)) < 0)
		spawn_child_fail(SPAWN_SECCOMP, rc);
	if (o->argv != NULL)
		spawn_child_direct(o);
	rc = spawn_raw3(SYS_execve, (long)o->shell, (long)a->argv,
	    (long)o->envp);
	spawn_child_fail(SPAWN_EXEC, rc);
}

/* The child's entry point when it starts on its own stack. */
static void SPAWN_CHILD_ATTR
spawn_child_entry(void *arg)
{
	spawn_child(arg);
}

/* The same, for glibc's clone(), which wants an int function. */
static int SPAWN_CHILD_HELPER
spawn_child_fn(void *arg)
{
	spawn_child(arg);
}

#define SPAWN_STACK_SIZE	(64 * 1024)

#if defined(__x86_64__)
/*
 * clone3 with CLONE_VM: no page tables are copied, which on a VM costs
 * as much as the exec. The child starts on its own stack, so it must not
 * return through the syscall() wrapper: it calls fn directly. This is what
 * glibc's posix_spawn does, plus CLONE_INTO_CGROUP, which it cannot do.
 */
static long
spawn_clone3_vm(struct clone_args *args, void (*fn)(void *), void *arg)
{
	register void	*r12 __asm__("r12") = (void *)fn;
	register void	*r13 __asm__("r13") = arg;
	long		 ret;

	__asm__ volatile(
	    "syscall\n\t"
	    "test %%rax, %%rax\n\t"
	    "jnz 1f\n\t"
	    "xor %%ebp, %%ebp\n\t"	/* the child: outermost frame */
	    "mov %%r13, %%rdi\n\t"
	    "call *%%r12\n\t"
	    "mov $60, %%eax\n\t"	/* not reached: fn never returns */
	    "mov $127, %%edi\n\t"
	    "syscall\n\t"
	    "1:\n\t"
	    : "=a" (ret)
	    : "a" ((long)SYS_clone3), "D" (args), "S" (sizeof *args),
	      "r" (r12), "r" (r13)
	    : "rcx", "r11", "memory", "cc");
	if (ret < 0) {
		errno = -ret;
		return (-1);
	}
	return (ret);
}
#endif

/* One stack for the child: CLONE_VFORK means one child at a time. */
static void *
spawn_child_stack(void)
{
	static void	*stack;

	if (stack == NULL) {
		stack = mmap(NULL, SPAWN_STACK_SIZE, PROT_READ|PROT_WRITE,
		    MAP_PRIVATE|MAP_ANONYMOUS|MAP_STACK, -1, 0);
		if (stack == MAP_FAILED)
			stack = NULL;
	}
	return (stack);
}

/*
 * clone3 with CLONE_VFORK, and CLONE_INTO_CGROUP when a leaf is given: the
 * child is in its cgroup before its first instruction, so nothing it starts
 * can be outside. The parent is suspended until the child exec'd or died.
 * Where clone3 is refused (ENOSYS: old kernels, seccomp filters, valgrind)
 * glibc's clone() does the same, and the child joins its leaf itself.
 */
static pid_t
spawn_clone(const struct spawn_opts *o, const sigset_t *mask, int *pidfd)
{
	static int		 no_clone3;
	const char		*base = strrchr(o->shell, '/');
	char *const		 argv[] = { (char *)(base != NULL ? base + 1 :
				    o->shell), (char *)"-c",
				    (char *)o->command, NULL };
	struct spawn_child_args	 a = { o, mask, argv, 0 };
	struct clone_args	 args;
	char			*stack;
	pid_t			 pid;

	if ((stack = spawn_child_stack()) == NULL)
		return (-1);
	if (!no_clone3) {
		memset(&args, 0, sizeof args);
		args.flags = CLONE_VFORK;
		args.exit_signal = SIGCHLD;
		/*
		 * exit_signal stays SIGCHLD: an execve makes it SIGCHLD again
		 * anyway, so 0 would only hide a child that dies before.
		 */
		if (pidfd != NULL) {
			args.flags |= CLONE_PIDFD;
			args.pidfd = (uint64_t)(uintptr_t)pidfd;
		}
		if (o->cgroup_fd != -1) {
			args.flags |= CLONE_INTO_CGROUP;
			args.cgroup = (uint64_t)o->cgroup_fd;
		}
#if defined(__x86_64__)
		args.flags |= CLONE_VM;
		args.stack = (uint64_t)(uintptr_t)stack;
		args.stack_size = SPAWN_STACK_SIZE;
		pid = spawn_clone3_vm(&args, spawn_child_entry, &a);
#else
		/* Elsewhere: fork semantics (page tables copied). */
		pid = syscall(SYS_clone3, &args, sizeof args);
		if (pid == 0)
			spawn_child_entry(&a);
#endif
		if (pid != -1 || errno != ENOSYS)
			return (pid);
		no_clone3 = 1;
	}
	if (pidfd != NULL)
		*pidfd = -1;
	a.join_cgroup = o->cgroup_fd != -1;
	return (clone(spawn_child_fn, stack + SPAWN_STACK_SIZE,
	    CLONE_VM|CLONE_VFORK|SIGCHLD, &a));
}

pid_t
spawn_start(const struct spawn_opts *o, int *pidfd)
{
	sigset_t	all, old;
	pid_t		pid;
	int		saved_errno;

	if (spawn_report == NULL) {
		spawn_report = mmap(NULL, sizeof *spawn_report,
		    PROT_READ|PROT_WRITE, MAP_SHARED|MAP_ANONYMOUS, -1, 0);
		if (spawn_report == MAP_FAILED) {
			spawn_report = NULL;
			return (-1);
		}
	}
	spawn_report->err = 0;
	spawn_report->step = SPAWN_OK;
	if (pidfd != NULL)
		*pidfd = -1;
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	pid = spawn_clone(o, &old, pidfd);
	saved_errno = errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (pid == -1) {
		spawn_last_step = SPAWN_CLONE;
		errno = saved_errno;
		return (-1);
	}
	if (spawn_report->step != SPAWN_OK) {
		spawn_last_step = spawn_report->step;
		saved_errno = spawn_report->err;
		while (waitpid(pid, NULL, 0) == -1 && errno == EINTR)
			;
		if (pidfd != NULL && *pidfd != -1) {
			close(*pidfd);
			*pidfd = -1;
		}
		errno = saved_errno;
		return (-1);
	}
	return (pid);
}

int
spawn_openpty(unsigned rows, unsigned cols, int *master, int *slave)
{
	struct winsize	ws;
	char		name[128];
	int		saved_errno;

	*master = *slave = -1;
	if ((*master = posix_openpt(O_RDWR|O_NOCTTY|O_CLOEXEC)) == -1)
		return (-1);
	if (grantpt(*master) == -1 || unlockpt(*master) == -1 ||
	    ptsname_r(*master, name, sizeof name) != 0)
		goto fail;
	if ((*slave = open(name, O_RDWR|O_NOCTTY|O_CLOEXEC)) == -1)
		goto fail;
	memset(&ws, 0, sizeof ws);
	ws.ws_row = rows;
	ws.ws_col = cols;
	if (ioctl(*master, TIOCSWINSZ, &ws) == -1 ||
	    fcntl(*master, F_SETFL, fcntl(*master, F_GETFL) | O_NONBLOCK) == -1)
		goto fail;
	return (0);

fail:
	saved_errno = errno;
	close(*master);
	if (*slave != -1)
		close(*slave);
	*master = *slave = -1;
	errno = saved_errno;
	return (-1);
}
