/*
 * Signals: SIGCHLD, SIGHUP, SIGTERM and SIGINT, SIGUSR2 (hand the sessions
 * over to the holder), and the shutdown steps.
 */

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
#include "worker/holder.h"
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

static void	worker_handover_step(struct worker *);

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
	if (w->handover) {
		worker_handover_step(w);
		return;
	}
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

/*
 * A hand-over, checked every tick: once no item runs, no shell session is
 * in the middle of a command, and Redis has every answer (or
 * shutdown_flush has passed since the last item: the rest goes to the
 * spool, for the next worker), the sessions go to the holder and the
 * loop ends. The lease stays: the next worker is the same consumer.
 */
static void
worker_handover_step(struct worker *w)
{
	struct timeval	 tv = { 0, 50000 };
	struct job	*j;
	unsigned	 running = 0, spooled;

	LIST_FOREACH(j, &w->jobs, entry)
		if (j->state == JOB_RUNNING)
			running++;
	running += sessions_shells_busy(w->sessions);
	if (running > 0) {
		w->stop_deadline_ms = clock_mono_ms() +
		    w->cfg->shutdown_flush_ms;
		evtimer_add(w->ev_stop, &tv);
		return;
	}
	if (queue_backlog(w->q) > 0 && clock_mono_ms() < w->stop_deadline_ms) {
		evtimer_add(w->ev_stop, &tv);
		return;
	}
	if ((spooled = queue_spool_all(w->q)) > 0)
		log_warn("hand-over: %u answer(s) kept in the spool for the "
		    "next worker", spooled);
	log_info("hand-over: %u session(s) go on under holder %ld",
	    sessions_running(w->sessions), holder_link_pid(w->holder));
	sessions_leave(w->sessions);
	event_base_loopexit(w->base, NULL);
}

/*
 * SIGUSR2: stop taking items, let the running ones and the shell
 * sessions' commands end, then hand the sessions over to the holder and
 * exit; the holder starts the next worker, which adopts them.
 */
static void
worker_sigusr2_cb(evutil_socket_t sig, short what, void *arg)
{
	struct worker	*w = arg;

	(void)sig;
	(void)what;
	if (w->holder == NULL) {
		log_warn("SIGUSR2: no holder (hold_sessions off): nothing to "
		    "hand over to; ignored");
		return;
	}
	if (w->stopping)
		return;
	log_info("SIGUSR2: handing over (%u item(s), %u session(s) "
	    "running)", w->njobs, sessions_running(w->sessions));
	w->stopping = w->handover = 1;
	w->stop_deadline_ms = clock_mono_ms() + w->cfg->shutdown_flush_ms;
	queue_stop_reading(w->q);
	worker_held_cancel_all(w);
	worker_stop_cb(-1, 0, w);
}

/* SIGTERM or SIGINT: shut down gently; a second one exits at once. */
static void
worker_sigterm_cb(evutil_socket_t sig, short what, void *arg)
{
	struct worker	*w = arg;
	struct job	*j;

	(void)what;
	if (w->stopping && !w->handover) {
		log_warn("second signal %d: exiting now", (int)sig);
		event_base_loopbreak(w->base);
		return;
	}
	w->handover = 0;	/* a stop wins over a hand-over */
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
	sigset_t	set;

	w->ev_chld = evsignal_new(w->base, SIGCHLD, worker_sigchld_cb, w);
	w->ev_term = evsignal_new(w->base, SIGTERM, worker_sigterm_cb, w);
	w->ev_int = evsignal_new(w->base, SIGINT, worker_sigterm_cb, w);
	w->ev_stop = evtimer_new(w->base, worker_stop_cb, w);
	w->ev_logs = evtimer_new(w->base, worker_logs_cb, w);
	w->ev_limit = evtimer_new(w->base, worker_limit_open_cb, w);
	w->ev_hup = evsignal_new(w->base, SIGHUP, worker_sighup_cb, w);
	w->ev_usr2 = evsignal_new(w->base, SIGUSR2, worker_sigusr2_cb, w);
	if (w->ev_chld == NULL || w->ev_term == NULL || w->ev_int == NULL ||
	    w->ev_stop == NULL || w->ev_logs == NULL || w->ev_hup == NULL ||
	    w->ev_limit == NULL || w->ev_usr2 == NULL ||
	    event_add(w->ev_hup, NULL) == -1 ||
	    event_add(w->ev_usr2, NULL) == -1 ||
	    event_add(w->ev_chld, NULL) == -1 ||
	    event_add(w->ev_term, NULL) == -1 ||
	    event_add(w->ev_int, NULL) == -1)
		return (-1);
	/* Under a holder they came blocked (holder.c): handled from here. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	return (0);
}

