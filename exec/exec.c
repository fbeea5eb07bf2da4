/* One running command, from its spawn to its result and its last byte. */

#include <sys/prctl.h>
#include <sys/queue.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>

#include "exec/cgroup.h"
#include "exec/confine.h"
#include "exec/exec.h"
#include "exec/outbuf.h"
#include "exec/cmdenv.h"
#include "exec/spawn.h"
#include "logs/clock.h"
#include "logs/execlog.h"
#include "logs/log.h"
#include "logs/spare.h"
#include "logs/syncer.h"
#include "logs/xmalloc.h"

#define EXEC_LOG_TAIL	32768	/* a capped log's last (and first) bytes */

/* Flags that do not finish an exec (its phase does). */
enum exec_flag {
	EXEC_KILLING = 0x01,		/* TERM sent, KILL armed */
	EXEC_LOG_FULL = 0x02,		/* past log_max_bytes */
};

/*
 * An exec's phases, in order; exec_move is the only thing that changes
 * one, and only forward. Reaped and output at EOF come in either order
 * (tmux's JOB_DEAD and JOB_CLOSED): the second makes it EXEC_EMPTYING.
 * From there exec_maybe_done, the only place an exec finishes, moves it
 * on. A stream's own EOF is its fd being -1 (a PTY has no stderr).
 */
enum exec_phase {
	EXEC_RUNNING = 0,	/* not reaped, output open */
	EXEC_EXITED,		/* main process reaped, output still open */
	EXEC_CLOSED,		/* output at EOF, main process not reaped */
	EXEC_EMPTYING,		/* both: waiting for its cgroup to empty */
	EXEC_SYNCING,		/* the log is being fsync'd */
	EXEC_SYNCED,		/* ... and is on disk (or fsync failed) */
	EXEC_FINISHING,		/* its <id>.json is being written: then the
				   done callback, then it is freed */
};

struct exec {
	LIST_ENTRY(exec)	 entry;
	char			*id;
	char			*command;
	char			*cwd;
	char			*token;		/* or NULL */
	pid_t			 pid;
	int			 pidfd;		/* reaped through it, or -1:
						   SIGCHLD (exec_reaped) */
	struct event		*ev_pid;
	int			 pty;
	int			 durable;	/* fsync the log before done */
	enum exec_phase		 phase;
	unsigned		 flags;		/* enum exec_flag */
	enum exec_end		 end;
	int			 out_fd, err_fd;
	int			 in_fd;		/* stdin pipe (sessions), or -1 */
	int			 background;
	unsigned		 idle_ms;
	int64_t			 active_ms;	/* wall clock: the last output
						   or input */
	exec_output_cb		 outputcb;
	struct event		*ev_out, *ev_err;
	struct event		*ev_timeout, *ev_grace, *ev_drain, *ev_idle;
	struct outbuf		 out, err;
	struct outbuf		 logtail;	/* past log_max_bytes */
	struct execlog		*log;
	int			 log_error;
	struct cgroup		*cg;
	char			*tmp;		/* confined: its TMPDIR, or NULL */
	struct exec_confinement	 conf;
	unsigned long long	 pids_base, oom_base;	/* counters at start */
	int			 status;
	struct rusage		 ru;
	struct timespec		 t_start, t_end;
	int64_t			 started_ms;
	int64_t			 deadline_ms;	/* of its timeout, monotonic;
						   0: none */
	exec_done_cb		 donecb;
	void			*arg;
};

static LIST_HEAD(, exec)	 exec_all = LIST_HEAD_INITIALIZER(exec_all);
static struct event_base	*exec_base;
static const struct exec_config	*exec_cfg;
static struct cgroup_pool	*exec_pool;
static struct confine		*exec_confine;
static struct event		*exec_ev_cgroup;
static struct syncer		*exec_syncer;
static struct spare		*exec_spare;	/* files made ahead */
static int			 exec_devnull = -1;
static unsigned			 exec_n;

static void	exec_maybe_done(struct exec *);
static void	exec_free(struct exec *);

/* The one place ex->phase changes: a fact seen again moves nothing. */
static void
exec_move(struct exec *ex, enum exec_phase to)
{
	if ((to == EXEC_EXITED && ex->phase == EXEC_CLOSED) ||
	    (to == EXEC_CLOSED && ex->phase == EXEC_EXITED))
		to = EXEC_EMPTYING;	/* the second of the two facts */
	if (to > ex->phase)
		ex->phase = to;
}

/* Its main process is reaped. */
static int
exec_is_reaped(const struct exec *ex)
{
	return (ex->phase == EXEC_EXITED || ex->phase >= EXEC_EMPTYING);
}

/* Both streams are at EOF (a PTY has one). */
static int
exec_output_closed(const struct exec *ex)
{
	return (ex->out_fd == -1 && ex->err_fd == -1);
}

/* Milliseconds between two monotonic times. */
static int64_t
exec_ms_between(const struct timespec *a, const struct timespec *b)
{
	return ((int64_t)(b->tv_sec - a->tv_sec) * 1000 +
	    (b->tv_nsec - a->tv_nsec) / 1000000);
}

/* A cgroup leaf changed (populated or not): its exec may be done. */
static void
exec_cgroup_cb(evutil_socket_t fd, short what, void *arg)
{
	struct exec	*ex, *owner;

	(void)fd;
	(void)what;
	(void)arg;
	while ((owner = cgroup_pool_changed(exec_pool)) != NULL) {
		LIST_FOREACH(ex, &exec_all, entry) {
			if (ex == owner) {
				exec_maybe_done(ex);
				break;
			}
		}
	}
}

int
exec_init(struct event_base *base, const struct exec_config *cfg,
    struct cgroup_pool *pool, struct confine *confine)
{
	exec_base = base;
	exec_cfg = cfg;
	exec_pool = pool;
	exec_confine = confine;
	exec_devnull = open("/dev/null", O_RDONLY|O_CLOEXEC);
	exec_syncer = cfg->syncer;
	if (exec_devnull == -1 || exec_syncer == NULL)
		return (-1);
	exec_spare = spare_create(base, cfg->log_dir, cfg->spare_files);
	if (pool == NULL) {
		/* Orphans of our children come back to us, not to init. */
		if (prctl(PR_SET_CHILD_SUBREAPER, 1) == -1)
			return (-1);
		return (0);
	}
	exec_ev_cgroup = event_new(base, cgroup_pool_fd(pool),
	    EV_READ|EV_PERSIST, exec_cgroup_cb, NULL);
	if (exec_ev_cgroup == NULL || event_add(exec_ev_cgroup, NULL) == -1)
		return (-1);
	return (0);
}

