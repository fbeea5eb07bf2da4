/*
 * Counters with up to two labels, and fixed-bucket histograms, written in
 * the Prometheus text format. The label values the worker passes come
 * from small fixed sets (item types, error codes, risks), never from an
 * item's own text, so a family stays small; METRICS_SERIES_MAX is the
 * backstop should that ever change.
 */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "logs/xmalloc.h"
#include "queue/backlog.h"
#include "worker/metrics.h"

struct metrics_def {
	const char	*name;
	const char	*help;
	const char	*label1, *label2;	/* NULL: none */
};

static const struct metrics_def metrics_defs[METRICS_NCOUNTERS] = {
	[METRICS_RECEIVED] = { "execq_items_received_total",
	    "Work items taken from the queue, by type (invalid: not an "
	    "item).", "type", NULL },
	[METRICS_ANSWERED] = { "execq_items_answered_total",
	    "Answers queued for items, by item type and error code (ok: "
	    "not an ERROR).", "type", "code" },
	[METRICS_DECISIONS] = { "execq_policy_decisions_total",
	    "Commands classified by the policy, by risk and decision.",
	    "risk", "action" },
	[METRICS_APPROVALS] = { "execq_approvals_total",
	    "Approval requests by outcome (requested, approved, rejected, "
	    "expired, cancelled).", "outcome", NULL },
	[METRICS_OUTPUT_BYTES] = { "execq_output_bytes_total",
	    "Bytes of output read from commands (foreground items and "
	    "sessions).", "kind", NULL },
	[METRICS_SESSIONS_ENDED] = { "execq_sessions_ended_total",
	    "Background and PTY sessions that ended, by status.", "status",
	    NULL },
	[METRICS_CALLBACKS] = { "execq_callbacks_total",
	    "EXEC_CALLBACK items queued.", NULL, NULL },
	[METRICS_HTTP] = { "execq_http_requests_total",
	    "Requests to the HTTP side door, by path and status.", "path",
	    "status" },
};

/* Upper bounds in seconds; +Inf is implied. */
static const double metrics_bounds[] = {
	0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
	2.5, 5, 10, 30, 60
};
#define METRICS_NBOUNDS	(sizeof metrics_bounds / sizeof metrics_bounds[0])

static const struct metrics_def metrics_hdefs[METRICS_NHISTOGRAMS] = {
	[METRICS_SPAWN] = { "execq_spawn_latency_seconds",
	    "From an item's delivery to its command running (foreground and "
	    "sessions).", NULL, NULL },
	[METRICS_ANSWER] = { "execq_answer_latency_seconds",
	    "From an item's delivery to its answer being queued for Redis "
	    "(foreground items include their run).", NULL, NULL },
};

struct metrics_series {
	char			*v1, *v2;
	unsigned long long	 n;
};

struct metrics_family {
	struct metrics_series	*series;
	size_t			 len;
};

struct metrics_hist {
	unsigned long long	 buckets[METRICS_NBOUNDS];	/* not cumulative */
	unsigned long long	 count;
	double			 sum;
};

struct metrics {
	struct metrics_family	 fam[METRICS_NCOUNTERS];
	struct metrics_hist	 hist[METRICS_NHISTOGRAMS];
	struct metrics_redis_mem redis_mem;
};

struct metrics *
metrics_create(void)
{
	return (xcalloc(1, sizeof (struct metrics)));
}

void
metrics_free(struct metrics *m)
{
	size_t	i, k;

	if (m == NULL)
		return;
	for (i = 0; i < METRICS_NCOUNTERS; i++) {
		for (k = 0; k < m->fam[i].len; k++) {
			free(m->fam[i].series[k].v1);
			free(m->fam[i].series[k].v2);
		}
		free(m->fam[i].series);
	}
	free(m);
}

/* The series of f with these values, or NULL. */
static struct metrics_series *
metrics_find(const struct metrics_family *f, const char *v1, const char *v2)
{
	size_t	k;

	for (k = 0; k < f->len; k++)
		if (strcmp(f->series[k].v1, v1) == 0 &&
		    strcmp(f->series[k].v2, v2) == 0)
			return (&f->series[k]);
	return (NULL);
}

