#ifndef EXECQ_WAITING_H
#define EXECQ_WAITING_H

/*
 * "Waiting for input", from the kernel, never from silence: a session's
 * watch that looks, while the session is quiet, whether the processes in
 * front of its input are asleep in a read of it. For a PTY session those
 * are the terminal's foreground process group (tcgetpgrp on the master);
 * for a pipe session, every process of the command's session (its setsid).
 * The group waits when at least one of its threads is asleep in a read of
 * the input (read on the terminal or the stdin pipe, or select, pselect6,
 * poll or ppoll with no timeout on nothing but that input: readline's
 * wait) and none of its threads is running or in an uninterruptible
 * sleep. /proc/<pid>/task/<tid>/syscall says which call a sleeping thread
 * is in and with which arguments; the kernel fills it only for a thread
 * that is blocked, so a thread that computes or sleeps in nanosleep,
 * wait4 or a socket never counts.
 *
 * When: WAITING_QUIET_MS after the last output or input (and after the
 * start), then every WAITING_EVERY_MS while nothing comes, until the
 * watch is freed (the session ended). Output or input ends a wait at once;
 * the next one is a new prompt.
 *
 * The pure part (the parsers and the decision) is below the watch, for
 * the unit tests (tests/unit/test_waiting_parse.c).
 */

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

struct event_base;
struct exec;
struct waiting;

#define WAITING_QUIET_MS	200	/* the first look after output */
#define WAITING_EVERY_MS	500	/* then, while it stays quiet, ... */
#define WAITING_MAX_MS		8000	/* ... each wait twice the last, up
					   to this: 1000 idle sessions cost
					   a look each 8 s, not 2000 a second */

/*
 * The watch's finding changed: it waits now (waiting_now() says since
 * when and who) or no longer. fresh is 1 for a wait that is a new prompt
 * (the first since the last output or input), else 0.
 */
typedef void (*waiting_change_cb)(int waiting, int fresh, void *arg);

/*
 * Watches the running exec ex (borrowed: free the watch before ex ends),
 * its input as exec_input_fd() gives it (the PTY master, or the write end
 * of its stdin pipe), its session leader as exec_pid(). The first look is
 * WAITING_QUIET_MS from now. NULL when the input cannot be identified
 * (none, or fstat failed): then nothing is watched.
 */
struct waiting	*waiting_create(struct event_base *, struct exec *ex,
		    waiting_change_cb, void *arg);
/* Stops looking and frees it; NULL ok. Calls nothing back. */
void		 waiting_free(struct waiting *);
/*
 * Output or input came: whatever waited has been answered or has more to
 * say (a wait ends, calling back), and the next look is WAITING_QUIET_MS
 * from now. NULL ok.
 */
void		 waiting_activity(struct waiting *);
/*
 * 1 if the last look found it waiting, with since (wall ms, the look that
 * first saw this wait) and pid (the reader, as the worker sees it); else
 * 0. NULL ok (0).
 */
int		 waiting_now(const struct waiting *, int64_t *since_ms,
		    pid_t *pid);

/* The pure part. */

/* A thread's system call from /proc/<pid>/task/<tid>/syscall. */
struct waiting_call {
	long			 nr;		/* -1: blocked outside a call */
	unsigned long long	 arg[6];
	unsigned long long	 sp, pc;
};
/*
 * Parses text ("running", "-1 sp pc" or "nr a1 .. a6 sp pc", numbers in
 * hex but nr): 0 for a blocked thread (*c filled), -1 for a running one
 * or text it does not know.
 */
int		 waiting_call_parse(const char *text, struct waiting_call *);

/* What a blocked call waits on, for waiting_call_kind(). */
enum waiting_kind {
	WAITING_OTHER = 0,	/* not a read of input */
	WAITING_READ,		/* read(fd) */
	WAITING_POLL,		/* poll/ppoll, no timeout: addr, n pollfds */
	WAITING_SELECT,		/* select/pselect6, no timeout, read set
				   only: addr of a set of n fds */
	WAITING_EPOLL,		/* epoll_wait/_pwait/_pwait2 on fd, any
				   timeout: its set is in fdinfo */
};
struct waiting_where {
	int			 fd;		/* WAITING_READ; the epoll fd */
	unsigned long long	 addr;		/* WAITING_POLL, _SELECT */
	size_t			 n;
};
/*
 * Which kind of wait call c is on this machine's system call numbers;
 * a poll or select with a timeout, or a select with a write or except
 * set, is WAITING_OTHER (a program with a clock or other work of its own).
 */
enum waiting_kind waiting_call_kind(const struct waiting_call *,
		    struct waiting_where *);
/*
 * The fds a poll (n struct pollfd at buf) or a select (a set of n fds at
 * buf) waits to read, into fds (at most max): their number, or -1 if it
 * waits for something else too (a poll for writing, too many fds).
 */
int		 waiting_poll_fds(const void *buf, size_t n, int *fds,
		    size_t max);
/*
 * The fds an epoll instance watches, from its /proc/<pid>/fdinfo text
 * ("tfd: N events: ..." lines), into fds (at most max): their number,
 * or -1 if there are more.
 */
int		 waiting_epoll_fds(const char *fdinfo, int *fds, size_t max);
int		 waiting_select_fds(const void *buf, size_t n, int *fds,
		    size_t max);
/*
 * Parses a /proc/<pid>/stat (or task stat) text: 0 with *state, *pgrp
 * and *sid, or -1.
 */
int		 waiting_stat_parse(const char *text, char *state,
		    pid_t *pgrp, pid_t *sid);

/* One thread of the group, as the look found it. */
struct waiting_task {
	pid_t	 pid;		/* its process */
	char	 state;		/* 'R', 'S', 'D', 'Z', ... */
	int	 reads_input;	/* blocked in a read of the input */
};
/*
 * The decision: the index of a task that reads the input if the group
 * waits (one reads it, none runs: every live task sleeps, 'S'; zombies
 * do not count), else -1.
 */
int		 waiting_decide(const struct waiting_task *, size_t n);

#endif