void
exec_shutdown(void)
{
	struct exec	*ex;

	exec_syncer = NULL;	/* the caller freed it: no callbacks here */
	spare_free(exec_spare);
	exec_spare = NULL;
	while ((ex = LIST_FIRST(&exec_all)) != NULL)
		exec_free(ex);
	if (exec_ev_cgroup != NULL)
		event_free(exec_ev_cgroup);
	exec_ev_cgroup = NULL;
	cgroup_pool_free(exec_pool);
	exec_pool = NULL;
	confine_free(exec_confine);
	exec_confine = NULL;
	if (exec_devnull != -1)
		close(exec_devnull);
	exec_devnull = -1;
}

unsigned
exec_count(void)
{
	return (exec_n);
}

const char *
exec_id(const struct exec *ex)
{
	return (ex->id);
}

void
exec_confinement(const struct exec *ex, struct exec_confinement *c)
{
	unsigned long long	pids, oom;

	*c = ex->conf;
	if (ex->cg != NULL && c->limits) {
		cgroup_limit_events(ex->cg, &pids, &oom);
		c->pids_limit_hit = pids - ex->pids_base;
		c->oom_kills = oom - ex->oom_base;
	}
}

pid_t
exec_pid(const struct exec *ex)
{
	return (ex->pid);
}

int
exec_input_fd(const struct exec *ex, int *pty)
{
	*pty = ex->pty;
	return (ex->pty ? ex->out_fd : ex->in_fd);
}

int
exec_cgroup_fd(const struct exec *ex)
{
	return (ex->cg != NULL ? cgroup_fd(ex->cg) : -1);
}

/*
 * 1 if the environment behind fd (/proc/<pid>/environ, NUL-separated)
 * holds the entry want, however long the environment is.
 */
static int
exec_environ_has(int fd, const char *want)
{
	char	*buf = NULL;
	size_t	 len = 0, cap = 0, wl = strlen(want) + 1;
	ssize_t	 n;
	int	 found = 0;

	do {
		if (cap - len < 16384)
			buf = xrealloc(buf, cap += 65536);
		n = read(fd, buf + len, cap - len - 1);
		if (n > 0)
			len += n;
	} while (n > 0 || (n == -1 && errno == EINTR));
	buf[len] = '\0';
	/* Entries start at 0 or after a NUL; want includes its own NUL. */
	for (size_t i = 0; i < len && !found; i += strlen(buf + i) + 1)
		found = len - i >= wl && memcmp(buf + i, want, wl) == 0;
	free(buf);
	return (found);
}

/* A /proc sweep handed to the syncer's thread. */
struct exec_sweep_job {
	char	*want;		/* "EXECQ_SESSION_ID=<id>" */
	int	 sig;
};

/*
 * On the syncer's thread: sig to every process that carries the entry in
 * its environment (setsid'd escapees). Owns and frees the job.
 */
static int
exec_sweep_work(void *arg)
{
	struct exec_sweep_job	*job = arg;
	DIR			*d;
	struct dirent		*de;
	char			 path[300];
	int			 fd;

	if ((d = opendir("/proc")) != NULL) {
		while ((de = readdir(d)) != NULL) {
			if (de->d_name[0] < '1' || de->d_name[0] > '9')
				continue;
			snprintf(path, sizeof path, "/proc/%s/environ",
			    de->d_name);
			if ((fd = open(path, O_RDONLY|O_CLOEXEC)) == -1)
				continue;
			if (exec_environ_has(fd, job->want))
				kill((pid_t)atol(de->d_name), job->sig);
			close(fd);
		}
		closedir(d);
	}
	free(job->want);
	free(job);
	return (0);
}

/* The sweep is done; its job is freed already. */
static void
exec_sweep_done(int err, void *arg)
{
	(void)err;
	(void)arg;
}

/*
 * Without cgroups: signal the process group now, and every process that
 * carries our EXECQ_SESSION_ID in its environment from the syncer's
 * thread (reading all of /proc is no work for the loop).
 */
static void
exec_sweep(struct exec *ex, int sig)
{
	struct exec_sweep_job	*job;

	if (ex->pid > 0)
		kill(-ex->pid, sig);
	job = xcalloc(1, sizeof *job);
	xasprintf(&job->want, "EXECQ_SESSION_ID=%s", ex->id);
	job->sig = sig;
	if (exec_syncer != NULL)
		syncer_call(exec_syncer, exec_sweep_work, exec_sweep_done, job);
	else
		(void)exec_sweep_work(job);
}

/* sig to the whole tree. */
static void
exec_signal_tree(struct exec *ex, int sig)
{
	if (ex->cg != NULL) {
		if (sig == SIGKILL)
			cgroup_kill(ex->cg);
		else
			cgroup_signal(ex->cg, sig);
		return;
	}
	exec_sweep(ex, sig);
}

/* The grace period is over: KILL whatever is left. */
static void
exec_grace_cb(evutil_socket_t fd, short what, void *arg)
{
	struct exec	*ex = arg;

	(void)fd;
	(void)what;
	log_debug("exec %s: grace over, killing the tree", ex->id);
	exec_signal_tree(ex, SIGKILL);
}

/* TERM (or sig) now, KILL after the grace period. */
static void
exec_terminate(struct exec *ex, int sig, enum exec_end why)
{
	struct timeval	tv;

	if (ex->phase == EXEC_FINISHING)
		return;		/* over: its result is written already */
	if (ex->end == EXEC_END_EXIT)
		ex->end = why;
	if (ex->flags & EXEC_KILLING) {
		if (sig == SIGKILL)
			exec_signal_tree(ex, SIGKILL);
		return;
	}
	ex->flags |= EXEC_KILLING;
	exec_signal_tree(ex, sig);
	if (sig == SIGKILL)
		return;
	tv.tv_sec = exec_cfg->kill_grace_ms / 1000;
	tv.tv_usec = (exec_cfg->kill_grace_ms % 1000) * 1000;
	evtimer_add(ex->ev_grace, &tv);
}

/* The command ran out of time. */
static void
exec_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct exec	*ex = arg;

	(void)fd;
	(void)what;
	log_info("exec %s: timed out, terminating the tree", ex->id);
	exec_terminate(ex, SIGTERM, EXEC_END_TIMEOUT);
}

void
exec_kill(struct exec *ex, int sig, enum exec_end why)
{
	exec_terminate(ex, sig, why);
}

/* No output or input for idle_ms: end it. */
static void
exec_idle_cb(evutil_socket_t fd, short what, void *arg)
{
	struct exec	*ex = arg;

	(void)fd;
	(void)what;
	log_info("exec %s: idle for %u ms, terminating the tree", ex->id,
	    ex->idle_ms);
	exec_terminate(ex, SIGTERM, EXEC_END_IDLE);
}

