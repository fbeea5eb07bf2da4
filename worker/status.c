/*
 * A worker's status shown three ways. The process_* gauges follow the
 * names every Prometheus client library uses, so dashboards made for
 * them work here too; they are read from /proc/self at scrape time.
 */

#include <sys/resource.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "logs/log.h"
#include "logs/xmalloc.h"
#include "worker/metrics.h"
#include "worker/status.h"

static void	status_write_reasons(const struct worker_status *, FILE *);

/* One unlabelled gauge with its HELP and TYPE. */
static void
status_gauge(FILE *f, const char *name, const char *help, double v)
{
	metrics_family(f, name, "gauge", help);
	metrics_sample(f, name, NULL, NULL, v);
}

/* One unlabelled counter kept elsewhere (the queue, the kernel). */
static void
status_counter(FILE *f, const char *name, const char *help, double v)
{
	metrics_family(f, name, "counter", help);
	metrics_sample(f, name, NULL, NULL, v);
}

/* Open descriptors: the entries of /proc/self/fd, less the one reading. */
static long
status_open_fds(void)
{
	DIR		*d;
	struct dirent	*e;
	long		 n = 0;

	if ((d = opendir("/proc/self/fd")) == NULL)
		return (-1);
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return (n - 1);
}

/* Resident and virtual memory in bytes, from /proc/self/statm. */
static int
status_memory(double *rss, double *vsz)
{
	FILE		*f;
	unsigned long	 size, resident;
	long		 page = sysconf(_SC_PAGESIZE);
	int		 ok;

	if ((f = fopen("/proc/self/statm", "re")) == NULL)
		return (-1);
	ok = fscanf(f, "%lu %lu", &size, &resident) == 2;
	fclose(f);
	if (!ok)
		return (-1);
	*vsz = (double)size * page;
	*rss = (double)resident * page;
	return (0);
}

