/* What the worker shows: /metrics, /healthz and its registry entry. */

#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "logs/clock.h"
#include "logs/log.h"
#include "queue/queue.h"
#include "worker/config.h"
#include "worker/http.h"
#include "worker/metrics.h"
#include "worker/session.h"
#include "worker/status.h"
#include "worker/worker_int.h"

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
	st->pid = (long)getpid();
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
	st->reconnects = qs.reconnects;
	st->outbox = qs.outbox;
	st->spooled = qs.spooled;
	st->logs_ok = !w->logs_broken;
	st->stopping = w->stopping;
	st->tier = w->tier_name;
	st->network = w->cfg->network;
	memcpy(st->layers, w->layers, sizeof st->layers);
	st->nlayers = w->nlayers;
	st->confined = w->confined;
}

/* GET /metrics: the counters, then what is true now. */
static void
worker_http_metrics(FILE *f, void *arg)
{
	struct worker		*w = arg;
	struct worker_status	 st;

	worker_status(w, &st);
	metrics_write(w->metrics, f);
	status_write_metrics(&st, f);
}

/* GET /healthz. */
static int
worker_http_health(FILE *f, void *arg)
{
	struct worker		*w = arg;
	struct worker_status	 st;

	worker_status(w, &st);
	return (status_write_health(&st, f));
}

void
worker_publish(struct worker *w, int now)
{
	struct worker_status	 st;
	json_t			*o;
	char			*text;

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

	h.metrics = worker_http_metrics;
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