/* Output arrived or input went in: noted, and the idle timer re-armed. */
static void
exec_idle_arm(struct exec *ex)
{
	struct timeval	tv;

	ex->active_ms = clock_wall_ms();
	if (ex->idle_ms == 0 || exec_is_reaped(ex))
		return;
	tv.tv_sec = ex->idle_ms / 1000;
	tv.tv_usec = (ex->idle_ms % 1000) * 1000;
	evtimer_add(ex->ev_idle, &tv);
}

ssize_t
exec_write(struct exec *ex, const void *buf, size_t len)
{
	int	fd = ex->pty ? ex->out_fd : ex->in_fd;
	ssize_t	n;

	if (fd == -1 || exec_is_reaped(ex)) {
		errno = EPIPE;
		return (-1);
	}
	do
		n = write(fd, buf, len);
	while (n == -1 && errno == EINTR);
	if (n == -1 && errno == EAGAIN)
		n = 0;
	if (n > 0)		/* input: the session is not idle */
		exec_idle_arm(ex);
	return (n);
}

int
exec_close_input(struct exec *ex)
{
	if (ex->pty)
		return (exec_write(ex, "\004", 1) == 1 ? 0 : -1);
	if (ex->in_fd == -1) {
		errno = EPIPE;
		return (-1);
	}
	close(ex->in_fd);
	ex->in_fd = -1;
	exec_idle_arm(ex);
	return (0);
}

int64_t
exec_active_ms(const struct exec *ex)
{
	return (ex->active_ms);
}

unsigned long long
exec_output_bytes(const struct exec *ex)
{
	return (ex->out.total + ex->err.total);
}

const char *
exec_log_path(const struct exec *ex)
{
	return (execlog_path(ex->log));
}

/* Stops reading one stream: EOF, EIO on a PTY, or the drain ran out. */
static void
exec_close_stream(struct exec *ex, int is_err)
{
	if (is_err) {
		if (ex->ev_err != NULL)
			event_del(ex->ev_err);
		if (ex->err_fd != -1)
			close(ex->err_fd);
		ex->err_fd = -1;
	} else {
		if (ex->ev_out != NULL)
			event_del(ex->ev_out);
		if (ex->out_fd != -1)
			close(ex->out_fd);
		ex->out_fd = -1;
	}
}

/*
 * Into the log, up to log_max_bytes; past that only the last bytes are
 * kept in memory, and exec_log_finish adds them when the command ends, so
 * the disk is safe and the last lines are always there.
 */
static void
exec_log(struct exec *ex, const char *buf, size_t n)
{
	unsigned long long	size = execlog_size(ex->log);
	size_t			room;

	if (ex->log_error != 0)
		return;
	if (ex->flags & EXEC_LOG_FULL) {
		outbuf_append(&ex->logtail, buf, n);
		return;
	}
	room = size + n > exec_cfg->log_max_bytes ?
	    (size_t)(exec_cfg->log_max_bytes - size) : n;
	if (execlog_write(ex->log, buf, room) == -1) {
		ex->log_error = errno;
		log_warn("exec %s: log write: %s", ex->id, strerror(errno));
		return;
	}
	if (room < n) {
		log_warn("exec %s: log reached %llu bytes; keeping only its end",
		    ex->id, (unsigned long long)exec_cfg->log_max_bytes);
		ex->flags |= EXEC_LOG_FULL;
		outbuf_init(&ex->logtail, 2 * EXEC_LOG_TAIL);
		outbuf_append(&ex->logtail, buf + room, n - room);
	}
}

/* A capped log gets what was left out, as head + marker + tail. */
static void
exec_log_finish(struct exec *ex)
{
	char	*text, *marker;
	size_t	 len;
	int	 n;

	if (!(ex->flags & EXEC_LOG_FULL) || ex->log_error != 0)
		return;
	n = xasprintf(&marker, "\n[execq: the log stopped at %llu bytes; "
	    "%llu more bytes came, their first and last %u follow]\n",
	    (unsigned long long)exec_cfg->log_max_bytes,
	    (unsigned long long)ex->logtail.total, EXEC_LOG_TAIL);
	text = outbuf_render(&ex->logtail, &len);
	if (execlog_write(ex->log, marker, n) == -1 ||
	    execlog_write(ex->log, text, len) == -1)
		ex->log_error = errno;
	free(marker);
	free(text);
	ex->flags &= ~EXEC_LOG_FULL;
}

/*
 * Reads what is there into the capped buffer and the log: the bytes read,
 * 0 at EOF (or EIO: a pty master reads EIO once the slave side is gone),
 * -1 when nothing is there yet or on an error (logged).
 */
static ssize_t
exec_read_data(struct exec *ex, int is_err)
{
	char		 buf[65536];
	struct outbuf	*ob = is_err ? &ex->err : &ex->out;
	int		 fd = is_err ? ex->err_fd : ex->out_fd;
	ssize_t		 n;

	if (fd == -1)
		return (0);
	n = read(fd, buf, sizeof buf);
	if (n > 0) {
		outbuf_append(ob, buf, n);
		exec_log(ex, buf, n);
		exec_idle_arm(ex);
		if (ex->outputcb != NULL)
			ex->outputcb(ex, is_err ? 2 : 1, buf, n, ex->arg);
		return (n);
	}
	if (n == 0 || errno == EIO)
		return (0);
	if (errno != EAGAIN && errno != EINTR) {
		log_warn("exec %s: read: %s", ex->id, strerror(errno));
		return (0);
	}
	return (-1);
}

/* A stream is readable: its data, or its end. */
static void
exec_read(struct exec *ex, int is_err)
{
	if (exec_read_data(ex, is_err) != 0)
		return;
	exec_close_stream(ex, is_err);
	if (exec_output_closed(ex))
		exec_move(ex, EXEC_CLOSED);
	exec_maybe_done(ex);
}

static void
exec_out_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	exec_read(arg, 0);
}

static void
exec_err_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	exec_read(arg, 1);
}

/* Output still open long after exit (fallback mode): stop waiting. */
static void
exec_drain_cb(evutil_socket_t fd, short what, void *arg)
{
	struct exec	*ex = arg;
	int		 i;

	(void)fd;
	(void)what;
	log_warn("exec %s: output still open %u ms after exit, closing it",
	    ex->id, exec_cfg->drain_ms);
	exec_signal_tree(ex, SIGKILL);
	/* What is in the pipes already is the command's: keep it (bounded). */
	for (i = 0; i < 64 && exec_read_data(ex, 0) > 0; i++)
		;
	for (i = 0; i < 64 && exec_read_data(ex, 1) > 0; i++)
		;
	exec_close_stream(ex, 0);
	exec_close_stream(ex, 1);
	exec_move(ex, EXEC_CLOSED);
	exec_maybe_done(ex);
}

