#ifndef EXECQ_METRICS_H
#define EXECQ_METRICS_H

/*
 * The worker's counters and histograms, and the Prometheus text format
 * (version 0.0.4) they are shown in. Counters only go up, from the
 * worker's start; what is true "now" (commands running, slots free) is
 * not kept here but written as a gauge at scrape time by its owner.
 * Pure code, no I/O beyond the FILE it is handed.
 */

#include <stddef.h>
#include <stdio.h>

struct backlog;

/* The counter families; each row of metrics.c's table names one. */
enum metrics_counter {
	METRICS_RECEIVED = 0,	/* type */
	METRICS_ANSWERED,	/* type, code */
	METRICS_DECISIONS,	/* risk, action */
	METRICS_APPROVALS,	/* outcome */
	METRICS_OUTPUT_BYTES,	/* kind: foreground, session */
	METRICS_SESSIONS_ENDED,	/* status */
	METRICS_CALLBACKS,	/* (none) */
	METRICS_HTTP,		/* path, status */
	METRICS_NCOUNTERS
};

enum metrics_histogram {
	METRICS_SPAWN = 0,	/* delivery -> the command runs */
	METRICS_ANSWER,		/* delivery -> the answer is queued */
	METRICS_NHISTOGRAMS
};

struct metrics;

struct metrics	*metrics_create(void);
void		 metrics_free(struct metrics *);	/* NULL ok */
/*
 * Adds n to the counter of family c with these label values, given in the
 * family's label order (as many as it has; NULL counts as ""). Values are
 * escaped when written. A family holds at most METRICS_SERIES_MAX series;
 * further ones are counted under the values "other".
 */
#define METRICS_SERIES_MAX	256
void		 metrics_add(struct metrics *, enum metrics_counter,
		    unsigned long long n, const char *v1, const char *v2);
/* One observation of h, in seconds (negative counts as 0). */
void		 metrics_observe(struct metrics *, enum metrics_histogram,
		    double seconds);
/* The value of one series, 0 if it was never added to (for tests). */
unsigned long long metrics_value(const struct metrics *,
		    enum metrics_counter, const char *v1, const char *v2);
/* Every family, with its HELP and TYPE lines, even the empty ones. */
void		 metrics_write(const struct metrics *, FILE *);
/*
 * One gauge family: HELP and TYPE, then one sample per call of
 * metrics_sample(); name is the full metric name.
 */
void		 metrics_family(FILE *, const char *name, const char *type,
		    const char *help);
/* A sample "name{label="value"} v"; label NULL: no labels. */
void		 metrics_sample(FILE *, const char *name, const char *label,
		    const char *value, double v);
/*
 * The backlog gauges of a queue (queue/backlog.h, a finished read):
 * execq_queue_items{queue,lane,state} for waiting and running per lane,
 * {queue,state} for delayed and dead, and
 * execq_queue_oldest_age_seconds{queue,lane}.
 */
void		 metrics_write_backlog(const struct backlog *, FILE *);
/* value escaped for a label (\\, \", \n), into f. */
void		 metrics_escape(FILE *, const char *value);

/*
 * Redis's memory, as the worker last sampled it (INFO memory, at the
 * heartbeat, at most every METRICS_REDIS_MEM_EVERY_MS), and the growth
 * rate of used_memory: plain data, filled by metrics_redis_mem_update.
 * Its gauges are written by metrics_write once a sample is known.
 */
#define METRICS_REDIS_MEM_EVERY_MS	10000
struct metrics_redis_mem {
	int			 known;		/* a sample was taken */
	unsigned long long	 used, max;	/* bytes; max 0: no limit */
	double			 rate;		/* bytes/s, smoothed; may be
						   negative */
	int			 rated;		/* rate holds 2+ samples */
	long long		 eta_s;		/* full in this many seconds
						   at this rate; -1: never */
	long long		 at_ms;		/* the last sample (monotonic) */
	long long		 asked_ms;	/* the last INFO asked for */
	int			 warned;	/* said so; again only once
						   the danger has passed */
	int			 refused;	/* INFO refused (an ACL) */
};
/* The worker's own record (never NULL). */
struct metrics_redis_mem *metrics_redis_mem(struct metrics *);
/*
 * used_memory and maxmemory from the text of INFO memory (both present:
 * 0; else -1).
 */
int		 metrics_redis_mem_parse(const char *info,
		    unsigned long long *used, unsigned long long *max);
/*
 * Records a sample taken at now_ms (monotonic): the rate (an exponential
 * average of the growth between samples) and the time left until used
 * reaches max. Returns 1 when the worker should warn now: at this rate
 * Redis is full within horizon_s (answer_ttl_s: an answer written now is
 * still kept then), and it has not warned since the last time it was
 * not; else 0. Pure.
 */
int		 metrics_redis_mem_update(struct metrics_redis_mem *,
		    long long now_ms, unsigned long long used,
		    unsigned long long max, unsigned horizon_s);
/* The warning's words, into buf (size bytes). */
void		 metrics_redis_mem_warning(const struct metrics_redis_mem *,
		    unsigned horizon_s, char *buf, size_t size);

#endif
