#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "exec/spawn.h"

#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

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
};

static struct spawn_report	*spawn_report;
static int			 spawn_last_step;

static const int	 spawn_reset_signals[] = {
	SIGPIPE, SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGCHLD, SIGALRM,
	SIGUSR1, SIGUSR2, SIGTSTP, SIGTTIN, SIGTTOU, SIGXFSZ, 0
};

static const char *spawn_step_names[] = {
	"ok", "dup2", "setsid", "controlling tty", "chdir", "exec", "clone",
	"cgroup"
};

const char *
spawn_failed_step(void)
{
	return (spawn_step_names[spawn_last_step]);
}

/* Records the failed step and errno for the parent; async-signal-safe. */
static void __attribute__((noreturn))
spawn_child_fail(int step)
{
	spawn_report->err = errno;
	spawn_report->step = step;
	_exit(127);
}

/* What the child needs, on the parent's (suspended) stack. */
struct spawn_child_args {
	const struct spawn_opts	*o;
	const sigset_t		*mask;
	int			 join_cgroup;	/* no CLONE_INTO_CGROUP */
};

/* Moves the calling process into the leaf (clone3 fallback). */
static int
spawn_join_cgroup(int cgroup_fd)
{
	int	fd, rc;

	if ((fd = openat(cgroup_fd, "cgroup.procs", O_WRONLY|O_CLOEXEC)) == -1)
		return (-1);
	rc = write(fd, "0", 1) == 1 ? 0 : -1;
	close(fd);
	return (rc);
}

/* Runs between clone and exec: async-signal-safe calls only. */
static void __attribute__((noreturn))
spawn_child(const struct spawn_child_args *a)
{
	const struct spawn_opts	*o = a->o;
	const char	*base = strrchr(o->shell, '/');
	char *const	 argv[] = { (char *)(base != NULL ? base + 1 : o->shell),
			    (char *)"-c", (char *)o->command, NULL };
	int		 i;

	/* Before anything can fork: its children must be inside too. */
	if (a->join_cgroup && spawn_join_cgroup(o->cgroup_fd) == -1)
		spawn_child_fail(SPAWN_CGROUP);
	if (setsid() == -1)
		spawn_child_fail(SPAWN_SETSID);
	if (o->pty_fd != -1) {
		if (ioctl(o->pty_fd, TIOCSCTTY, 0) == -1)
			spawn_child_fail(SPAWN_CTTY);
		for (i = 0; i <= 2; i++)
			if (dup2(o->pty_fd, i) == -1)
				spawn_child_fail(SPAWN_DUP);
	} else if (dup2(o->stdin_fd, 0) == -1 || dup2(o->stdout_fd, 1) == -1 ||
	    dup2(o->stderr_fd, 2) == -1)
		spawn_child_fail(SPAWN_DUP);
	if (chdir(o->cwd) == -1)
		spawn_child_fail(SPAWN_CHDIR);
	syscall(SYS_close_range, 3U, ~0U, 0U);
	/* exec keeps SIG_IGN (the worker ignores SIGPIPE): undo it. */
	for (i = 0; spawn_reset_signals[i] != 0; i++)
		signal(spawn_reset_signals[i], SIG_DFL);
	sigprocmask(SIG_SETMASK, a->mask, NULL);
	execve(o->shell, argv, o->envp);
	spawn_child_fail(SPAWN_EXEC);
}

/* The child's entry point when it starts on its own stack. */
static void __attribute__((noreturn))
spawn_child_entry(void *arg)
{
	spawn_child(arg);
}

/* The same, for glibc's clone(), which wants an int function. */
static int
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
spawn_clone(const struct spawn_opts *o, const sigset_t *mask)
{
	static int		 no_clone3;
	struct spawn_child_args	 a = { o, mask, 0 };
	struct clone_args	 args;
	char			*stack;
	pid_t			 pid;

	if ((stack = spawn_child_stack()) == NULL)
		return (-1);
	if (!no_clone3) {
		memset(&args, 0, sizeof args);
		args.flags = CLONE_VFORK;
		args.exit_signal = SIGCHLD;
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
	a.join_cgroup = o->cgroup_fd != -1;
	return (clone(spawn_child_fn, stack + SPAWN_STACK_SIZE,
	    CLONE_VM|CLONE_VFORK|SIGCHLD, &a));
}

pid_t
spawn_start(const struct spawn_opts *o)
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
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	pid = spawn_clone(o, &old);
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