/* The main process is reaped: its status and resource use. */
static void
exec_exited(struct exec *ex, int status, const struct rusage *ru)
{
	struct timeval	 tv;

	ex->status = status;
	ex->ru = *ru;
	exec_move(ex, EXEC_EXITED);
	clock_gettime(CLOCK_MONOTONIC, &ex->t_end);
	evtimer_del(ex->ev_timeout);
	evtimer_del(ex->ev_idle);
	if (ex->in_fd != -1) {
		close(ex->in_fd);
		ex->in_fd = -1;
	}
	/*
	 * A foreground command's leftovers die with it; a session's get
	 * drain_ms to finish writing (exec_drain_cb kills them after).
	 */
	if (!ex->background && ex->cg == NULL)
		exec_sweep(ex, SIGKILL);
	else if (!ex->background && cgroup_populated(ex->cg) == 1)
		cgroup_kill(ex->cg);
	if (!exec_output_closed(ex)) {
		tv.tv_sec = exec_cfg->drain_ms / 1000;
		tv.tv_usec = (exec_cfg->drain_ms % 1000) * 1000;
		evtimer_add(ex->ev_drain, &tv);
	}
	if (ex->ev_pid != NULL) {
		event_free(ex->ev_pid);
		ex->ev_pid = NULL;
	}
	if (ex->pidfd != -1) {
		close(ex->pidfd);
		ex->pidfd = -1;
	}
	exec_maybe_done(ex);
}

int
exec_reaped_id(const char *id, pid_t pid, int status,
    const struct rusage *ru)
{
	struct exec	*ex;

	LIST_FOREACH(ex, &exec_all, entry) {
		if (ex->pid == pid && !exec_is_reaped(ex) &&
		    (id == NULL || strcmp(ex->id, id) == 0))
			break;
	}
	if (ex == NULL)
		return (0);
	exec_exited(ex, status, ru);
	return (1);
}

int
exec_reaped(pid_t pid, int status, const struct rusage *ru)
{
	return (exec_reaped_id(NULL, pid, status, ru));
}

/*
 * The pidfd is readable: the child ended. waitid(P_PIDFD) reaps it; the
 * raw syscall, for glibc's wrapper has no rusage. Its siginfo becomes
 * the wait status the rest of the module reads. The worker's SIGCHLD
 * handler may reap it first (exec_reaped); whichever comes first frees
 * this event, so the other never sees the child.
 */
static void
exec_pid_cb(evutil_socket_t fd, short what, void *arg)
{
	struct exec	*ex = arg;
	struct rusage	 ru;
	siginfo_t	 si;
	int		 status;

	(void)what;
	memset(&si, 0, sizeof si);
	memset(&ru, 0, sizeof ru);
	if (syscall(SYS_waitid, P_PIDFD, fd, &si, WEXITED|WNOHANG, &ru) == -1) {
		if (errno == EINTR)
			return;
		log_warn("exec %s: waitid: %s (its exit status is lost; "
		    "reported as 127)", ex->id, strerror(errno));
		status = 0x7f00;
	} else if (si.si_pid == 0)
		return;			/* not yet */
	else if (si.si_code == CLD_EXITED)
		status = (si.si_status & 0xff) << 8;
	else
		status = (si.si_status & 0x7f) |
		    (si.si_code == CLD_DUMPED ? 0x80 : 0);
	exec_exited(ex, status, &ru);
}


/* Fills the facts that need no allocation. */
static void
exec_result_facts(struct exec *ex, struct exec_result *r)
{
	memset(r, 0, sizeof *r);
	if (WIFSIGNALED(ex->status)) {
		r->signal = WTERMSIG(ex->status);
		r->exit_code = 128 + r->signal;
	} else
		r->exit_code = WEXITSTATUS(ex->status);
	r->end = ex->end;
	r->truncated = outbuf_truncated(&ex->out) || outbuf_truncated(&ex->err);
	r->output_bytes = ex->out.total + ex->err.total;
	r->started_ms = ex->started_ms;
	r->duration_ms = exec_ms_between(&ex->t_start, &ex->t_end);
	r->user_ms = ex->ru.ru_utime.tv_sec * 1000 +
	    ex->ru.ru_utime.tv_usec / 1000;
	r->sys_ms = ex->ru.ru_stime.tv_sec * 1000 +
	    ex->ru.ru_stime.tv_usec / 1000;
	r->max_rss_kb = ex->ru.ru_maxrss;
	r->log_path = execlog_path(ex->log);
	r->log_error = ex->log_error;
	r->pid = ex->pid;
	exec_confinement(ex, &r->confinement);
}

void
exec_result(struct exec *ex, struct exec_result *r)
{
	exec_result_facts(ex, r);
	r->out = outbuf_render(&ex->out, &r->out_len);
	if (!ex->pty)
		r->err = outbuf_render(&ex->err, &r->err_len);
}

