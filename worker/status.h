#ifndef EXECQ_STATUS_H
#define EXECQ_STATUS_H

/*
 * What a worker is doing now, as plain data the worker fills in, and the
 * three ways it is shown: the gauges of GET /metrics, the JSON of GET
 * /healthz, and the entry of the fleet registry (execq:workers, read by
 * `execq workers`). Pure code; docs/PROTOCOL.md has the formats.
 */

#include <stdio.h>

struct metrics;
struct json_t;

#define STATUS_MAX_LAYERS	8

struct status_layer {
	const char	*name;		/* "landlock", "seccomp", ... */
	int		 ok;
};

struct worker_status {
	const char		*consumer, *queue, *host, *version;
	long			 pid;
	long long		 started_ms;	/* wall clock */
	long long		 now_ms;	/* wall clock */
	unsigned		 slots_total;	/* max_procs */
	unsigned		 slots_used;	/* foreground + sessions */
	unsigned		 commands_running;	/* foreground */
	unsigned		 sessions_running, sessions_ended;
	unsigned		 approvals_parked;
	unsigned		 items_in_flight;	/* accepted, unanswered */
	int			 execute;	/* enable_execute */
	int			 redis_up;
	const char		*redis_auth;	/* "required"; "none": anyone
						   gets in; "unknown" */
	unsigned long long	 reconnects;
	unsigned		 outbox, spooled;
	int			 logs_ok;
	int			 stopping;
	/* The control plane and the disks; 0/NULL is healthy. */
	long long		 redis_waited_ms;	/* oldest command's wait */
	int			 redis_stalled;	/* ... past the timeout */
	int			 redis_replica;
	const char		*redis_refused;	/* Redis's error, or NULL */
	int			 log_dir_err;	/* the last probe's errno */
	int			 state_dir_err;
	int			 audit_err;	/* the last line's errno */
	const char		*tier;
	int			 network;	/* the queue grants it */
	struct status_layer	 layers[STATUS_MAX_LAYERS];
	int			 nlayers;
	int			 confined;	/* every layer on */
};

/* The gauges of /metrics (process_* included), after metrics_write(). */
void		 status_write_metrics(const struct worker_status *, FILE *);
/*
 * The body of /healthz: {"status": "ok"|"unavailable", "reasons": [...],
 * "details": [...], ...}: a reason (redis, logs, stopping, redis_stalled,
 * redis_replica, redis_refused, log_dir, state_dir, audit) per failing
 * condition, and a line for a person beside each. Returns 1 when none
 * fails.
 */
int		 status_write_health(const struct worker_status *, FILE *);
/* The fleet registry entry (a new reference). */
struct json_t	*status_to_json(const struct worker_status *);

#endif
