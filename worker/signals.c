/* Signals: SIGCHLD, SIGHUP, SIGTERM and SIGINT, and the shutdown steps. */

#include <sys/queue.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <string.h>

#include <event2/event.h>

#include "exec/exec.h"
#include "logs/execlog.h"
#include "logs/clock.h"
#include "logs/log.h"
#include "queue/queue.h"
#include "worker/audit.h"
#include "worker/config.h"
#include "worker/session.h"
#include "worker/worker_int.h"

/* The log-dir probe's timer (worker_check_logs arms it). */
static void
worker_logs_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	worker_check_logs(arg);
}

/*
 * One SIGCHLD can stand for several children. Commands are reaped
 * through their pidfds (exec.c) as often as here; this is what reaps
 * the orphans a subreaper inherits, and commands started where clone3
 * is refused (no pidfd).
 */
static void
worker_sigchld_cb(evutil_socket_t sig, short what, void *arg)
{
	struct rusage	ru;
	pid_t		pid;
	int		status;

	(void)sig;
	(void)what;
	(void)arg;
	while ((pid = wait4(-1, &status, WNOHANG, &ru)) > 0) {
		if (!exec_reaped(pid, status, &ru))
			log_debug("reaped pid %ld (an orphan)", (long)pid);
	}
}

/* SIGHUP: logrotate moved the worker's log and the audit log away. */
static void
worker_sighup_cb(evutil_socket_t sig, short what, void *arg)
{
	struct worker	*w = arg;

	(void)sig;
	(void)what;
	if (w->cfg->log_file[0] != '\0' && log_open(w->cfg->log_file) != 0)
		log_warn("SIGHUP: cannot reopen %s: %s (still writing to the "
		    "old file)", w->cfg->log_file, strerror(errno));
	if (audit_reopen(w->audit) != 0)
		log_warn("SIGHUP: cannot reopen the audit log: %s",
		    execlog_strerror(errno));
	log_info("SIGHUP: log files reopened");
}

/* Items whose command is still running (claims in flight do not count). */
static unsigned
worker_running(struct worker *w)
{
	struct job	*j;
	unsigned	 n = 0;

	LIST_FOREACH(j, &w->jobs, entry)
		if (j->state == JOB_RUNNING)
			n++;
	return (n + sessions_running(w->sessions));
}

/*
 * Shutdown, checked every tick: once nothing runs and Redis has every
 * answer, the loop ends. At kill_grace + shutdown_flush after the signal
 * it ends anyway, whatever Redis does: what Redis has not confirmed goes
 * to the spool first, for the next start (or another worker on the host).
 */
static void
worker_stop_cb(evutil_socket_t fd, short what, void *arg)
{
	struct worker	*w = arg;
	struct timeval	 tv = { 0, 50000 };
	unsigned	 running, spooled;

	(void)fd;
	(void)what;
	running = worker_running(w);
	if (running == 0 && !w->retired) {
		w->retired = 1;
		worker_publish(w, 1);	/* execq workers: stopped */
		queue_retire(w->q);	/* nothing more is forwarded here */
	}
	if (running == 0 && queue_backlog(w->q) == 0) {
		event_base_loopexit(w->base, NULL);
		return;
	}
	if (clock_mono_ms() < w->stop_deadline_ms) {
		evtimer_add(w->ev_stop, &tv);
		return;
	}
	spooled = queue_spool_all(w->q);
	log_warn("shutdown: %u command(s) still running; %u answer(s) not "
	    "confirmed by Redis, %u of them kept in the spool for the next "
	    "start", running, queue_backlog(w->q), spooled);
	event_base_loopexit(w->base, NULL);
}

/* SIGTERM or SIGINT: shut down gently; a second one exits at once. */
static void
worker_sigterm_cb(evutil_socket_t sig, short what, void *arg)
{
	struct worker	*w = arg;
	struct job	*j;

	(void)what;
	if (w->stopping) {
		log_warn("second signal %d: exiting now", (int)sig);
		event_base_loopbreak(w->base);
		return;
	}
	log_info("signal %d: stopping (%u item(s), %u session(s) running)",
	    (int)sig, w->njobs, sessions_running(w->sessions));
	w->stopping = 1;
	w->stop_deadline_ms = clock_mono_ms() + w->cfg->kill_grace_ms +
	    w->cfg->shutdown_flush_ms;
	queue_stop_reading(w->q);
	worker_held_cancel_all(w);
	/* Every command gets TERM now and KILL kill_grace later. */
	LIST_FOREACH(j, &w->jobs, entry)
		if (j->state == JOB_RUNNING && j->ex != NULL)
			exec_kill(j->ex, SIGTERM, EXEC_END_SHUTDOWN);
	sessions_kill_all(w->sessions);
	worker_stop_cb(-1, 0, w);
}

int
worker_signals(struct worker *w)
{
	w->ev_chld = evsignal_new(w->base, SIGCHLD, worker_sigchld_cb, w);
	w->ev_term = evsignal_new(w->base, SIGTERM, worker_sigterm_cb, w);
	w->ev_int = evsignal_new(w->base, SIGINT, worker_sigterm_cb, w);
	w->ev_stop = evtimer_new(w->base, worker_stop_cb, w);
	w->ev_logs = evtimer_new(w->base, worker_logs_cb, w);
	w->ev_limit = evtimer_new(w->base, worker_limit_open_cb, w);
	w->ev_hup = evsignal_new(w->base, SIGHUP, worker_sighup_cb, w);
	if (w->ev_chld == NULL || w->ev_term == NULL || w->ev_int == NULL ||
	    w->ev_stop == NULL || w->ev_logs == NULL || w->ev_hup == NULL ||
	    w->ev_limit == NULL ||
	    event_add(w->ev_hup, NULL) == -1 ||
	    event_add(w->ev_chld, NULL) == -1 ||
	    event_add(w->ev_term, NULL) == -1 ||
	    event_add(w->ev_int, NULL) == -1)
		return (-1);
	return (0);
}