void
exec_result_release(struct exec_result *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

const char *
exec_status_name(const struct exec_result *r)
{
	switch (r->end) {
	case EXEC_END_TIMEOUT:
	case EXEC_END_IDLE:
		return ("timed_out");
	case EXEC_END_KILLED:
	case EXEC_END_SHUTDOWN:
		return ("killed");
	default:
		return (r->exit_code == 0 ? "completed" : "failed");
	}
}

const char *
exec_killed_by(const struct exec_result *r)
{
	static const char *names[] = {
		[EXEC_END_TIMEOUT] = "timeout", [EXEC_END_KILLED] = "user",
		[EXEC_END_IDLE] = "idle", [EXEC_END_SHUTDOWN] = "shutdown",
	};

	/* The shell reports its child's SIGKILL as 137. */
	if (r->end == EXEC_END_EXIT && (r->signal == SIGKILL ||
	    r->exit_code == 128 + SIGKILL) && r->confinement.oom_kills > 0)
		return ("memory_limit");
	return (r->end == EXEC_END_EXIT ? NULL : names[r->end]);
}

struct json_t *
exec_confinement_json(const struct exec_confinement *c, int at_end)
{
	json_t	*o;

	if (!c->landlock && !c->seccomp && !c->namespaces && !c->privileges &&
	    !c->limits)
		return (json_pack("{s:b}", "confined", 0));
	o = json_pack("{s:b, s:i, s:b, s:b, s:b, s:s}", "confined", 1,
	    "landlock", c->landlock, "seccomp", c->seccomp != 0,
	    "namespaces", c->namespaces != 0, "network", c->network != 0,
	    "privileges", c->privileges ? "dropped" : "kept");
	if (o != NULL && c->limits)
		json_object_update_new(o, json_pack("{s:I, s:I}",
		    "pids_max", (json_int_t)c->pids_max,
		    "memory_max", (json_int_t)c->memory_max));
	if (o != NULL && c->limits && at_end)
		json_object_update_new(o, json_pack("{s:I, s:I}",
		    "pids_limit_hit", (json_int_t)c->pids_limit_hit,
		    "oom_kills", (json_int_t)c->oom_kills));
	return (o);
}

/* <id>.json written off the loop; ex is finished once it is there. */
struct exec_meta_job {
	struct exec	*ex;		/* finished once the file is there */
	char		*id, *text;
	int		 spare;		/* logs/spare.h; -1 once used */
};

/* On the syncer's thread: the file, by rename. */
static int
exec_meta_work(void *arg)
{
	struct exec_meta_job	*job = arg;
	int			 spare = job->spare;

	job->spare = -1;
	if (execlog_write_meta(exec_cfg->log_dir, job->id, job->text,
	    strlen(job->text), spare) == -1)
		return (errno);
	return (0);
}

/* Back on the loop: the exec that waited for its file is done now. */
static void
exec_meta_done(int err, void *arg)
{
	struct exec_meta_job	*job = arg;
	struct exec		*ex = job->ex;

	if (err == ECANCELED) {		/* the worker stops: write it here */
		err = execlog_write_meta(exec_cfg->log_dir, job->id, job->text,
		    strlen(job->text), job->spare) == -1 ? errno : 0;
		if (ex != NULL)
			exec_free(ex);	/* nobody is called back any more */
		ex = NULL;
	}
	if (err != 0)
		log_warn("exec %s: metadata: %s", job->id, strerror(err));
	if (ex != NULL) {
		ex->donecb(ex, ex->arg);
		exec_free(ex);
	}
	free(job->id);
	free(job->text);
	free(job);
}

/*
 * Writes <id>.json beside the log: what runs, and once it ended, how.
 * A "running" file tells `execq cleanup` to keep the log. The final file
 * (finish) is written in a spare file (logs/spare.h) here, when one is
 * in stock: a write, a link and a rename. Without one it is made on the
 * syncer's thread (creating a file can take a millisecond on a busy
 * filesystem). Either way the done callback runs once it is there, so
 * an answer never comes before its <id>.json.
 */
static void
exec_write_meta(struct exec *ex, int running, int finish)
{
	struct exec_result	 r;
	struct exec_meta_job	*job;
	json_t			*o;
	char			*text;

	exec_result_facts(ex, &r);
	o = json_pack("{s:s, s:s, s:s, s:I, s:s, s:b, s:b, s:I, s:s}",
	    "id", ex->id, "command", ex->command, "cwd", ex->cwd,
	    "pid", (json_int_t)ex->pid, "status", running ? "running" :
	    exec_status_name(&r), "background", ex->background, "pty", ex->pty,
	    "started_ms", (json_int_t)r.started_ms, "log_path", r.log_path);
	if (o != NULL)
		json_object_set_new(o, "confinement",
		    exec_confinement_json(&r.confinement, !running));
	if (o != NULL && ex->token != NULL)
		json_object_set_new(o, "session_token",
		    json_string(ex->token));
	if (o != NULL && !running)
		json_object_update_new(o, json_pack("{s:i, s:i, s:I, s:I, s:o}",
		    "exit_code", r.exit_code, "signal", r.signal,
		    "duration_ms", (json_int_t)r.duration_ms,
		    "output_bytes", (json_int_t)r.output_bytes,
		    "killed_by", exec_killed_by(&r) != NULL ?
		    json_string(exec_killed_by(&r)) : json_null()));
	if (o == NULL || (text = json_dumps(o, JSON_COMPACT)) == NULL)
		fatal("out of memory (json)");
	json_decref(o);
	if (!finish) {
		/*
		 * A session's "running" file is there before its
		 * EXEC_STARTED goes out: a worker killed right after still
		 * leaves the token its owner reads the log with.
		 */
		if (execlog_write_meta(exec_cfg->log_dir, ex->id, text,
		    strlen(text), spare_take(exec_spare)) == -1)
			log_warn("exec %s: metadata: %s", ex->id,
			    strerror(errno));
		free(text);
		return;
	}
	job = xcalloc(1, sizeof *job);
	job->ex = ex;
	job->id = xstrdup(ex->id);
	job->text = text;
	job->spare = spare_take(exec_spare);
	if (job->spare != -1) {		/* no file to create: no thread */
		exec_meta_done(exec_meta_work(job), job);
		return;
	}
	syncer_call(exec_syncer, exec_meta_work, exec_meta_done, job);
}

/* The log is on disk (or fsync failed): the exec may finish now. */
static void
exec_synced_cb(int err, void *arg)
{
	struct exec	*ex = arg;

	if (err != 0 && ex->log_error == 0) {
		ex->log_error = err;
		log_warn("exec %s: log fsync: %s", ex->id, strerror(err));
	}
	exec_move(ex, EXEC_SYNCED);
	exec_maybe_done(ex);
}

/*
 * The only place an exec finishes: reaped, output at EOF, tree empty, and
 * the log on disk when it must be. The callback's last statement is
 * exec_free.
 */
static void
exec_maybe_done(struct exec *ex)
{
	switch (ex->phase) {
	case EXEC_EMPTYING:
	case EXEC_SYNCED:
		break;
	default:		/* not yet, or being synced, or finished */
		return;
	}
	evtimer_del(ex->ev_drain);	/* drained: no more waiting for it */
	if (ex->background) {		/* the output is done: so are they */
		if (ex->cg == NULL)
			exec_sweep(ex, SIGKILL);
		else if (cgroup_populated(ex->cg) == 1)
			cgroup_kill(ex->cg);
	}
	if (ex->cg != NULL && cgroup_populated(ex->cg) == 1) {
		/* Watch, then look again: it may have emptied meanwhile. */
		if (cgroup_watch(ex->cg) == -1)
			log_warn("exec %s: cgroup watch: %s", ex->id,
			    strerror(errno));
		if (cgroup_populated(ex->cg) == 1)
			return;		/* exec_cgroup_cb calls again */
	}
	exec_log_finish(ex);
	if (ex->durable && ex->phase != EXEC_SYNCED) {
		exec_move(ex, EXEC_SYNCING);	/* exec_synced_cb: SYNCED */
		syncer_submit(exec_syncer, execlog_detach_fd(ex->log),
		    exec_synced_cb, ex);
		return;
	}
	evtimer_del(ex->ev_drain);
	evtimer_del(ex->ev_grace);
	evtimer_del(ex->ev_timeout);
	evtimer_del(ex->ev_idle);
	exec_move(ex, EXEC_FINISHING);
	exec_write_meta(ex, 0, 1);	/* then the done callback, then freed */
}

/* Frees ex, killing its tree if it still runs. */
static void
exec_free(struct exec *ex)
{
	if (ex == NULL)
		return;
	LIST_REMOVE(ex, entry);
	exec_n--;
	if (ex->pid > 0 && !exec_is_reaped(ex)) {
		exec_signal_tree(ex, SIGKILL);
		kill(ex->pid, SIGKILL);
		while (waitpid(ex->pid, NULL, 0) == -1 && errno == EINTR)
			;
	}
	if (ex->ev_pid != NULL)
		event_free(ex->ev_pid);
	if (ex->pidfd != -1)
		close(ex->pidfd);
	/* Its tree is gone; then its tmp's pages, before its leaf goes back. */
	confine_release_tmp(exec_confine, ex->tmp, ex->cg != NULL &&
	    cgroup_populated(ex->cg) == 0);
	cgroup_put(ex->cg);
	free(ex->tmp);
	exec_close_stream(ex, 0);
	exec_close_stream(ex, 1);
	if (ex->ev_out != NULL)
		event_free(ex->ev_out);
	if (ex->ev_err != NULL)
		event_free(ex->ev_err);
	if (ex->ev_timeout != NULL)
		event_free(ex->ev_timeout);
	if (ex->ev_grace != NULL)
		event_free(ex->ev_grace);
	if (ex->ev_drain != NULL)
		event_free(ex->ev_drain);
	if (ex->ev_idle != NULL)
		event_free(ex->ev_idle);
	if (ex->in_fd != -1)
		close(ex->in_fd);
	outbuf_release(&ex->out);
	outbuf_release(&ex->err);
	outbuf_release(&ex->logtail);
	execlog_free(ex->log);
	free(ex->id);
	free(ex->command);
	free(ex->token);
	free(ex->cwd);
	free(ex);
}

/* A new exec, linked, with nothing open yet. */
static struct exec *
exec_create(const struct exec_spec *spec, exec_done_cb donecb, void *arg)
{
	struct exec	*ex;
	struct timespec	 now;

	ex = xcalloc(1, sizeof *ex);
	ex->id = xstrdup(spec->id);
	ex->command = xstrdup(spec->command);
	ex->token = spec->token != NULL ? xstrdup(spec->token) : NULL;
	ex->cwd = xstrdup(spec->cwd);
	ex->pid = -1;
	ex->pidfd = -1;
	ex->pty = spec->pty;
	ex->background = spec->background;
	ex->durable = exec_cfg->log_fsync || spec->background;
	ex->idle_ms = spec->idle_timeout_ms;
	ex->outputcb = spec->outputcb;
	ex->out_fd = ex->err_fd = ex->in_fd = -1;
	ex->donecb = donecb;
	ex->arg = arg;
	outbuf_init(&ex->out, spec->output_cap);
	outbuf_init(&ex->err, spec->output_cap);
	clock_gettime(CLOCK_REALTIME, &now);
	ex->started_ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
	clock_gettime(CLOCK_MONOTONIC, &ex->t_start);
	LIST_INSERT_HEAD(&exec_all, ex, entry);	/* pid -1 matches nothing */
	exec_n++;
	ex->ev_timeout = evtimer_new(exec_base, exec_timeout_cb, ex);
	ex->ev_grace = evtimer_new(exec_base, exec_grace_cb, ex);
	ex->ev_drain = evtimer_new(exec_base, exec_drain_cb, ex);
	ex->ev_idle = evtimer_new(exec_base, exec_idle_cb, ex);
	if (ex->ev_timeout == NULL || ex->ev_grace == NULL ||
	    ex->ev_drain == NULL || ex->ev_idle == NULL)
		fatal("out of memory (libevent)");
	return (ex);
}

/* Opens the output channels; the child's ends go into *o. */
static int
exec_open_io(struct exec *ex, const struct exec_spec *spec,
    struct spawn_opts *o)
{
	int	p[2];

	o->stdin_fd = exec_devnull;
	o->stdout_fd = o->stderr_fd = o->pty_fd = -1;
	if (spec->pty) {
		if (spawn_openpty(spec->rows ? spec->rows : 24,
		    spec->cols ? spec->cols : 80, &ex->out_fd, &o->pty_fd) == -1)
			return (-1);
		return (0);		/* no stderr: err_fd stays -1 */
	}
	if (spec->background && spec->input_socket) {
		/*
		 * A socket, not a pipe: /proc/<pid>/fd/N of a socket cannot
		 * be opened again, so nothing the session runs can reopen
		 * its input for writing and slip text in (a shell's saved
		 * copy of its stdin), and one way: what it writes to its own
		 * stdin is refused (EPIPE), never read as input.
		 */
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p) ==
		    -1)
			return (-1);
		if (shutdown(p[0], SHUT_WR) == -1 ||
		    shutdown(p[1], SHUT_RD) == -1) {
			close(p[0]);
			close(p[1]);
			return (-1);
		}
		o->stdin_fd = p[0];
		ex->in_fd = p[1];
		if (fcntl(ex->in_fd, F_SETFL, O_NONBLOCK) == -1)
			return (-1);
	} else if (spec->background) {	/* stdin for write and send-keys */
		if (pipe2(p, O_CLOEXEC) == -1)
			return (-1);
		o->stdin_fd = p[0];
		ex->in_fd = p[1];
		if (fcntl(ex->in_fd, F_SETFL, O_NONBLOCK) == -1)
			return (-1);
	}
	/* Only our ends are non-blocking: the child's stay ordinary. */
	if (pipe2(p, O_CLOEXEC) == -1)
		return (-1);
	ex->out_fd = p[0];
	o->stdout_fd = p[1];
	if (pipe2(p, O_CLOEXEC) == -1)
		return (-1);
	ex->err_fd = p[0];
	o->stderr_fd = p[1];
	if (fcntl(ex->out_fd, F_SETFL, O_NONBLOCK) == -1 ||
	    fcntl(ex->err_fd, F_SETFL, O_NONBLOCK) == -1)
		return (-1);
	return (0);
}

