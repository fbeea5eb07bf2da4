/* Whether a session's command waits for input, from /proc (waiting.h). */

#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "exec/exec.h"
#include "logs/clock.h"
#include "logs/log.h"
#include "logs/xmalloc.h"
#include "worker/waiting.h"

#define WAITING_MAX_FDS		16	/* a prompt waits on one or two */
#define WAITING_MAX_TASKS	4096	/* a larger group is not looked at */

struct waiting {
	struct event		*ev;
	struct exec		*ex;		/* borrowed */
	int			 pty;
	dev_t			 in_dev;	/* the terminal's slave side, or
						   the stdin pipe */
	ino_t			 in_ino;
	int			 waiting;	/* the last look's finding */
	int			 told;		/* this prompt was called back */
	int64_t			 since_ms;
	pid_t			 pid;		/* the reader */
	unsigned		 every_ms;	/* the next wait between looks */
	waiting_change_cb	 cb;
	void			*arg;
	struct waiting_task	*tasks;		/* the look's, reused */
	size_t			 ntasks, atasks;
};

int
waiting_call_parse(const char *text, struct waiting_call *c)
{
	char	*end;
	int	 i;

	memset(c, 0, sizeof *c);
	errno = 0;
	c->nr = strtol(text, &end, 10);
	if (end == text || errno != 0 || (*end != ' ' && *end != '\0'))
		return (-1);	/* "running", or unknown */
	if (c->nr == -1)	/* "-1 sp pc": blocked, not in a call */
		return (sscanf(end, " %llx %llx", &c->sp, &c->pc) == 2 ? 0 : -1);
	if (c->nr < 0)
		return (-1);
	for (i = 0; i < 6; i++) {
		text = end;
		c->arg[i] = strtoull(text, &end, 16);
		if (end == text)
			return (-1);
	}
	if (sscanf(end, " %llx %llx", &c->sp, &c->pc) != 2)
		return (-1);
	return (0);
}

/* A select or pselect6: the read set alone, and no timeout. */
static enum waiting_kind
waiting_call_select(const struct waiting_call *c, struct waiting_where *w)
{
	if (c->arg[1] == 0 || c->arg[2] != 0 || c->arg[3] != 0 ||
	    c->arg[4] != 0 || c->arg[0] == 0 || c->arg[0] > 1024)
		return (WAITING_OTHER);
	w->addr = c->arg[1];
	w->n = (size_t)c->arg[0];
	return (WAITING_SELECT);
}

/*
 * read is what a plain prompt waits in (bash's read, dash, Python's
 * input() without readline); readline (bash -i, python3 -i) waits in
 * pselect6 or select on the terminal alone, then reads. A poll or select
 * with a timeout has work of its own on a clock (a TUI that redraws, a
 * progress loop), and one that also waits on another fd is a relay (ssh,
 * script, a multiplexer) whose other side may be busy: neither counts.
 * An event loop (Node's REPL, libuv, asyncio) waits in epoll, its set in
 * /proc/<pid>/fdinfo, often with a timer of its own armed: it counts
 * when the set holds the input and otherwise only the loop's own
 * wake-ups (eventfd, signalfd, timerfd, a pipe to itself), whatever its
 * timeout; a socket or another terminal in the set is a relay or a
 * server, and does not (waiting_task_reads).
 */