void
metrics_add(struct metrics *m, enum metrics_counter c, unsigned long long n,
    const char *v1, const char *v2)
{
	struct metrics_family	*f = &m->fam[c];
	struct metrics_series	*s;

	v1 = metrics_defs[c].label1 == NULL || v1 == NULL ? "" : v1;
	v2 = metrics_defs[c].label2 == NULL || v2 == NULL ? "" : v2;
	if ((s = metrics_find(f, v1, v2)) == NULL && f->len >=
	    METRICS_SERIES_MAX - 1) {
		v1 = metrics_defs[c].label1 == NULL ? "" : "other";
		v2 = metrics_defs[c].label2 == NULL ? "" : "other";
		s = metrics_find(f, v1, v2);
	}
	if (s == NULL) {
		f->series = xreallocarray(f->series, f->len + 1,
		    sizeof *f->series);
		s = &f->series[f->len++];
		s->v1 = xstrdup(v1);
		s->v2 = xstrdup(v2);
		s->n = 0;
	}
	s->n += n;
}

void
metrics_observe(struct metrics *m, enum metrics_histogram h, double seconds)
{
	struct metrics_hist	*hs = &m->hist[h];
	size_t			 i;

	if (!(seconds > 0))		/* negative, zero or NaN */
		seconds = 0;
	hs->count++;
	hs->sum += seconds;
	for (i = 0; i < METRICS_NBOUNDS; i++)
		if (seconds <= metrics_bounds[i]) {
			hs->buckets[i]++;
			break;
		}
}

unsigned long long
metrics_value(const struct metrics *m, enum metrics_counter c,
    const char *v1, const char *v2)
{
	const struct metrics_series	*s;

	s = metrics_find(&m->fam[c], v1 == NULL ? "" : v1,
	    v2 == NULL ? "" : v2);
	return (s != NULL ? s->n : 0);
}

void
metrics_escape(FILE *f, const char *v)
{
	for (; *v != '\0'; v++) {
		if (*v == '\\')
			fputs("\\\\", f);
		else if (*v == '"')
			fputs("\\\"", f);
		else if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
}

void
metrics_family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s ", name);
	for (; *help != '\0'; help++) {		/* HELP escapes \ and \n */
		if (*help == '\\')
			fputs("\\\\", f);
		else if (*help == '\n')
			fputs("\\n", f);
		else
			fputc(*help, f);
	}
	fprintf(f, "\n# TYPE %s %s\n", name, type);
}

/* A number as Prometheus reads it: integers without a fraction. */
static void
metrics_number(FILE *f, double v)
{
	if (isinf(v))
		fputs(v > 0 ? "+Inf" : "-Inf", f);
	else if (isnan(v))
		fputs("NaN", f);
	else if (v == floor(v) && fabs(v) < 1e15)
		fprintf(f, "%.0f", v);
	else
		fprintf(f, "%.15g", v);
}

void
metrics_sample(FILE *f, const char *name, const char *label,
    const char *value, double v)
{
	fputs(name, f);
	if (label != NULL) {
		fprintf(f, "{%s=\"", label);
		metrics_escape(f, value);
		fputs("\"}", f);
	}
	fputc(' ', f);
	metrics_number(f, v);
	fputc('\n', f);
}

/* One counter family. */
static void
metrics_write_counter(const struct metrics *m, enum metrics_counter c,
    FILE *f)
{
	const struct metrics_def	*d = &metrics_defs[c];
	const struct metrics_series	*s;
	size_t				 k;

	metrics_family(f, d->name, "counter", d->help);
	if (d->label1 == NULL) {
		s = metrics_find(&m->fam[c], "", "");
		fprintf(f, "%s %llu\n", d->name, s != NULL ? s->n : 0);
		return;
	}
	for (k = 0; k < m->fam[c].len; k++) {
		s = &m->fam[c].series[k];
		fprintf(f, "%s{%s=\"", d->name, d->label1);
		metrics_escape(f, s->v1);
		if (d->label2 != NULL) {
			fprintf(f, "\",%s=\"", d->label2);
			metrics_escape(f, s->v2);
		}
		fprintf(f, "\"} %llu\n", s->n);
	}
}