/* Closes the child's ends in the parent. */
static void
exec_close_child_io(struct spawn_opts *o)
{
	if (o->stdin_fd != exec_devnull && o->stdin_fd != -1)
		close(o->stdin_fd);
	o->stdin_fd = -1;
	if (o->stdout_fd != -1)
		close(o->stdout_fd);
	if (o->stderr_fd != -1)
		close(o->stderr_fd);
	if (o->pty_fd != -1)
		close(o->pty_fd);
	o->stdout_fd = o->stderr_fd = o->pty_fd = -1;
}

/* Watches the output and arms the timeout. */
static int
exec_arm(struct exec *ex, const struct exec_spec *spec)
{
	struct timeval	tv;

	if (ex->pidfd != -1) {
		ex->ev_pid = event_new(exec_base, ex->pidfd, EV_READ|EV_PERSIST,
		    exec_pid_cb, ex);
		if (ex->ev_pid == NULL || event_add(ex->ev_pid, NULL) == -1)
			return (-1);
	}
	ex->ev_out = event_new(exec_base, ex->out_fd, EV_READ|EV_PERSIST,
	    exec_out_cb, ex);
	if (ex->ev_out == NULL || event_add(ex->ev_out, NULL) == -1)
		return (-1);
	if (ex->err_fd != -1) {
		ex->ev_err = event_new(exec_base, ex->err_fd,
		    EV_READ|EV_PERSIST, exec_err_cb, ex);
		if (ex->ev_err == NULL || event_add(ex->ev_err, NULL) == -1)
			return (-1);
	}
	exec_idle_arm(ex);
	if (spec->timeout_ms > 0) {
		event_base_update_cache_time(exec_base);	/* from now */
		tv.tv_sec = spec->timeout_ms / 1000;
		tv.tv_usec = (spec->timeout_ms % 1000) * 1000;
		if (evtimer_add(ex->ev_timeout, &tv) == -1)
			return (-1);
		ex->deadline_ms = clock_mono_ms() + spec->timeout_ms;
	}
	return (0);
}

