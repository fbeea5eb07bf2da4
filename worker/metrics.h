#ifndef EXECQ_METRICS_H
#define EXECQ_METRICS_H

/*
 * The worker's counters and histograms, and the Prometheus text format
 * (version 0.0.4) they are shown in. Counters only go up, from the
 * worker's start; what is true "now" (commands running, slots free) is
 * not kept here but written as a gauge at scrape time by its owner.
 * Pure code, no I/O beyond the FILE it is handed.
 */

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

#endif