enum waiting_kind
waiting_call_kind(const struct waiting_call *c, struct waiting_where *w)
{
	memset(w, 0, sizeof *w);
	w->fd = -1;
	if (c->nr == SYS_read) {
		if ((long long)c->arg[0] < 0 || c->arg[0] > 65535)
			return (WAITING_OTHER);
		w->fd = (int)c->arg[0];
		return (WAITING_READ);
	}
#ifdef SYS_poll
	if (c->nr == SYS_poll) {
		if ((int)(unsigned)c->arg[2] >= 0 || c->arg[1] == 0 ||
		    c->arg[1] > WAITING_MAX_FDS)
			return (WAITING_OTHER);
		w->addr = c->arg[0];
		w->n = (size_t)c->arg[1];
		return (WAITING_POLL);
	}
#endif
	if (c->nr == SYS_ppoll) {
		if (c->arg[2] != 0 || c->arg[1] == 0 ||
		    c->arg[1] > WAITING_MAX_FDS)
			return (WAITING_OTHER);
		w->addr = c->arg[0];
		w->n = (size_t)c->arg[1];
		return (WAITING_POLL);
	}
#ifdef SYS_select
	if (c->nr == SYS_select)
		return (waiting_call_select(c, w));
#endif
	if (c->nr == SYS_pselect6)
		return (waiting_call_select(c, w));
#ifdef SYS_epoll_wait
	if (c->nr == SYS_epoll_wait)
		goto epoll;
#endif
#ifndef SYS_epoll_pwait2
#define SYS_epoll_pwait2	441	/* Linux 5.11, on every arch */
#endif
	if (c->nr == SYS_epoll_pwait || c->nr == SYS_epoll_pwait2)
		goto epoll;
	return (WAITING_OTHER);

epoll:
	if ((long long)c->arg[0] < 0 || c->arg[0] > 65535)
		return (WAITING_OTHER);
	w->fd = (int)c->arg[0];
	return (WAITING_EPOLL);
}

int
waiting_epoll_fds(const char *fdinfo, int *fds, size_t max)
{
	const char	*p = fdinfo;
	size_t		 k = 0;
	long		 fd;

	while ((p = strstr(p, "tfd:")) != NULL) {
		if (p != fdinfo && p[-1] != '\n') {
			p += 4;
			continue;
		}
		fd = strtol(p + 4, NULL, 10);
		p += 4;
		if (fd < 0 || fd > 65535)
			continue;
		if (k == max)
			return (-1);
		fds[k++] = (int)fd;
	}
	return ((int)k);
}

int
waiting_poll_fds(const void *buf, size_t n, int *fds, size_t max)
{
	const struct pollfd	*p = buf;
	size_t			 i, k = 0;

	for (i = 0; i < n; i++) {
		if (p[i].fd < 0)
			continue;	/* poll ignores it */
		if ((p[i].events & ~(POLLIN|POLLPRI|POLLRDNORM|POLLRDBAND)) !=
		    0 || (p[i].events & (POLLIN|POLLRDNORM)) == 0 || k == max)
			return (-1);
		fds[k++] = p[i].fd;
	}
	return ((int)k);
}

int
waiting_select_fds(const void *buf, size_t n, int *fds, size_t max)
{
	const unsigned long	*set = buf;
	const size_t		 bits = 8 * sizeof *set;
	size_t			 i, k = 0;

	for (i = 0; i < n; i++) {
		if (((set[i / bits] >> (i % bits)) & 1) == 0)
			continue;
		if (k == max)
			return (-1);
		fds[k++] = (int)i;
	}
	return ((int)k);
}

int
waiting_stat_parse(const char *text, char *state, pid_t *pgrp, pid_t *sid)
{
	const char	*p;
	int		 g, s;

	/* The name may hold anything, ')' too: the last one ends it. */
	if ((p = strrchr(text, ')')) == NULL)
		return (-1);
	if (sscanf(p + 1, " %c %*d %d %d", state, &g, &s) != 3)
		return (-1);
	*pgrp = (pid_t)g;
	*sid = (pid_t)s;
	return (0);
}

/*
 * A running thread is at work; one in 'D' waits on a disk or the kernel,
 * not on a person; a stopped one ('T', 't') waits for a signal. Only when
 * every live thread sleeps and one of them sleeps in a read of the input
 * is the next move the user's.
 */
int
waiting_decide(const struct waiting_task *t, size_t n)
{
	size_t	i;
	int	reader = -1;

	for (i = 0; i < n; i++) {
		if (t[i].state == 'Z' || t[i].state == 'X')
			continue;
		if (t[i].state != 'S')
			return (-1);
		if (t[i].reads_input && reader == -1)
			reader = (int)i;
	}
	return (reader);
}

/* A small /proc file into buf (NUL-terminated); its length or -1. */
static ssize_t
waiting_read(const char *path, char *buf, size_t size)
{
	ssize_t	n;
	int	fd;

	if ((fd = open(path, O_RDONLY|O_CLOEXEC)) == -1)
		return (-1);
	do
		n = read(fd, buf, size - 1);
	while (n == -1 && errno == EINTR);
	close(fd);
	if (n < 0)
		return (-1);
	buf[n] = '\0';
	return (n);
}