/*
 * Confines the command: its tmp (TMPDIR, HOME and the XDG dirs point
 * there), its ruleset, its cgroup v1 limits. *envp gets the environment
 * to run with. 0, or -1 with *cause.
 */
static int
exec_confine_prepare(struct exec *ex, const struct exec_spec *spec,
    struct spawn_opts *o, struct spawn_confine *sc, char ***envp,
    char **cause)
{
	char	*set[14];
	int	 i, n = 6;

	memset(sc, 0, sizeof *sc);
	sc->cgroup_v1_fds[0] = sc->cgroup_v1_fds[1] = -1;
	sc->ruleset_fd = sc->mntns_fd = sc->netns_fd = -1;
	if (exec_confine == NULL)
		return (0);
	if (confine_prepare(exec_confine, spec->id, spec->network,
	    spec->proxy_url != NULL ? spec->proxy_port : 0, o->pty_fd,
	    spec->grant, sc, &ex->tmp, cause) == -1)
		return (-1);
	ex->conf.landlock = sc->ruleset_fd != -1 ?
	    confine_landlock_abi(exec_confine) : 0;
	ex->conf.seccomp = sc->seccomp != NULL;
	ex->conf.namespaces = sc->mntns_fd != -1;
	ex->conf.network = spec->network;
	ex->conf.privileges = sc->drop_privs;
	if (ex->cg != NULL && cgroup_v1_fds(ex->cg, sc->cgroup_v1_fds) == 0) {
		ex->conf.limits = 1;
		ex->conf.pids_max = exec_cfg->max_pids;
		ex->conf.memory_max = exec_cfg->max_memory;
		cgroup_limit_events(ex->cg, &ex->pids_base, &ex->oom_base);
	}
	xasprintf(&set[0], "TMPDIR=%s", ex->tmp);
	xasprintf(&set[1], "HOME=%s", ex->tmp);
	xasprintf(&set[2], "XDG_CONFIG_HOME=%s/.config", ex->tmp);
	xasprintf(&set[3], "XDG_CACHE_HOME=%s/.cache", ex->tmp);
	xasprintf(&set[4], "XDG_DATA_HOME=%s/.local/share", ex->tmp);
	xasprintf(&set[5], "XDG_STATE_HOME=%s/.local/state", ex->tmp);
	if (spec->proxy_url != NULL && !spec->network) {
		/* Each name some tool reads; NO_PROXY would skip it. */
		xasprintf(&set[n++], "HTTP_PROXY=%s", spec->proxy_url);
		xasprintf(&set[n++], "HTTPS_PROXY=%s", spec->proxy_url);
		xasprintf(&set[n++], "http_proxy=%s", spec->proxy_url);
		xasprintf(&set[n++], "https_proxy=%s", spec->proxy_url);
		xasprintf(&set[n++], "ALL_PROXY=%s", spec->proxy_url);
		set[n++] = xstrdup("NO_PROXY=");
		set[n++] = xstrdup("no_proxy=");
	}
	set[n] = NULL;
	*envp = cmdenv_env_with(spec->envp, set);
	for (i = 0; set[i] != NULL; i++)
		free(set[i]);
	o->confine = sc;
	return (0);
}

int
exec_netns_fd(void)
{
	return (exec_confine != NULL ? confine_netns_fd(exec_confine) : -1);
}

char *
exec_grant_record(const char *path)
{
	return (exec_confine != NULL ? confine_grant_record(exec_confine,
	    path) : NULL);
}

/*
 * The environment of a command exec'd without the shell: what dash would
 * give it, the same with PWD=cwd (dash exports its cwd). -1 when it has a
 * PWD already (dash would keep or change it: the shell decides).
 */
static int
exec_direct_env(const struct exec_spec *spec, struct spawn_opts *o,
    char ***envp)
{
	char	*pwd, **with;
	char	*set[2];
	size_t	 i;

	for (i = 0; o->envp[i] != NULL; i++)
		if (strncmp(o->envp[i], "PWD=", 4) == 0)
			return (-1);
	xasprintf(&pwd, "PWD=%s", spec->cwd);
	set[0] = pwd;
	set[1] = NULL;
	with = cmdenv_env_with(o->envp, set);
	free(pwd);
	cmdenv_env_free(*envp);
	*envp = with;
	o->envp = with;
	return (0);
}

struct exec *
exec_start(const struct exec_spec *spec, exec_done_cb donecb, void *arg,
    enum errcode *code, char **cause)
{
	struct exec		*ex;
	struct spawn_opts	 o;
	struct spawn_confine	 sc;
	char			**envp = NULL;