/* One histogram: cumulative buckets, then _sum and _count. */
static void
metrics_write_histogram(const struct metrics *m, enum metrics_histogram h,
    FILE *f)
{
	const struct metrics_def	*d = &metrics_hdefs[h];
	const struct metrics_hist	*hs = &m->hist[h];
	unsigned long long		 cum = 0;
	size_t				 i;

	metrics_family(f, d->name, "histogram", d->help);
	for (i = 0; i < METRICS_NBOUNDS; i++) {
		cum += hs->buckets[i];
		fprintf(f, "%s_bucket{le=\"", d->name);
		metrics_number(f, metrics_bounds[i]);
		fprintf(f, "\"} %llu\n", cum);
	}
	fprintf(f, "%s_bucket{le=\"+Inf\"} %llu\n", d->name, hs->count);
	fprintf(f, "%s_sum ", d->name);
	metrics_number(f, hs->sum);
	fprintf(f, "\n%s_count %llu\n", d->name, hs->count);
}

/* Redis's memory: the last sample, once there is one. */
static void
metrics_write_redis_mem(const struct metrics_redis_mem *rm, FILE *f)
{
	if (!rm->known)
		return;
	metrics_family(f, "execq_redis_used_memory_bytes", "gauge",
	    "Redis's used_memory at the last heartbeat sample (INFO "
	    "memory).");
	metrics_sample(f, "execq_redis_used_memory_bytes", NULL, NULL,
	    (double)rm->used);
	metrics_family(f, "execq_redis_maxmemory_bytes", "gauge",
	    "Redis's maxmemory (0: no limit).");
	metrics_sample(f, "execq_redis_maxmemory_bytes", NULL, NULL,
	    (double)rm->max);
	if (!rm->rated)
		return;
	metrics_family(f, "execq_redis_memory_growth_bytes_per_second",
	    "gauge", "The growth rate of used_memory (smoothed; negative: "
	    "it shrinks).");
	metrics_sample(f, "execq_redis_memory_growth_bytes_per_second", NULL,
	    NULL, rm->rate);
	if (rm->eta_s < 0)
		return;
	metrics_family(f, "execq_redis_memory_full_eta_seconds", "gauge",
	    "At the current rate, seconds until used_memory reaches "
	    "maxmemory (absent: never).");
	metrics_sample(f, "execq_redis_memory_full_eta_seconds", NULL, NULL,
	    (double)rm->eta_s);
}

void
metrics_write(const struct metrics *m, FILE *f)
{
	size_t	i;

	for (i = 0; i < METRICS_NCOUNTERS; i++)
		metrics_write_counter(m, i, f);
	for (i = 0; i < METRICS_NHISTOGRAMS; i++)
		metrics_write_histogram(m, i, f);
	metrics_write_redis_mem(&m->redis_mem, f);
}

struct metrics_redis_mem *
metrics_redis_mem(struct metrics *m)
{
	return (&m->redis_mem);
}

/* The number after "\r\n<name>:" (or at the start) in info: 0 or -1. */
static int
metrics_info_field(const char *info, const char *name,
    unsigned long long *v)
{
	const char	*p = info;
	size_t		 len = strlen(name);
	char		*end;

	for (;;) {
		if (strncmp(p, name, len) == 0 && p[len] == ':') {
			*v = strtoull(p + len + 1, &end, 10);
			return (end == p + len + 1 ? -1 : 0);
		}
		if ((p = strchr(p, '\n')) == NULL)
			return (-1);
		p++;
	}
}

int
metrics_redis_mem_parse(const char *info, unsigned long long *used,
    unsigned long long *max)
{
	if (metrics_info_field(info, "used_memory", used) == -1 ||
	    metrics_info_field(info, "maxmemory", max) == -1)
		return (-1);
	return (0);
}

/* The weight of the newest growth in the rate: about 3 samples' worth. */
#define METRICS_RATE_ALPHA	0.3

