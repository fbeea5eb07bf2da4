/*
 * What the worker shows: /metrics, /healthz and its registry entry. What
 * Redis does comes from the queue; whether the log dir, the state dir and
 * the audit log take writes, from a probe that writes a few bytes in each
 * dir on the syncer's thread (never on the loop), started by each look at
 * /healthz or /metrics and by each beat: a look sees the last probe's
 * result. The queue's backlog (/metrics' execq_queue_*) is read from
 * Redis when a scrape finds the last read older than a second; the scrape
 * waits for it (WORKER_BACKLOG_WAIT_MS at most: then it goes without).
 */

#include <sys/queue.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>

#include "logs/clock.h"
#include "logs/execlog.h"
#include "logs/log.h"
#include "logs/syncer.h"
#include "logs/xmalloc.h"
#include "queue/backlog.h"
#include "queue/queue.h"
#include "worker/audit.h"
#include "worker/config.h"
#include "worker/holder.h"
#include "worker/http.h"
#include "worker/metrics.h"
#include "worker/session.h"
#include "worker/status.h"
#include "worker/worker_int.h"

/*
 * One probe of the disks, handed to the syncer's thread: the paths are
 * read there (the config outlives the syncer), the errnos written there
 * and read on the loop once it is done.
 */
struct worker_probe {
	struct worker	*w;
	int		 log_err, state_err, audit_err;
};

/*
 * The last probe's results. One worker per process: they are kept here
 * (worker_int.h's struct worker belongs to the wiring).
 */
static struct {
	int	 log_err, state_err;
	int	 probing;		/* one at a time */
} worker_disks;

#define WORKER_BACKLOG_FRESH_MS	1000	/* a read serves scrapes this long */
#define WORKER_BACKLOG_WAIT_MS	2000	/* a scrape waits this long */

/* The last read of the backlog; one worker per process, as above. */
static struct {
	struct backlog	*b;		/* NULL until the first scrape */
	long long	 read_ms;	/* monotonic, the last read ended */
	int		 reading;	/* a read is under way */
	int		 late;		/* ... for longer than the wait */
	int		 ok;		/* b holds a whole read */
	struct event	*ev_late;
} worker_backlog;

/* 0 if a few bytes can be written in dir now, else an errno. */
static int
worker_probe_dir(const char *dir)
{
	char	*path;
	ssize_t	 n = 0;
	int	 fd, err = 0;

	if (execlog_mkdir(dir) == -1)
		return (errno);
	xasprintf(&path, "%s/.health-%ld", dir, (long)getpid());
	fd = open(path, O_WRONLY|O_CREAT|O_TRUNC|O_NOFOLLOW|O_CLOEXEC, 0600);
	if (fd == -1 || (n = write(fd, "probe\n", 6)) != 6)
		err = fd == -1 || n == -1 ? errno : ENOSPC;
	if (fd != -1)
		close(fd);
	(void)unlink(path);
	free(path);
	return (err);
}

/* On the syncer's thread: may block on a sick disk. */
static int
worker_probe_work(void *arg)
{
	struct worker_probe	*p = arg;
	const struct config	*cfg = p->w->cfg;
	int			 fd;

	p->log_err = worker_probe_dir(cfg->log_dir);
	p->state_err = worker_probe_dir(cfg->state_dir);
	fd = open(audit_path(p->w->audit), O_WRONLY|O_APPEND|O_NOFOLLOW|
	    O_CLOEXEC);
	p->audit_err = fd == -1 ? errno : 0;
	if (fd != -1)
		close(fd);
	return (0);
}

/* Back on the loop (ECANCELED: the worker is being freed). */
static void
worker_probe_done(int err, void *arg)
{
	struct worker_probe	*p = arg;

	worker_disks.probing = 0;
	if (err == 0) {
		if (p->log_err != worker_disks.log_err && p->log_err != 0)
			log_warn("the log dir %s cannot be written: %s",
			    p->w->cfg->log_dir, strerror(p->log_err));
		if (p->state_err != worker_disks.state_err && p->state_err != 0)
			log_warn("the state dir %s cannot be written: %s",
			    p->w->cfg->state_dir, strerror(p->state_err));
		worker_disks.log_err = p->log_err;
		worker_disks.state_err = p->state_err;
		if (p->state_err == 0 && p->audit_err == 0)
			audit_writable(p->w->audit);
	}
	free(p);
}

/* Starts a probe of the disks unless one is under way. */
static void
worker_probe(struct worker *w)
{
	struct worker_probe	*p;

	if (worker_disks.probing || w->syncer == NULL || w->audit == NULL)
		return;
	p = xcalloc(1, sizeof *p);
	p->w = w;
	worker_disks.probing = 1;
	syncer_call(w->syncer, worker_probe_work, worker_probe_done, p);
}