	*code = ERR_NONE;
	*cause = NULL;
	ex = exec_create(spec, donecb, arg);
	memset(&o, 0, sizeof o);
	memset(&sc, 0, sizeof sc);
	sc.ruleset_fd = -1;
	o.stdin_fd = o.stdout_fd = o.stderr_fd = o.pty_fd = -1;
	ex->log = execlog_open(exec_cfg->log_dir, spec->log_id != NULL ?
	    spec->log_id : spec->id, spare_take(exec_spare));
	if (ex->log == NULL) {
		*code = errno == ELOOP || errno == EPERM ? ERR_LOG_UNSAFE :
		    ERR_LOG_FAILED;
		xasprintf(cause, "cannot open the log %s/%s.log: %s",
		    exec_cfg->log_dir, spec->log_id != NULL ? spec->log_id :
		    spec->id, execlog_strerror(errno));
		goto fail;
	}
	if (exec_open_io(ex, spec, &o) == -1) {
		*code = ERR_SPAWN_FAILED;
		xasprintf(cause, "cannot open %s: %s", spec->pty ? "a pty" :
		    "pipes", strerror(errno));
		goto fail;
	}
	if (exec_pool != NULL && (ex->cg = cgroup_take(exec_pool, ex)) == NULL)
		log_warn("exec %s: no usable cgroup leaf left, running it "
		    "without one", spec->id);
	if (exec_confine_prepare(ex, spec, &o, &sc, &envp, cause) == -1) {
		*code = ERR_CONFINE_FAILED;
		goto fail;
	}
	o.shell = exec_cfg->shell;
	o.command = spec->command;
	o.cwd = spec->cwd;
	o.envp = envp != NULL ? envp : spec->envp;
	if (spec->argv_direct != NULL && exec_direct_env(spec, &o, &envp) == 0)
		o.argv = spec->argv_direct;
	o.cgroup_fd = ex->cg != NULL ? cgroup_fd(ex->cg) : -1;
	ex->pid = spawn_start(&o, &ex->pidfd);
	confine_spawned(&sc);
	cmdenv_env_free(envp);
	envp = NULL;
	if (ex->pid == -1) {
		*code = ERR_SPAWN_FAILED;
		xasprintf(cause, "cannot start %s: %s: %s", exec_cfg->shell,
		    spawn_failed_step(), strerror(errno));
		goto fail;
	}
	exec_close_child_io(&o);
	if (exec_arm(ex, spec) == -1) {
		*code = ERR_SPAWN_FAILED;
		xasprintf(cause, "cannot watch the process: %s",
		    strerror(errno));
		goto fail;
	}
	log_debug("exec %s: pid %ld started", ex->id, (long)ex->pid);
	if (ex->background)
		exec_write_meta(ex, 1, 0);
	return (ex);

fail:
	log_warn("exec %s: %s", spec->id, *cause);
	confine_spawned(&sc);
	cmdenv_env_free(envp);
	exec_close_child_io(&o);
	exec_free(ex);
	return (NULL);
}

void
exec_hold_fds(const struct exec *ex, int fds[3])
{
	fds[0] = ex->out_fd;
	fds[1] = ex->pty ? -1 : ex->err_fd;
	fds[2] = ex->pty ? -1 : ex->in_fd;
}

int
exec_leaf(const struct exec *ex)
{
	return (ex->cg != NULL ? (int)cgroup_index(ex->cg) : -1);
}

int64_t
exec_timeout_left_ms(const struct exec *ex)
{
	int64_t	left;

	if (ex->deadline_ms == 0 || !evtimer_pending(ex->ev_timeout, NULL))
		return (0);
	left = ex->deadline_ms - clock_mono_ms();
	return (left > 0 ? left : 1);
}

int
exec_exit_status(const struct exec *ex, int *status, struct rusage *ru)
{
	if (!exec_is_reaped(ex))
		return (0);
	*status = ex->status;
	*ru = ex->ru;
	return (1);
}

void
exec_leave(struct exec *ex)
{
	/* Nothing is signalled: its tree, tmp and leaf go on as they are. */
	ex->pid = -1;
	confine_keep_tmp(exec_confine, ex->tmp);
	free(ex->tmp);
	ex->tmp = NULL;
	cgroup_keep(ex->cg);
	ex->cg = NULL;
	exec_free(ex);
}

struct exec *
exec_adopt(const struct exec_adopted *a, exec_done_cb donecb, void *arg,
    char **cause)
{
	struct exec		*ex;
	struct exec_spec	 spec;
	struct timespec		 now;
	struct timeval		 tv;
	int64_t			 ago;

	*cause = NULL;
	memset(&spec, 0, sizeof spec);
	spec.id = a->id;
	spec.command = a->command;
	spec.cwd = a->cwd;
	spec.token = a->token;
	spec.pty = a->pty;
	spec.background = 1;
	spec.idle_timeout_ms = a->idle_timeout_ms;
	spec.output_cap = a->output_cap;
	spec.outputcb = a->outputcb;
	ex = exec_create(&spec, donecb, arg);
	ex->pid = a->pid;
	ex->out_fd = a->out_fd;
	ex->err_fd = a->err_fd;
	ex->in_fd = a->in_fd;
	ex->tmp = a->tmp != NULL ? xstrdup(a->tmp) : NULL;
	ex->conf = a->conf;
	ex->conf.limits = 0;	/* its v1 counters are the last worker's */
	ex->out.total = a->output_bytes;	/* the count goes on */
	ex->started_ms = a->started_ms;
	/* Its duration counts from its start, not from this worker's. */
	clock_gettime(CLOCK_REALTIME, &now);
	ago = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000 -
	    a->started_ms;
	if (ago > 0) {
		ex->t_start.tv_sec -= ago / 1000;
		ex->t_start.tv_nsec -= (ago % 1000) * 1000000;
		if (ex->t_start.tv_nsec < 0) {
			ex->t_start.tv_sec--;
			ex->t_start.tv_nsec += 1000000000;
		}
	}
	if (a->leaf >= 0 && exec_pool != NULL &&
	    (ex->cg = cgroup_adopt(exec_pool, (unsigned)a->leaf, ex)) == NULL)
		log_warn("exec %s: its cgroup leaf %d is gone; its tree is "
		    "found by its process group now", a->id, a->leaf);
	ex->log = execlog_open(exec_cfg->log_dir, a->id, -1);
	if (ex->log == NULL) {
		xasprintf(cause, "cannot open the log %s/%s.log again: %s",
		    exec_cfg->log_dir, a->id, execlog_strerror(errno));
		goto fail;
	}
	if (fcntl(ex->out_fd, F_SETFL, O_NONBLOCK) == -1 ||
	    (ex->err_fd != -1 && fcntl(ex->err_fd, F_SETFL, O_NONBLOCK) ==
	    -1) || (ex->in_fd != -1 && fcntl(ex->in_fd, F_SETFL,
	    O_NONBLOCK) == -1)) {
		xasprintf(cause, "its output: %s", strerror(errno));
		goto fail;
	}
	spec.timeout_ms = 0;
	if (exec_arm(ex, &spec) == -1) {
		xasprintf(cause, "cannot watch it: %s", strerror(errno));
		goto fail;
	}
	if (a->timeout_left_ms > 0) {
		tv.tv_sec = a->timeout_left_ms / 1000;
		tv.tv_usec = (a->timeout_left_ms % 1000) * 1000;
		evtimer_add(ex->ev_timeout, &tv);
		ex->deadline_ms = clock_mono_ms() + a->timeout_left_ms;
	}
	log_info("exec %s: pid %ld adopted", ex->id, (long)ex->pid);
	return (ex);

fail:
	log_warn("exec %s: %s", a->id, *cause);
	exec_leave(ex);		/* its fds close; the holder has its own */
	return (NULL);
}

const char *
exec_tmp(const struct exec *ex)
{
	return (ex->tmp);
}