int
metrics_redis_mem_update(struct metrics_redis_mem *rm, long long now_ms,
    unsigned long long used, unsigned long long max, unsigned horizon_s)
{
	double	dt, growth;

	if (rm->known && now_ms > rm->at_ms) {
		dt = (now_ms - rm->at_ms) / 1000.0;
		growth = ((double)used - (double)rm->used) / dt;
		rm->rate = rm->rated ? METRICS_RATE_ALPHA * growth +
		    (1 - METRICS_RATE_ALPHA) * rm->rate : growth;
		rm->rated = 1;
	}
	rm->known = 1;
	rm->used = used;
	rm->max = max;
	rm->at_ms = now_ms;
	if (max == 0)
		rm->eta_s = -1;			/* no limit: never full */
	else if (used >= max)
		rm->eta_s = 0;
	else if (rm->rated && rm->rate > 0)
		rm->eta_s = (long long)((max - used) / rm->rate);
	else
		rm->eta_s = -1;
	if (rm->eta_s >= 0 && rm->eta_s <= (long long)horizon_s) {
		if (rm->warned)
			return (0);
		rm->warned = 1;
		return (1);
	}
	/* Past the danger (twice the horizon: no flapping): warn again. */
	if (rm->eta_s < 0 || rm->eta_s > 2 * (long long)horizon_s)
		rm->warned = 0;
	return (0);
}

void
metrics_redis_mem_warning(const struct metrics_redis_mem *rm,
    unsigned horizon_s, char *buf, size_t size)
{
	snprintf(buf, size, "redis memory: used_memory %llu of maxmemory %llu "
	    "bytes, growing %.0f bytes/s: full in about %lld s, before the "
	    "answers written now expire (answer_ttl_s %u); Redis will then "
	    "refuse writes (answers, claims). Raise maxmemory, or lower "
	    "answer_ttl_s or output_cap (docs/SCALING.md)", rm->used, rm->max,
	    rm->rate, rm->eta_s, horizon_s);
}

/* One sample of execq_queue_items; lane NULL: the queue's own. */
static void
metrics_backlog_sample(FILE *f, const char *name, const char *queue,
    const char *lane, const char *state, double v)
{
	fprintf(f, "%s{queue=\"", name);
	metrics_escape(f, queue);
	if (lane != NULL) {
		fputs("\",lane=\"", f);
		metrics_escape(f, lane);
	}
	if (state != NULL) {
		fputs("\",state=\"", f);
		metrics_escape(f, state);
	}
	fputs("\"} ", f);
	metrics_number(f, v);
	fputc('\n', f);
}

void
metrics_write_backlog(const struct backlog *b, FILE *f)
{
	const struct backlog_lane	*l;
	size_t				 i;

	metrics_family(f, "execq_queue_items", "gauge", "Items of the "
	    "queue by lane and state, read from Redis at scrape time (cached "
	    "1 s): waiting (not yet delivered to a worker), running "
	    "(delivered, not yet answered); delayed and dead per queue, "
	    "without a lane.");
	for (i = 0; i < b->nlanes; i++) {
		l = &b->lanes[i];
		metrics_backlog_sample(f, "execq_queue_items", b->queue,
		    l->name, "waiting", (double)l->waiting);
		metrics_backlog_sample(f, "execq_queue_items", b->queue,
		    l->name, "running", (double)l->running);
	}
	metrics_backlog_sample(f, "execq_queue_items", b->queue, NULL,
	    "delayed", (double)b->delayed);
	metrics_backlog_sample(f, "execq_queue_items", b->queue, NULL,
	    "dead", (double)b->dead);
	metrics_family(f, "execq_queue_oldest_age_seconds", "gauge", "Age "
	    "of the oldest waiting item of each lane, by Redis's clock (0: "
	    "none waits).");
	for (i = 0; i < b->nlanes; i++)
		metrics_backlog_sample(f, "execq_queue_oldest_age_seconds",
		    b->queue, b->lanes[i].name, NULL,
		    b->lanes[i].oldest_age_s);
}