/* process_*: CPU, memory, descriptors, start time. */
static void
status_write_process(const struct worker_status *st, FILE *f)
{
	struct rusage	ru;
	struct rlimit	rl;
	double		rss, vsz;
	long		fds;

	if (getrusage(RUSAGE_SELF, &ru) == 0)
		status_counter(f, "process_cpu_seconds_total", "CPU time of the "
		    "worker itself (user and system), in seconds.",
		    ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
		    (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
	if (status_memory(&rss, &vsz) == 0) {
		status_gauge(f, "process_resident_memory_bytes",
		    "Resident memory of the worker, in bytes.", rss);
		status_gauge(f, "process_virtual_memory_bytes",
		    "Virtual memory of the worker, in bytes.", vsz);
	}
	if ((fds = status_open_fds()) >= 0)
		status_gauge(f, "process_open_fds", "Open file descriptors "
		    "of the worker.", fds);
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		status_gauge(f, "process_max_fds", "The worker's limit of "
		    "open file descriptors.", rl.rlim_cur);
	status_gauge(f, "process_start_time_seconds", "When the worker "
	    "started, in seconds since the epoch.", st->started_ms / 1000.0);
}

void
status_write_metrics(const struct worker_status *st, FILE *f)
{
	int	i;

	metrics_family(f, "execq_worker_info", "gauge", "The worker: its "
	    "version, queue, consumer name and tier (always 1).");
	fprintf(f, "execq_worker_info{version=\"");
	metrics_escape(f, st->version);
	fprintf(f, "\",queue=\"");
	metrics_escape(f, st->queue);
	fprintf(f, "\",consumer=\"");
	metrics_escape(f, st->consumer);
	fprintf(f, "\",tier=\"");
	metrics_escape(f, st->tier);
	fprintf(f, "\"} 1\n");
	status_gauge(f, "execq_execute_enabled", "1 when commands run "
	    "(enable_execute), 0 when every EXEC item is refused.",
	    st->execute);
	status_gauge(f, "execq_slots", "Process slots (max_procs).",
	    st->slots_total);
	status_gauge(f, "execq_slots_free", "Process slots free now.",
	    st->slots_total > st->slots_used ?
	    st->slots_total - st->slots_used : 0);
	status_gauge(f, "execq_commands_running", "Foreground commands "
	    "running now.", st->commands_running);
	status_gauge(f, "execq_items_in_flight", "Items accepted and not "
	    "yet answered (running, being claimed, held).",
	    st->items_in_flight);
	metrics_family(f, "execq_sessions", "gauge", "Background and PTY "
	    "sessions this worker knows, by status (ended ones are kept for "
	    "session_ttl_s).");
	metrics_sample(f, "execq_sessions", "status", "running",
	    st->sessions_running);
	metrics_sample(f, "execq_sessions", "status", "ended",
	    st->sessions_ended);
	status_gauge(f, "execq_approvals_pending", "Commands held for a "
	    "human's approval now.", st->approvals_parked);
	status_gauge(f, "execq_redis_connected", "1 when both connections "
	    "to Redis are up.", st->redis_up);
	status_counter(f, "execq_redis_reconnects_total", "Connections to "
	    "Redis made again after one was lost.", st->reconnects);
	status_gauge(f, "execq_outbox_pending", "Answers and commands Redis "
	    "has not confirmed yet.", st->outbox);
	status_gauge(f, "execq_spool_pending", "Entries in the spool on "
	    "disk not yet confirmed by Redis.", st->spooled);
	status_gauge(f, "execq_logs_writable", "1 when command logs can be "
	    "written (else no item is taken).", st->logs_ok);
	status_gauge(f, "execq_stopping", "1 once a shutdown began.",
	    st->stopping);
	status_gauge(f, "execq_redis_wait_seconds", "How long the oldest "
	    "command on a Redis connection has waited for its answer now (0: "
	    "none waits).", st->redis_waited_ms / 1000.0);
	status_write_reasons(st, f);
	metrics_family(f, "execq_confinement_layer", "gauge", "1 for each "
	    "confinement layer that is on, 0 for one that is off.");
	for (i = 0; i < st->nlayers; i++)
		metrics_sample(f, "execq_confinement_layer", "layer",
		    st->layers[i].name, st->layers[i].ok);
	status_write_process(st, f);
}

/* The conditions /healthz checks, in the order it lists them. */
enum status_reason {
	STATUS_REDIS, STATUS_LOGS, STATUS_STOPPING, STATUS_REDIS_STALLED,
	STATUS_REDIS_REPLICA, STATUS_REDIS_REFUSED, STATUS_LOG_DIR,
	STATUS_STATE_DIR, STATUS_AUDIT, STATUS_NREASONS
};

static const char *const status_reasons[STATUS_NREASONS] = {
	"redis", "logs", "stopping", "redis_stalled", "redis_replica",
	"redis_refused", "log_dir", "state_dir", "audit"
};

/* Whether reason r holds now. */
static int
status_failing(const struct worker_status *st, enum status_reason r)
{
	switch (r) {
	case STATUS_REDIS:
		return (!st->redis_up);
	case STATUS_LOGS:
		return (!st->logs_ok);
	case STATUS_STOPPING:
		return (st->stopping);
	case STATUS_REDIS_STALLED:
		return (st->redis_stalled);
	case STATUS_REDIS_REPLICA:
		return (st->redis_replica);
	case STATUS_REDIS_REFUSED:
		return (st->redis_refused != NULL);
	case STATUS_LOG_DIR:
		return (st->log_dir_err != 0);
	case STATUS_STATE_DIR:
		return (st->state_dir_err != 0);
	case STATUS_AUDIT:
		return (st->audit_err != 0);
	default:
		return (0);
	}
}

/* The line a person reads about reason r (a new string). */
static char *
status_detail(const struct worker_status *st, enum status_reason r)
{
	char	*s;

	switch (r) {
	case STATUS_REDIS:
		xasprintf(&s, "redis: not connected");
		break;
	case STATUS_LOGS:
		xasprintf(&s, "logs: no command log can be written; no item "
		    "is taken");
		break;
	case STATUS_STOPPING:
		xasprintf(&s, "stopping: the worker is shutting down");
		break;
	case STATUS_REDIS_STALLED:
		xasprintf(&s, "redis_stalled: Redis has not answered for %lld "
		    "s", st->redis_waited_ms / 1000);
		break;
	case STATUS_REDIS_REPLICA:
		xasprintf(&s, "redis_replica: the server is a read-only "
		    "replica, not the primary");
		break;
	case STATUS_REDIS_REFUSED:
		xasprintf(&s, "redis_refused: Redis refuses writes: %s",
		    st->redis_refused);
		break;
	case STATUS_LOG_DIR:
		xasprintf(&s, "log_dir: the log dir cannot be written: %s",
		    strerror(st->log_dir_err));
		break;
	case STATUS_STATE_DIR:
		xasprintf(&s, "state_dir: the state dir cannot be written: %s",
		    strerror(st->state_dir_err));
		break;
	case STATUS_AUDIT:
		xasprintf(&s, "audit: the audit log cannot be written (%s): "
		    "no command starts", strerror(st->audit_err));
		break;
	default:
		s = xstrdup("");
		break;
	}
	return (s);
}

/* execq_health: one sample per reason, 1 while it holds. */
static void
status_write_reasons(const struct worker_status *st, FILE *f)
{
	int	r;

	metrics_family(f, "execq_health", "gauge", "1 for each reason "
	    "/healthz gives now (it answers 503 while any is 1), 0 for the "
	    "others.");
	for (r = 0; r < STATUS_NREASONS; r++)
		metrics_sample(f, "execq_health", "reason", status_reasons[r],
		    status_failing(st, r));
}

int
status_write_health(const struct worker_status *st, FILE *f)
{
	json_t	*o, *reasons, *details;
	char	*line;
	int	 ok, r;

	reasons = json_array();
	details = json_array();
	for (r = 0; r < STATUS_NREASONS; r++) {
		if (!status_failing(st, r))
			continue;
		json_array_append_new(reasons, json_string(status_reasons[r]));
		line = status_detail(st, r);
		json_array_append_new(details, json_string(line));
		free(line);
	}
	ok = json_array_size(reasons) == 0;
	o = json_pack("{s:s, s:o, s:o, s:s, s:s, s:b, s:s, s:b, s:b, s:I, "
	    "s:I, s:I}", "status", ok ? "ok" : "unavailable", "reasons",
	    reasons, "details", details,
	    "worker", st->consumer, "queue", st->queue,
	    "redis", st->redis_up, "redis_auth", st->redis_auth != NULL ?
	    st->redis_auth : "unknown", "logs_writable", st->logs_ok,
	    "stopping", st->stopping,
	    "slots_free", (json_int_t)(st->slots_total > st->slots_used ?
	    st->slots_total - st->slots_used : 0),
	    "outbox", (json_int_t)st->outbox,
	    "spooled", (json_int_t)st->spooled);
	if (o == NULL)
		fatal("out of memory (json)");
	json_dumpf(o, f, JSON_COMPACT);
	fputc('\n', f);
	json_decref(o);
	return (ok);
}

json_t *
status_to_json(const struct worker_status *st)
{
	json_t	*o, *layers;
	int	 i;

	layers = json_object();
	for (i = 0; i < st->nlayers; i++)
		json_object_set_new(layers, st->layers[i].name,
		    json_boolean(st->layers[i].ok));
	o = json_pack("{s:s, s:s, s:s, s:I, s:s, s:I, s:I, s:I, s:I, s:I, "
	    "s:I, s:I, s:b, s:s, s:b, s:b, s:o, s:s}",
	    "consumer", st->consumer, "host", st->host, "queue", st->queue,
	    "pid", (json_int_t)st->pid, "version", st->version,
	    "started_ms", (json_int_t)st->started_ms,
	    "beat_ms", (json_int_t)st->now_ms,
	    "slots_total", (json_int_t)st->slots_total,
	    "slots_used", (json_int_t)st->slots_used,
	    "commands_running", (json_int_t)st->commands_running,
	    "sessions_running", (json_int_t)st->sessions_running,
	    "approvals_parked", (json_int_t)st->approvals_parked,
	    "execute", st->execute,
	    "tier", st->tier, "network", st->network,
	    "confined", st->confined, "confinement", layers,
	    "state", st->stopping ? "stopping" : "running");
	if (o == NULL)
		fatal("out of memory (json)");
	return (o);
}