/* 1 if fd of thread tid (of pid) is the session's input. */
static int
waiting_is_input(const struct waiting *w, pid_t pid, pid_t tid, int fd)
{
	struct stat	sb;
	char		path[96];

	snprintf(path, sizeof path, "/proc/%d/task/%d/fd/%d", (int)pid,
	    (int)tid, fd);
	if (stat(path, &sb) == -1)
		return (0);
	return (sb.st_dev == w->in_dev && sb.st_ino == w->in_ino);
}

/*
 * 1 if fd of process pid is one of its event loop's own wake-ups: an
 * eventfd, signalfd or timerfd, or a pipe whose other end it holds too
 * (libuv's signal pipe), not a pipe from another process.
 */
static int
waiting_loop_fd(pid_t pid, int fd)
{
	struct dirent	*de;
	DIR		*d;
	char		 path[320], link[128], other[128];
	ssize_t		 n;
	int		 found = 0;

	snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)pid, fd);
	if ((n = readlink(path, link, sizeof link - 1)) <= 0)
		return (0);
	link[n] = '\0';
	if (strcmp(link, "anon_inode:[eventfd]") == 0 ||
	    strcmp(link, "anon_inode:[signalfd]") == 0 ||
	    strcmp(link, "anon_inode:[timerfd]") == 0)
		return (1);
	if (strncmp(link, "pipe:", 5) != 0)
		return (0);
	snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
	if ((d = opendir(path)) == NULL)
		return (0);
	while (!found && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || atoi(de->d_name) == fd)
			continue;
		snprintf(path, sizeof path, "/proc/%d/fd/%s", (int)pid,
		    de->d_name);
		if ((n = readlink(path, other, sizeof other - 1)) <= 0)
			continue;
		other[n] = '\0';
		found = strcmp(other, link) == 0;
	}
	closedir(d);
	return (found);
}

/*
 * An epoll of thread tid on epfd: 1 if its set holds the input and
 * otherwise only the loop's own wake-ups.
 */
static int
waiting_epoll_reads(const struct waiting *w, pid_t pid, pid_t tid, int epfd)
{
	char	path[96], text[8192];
	int	fds[WAITING_MAX_FDS], n, i, input = 0;

	snprintf(path, sizeof path, "/proc/%d/fdinfo/%d", (int)pid, epfd);
	if (waiting_read(path, text, sizeof text) == -1 ||
	    (n = waiting_epoll_fds(text, fds, WAITING_MAX_FDS)) <= 0)
		return (0);
	for (i = 0; i < n; i++) {
		if (waiting_is_input(w, pid, tid, fds[i]))
			input = 1;
		else if (!waiting_loop_fd(pid, fds[i]))
			return (0);
	}
	return (input);
}

/*
 * The fds a poll or select of thread tid waits on, read from its memory
 * (the kernel writes the results back only when the call returns): their
 * number, or -1.
 */
static int
waiting_wait_fds(pid_t pid, enum waiting_kind kind,
    const struct waiting_where *where, int *fds)
{
	unsigned long	 buf[WAITING_MAX_FDS * sizeof(struct pollfd) /
			     sizeof(unsigned long) + 1024 / 64];
	char		 path[64];
	size_t		 len;
	ssize_t		 n;
	int		 fd;

	if (kind == WAITING_POLL)
		len = where->n * sizeof(struct pollfd);
	else
		len = (where->n + 8 * sizeof buf[0] - 1) /
		    (8 * sizeof buf[0]) * sizeof buf[0];
	if (len > sizeof buf)
		return (-1);
	snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
	if ((fd = open(path, O_RDONLY|O_CLOEXEC)) == -1)
		return (-1);
	n = pread(fd, buf, len, (off_t)where->addr);
	close(fd);
	if (n != (ssize_t)len)
		return (-1);
	if (kind == WAITING_POLL)
		return (waiting_poll_fds(buf, where->n, fds, WAITING_MAX_FDS));
	return (waiting_select_fds(buf, where->n, fds, WAITING_MAX_FDS));
}