/* What the worker is doing now, for /metrics, /healthz, execq:workers. */
static void
worker_status(struct worker *w, struct worker_status *st)
{
	struct queue_stats	 qs;
	struct job		*j;

	memset(st, 0, sizeof *st);
	queue_stats(w->q, &qs);
	st->consumer = w->cfg->consumer;
	st->queue = w->cfg->queue;
	st->host = w->host;
	st->version = EXECQ_VERSION;
	/* The process to signal: under a holder, the holder (its MainPID). */
	st->pid = w->holder != NULL ? holder_link_pid(w->holder) :
	    (long)getpid();
	st->started_ms = w->started_ms;
	st->now_ms = clock_wall_ms();
	st->slots_total = w->cfg->max_procs;
	st->sessions_running = sessions_running(w->sessions);
	st->sessions_ended = sessions_ended(w->sessions);
	st->slots_used = w->nslots + st->sessions_running;
	LIST_FOREACH(j, &w->jobs, entry) {
		if (j->state == JOB_RUNNING)
			st->commands_running++;
		if (j->state == JOB_PARKED)
			st->approvals_parked++;
	}
	st->items_in_flight = w->njobs;
	st->execute = w->cfg->enable_execute;
	st->redis_up = qs.connected;
	st->redis_auth = queue_door(w->q) == QUEUE_DOOR_LOCKED ? "required" :
	    queue_door(w->q) == QUEUE_DOOR_OPEN ? "none" : "unknown";
	st->reconnects = qs.reconnects;
	st->outbox = qs.outbox;
	st->spooled = qs.spooled;
	st->logs_ok = !w->logs_broken;
	st->stopping = w->stopping;
	st->redis_waited_ms = qs.waited_ms;
	st->redis_stalled = qs.stalled;
	st->redis_replica = qs.replica;
	st->redis_unreplicated = qs.unreplicated;
	st->redis_refused = qs.refused;
	st->log_dir_err = worker_disks.log_err;
	st->state_dir_err = worker_disks.state_err;
	st->audit_err = audit_error(w->audit);
	st->tier = w->tier_name;
	st->network = w->cfg->network;
	memcpy(st->layers, w->layers, sizeof st->layers);
	st->nlayers = w->nlayers;
	st->confined = w->confined;
}

/* The backlog read is over (b->failed says how): scrapes go on. */
static void
worker_backlog_done(struct backlog *b, void *arg)
{
	struct worker	*w = arg;

	if (b->failed)
		log_debug("metrics: the queue's backlog: %s", b->error);
	worker_backlog.reading = worker_backlog.late = 0;
	worker_backlog.ok = !b->failed;
	worker_backlog.read_ms = clock_mono_ms();
	evtimer_del(worker_backlog.ev_late);
	http_metrics_wake(w->http);
}

/* Redis is slow to answer: the scrapes waiting go without. */
static void
worker_backlog_late_cb(evutil_socket_t fd, short what, void *arg)
{
	struct worker	*w = arg;

	(void)fd;
	(void)what;
	log_warn("metrics: the queue's backlog is not read after %d ms",
	    WORKER_BACKLOG_WAIT_MS);
	worker_backlog.late = 1;
	http_metrics_wake(w->http);
}

/*
 * Before each /metrics: 1 to write it now (the last read is fresh, or
 * Redis is away or slow), 0 when a read is under way (the HTTP side door
 * waits for worker_backlog_done).
 */
static int
worker_http_metrics_ready(void *arg)
{
	struct worker	*w = arg;
	struct timeval	 tv = { WORKER_BACKLOG_WAIT_MS / 1000,
			    (WORKER_BACKLOG_WAIT_MS % 1000) * 1000 };

	if (worker_backlog.b == NULL) {
		worker_backlog.b = backlog_create(w->cfg->queue,
		    w->cfg->agents);
		worker_backlog.ev_late = evtimer_new(w->base,
		    worker_backlog_late_cb, w);
		if (worker_backlog.ev_late == NULL)
			fatal("out of memory (event)");
	}
	if (worker_backlog.reading)
		return (worker_backlog.late);
	if (worker_backlog.read_ms != 0 && clock_mono_ms() -
	    worker_backlog.read_ms < WORKER_BACKLOG_FRESH_MS)
		return (1);
	worker_backlog.ok = 0;
	if (backlog_read(worker_backlog.b, w->q, worker_backlog_done, w) ==
	    -1) {
		worker_backlog.read_ms = clock_mono_ms();
		return (1);	/* Redis is away: nothing to show */
	}
	worker_backlog.reading = 1;
	evtimer_add(worker_backlog.ev_late, &tv);
	return (0);
}

void
worker_backlog_free(void)
{
	backlog_free(worker_backlog.b);
	if (worker_backlog.ev_late != NULL)
		event_free(worker_backlog.ev_late);
	memset(&worker_backlog, 0, sizeof worker_backlog);
}

/* GET /metrics: the counters, then what is true now. */
static void
worker_http_metrics(FILE *f, void *arg)
{
	struct worker		*w = arg;
	struct worker_status	 st;

	worker_probe(w);
	worker_status(w, &st);
	metrics_write(w->metrics, f);
	status_write_metrics(&st, f);
	if (worker_backlog.b != NULL && worker_backlog.ok)
		metrics_write_backlog(worker_backlog.b, f);
}

/* GET /healthz. */
static int
worker_http_health(FILE *f, void *arg)
{
	struct worker		*w = arg;
	struct worker_status	 st;

	worker_probe(w);
	worker_status(w, &st);
	return (status_write_health(&st, f));
}

void
worker_publish(struct worker *w, int now)
{
	struct worker_status	 st;
	json_t			*o;
	char			*text;

	worker_probe(w);
	worker_status(w, &st);
	o = status_to_json(&st);
	if (w->retired)
		json_object_set_new(o, "state", json_string("stopped"));
	if ((text = json_dumps(o, JSON_COMPACT)) == NULL)
		fatal("out of memory (json)");
	queue_set_status(w->q, text, now);
	free(text);
	json_decref(o);
}

int
worker_http(struct worker *w)
{
	struct http_handlers	 h;
	char			*cause;

	memset(&h, 0, sizeof h);
	h.metrics = worker_http_metrics;
	h.metrics_ready = worker_http_metrics_ready;
	h.health = worker_http_health;
	h.arg = w;
	w->http = http_create(w->base, w->cfg->http, &h, w->metrics, &cause);
	if (w->http == NULL) {
		log_warn("%s", cause);
		free(cause);
		return (-1);
	}
	return (0);
}