/* 1 if thread tid of pid is blocked reading the session's input. */
static int
waiting_task_reads(const struct waiting *w, pid_t pid, pid_t tid)
{
	struct waiting_call	c;
	struct waiting_where	where;
	enum waiting_kind	kind;
	char			path[96], text[256], again[256];
	int			fds[WAITING_MAX_FDS], n, i;

	snprintf(path, sizeof path, "/proc/%d/task/%d/syscall", (int)pid,
	    (int)tid);
	if (waiting_read(path, text, sizeof text) == -1 ||
	    waiting_call_parse(text, &c) == -1)
		return (0);
	kind = waiting_call_kind(&c, &where);
	if (kind == WAITING_OTHER)
		return (0);
	if (kind == WAITING_READ)
		return (waiting_is_input(w, pid, tid, where.fd));
	if (kind == WAITING_EPOLL) {
		if (!waiting_epoll_reads(w, pid, tid, where.fd))
			return (0);
	} else {
		if ((n = waiting_wait_fds(pid, kind, &where, fds)) <= 0)
			return (0);
		for (i = 0; i < n; i++)
			if (!waiting_is_input(w, pid, tid, fds[i]))
				return (0);
	}
	/* Still in the same call: what was read was its set. */
	if (waiting_read(path, again, sizeof again) == -1)
		return (0);
	return (strcmp(text, again) == 0);
}

/* Adds the facts of one thread to the look. */
static void
waiting_add(struct waiting *w, pid_t pid, char state, int reads)
{
	if (w->ntasks == w->atasks) {
		w->atasks = w->atasks == 0 ? 16 : w->atasks * 2;
		w->tasks = xreallocarray(w->tasks, w->atasks,
		    sizeof *w->tasks);
	}
	w->tasks[w->ntasks].pid = pid;
	w->tasks[w->ntasks].state = state;
	w->tasks[w->ntasks].reads_input = reads;
	w->ntasks++;
}

/*
 * The threads of process pid into the look: 0, or -1 once one is busy
 * (the decision is made: no need to look further).
 */
static int
waiting_look_process(struct waiting *w, pid_t pid)
{
	struct dirent	*de;
	DIR		*d;
	char		 path[96], text[512], state;
	pid_t		 tid, g, s;
	int		 rc = 0;

	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	if ((d = opendir(path)) == NULL)
		return (0);	/* gone meanwhile */
	while (rc == 0 && (de = readdir(d)) != NULL) {
		if ((tid = (pid_t)atoi(de->d_name)) <= 0)
			continue;
		snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)pid,
		    (int)tid);
		if (waiting_read(path, text, sizeof text) == -1 ||
		    waiting_stat_parse(text, &state, &g, &s) == -1)
			continue;
		if (state != 'S') {
			waiting_add(w, pid, state, 0);
			rc = state == 'Z' || state == 'X' ? 0 : -1;
			continue;
		}
		waiting_add(w, pid, state, waiting_task_reads(w, pid, tid));
		if (w->ntasks >= WAITING_MAX_TASKS)
			rc = -1;
	}
	closedir(d);
	return (rc);
}

/*
 * Process pid into the look if it is in front of the input (in group
 * want: the terminal's foreground group, or the pipe command's session):
 * 0, or -1 once the decision is made (one is busy).
 */
static int
waiting_consider(struct waiting *w, pid_t pid, pid_t want)
{
	char	path[64], text[512], state;
	pid_t	g, s;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if (waiting_read(path, text, sizeof text) == -1 ||
	    waiting_stat_parse(text, &state, &g, &s) == -1 ||
	    (w->pty ? g : s) != want)
		return (0);
	return (waiting_look_process(w, pid));
}

/*
 * Every process of the command, from its cgroup leaf's cgroup.procs (a
 * handful of lines), or else from all of /proc: 0, or -1 if neither can
 * be read.
 */
static int
waiting_scan(struct waiting *w, pid_t want)
{
	struct dirent	*de;
	FILE		*f;
	DIR		*d;
	long		 pid;
	int		 cfd, fd;

	if ((cfd = exec_cgroup_fd(w->ex)) != -1 &&
	    (fd = openat(cfd, "cgroup.procs", O_RDONLY|O_CLOEXEC)) != -1) {
		if ((f = fdopen(fd, "r")) == NULL) {
			close(fd);
			return (-1);
		}
		while (fscanf(f, "%ld", &pid) == 1)
			if (pid > 0 && waiting_consider(w, (pid_t)pid,
			    want) == -1)
				break;
		fclose(f);
		return (0);
	}
	if ((d = opendir("/proc")) == NULL)
		return (-1);
	while ((de = readdir(d)) != NULL)
		if ((pid = atol(de->d_name)) > 0 &&
		    waiting_consider(w, (pid_t)pid, want) == -1)
			break;
	closedir(d);
	return (0);
}

/*
 * One look: the processes in front of the input, their threads, the
 * decision. 1 with *reader if it waits, else 0.
 */
static int
waiting_look(struct waiting *w, int fd, pid_t *reader)
{
	pid_t	want;
	int	i;

	want = w->pty ? tcgetpgrp(fd) : exec_pid(w->ex);
	w->ntasks = 0;
	if (want <= 0 || waiting_scan(w, want) == -1)
		return (0);
	if ((i = waiting_decide(w->tasks, w->ntasks)) == -1)
		return (0);
	*reader = w->tasks[i].pid;
	return (1);
}

/* Looks again after ms. */
static void
waiting_arm(struct waiting *w, unsigned ms)
{
	struct timeval	tv;

	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	evtimer_add(w->ev, &tv);
}

/* The timer: look, call back on a change, look again while it runs. */
static void
waiting_timer_cb(evutil_socket_t unused, short what, void *arg)
{
	struct waiting	*w = arg;
	pid_t		 reader = 0;
	int		 fd, pty, found, fresh;

	(void)unused;
	(void)what;
	/* The input gone: output at EOF, or stdin closed: nothing to read. */
	if ((fd = exec_input_fd(w->ex, &pty)) == -1) {
		found = 0;
	} else {
		found = waiting_look(w, fd, &reader);
		waiting_arm(w, w->every_ms);
		if (w->every_ms < WAITING_MAX_MS)
			w->every_ms = w->every_ms * 2 < WAITING_MAX_MS ?
			    w->every_ms * 2 : WAITING_MAX_MS;
	}
	if (found && !w->waiting) {
		w->waiting = 1;
		w->since_ms = clock_wall_ms();
		w->pid = reader;
		fresh = !w->told;
		w->told = 1;
		w->cb(1, fresh, w->arg);
	} else if (!found && w->waiting) {
		w->waiting = 0;
		w->cb(0, 0, w->arg);
	}
}

struct waiting *
waiting_create(struct event_base *base, struct exec *ex,
    waiting_change_cb cb, void *arg)
{
	struct waiting	*w;
	struct stat	 sb;
	char		 name[128];
	int		 fd, pty;

	if ((fd = exec_input_fd(ex, &pty)) == -1)
		return (NULL);
	/* The terminal as its readers hold it: the slave side. */
	if (pty ? ptsname_r(fd, name, sizeof name) != 0 ||
	    stat(name, &sb) == -1 : fstat(fd, &sb) == -1) {
		log_warn("exec %s: cannot tell its input: %s", exec_id(ex),
		    strerror(errno));
		return (NULL);
	}
	w = xcalloc(1, sizeof *w);
	w->ex = ex;
	w->pty = pty;
	w->in_dev = sb.st_dev;
	w->in_ino = sb.st_ino;
	w->cb = cb;
	w->arg = arg;
	w->every_ms = WAITING_EVERY_MS;
	if ((w->ev = evtimer_new(base, waiting_timer_cb, w)) == NULL)
		fatal("out of memory (event)");
	waiting_arm(w, WAITING_QUIET_MS);
	return (w);
}

void
waiting_free(struct waiting *w)
{
	if (w == NULL)
		return;
	event_free(w->ev);
	free(w->tasks);
	free(w);
}

void
waiting_activity(struct waiting *w)
{
	if (w == NULL)
		return;
	w->told = 0;
	w->every_ms = WAITING_EVERY_MS;
	waiting_arm(w, WAITING_QUIET_MS);
	if (w->waiting) {
		w->waiting = 0;
		w->cb(0, 0, w->arg);
	}
}

int
waiting_now(const struct waiting *w, int64_t *since_ms, pid_t *pid)
{
	if (w == NULL || !w->waiting)
		return (0);
	*since_ms = w->since_ms;
	*pid = w->pid;
	return (1);
}
