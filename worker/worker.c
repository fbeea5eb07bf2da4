#include <sys/prctl.h>
#include <sys/queue.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>

#include "exec/cgroup.h"
#include "policy/classify.h"
#include "exec/confine.h"
#include "exec/exec.h"
#include "exec/cmdenv.h"
#include "logs/cleanup.h"
#include "logs/execlog.h"
#include "logs/log.h"
#include "logs/syncer.h"
#include "logs/xmalloc.h"
#include "queue/item.h"
#include "queue/keyspace.h"
#include "queue/queue.h"
#include "queue/rurl.h"
#include "worker/approval.h"
#include "worker/audit.h"
#include "worker/config.h"
#include "worker/http.h"
#include "worker/live.h"
#include "worker/metrics.h"
#include "policy/policyconf.h"
#include "worker/session.h"
#include "worker/status.h"
#include "worker/worker.h"

extern char **environ;

/* One accepted stream entry, from delivery until its answer is queued. */
struct job {
	LIST_ENTRY(job)	 entry;
	struct worker	*w;
	char		*stream, *entry_id;
	struct item	*item;
	char		*cwd;
	char		**envp;
	struct exec	*ex;
	int		 control;	/* PROCESS: holds no process slot */
	enum cls_action	 action;	/* the policy's decision */
	enum cls_risk	 risk;
	enum cls_tier	 tier;
	char		*rule, *reason;
	struct approval	*approval;	/* parked: holds no slot */
	char		*request;	/* approved: the request id */
	char		*approved_by;
	int		 network;	/* runs with network */
	int		 asks_network;	/* ... that the queue does not grant:
					   a human must */
	char		*outside;	/* held by the sandbox: the path */
	char		*grant;		/* ... that an approval opened */
	long long	 received_us;	/* delivered (monotonic) */
	struct live	*live;		/* args.stream: execq:out:<id> */
	unsigned long long out_bytes[3];	/* ... per fd, for its end */
	char		*claim_id;	/* claimed by the read, for us, and
					   not used yet: let go of it if the
					   item never runs; else NULL */
};

#define WORKER_HELD_KEEP	64	/* ended held items remembered */
#define WORKER_SPARE_MAX	64	/* files made ahead, at most */

/* An item whose approval request ended without running it. */
struct held_end {
	char		*id, *state, *request, *command, *risk, *rule, *reason,
			*by;
	long long	 created_ms, expires_ms;
};

struct worker {
	struct event_base	*base;
	const struct config	*cfg;
	struct exec_config	 ecfg;
	struct rurl		 url;
	struct queue		*q;
	struct sessions		*sessions;
	struct approvals	*approvals;
	struct audit		*audit;
	LIST_HEAD(, job)	 jobs;
	unsigned		 njobs;		/* all jobs */
	unsigned		 nslots;	/* ... of them holding a slot */
	int			 stopping;
	int			 retired;	/* worker key deleted */
	enum cls_tier		 tier;		/* the queue's, auto resolved */
	const char		*tier_name;
	struct cls_policy	 policy;	/* the config's; when confined,
						   read_paths count as inside */
	char			**allow;	/* policy.allow_paths, owned */
	struct event		*ev_chld, *ev_term, *ev_int;
	struct event		*ev_stop;	/* shutdown steps */
	long long		 stop_deadline_ms;	/* then exit anyway */
	int			 logs_broken;	/* no log can be written */
	struct event		*ev_logs;	/* ... so look again */
	struct syncer		*syncer;	/* fsyncs logs and the spool */
	struct cgroup_pool	*pool;		/* exec's; NULL: none */
	struct held_end		 ended[WORKER_HELD_KEEP];	/* a ring */
	unsigned		 nended;
	struct metrics		*metrics;
	struct http		*http;		/* NULL: no side door */
	struct event		*ev_hup;	/* reopen the logs */
	long long		 started_ms;	/* wall clock */
	char			 host[256];
	struct status_layer	 layers[STATUS_MAX_LAYERS];
	int			 nlayers;
	int			 confined;	/* every layer on */
};

static long long	worker_now_us(void);
static void		worker_publish(struct worker *, int);

/* Tells the queue how many more items fit. */
static void
worker_update_want(struct worker *w)
{
	unsigned	used;

	if (w->stopping)
		return;
	if (w->logs_broken) {		/* nothing would have a log */
		queue_want(w->q, 0);
		return;
	}
	used = w->nslots + sessions_running(w->sessions);
	queue_want(w->q, w->cfg->max_procs > used ? w->cfg->max_procs - used :
	    0);
}

/*
 * A log could not be made. If logs cannot be written in the log dir at
 * all (gone and not to be made again, read-only, full, no permission),
 * the worker stops taking items rather than failing each one, says why,
 * and looks again every second.
 */
static void
worker_check_logs(struct worker *w)
{
	struct timeval	tv = { 1, 0 };

	if (execlog_probe(w->cfg->log_dir) == 0) {
		if (w->logs_broken)
			log_info("logs can be written in %s again: taking "
			    "items", w->cfg->log_dir);
		w->logs_broken = 0;
		worker_update_want(w);
		return;
	}
	if (!w->logs_broken)
		log_warn("no log can be written in %s (%s): not taking items "
		    "until it can", w->cfg->log_dir, strerror(errno));
	w->logs_broken = 1;
	worker_update_want(w);
	evtimer_add(w->ev_logs, &tv);
}

/* The probe timer. */
static void
worker_logs_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	worker_check_logs(arg);
}

/* A session ended: its slot is free. */
static void
worker_slot_cb(void *arg)
{
	worker_update_want(arg);
}

/* The reply queue for an item (its own, or the worker's default). */
static const char *
worker_reply_to(struct worker *w, const char *reply_to)
{
	return (reply_to != NULL ? reply_to : w->cfg->reply_default);
}

/* Frees a job's memory (it is unlinked already). */
static void
worker_job_free(struct job *j)
{
	item_free(j->item);
	cmdenv_env_free(j->envp);
	free(j->cwd);
	free(j->rule);
	free(j->reason);
	free(j->request);
	free(j->approved_by);
	free(j->outside);
	free(j->grant);
	live_free(j->live);
	free(j->stream);
	free(j->entry_id);
	free(j->claim_id);
	free(j);
}

/* The item type as metrics label it. */
static const char *
worker_type_label(const struct job *j)
{
	if (j->item == NULL)
		return ("invalid");
	return (j->item->type == ITEM_PROCESS ? "PROCESS" : "EXEC");
}

/* An answer (code "ok", or an ERROR's) was queued for job j. */
static void
worker_answered(struct job *j, const char *code)
{
	metrics_add(j->w->metrics, METRICS_ANSWERED, 1, worker_type_label(j),
	    code);
	metrics_observe(j->w->metrics, METRICS_ANSWER,
	    (worker_now_us() - j->received_us) / 1e6);
}

/*
 * Forgets a job whose entry is acknowledged (or will be) elsewhere. A
 * claim made as it was read, for an item that never ran, is let go.
 */
static void
worker_drop(struct job *j)
{
	struct worker	*w = j->w;

	if (j->claim_id != NULL)
		queue_release(w->q, j->claim_id, j->entry_id);
	queue_untrack(w->q, j->stream, j->entry_id);
	LIST_REMOVE(j, entry);
	w->njobs--;
	if (!j->control)
		w->nslots--;
	worker_job_free(j);
	worker_update_want(w);
}

/*
 * The one way a job ends: its answer goes out with the ack (and does store
 * to the record of item id), and its slot is free again.
 */
static void
worker_finish(struct job *j, const char *code, const char *reply_to,
    const char *id, enum queue_store store, const char *json, size_t len)
{
	struct worker	*w = j->w;

	/* Refused after its claim: the answer lets go of it. */
	if (j->claim_id != NULL && store == QUEUE_STORE_NONE && id != NULL &&
	    strcmp(id, j->claim_id) == 0) {
		store = QUEUE_STORE_RELEASE;
		free(j->claim_id);
		j->claim_id = NULL;
	}
	queue_answer(w->q, worker_reply_to(w, reply_to), KS_LANE_NORMAL, id,
	    store, j->stream, j->entry_id, json, len);
	worker_answered(j, code);
	worker_drop(j);
}

/* Answers a job with an ERROR. */
static void
worker_fail(struct job *j, const char *reply_to, const char *id,
    const char *code, const char *message, enum queue_store store)
{
	char	*json;
	size_t	 len;

	log_info("item %s: %s: %s", id != NULL ? id : "(no id)", code,
	    message);
	json = item_error_to_json(id, code, message, &len);
	worker_finish(j, code, reply_to, id, store, json, len);
	free(json);
}

/* A foreground command's output, for its live stream. */
static void
worker_output_cb(struct exec *ex, int fd, const char *buf, size_t len,
    void *arg)
{
	struct job	*j = arg;

	(void)ex;
	j->out_bytes[fd == 2 ? 2 : 1] += len;
	live_output(j->live, fd, buf, len);
}

/*
 * The live stream's last entry, before the answer: how many bytes each
 * stream had, so a reader knows whether it saw them all.
 */
static void
worker_live_end(struct job *j, const struct exec_result *r)
{
	char	*text;

	text = item_stream_end_to_json(j->item->id, r->exit_code,
	    r->end == EXEC_END_TIMEOUT, j->out_bytes[1], j->out_bytes[2],
	    r->log_path, NULL);
	live_end(j->live, text, j->w->cfg->session_ttl_s);
	free(text);
}

/* The exec finished: answer with its result. */
static void
worker_exec_done(struct exec *ex, void *arg)
{
	struct job		*j = arg;
	struct exec_result	 r;
	struct item_result	 ir;
	char			*json;
	size_t			 len;
	json_t			*conf;

	exec_result(ex, &r);
	conf = exec_confinement_json(&r.confinement, 1);
	memset(&ir, 0, sizeof ir);
	ir.id = j->item->id;
	ir.exit_code = r.exit_code;
	ir.signal = r.signal;
	ir.out = r.out;
	ir.out_len = r.out_len;
	ir.err = r.err;
	ir.err_len = r.err_len;
	ir.truncated = r.truncated;
	ir.timed_out = r.end == EXEC_END_TIMEOUT;
	ir.duration_ms = r.duration_ms;
	ir.log_path = r.log_path;
	ir.user_ms = r.user_ms;
	ir.sys_ms = r.sys_ms;
	ir.max_rss_kb = r.max_rss_kb;
	ir.request = j->request;
	ir.approved_by = j->approved_by;
	ir.confinement = conf;
	ir.log_error = r.log_error != 0 ? strerror(r.log_error) : NULL;
	log_info("item %s: exit %d%s in %lld ms", j->item->id, r.exit_code,
	    ir.timed_out ? " (timed out)" : "", (long long)r.duration_ms);
	json = item_result_to_json(&ir, &len);
	json_decref(conf);
	if (j->live != NULL)
		worker_live_end(j, &r);
	metrics_add(j->w->metrics, METRICS_OUTPUT_BYTES, r.output_bytes,
	    "foreground", NULL);
	exec_result_release(&r);
	j->ex = NULL;
	worker_finish(j, "ok", j->item->reply_to, j->item->id, QUEUE_STORE_ANSWER,
	    json, len);
	free(json);
}

/* Job j's command runs now. */
static void
worker_spawned(struct job *j)
{
	metrics_observe(j->w->metrics, METRICS_SPAWN,
	    (worker_now_us() - j->received_us) / 1e6);
}

/* Starts a claimed job's command. */
static void
worker_start(struct job *j)
{
	struct worker		*w = j->w;
	struct exec_spec	 spec;
	const char		*code;
	char			*cause, *json, *kept;
	size_t			 len, kept_len;

	if (j->item->background) {
		json = sessions_start(w->sessions, j->item, j->cwd, j->envp,
		    j->network, j->grant, &len, &kept, &kept_len, &code,
		    &cause);
		if (json == NULL) {
			worker_fail(j, j->item->reply_to, j->item->id, code,
			    cause, QUEUE_STORE_RELEASE);
			free(cause);
			if (strcmp(code, "log_failed") == 0)
				worker_check_logs(w);
			return;
		}
		log_info("item %s: session started: %s", j->item->id,
		    j->item->command);
		queue_answer_kept(w->q, worker_reply_to(w, j->item->reply_to),
		    KS_LANE_NORMAL, j->item->id, QUEUE_STORE_ANSWER, j->stream,
		    j->entry_id, json, len, kept, kept_len);
		worker_spawned(j);
		worker_answered(j, "ok");
		worker_drop(j);
		free(json);
		free(kept);
		return;
	}
	memset(&spec, 0, sizeof spec);
	spec.id = j->item->id;
	spec.command = j->item->command;
	spec.cwd = j->cwd;
	spec.envp = j->envp;
	spec.timeout_ms = j->item->timeout_ms > 0 ?
	    (unsigned)j->item->timeout_ms : w->cfg->default_timeout_ms;
	spec.output_cap = w->cfg->output_cap;
	spec.pty = j->item->pty;
	spec.rows = j->item->rows;
	spec.cols = j->item->cols;
	spec.network = j->network;
	spec.grant = j->grant;
	if (j->item->stream) {
		j->live = live_create(w->base, w->q, j->item->id, 1);
		spec.outputcb = worker_output_cb;
	}
	j->ex = exec_start(&spec, worker_exec_done, j, &code, &cause);
	if (j->ex == NULL) {
		/* It never ran: the same id may be sent again. */
		worker_fail(j, j->item->reply_to, j->item->id, code, cause,
		    QUEUE_STORE_RELEASE);
		free(cause);
		if (strcmp(code, "log_failed") == 0)
			worker_check_logs(w);
		return;
	}
	worker_spawned(j);
	log_info("item %s: started pid %ld: %s", j->item->id,
	    (long)exec_pid(j->ex), j->item->command);
}

/* One line in the audit log about job j. */
static void
worker_audit(struct job *j, const char *event, const char *by,
    const char *reason)
{
	struct worker		*w = j->w;
	struct audit_event	 e;

	memset(&e, 0, sizeof e);
	e.event = event;
	e.id = j->item->id;
	e.request = j->approval != NULL ? approval_request(j->approval) :
	    j->request;
	e.command = j->item->command;
	e.cwd = j->cwd;
	e.risk = cls_risk_name(j->risk);
	e.rule = j->rule;
	e.reason = reason != NULL ? reason : j->reason;
	e.tier = cls_tier_name(j->tier);
	e.by = by;
	e.queue = w->cfg->queue;
	e.worker = queue_consumer(w->q);
	audit_write(w->audit, &e);
}

/* A held job's state as PROCESS actions show it (strings borrowed). */
static void
worker_held_view(const struct job *j, const struct approval *a,
    const char *state, struct item_held *h)
{
	const struct item_approval	*req = approval_info(a);

	memset(h, 0, sizeof *h);
	h->id = j->item->id;
	h->state = state;
	h->request = approval_request(a);
	h->command = j->item->command;
	h->risk = req->risk;
	h->rule = req->rule;
	h->reason = req->reason;
	h->decided_by = req->decided_by;
	h->created_ms = req->created_ms;
	h->expires_ms = req->expires_ms;
}

/* Frees one remembered entry. */
static void
worker_held_forget(struct held_end *e)
{
	free(e->id);
	free(e->state);
	free(e->request);
	free(e->command);
	free(e->risk);
	free(e->rule);
	free(e->reason);
	free(e->by);
	memset(e, 0, sizeof *e);
}

/*
 * A held job's request ended (state) without running it: mirrored for
 * "execq ps" and remembered for PROCESS actions.
 */
static void
worker_held_ended(struct job *j, const struct approval *a,
    const char *state)
{
	struct worker		*w = j->w;
	struct item_held	 h;
	struct held_end		*e = &w->ended[w->nended++ % WORKER_HELD_KEEP];

	worker_held_view(j, a, state, &h);
	sessions_mirror_held(w->sessions, &h, worker_reply_to(w,
	    j->item->reply_to), 0);
	worker_held_forget(e);
	e->id = xstrdup(h.id);
	e->state = xstrdup(state);
	e->request = xstrdup(h.request);
	e->command = xstrdup(h.command);
	e->risk = xstrdup(h.risk);
	e->rule = xstrdup(h.rule);
	e->reason = xstrdup(h.reason);
	e->by = h.decided_by != NULL ? xstrdup(h.decided_by) : NULL;
	e->created_ms = h.created_ms;
	e->expires_ms = h.expires_ms;
}

/* The item id as held here now, or as it ended; -1 if neither. */
static int
worker_held_find(struct worker *w, const char *id, struct item_held *h)
{
	struct job	*j;
	struct held_end	*e;
	unsigned	 i;

	LIST_FOREACH(j, &w->jobs, entry)
		if (j->approval != NULL && strcmp(j->item->id, id) == 0) {
			worker_held_view(j, j->approval, "held", h);
			return (0);
		}
	for (i = 0; i < WORKER_HELD_KEEP; i++) {
		e = &w->ended[(w->nended - 1 - i) % WORKER_HELD_KEEP];
		if (e->id == NULL || strcmp(e->id, id) != 0)
			continue;
		memset(h, 0, sizeof *h);
		h->id = e->id;
		h->state = e->state;
		h->request = e->request;
		h->command = e->command;
		h->risk = e->risk;
		h->rule = e->rule;
		h->reason = e->reason;
		h->decided_by = e->by;
		h->created_ms = e->created_ms;
		h->expires_ms = e->expires_ms;
		return (0);
	}
	return (-1);
}

/* "list" shows the items held here with the sessions. */
static void
worker_held_list_cb(json_t *a, void *arg)
{
	struct worker		*w = arg;
	struct item_held	 h;
	struct job		*j;

	LIST_FOREACH(j, &w->jobs, entry) {
		if (j->approval == NULL)
			continue;
		worker_held_view(j, j->approval, "held", &h);
		json_array_append_new(a, item_held_to_json(&h));
	}
}

/* A human decided (or nobody did in time). */
static void
worker_decided_cb(struct approval *a, enum approval_outcome how,
    const char *by, const char *reason, void *arg)
{
	struct job		*j = arg;
	struct item		*it = j->item;
	struct item_held	 h;
	char			*msg;

	j->request = xstrdup(approval_request(a));
	j->approval = NULL;
	metrics_add(j->w->metrics, METRICS_APPROVALS, 1,
	    how == APPROVAL_APPROVED ? "approved" : how == APPROVAL_REJECTED ?
	    "rejected" : "expired", NULL);
	switch (how) {
	case APPROVAL_APPROVED:
		worker_audit(j, "approved", by, reason);
		if (!it->background) {	/* a session takes the mirror over */
			worker_held_view(j, a, "approved", &h);
			sessions_mirror_held(j->w->sessions, &h, NULL, 1);
		}
		j->approved_by = xstrdup(by);
		/* The approval opens exactly the path it named. */
		if (j->outside != NULL)
			j->grant = xstrdup(j->outside);
		j->control = 0;		/* it holds a slot again */
		j->w->nslots++;
		worker_update_want(j->w);
		worker_start(j);
		break;
	case APPROVAL_REJECTED:
		worker_audit(j, "rejected", by, reason);
		worker_held_ended(j, a, "rejected");
		xasprintf(&msg, "rejected by %s%s%s (request %s)", by,
		    reason != NULL ? ": " : "", reason != NULL ? reason : "",
		    j->request);
		worker_fail(j, it->reply_to, it->id, "rejected", msg,
		    QUEUE_STORE_ANSWER);
		free(msg);
		break;
	default:
		worker_audit(j, "expired", NULL, NULL);
		worker_held_ended(j, a, "expired");
		if (approval_published(a))
			xasprintf(&msg, "nobody approved it within %u s "
			    "(request %s); it did not run",
			    j->w->cfg->approval_timeout_ms / 1000, j->request);
		else
			xasprintf(&msg, "its approval request could not be "
			    "published within %u s (Redis unreachable); it did "
			    "not run", j->w->cfg->approval_timeout_ms / 1000);
		worker_fail(j, it->reply_to, it->id, "approval_expired", msg,
		    QUEUE_STORE_ANSWER);
		free(msg);
		break;
	}
}

/* Held: its slot is freed and a human is asked. */
static void
worker_park(struct job *j)
{
	struct worker		*w = j->w;
	struct item_approval	 req;
	struct item_held	 h;

	j->control = 1;
	w->nslots--;
	worker_update_want(w);
	memset(&req, 0, sizeof req);
	req.id = j->item->id;
	req.command = j->item->command;
	req.cwd = j->cwd;
	req.env = j->item->env;
	req.risk = cls_risk_name(j->risk);
	req.rule = j->rule;
	req.reason = j->reason;
	req.queue = w->cfg->queue;
	req.worker = queue_consumer(w->q);
	req.reply_to = worker_reply_to(w, j->item->reply_to);
	req.background = j->item->background;
	req.network = j->asks_network;
	req.grant_path = j->outside;
	j->approval = approvals_park(w->approvals, &req, worker_decided_cb, j);
	metrics_add(w->metrics, METRICS_APPROVALS, 1, "requested", NULL);
	worker_held_view(j, j->approval, "held", &h);
	sessions_mirror_held(w->sessions, &h, req.reply_to, 0);
	log_info("item %s: held for approval (request %s): %s",
	    j->item->id, approval_request(j->approval), j->reason);
	worker_audit(j, "held", NULL, NULL);
}

/* What Redis knew about the item id decides whether it runs. */
static void
worker_claim_cb(enum queue_claim what, const char *answer, size_t len,
    void *arg)
{
	struct job	*j = arg;
	struct item	*it = j->item;

	free(j->claim_id);	/* the claim is used now, whatever it said */
	j->claim_id = NULL;
	switch (what) {
	case QUEUE_CLAIM_RUN:
		if (j->w->stopping) {	/* SIGTERM came while claiming */
			worker_fail(j, it->reply_to, it->id, "worker_stopping",
			    "the worker is shutting down; nothing ran, send it "
			    "again", QUEUE_STORE_RELEASE);
			break;
		}
		if (j->action == CLS_HOLD) {
			worker_park(j);
			break;
		}
		worker_audit(j, "run", NULL, NULL);
		worker_start(j);
		break;
	case QUEUE_CLAIM_ANSWERED:
		log_info("item %s: answered before, sending that answer again",
		    it->id);
		worker_finish(j, "ok", it->reply_to, NULL, QUEUE_STORE_NONE,
		    answer, len);
		break;
	case QUEUE_CLAIM_FAILED:
		/* Not ours yet: it stays pending and is taken over later. */
		log_info("item %s: Redis refused the claim; let go of it for "
		    "now", it->id);
		worker_drop(j);
		break;
	case QUEUE_CLAIM_LOST:
		worker_fail(j, it->reply_to, it->id, "worker_lost",
		    "the worker running this item stopped before answering; "
		    "it was not run again (set args.retries to allow that)",
		    QUEUE_STORE_ANSWER);
		break;
	default:
		worker_fail(j, it->reply_to, it->id, "duplicate_id",
		    "an item with this id is already running",
		    QUEUE_STORE_NONE);
		break;
	}
}

/* The answer to a PROCESS item. */
static void
worker_process_answer_cb(const char *code, const char *text, size_t len,
    void *arg)
{
	struct job	*j = arg;

	if (code != NULL)
		worker_fail(j, j->item->reply_to, j->item->id, code, text,
		    QUEUE_STORE_NONE);
	else
		worker_finish(j, "ok", j->item->reply_to, NULL,
		    QUEUE_STORE_NONE, text, len);
}

/* Another worker owns the session, or nobody does. */
static void
worker_forwarded_cb(long long how, void *arg)
{
	struct job	*j = arg;

	if (how == 1) {
		log_debug("item %s: forwarded to the session's worker",
		    j->item->id);
		worker_drop(j);		/* the script acknowledged it */
		return;
	}
	if (how == -1) {
		if (sessions_act_offline(j->w->sessions, j->item,
		    worker_process_answer_cb, j) == 0)
			return;
		worker_fail(j, j->item->reply_to, j->item->id,
		    "unknown_session", "the worker that ran this session is "
		    "gone, and with it the session", QUEUE_STORE_NONE);
		return;
	}
	sessions_act(j->w->sessions, j->item, worker_process_answer_cb, j);
}

/* A PROCESS item: here if the session is ours, else to its owner. */
static void
worker_process(struct job *j, const struct queue_entry *e)
{
	struct worker		*w = j->w;
	struct item		*it = j->item;
	struct item_held	 h;

	if (it->action != ITEM_ACTION_LIST && it->session_id != NULL &&
	    worker_held_find(w, it->session_id, &h) == 0) {
		/* No token went out yet: only an operator looks at it. */
		if (!sessions_operator(w->cfg, it))
			worker_process_answer_cb("forbidden", "the item is held "
			    "for approval and has no session token yet; only "
			    "an operator may act on it", 0, j);
		else
			sessions_act_held(it, &h, worker_process_answer_cb, j);
		return;
	}
	if (it->action != ITEM_ACTION_LIST &&
	    !sessions_has(w->sessions, it->session_id)) {
		queue_forward(w->q, it->session_id, e->stream, e->entry_id,
		    e->body, e->len, worker_forwarded_cb, j);
		return;
	}
	sessions_act(w->sessions, it, worker_process_answer_cb, j);
}

/* Checks a parsed item against the worker's gate and limits. */
static int
worker_check(struct job *j)
{
	struct worker	*w = j->w;
	struct item	*it = j->item;
	const char	*code;
	char		*cause;

	if (!w->cfg->enable_execute) {
		worker_fail(j, it->reply_to, it->id, "execution_disabled",
		    "command execution is disabled on this worker (set "
		    "ENABLE_EXECUTE=1 or enable_execute in the config file)",
		    QUEUE_STORE_NONE);
		return (-1);
	}
	if (it->timeout_ms > (long)w->cfg->max_timeout_ms) {
		xasprintf(&cause, "args.timeout_s exceeds this worker's maximum "
		    "of %u s", w->cfg->max_timeout_ms / 1000);
		worker_fail(j, it->reply_to, it->id, "bad_timeout", cause,
		    QUEUE_STORE_NONE);
		free(cause);
		return (-1);
	}
	j->cwd = cmdenv_resolve_cwd(w->cfg->workspace, it->cwd, &code, &cause);
	if (j->cwd == NULL) {
		worker_fail(j, it->reply_to, it->id, code, cause,
		    QUEUE_STORE_NONE);
		free(cause);
		return (-1);
	}
	j->envp = cmdenv_build_env(environ, it->env, it->pty, it->id, &code,
	    &cause);
	if (j->envp == NULL) {
		worker_fail(j, it->reply_to, it->id, code, cause,
		    QUEUE_STORE_NONE);
		free(cause);
		return (-1);
	}
	return (0);
}

/* The item's tier: the queue's, or lower if it asks. */
static int
worker_tier(struct job *j)
{
	struct worker	*w = j->w;
	struct item	*it = j->item;
	char		*msg;

	j->tier = w->tier;
	if (it->tier == NULL)
		return (0);
	if (cls_tier_parse(it->tier, &j->tier) != 0) {
		worker_fail(j, it->reply_to, it->id, "bad_item", "args.tier "
		    "must be read_only, read_write, confined or admin",
		    QUEUE_STORE_NONE);
		return (-1);
	}
	if (j->tier > w->tier) {
		xasprintf(&msg, "args.tier %s is above this queue's tier %s; "
		    "an item may only lower it", it->tier, w->tier_name);
		worker_fail(j, it->reply_to, it->id, "bad_tier", msg,
		    QUEUE_STORE_NONE);
		free(msg);
		return (-1);
	}
	return (0);
}

/* Why a command waits for a network grant (static or borrowed from v). */
static const char *
worker_network_reason(const struct cls_verdict *v, int asked)
{
	static char	buf[512];
	size_t		i;

	if (asked)
		return ("it asks for network, which this queue does not grant");
	for (i = 0; i < v->ncmds; i++)
		if (v->cmds[i].network)
			break;
	snprintf(buf, sizeof buf, "%s; this queue grants no network",
	    i < v->ncmds ? v->cmds[i].reason : "it needs the network");
	return (buf);
}

/*
 * 1 if an approval may open path: absolute, without . or .. parts, and
 * not / nor a directory right below it (/etc, /usr: too much at once).
 */
static int
worker_grantable(const char *path)
{
	if (path == NULL || path[0] != '/' || strstr(path, "/./") != NULL ||
	    strstr(path, "/../") != NULL || strcmp(path + strlen(path) -
	    (strlen(path) >= 2 ? 2 : 0), "/.") == 0 ||
	    (strlen(path) >= 3 && strcmp(path + strlen(path) - 3, "/..") == 0))
		return (0);
	return (strchr(path + 1, '/') != NULL &&
	    path[strlen(path) - 1] != '/');
}

/* The command policy: run, hold for approval, or refuse (answered). */
static int
worker_classify(struct job *j)
{
	struct worker		*w = j->w;
	struct item		*it = j->item;
	struct cls_verdict	 v;
	const char		*rule, *reason, *code;
	char			*msg;

	if (worker_tier(j) != 0)
		return (-1);
	cls_classify(&w->policy, it->command,
	    strlen(it->command), j->cwd, &v);
	cls_classify_env(&w->policy, &v, it->env);
	j->action = cls_decide(&v, j->tier, w->cfg->sandbox_mode, &rule,
	    &reason);
	j->risk = v.risk;
	metrics_add(w->metrics, METRICS_DECISIONS, 1, cls_risk_name(v.risk),
	    cls_action_name(j->action));
	/*
	 * Network is the queue's grant, or a human's: asked for by the item,
	 * or needed by one of its commands (curl, git fetch, pip install).
	 */
	j->network = w->cfg->network && it->network != 0;
	if (!w->cfg->network && (it->network == 1 ||
	    (v.network && it->network != 0))) {
		j->network = j->asks_network = 1;
		if (j->action == CLS_RUN) {
			j->action = CLS_HOLD;
			rule = "network";
			reason = worker_network_reason(&v, it->network == 1);
		}
	}
	j->rule = xstrdup(rule);
	j->reason = xstrdup(reason);
	if (j->action == CLS_HOLD && strcmp(rule, "sandbox") == 0 &&
	    worker_grantable(v.outside))
		j->outside = xstrdup(v.outside);
	cls_verdict_release(&v);
	if (j->action != CLS_REFUSE)
		return (0);
	worker_audit(j, "refused", NULL, NULL);
	code = j->risk == CLS_BLOCKED ? "blocked" : "outside_workspace";
	xasprintf(&msg, "refused (%s): %s", j->rule, j->reason);
	worker_fail(j, it->reply_to, it->id, code, msg, QUEUE_STORE_NONE);
	free(msg);
	return (-1);
}

/* A stream entry arrived: accept it as a job, check it, claim it. */
static void
worker_item_cb(const struct queue_entry *e, void *arg)
{
	struct worker		*w = arg;
	struct job		*j;
	struct item_error	 err;

	j = xcalloc(1, sizeof *j);
	j->w = w;
	j->stream = xstrdup(e->stream);
	j->entry_id = xstrdup(e->entry_id);
	LIST_INSERT_HEAD(&w->jobs, j, entry);
	w->njobs++;
	j->control = e->control;
	j->received_us = worker_now_us();
	if (e->claim == QUEUE_CLAIM_RUN)
		j->claim_id = xstrdup(e->claim_id);
	if (!j->control)
		w->nslots++;
	queue_track(w->q, j->stream, j->entry_id);
	if (e->body != NULL && e->size == 0)
		j->item = item_parse(e->body, e->len, w->cfg->max_item_bytes,
		    &err);
	metrics_add(w->metrics, METRICS_RECEIVED, 1, worker_type_label(j),
	    NULL);
	if (e->body == NULL) {
		worker_fail(j, NULL, NULL, "bad_item",
		    "the stream entry has no 'item' field", QUEUE_STORE_NONE);
		return;
	}
	if (e->size != 0) {	/* only its head came: refuse it */
		item_refuse_large(e->body, e->len, e->size,
		    w->cfg->max_item_bytes, &err);
		worker_fail(j, err.reply_to, err.id, err.code, err.message,
		    QUEUE_STORE_NONE);
		item_error_release(&err);
		return;
	}
	if (j->item == NULL) {
		worker_fail(j, err.reply_to, err.id, err.code, err.message,
		    QUEUE_STORE_NONE);
		item_error_release(&err);
		return;
	}
	/* Only PROCESS items ride the control lanes, and they hold no slot. */
	if (e->control && j->item->type != ITEM_PROCESS) {
		worker_fail(j, j->item->reply_to, j->item->id, "bad_item",
		    "only PROCESS items may be sent to the control stream",
		    QUEUE_STORE_NONE);
		return;
	}
	if (j->item->type == ITEM_PROCESS) {
		if (!j->control) {
			j->control = 1;
			w->nslots--;
			worker_update_want(w);
		}
		worker_process(j, e);
		return;
	}
	if (worker_check(j) == -1 || worker_classify(j) == -1)
		return;
	/*
	 * Claimed as it was read: one round trip less. But "running" may
	 * be this worker's own claim of an earlier entry of the id whose
	 * answer or release is still on its way (on the other connection):
	 * the claim script, sent behind them, sees what they did.
	 */
	if (e->claim != 0 && e->claim != QUEUE_CLAIM_RUNNING &&
	    strcmp(e->claim_id, j->item->id) == 0) {
		worker_claim_cb((enum queue_claim)e->claim, e->answer,
		    e->answer_len, j);
		return;
	}
	if (j->claim_id != NULL) {	/* not this id (a JSON with two ids) */
		queue_release(w->q, j->claim_id, j->entry_id);
		free(j->claim_id);
		j->claim_id = NULL;
	}
	queue_claim(w->q, j->item->id, j->entry_id, e->redelivered,
	    j->item->retries, worker_claim_cb, j);
}

/*
 * The queue's heartbeat, before it takes over the work of silent workers:
 * what dead workers on this host left running dies first, so a retried
 * item never runs beside its first run here. A lapsed lease: sessions
 * declared lost meanwhile are killed (their callback went out already).
 */
static void
worker_queue_event_cb(enum queue_event ev, void *arg)
{
	struct worker	*w = arg;
	unsigned	 n;

	switch (ev) {
	case QUEUE_EV_BEAT:
		if ((n = cgroup_pool_sweep(w->pool)) > 0)
			log_warn("killed the commands of %u dead worker(s) on "
			    "this host", n);
		worker_publish(w, 0);
		break;
	case QUEUE_EV_LEASE_LOST:
		sessions_fence(w->sessions);
		break;
	case QUEUE_EV_RECONNECTED:
		sessions_remirror(w->sessions);
		break;
	}
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

/* CLOCK_MONOTONIC in milliseconds. */
static long long
worker_now_ms(void)
{
	return (worker_now_us() / 1000);
}

/* CLOCK_MONOTONIC in microseconds. */
static long long
worker_now_us(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000);
}

/* CLOCK_REALTIME in milliseconds. */
static long long
worker_epoch_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ((long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
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
	st->pid = (long)getpid();
	st->started_ms = w->started_ms;
	st->now_ms = worker_epoch_ms();
	st->slots_total = w->cfg->max_procs;
	st->sessions_running = sessions_running(w->sessions);
	st->sessions_ended = sessions_ended(w->sessions);
	st->slots_used = w->nslots + st->sessions_running;
	LIST_FOREACH(j, &w->jobs, entry) {
		if (j->ex != NULL)
			st->commands_running++;
		if (j->approval != NULL)
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

/* The fleet registry's entry; now: written at once, else at the beat. */
static void
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
		if (j->ex != NULL)
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
	if (worker_now_ms() < w->stop_deadline_ms) {
		evtimer_add(w->ev_stop, &tv);
		return;
	}
	spooled = queue_spool_all(w->q);
	log_warn("shutdown: %u command(s) still running; %u answer(s) not "
	    "confirmed by Redis, %u of them kept in the spool for the next "
	    "start", running, queue_backlog(w->q), spooled);
	event_base_loopexit(w->base, NULL);
}

/* Shutdown: held commands are answered; they never ran. */
static void
worker_cancel_parked(struct worker *w)
{
	struct job	*j, *next;

	for (j = LIST_FIRST(&w->jobs); j != NULL; j = next) {
		next = LIST_NEXT(j, entry);
		if (j->approval == NULL)
			continue;
		j->request = xstrdup(approval_request(j->approval));
		worker_held_ended(j, j->approval, "cancelled");
		approval_cancel(j->approval);
		j->approval = NULL;
		metrics_add(w->metrics, METRICS_APPROVALS, 1, "cancelled",
		    NULL);
		worker_audit(j, "cancelled", NULL, "the worker stopped");
		worker_fail(j, j->item->reply_to, j->item->id,
		    "worker_stopping", "the worker is shutting down while the "
		    "command waited for approval; it did not run, send it "
		    "again", QUEUE_STORE_RELEASE);
	}
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
	w->stop_deadline_ms = worker_now_ms() + w->cfg->kill_grace_ms +
	    w->cfg->shutdown_flush_ms;
	queue_stop_reading(w->q);
	worker_cancel_parked(w);
	/* Every command gets TERM now and KILL kill_grace later. */
	LIST_FOREACH(j, &w->jobs, entry)
		if (j->ex != NULL)
			exec_kill(j->ex, SIGTERM, EXEC_END_SHUTDOWN);
	sessions_kill_all(w->sessions);
	worker_stop_cb(-1, 0, w);
}

/* Signal events. */
static int
worker_signals(struct worker *w)
{
	w->ev_chld = evsignal_new(w->base, SIGCHLD, worker_sigchld_cb, w);
	w->ev_term = evsignal_new(w->base, SIGTERM, worker_sigterm_cb, w);
	w->ev_int = evsignal_new(w->base, SIGINT, worker_sigterm_cb, w);
	w->ev_stop = evtimer_new(w->base, worker_stop_cb, w);
	w->ev_logs = evtimer_new(w->base, worker_logs_cb, w);
	w->ev_hup = evsignal_new(w->base, SIGHUP, worker_sighup_cb, w);
	if (w->ev_chld == NULL || w->ev_term == NULL || w->ev_int == NULL ||
	    w->ev_stop == NULL || w->ev_logs == NULL || w->ev_hup == NULL ||
	    event_add(w->ev_hup, NULL) == -1 ||
	    event_add(w->ev_chld, NULL) == -1 ||
	    event_add(w->ev_term, NULL) == -1 ||
	    event_add(w->ev_int, NULL) == -1)
		return (-1);
	return (0);
}

/* Old logs go at start-up (running sessions' logs stay). */
static void
worker_cleanup_logs(const struct config *cfg)
{
	struct cleanup_stats	st;

	if (cfg->log_max_age_hours == 0)
		return;
	memset(&st, 0, sizeof st);
	if (cleanup_logs(cfg->log_dir, cfg->log_max_age_hours, 0, NULL, NULL,
	    &st) == -1)
		log_warn("log cleanup %s: %s", cfg->log_dir, strerror(errno));
	else if (st.removed > 0)
		log_info("log cleanup: removed %u files (%llu bytes) older than "
		    "%u h", st.removed, st.bytes, cfg->log_max_age_hours);
}

/* What a command may read besides the workspace and its tmp. */
static const char *const worker_read_paths[] = {
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
	"/etc", "/opt", "/proc", "/sys", "/run",
	/* Devices one by one: uid 0 may read a raw disk it owns. */
	"/dev/null", "/dev/zero", "/dev/full", "/dev/random",
	"/dev/urandom", "/dev/tty", NULL
};

/*
 * Files a command never sees, whatever read_paths say: uid 0 without
 * capabilities still owns them (run_as protects them by permissions).
 */
static const char *const worker_secrets[] = {
	"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-",
	"/etc/sudoers", "/etc/sudoers.d", "/etc/security/opasswd",
	"/etc/ssh/ssh_host_rsa_key", "/etc/ssh/ssh_host_ecdsa_key",
	"/etc/ssh/ssh_host_ed25519_key", "/etc/ssh/ssh_host_dsa_key",
	"/etc/ssl/private", NULL
};

/* The layers of the boundary, all of them, for the self-check. */
struct worker_boundary {
	struct confine		*confine;
	struct cgroup_pool	*pool;
	struct confine_layer	 layers[CONFINE_NLAYERS + 2];
	int			 n;
	int			 full;		/* every layer is on */
};

/* Prepares the boundary: confinement, cgroup v2 leaves, v1 limits. */
static int
worker_boundary(const struct config *cfg, const struct rurl *url,
    struct worker_boundary *b)
{
	struct confine_config	 cc;
	struct confine_layer	*l;
	const char		*hide[sizeof worker_secrets /
				    sizeof worker_secrets[0] + 4];
	char			*cause, *cfgpath = NULL, *logpath, *statepath;
	size_t			 n = 0, i;

	memset(b, 0, sizeof *b);
	memset(&cc, 0, sizeof cc);
	cc.mode = cfg->confine_mode;
	cc.workspace = cfg->workspace;
	cc.tmp_dir = cfg->tmp_dir;
	cc.read_paths = policyconf_read_paths(cfg->policy) != NULL ?
	    policyconf_read_paths(cfg->policy) : worker_read_paths;
	/* As the kernel sees it: masks compare it with the workspace. */
	logpath = realpath(cfg->log_dir, NULL);
	hide[n++] = logpath != NULL ? logpath : cfg->log_dir;
	statepath = realpath(cfg->state_dir, NULL);
	hide[n++] = statepath != NULL ? statepath : cfg->state_dir;
	if (cfg->confine_mode != CONFINE_OFF &&
	    cmdenv_inside(hide[0], cfg->workspace)) {
		log_warn("the workspace %s is inside the log dir %s: commands "
		    "could read and forge the logs; not starting",
		    cfg->workspace, hide[0]);
		free(logpath);
		free(statepath);
		return (-1);
	}
	if (cfg->config_file != NULL &&
	    (cfgpath = realpath(cfg->config_file, NULL)) != NULL)
		hide[n++] = cfgpath;
	if (url->path != NULL)
		hide[n++] = url->path;
	for (i = 0; worker_secrets[i] != NULL; i++)
		hide[n++] = worker_secrets[i];
	hide[n] = NULL;
	cc.hide = hide;
	cc.run_as = cfg->run_as_set;
	cc.uid = cfg->run_uid;
	cc.gid = cfg->run_gid;
	b->confine = confine_create(&cc, &cause);
	free(cfgpath);
	free(logpath);
	free(statepath);
	if (b->confine == NULL && cause != NULL) {
		log_warn("confinement: %s", cause);
		free(cause);
		return (-1);
	}
	if (b->confine != NULL) {
		memcpy(b->layers, confine_layers(b->confine),
		    sizeof (struct confine_layer) * CONFINE_NLAYERS);
		b->n = CONFINE_NLAYERS;
	}
	b->pool = cgroup_pool_create(cfg->cgroup, cfg->max_procs, &cause);
	l = &b->layers[b->n++];
	l->name = "cgroup v2";
	if (b->pool != NULL) {
		l->ok = 1;
		snprintf(l->detail, sizeof l->detail, "process trees in %s",
		    cgroup_pool_path(b->pool));
	} else
		snprintf(l->detail, sizeof l->detail, "unavailable: %s",
		    cause != NULL ? cause : "cgroup off");
	free(cause);
	cause = NULL;
	if (b->confine != NULL) {
		l = &b->layers[b->n++];
		l->name = "cgroup v1 limits";
		if (b->pool != NULL && cgroup_pool_limit(b->pool, cfg->max_pids,
		    cfg->max_memory, &cause) == 0) {
			l->ok = 1;
			snprintf(l->detail, sizeof l->detail, "pids.max %u, "
			    "memory %zu MiB per command", cfg->max_pids,
			    cfg->max_memory >> 20);
		} else
			snprintf(l->detail, sizeof l->detail, "unavailable: %s",
			    cause != NULL ? cause : "no cgroup v2 leaves");
		free(cause);
	}
	b->full = b->confine != NULL;
	for (i = 0; i < (size_t)b->n; i++)
		b->full = b->full && b->layers[i].ok;
	return (0);
}

int
worker_check_confinement(const struct config *cfg, FILE *f)
{
	struct worker_boundary	 b;
	struct rurl		 url;
	char			*cause;
	int			 i;

	memset(&url, 0, sizeof url);
	if (rurl_parse(cfg->redis_url, &url, &cause) == -1)
		free(cause);
	if (worker_boundary(cfg, &url, &b) == -1) {
		rurl_release(&url);
		return (1);
	}
	if (b.confine == NULL)
		fprintf(f, "%-18s %-4s %s\n", "confinement", "off",
		    "confine is off: commands run unconfined");
	for (i = 0; i < b.n; i++)
		fprintf(f, "%-18s %-4s %s\n", b.layers[i].name,
		    b.layers[i].ok ? "on" : "OFF", b.layers[i].detail);
	fprintf(f, "%s\n", b.full ? "every layer is on" :
	    "some layers are off");
	confine_free(b.confine);
	cgroup_pool_free(b.pool);
	rurl_release(&url);
	return (b.full ? 0 : 1);
}

/*
 * The policy the worker classifies with: the config's, and when the
 * boundary is whole, the read paths count as inside the path sandbox too
 * (Landlock lets a command read them and nothing more).
 */
static void
worker_policy(struct worker *w, const struct worker_boundary *b)
{
	const struct cls_policy	*p = policyconf_policy(w->cfg->policy);
	const char *const	*rp;
	size_t			 n = 0, i;
	char			*real;

	w->policy = *p;
	if (!b->full)
		return;
	rp = policyconf_read_paths(w->cfg->policy) != NULL ?
	    policyconf_read_paths(w->cfg->policy) : worker_read_paths;
	for (i = 0; rp[i] != NULL; i++)
		;
	w->allow = xcalloc(p->nallow + i + 2, sizeof *w->allow);
	for (i = 0; i < p->nallow; i++)
		w->allow[n++] = xstrdup(p->allow_paths[i]);
	for (i = 0; rp[i] != NULL; i++)
		if ((real = realpath(rp[i], NULL)) != NULL)
			w->allow[n++] = real;
	w->allow[n++] = xstrdup(w->cfg->tmp_dir);
	w->policy.allow_paths = (const char *const *)w->allow;
	w->policy.nallow = n;
}

/*
 * The self-check at start-up: one line per layer; then the tier "auto"
 * becomes confined (every layer on) or read_only, and confine required
 * refuses to start with a layer missing.
 */
static int
worker_confine_decide(struct worker *w, struct worker_boundary *b)
{
	const struct config	*cfg = w->cfg;
	int			 i;

	if (b->pool != NULL)
		log_info("process trees are contained in cgroups under %s",
		    cgroup_pool_path(b->pool));
	for (i = 0; i < b->n; i++) {
		log_info("confinement: %s: %s (%s)", b->layers[i].name,
		    b->layers[i].ok ? "on" : "OFF", b->layers[i].detail);
		if (w->nlayers < STATUS_MAX_LAYERS) {
			w->layers[w->nlayers].name = b->layers[i].name;
			w->layers[w->nlayers++].ok = b->layers[i].ok;
		}
	}
	w->confined = b->full;
	if (cfg->run_as_set && b->confine == NULL) {
		log_warn("run_as needs the confinement (confine auto or "
		    "required): not starting");
		return (-1);
	}
	if (!b->full && cfg->confine_mode == CONFINE_REQUIRED) {
		log_warn("confine is required and a layer is off: not "
		    "starting (execq-worker --check-confinement shows them)");
		return (-1);
	}
	worker_policy(w, b);
	w->tier = cfg->tier_level;
	if (cfg->tier_auto)
		w->tier = b->full ? CLS_TIER_CONFINED : CLS_TIER_READ_ONLY;
	w->tier_name = cls_tier_name(w->tier);
	if (!b->full)
		log_warn("COMMANDS ARE NOT FULLY CONFINED%s: only the command "
		    "policy (tier %s) stands between them and this machine",
		    cfg->confine_mode == CONFINE_OFF ? " (confine off)" : "",
		    w->tier_name);
	if (w->tier == CLS_TIER_CONFINED && !b->full)
		log_warn("tier confined without every confinement layer: "
		    "unknown commands run with only the layers that are on");
	if (b->confine != NULL && geteuid() == 0)
		log_info("the worker runs as root: it needs that for the "
		    "namespaces and cgroups; commands %s",
		    cfg->run_as_set ? "run as the run_as user" :
		    "keep uid 0 with no capability");
	if (b->confine != NULL)
		prctl(PR_SET_DUMPABLE, 0);	/* its /proc is root's only */
	return (0);
}

/*
 * The log dir and the state dir, made and checked: no command may reach
 * the logs through the workspace (links planted there would turn output
 * or log reads to other files), and no item id may name a file of the
 * worker's own (an item "audit" must not write the audit log).
 */
static int
worker_dirs(const struct config *cfg)
{
	char	*logs = NULL, *state = NULL;
	int	 rc = -1;

	if (execlog_mkdir(cfg->log_dir) == -1) {
		log_warn("log dir %s: %s", cfg->log_dir, strerror(errno));
		return (-1);
	}
	if (execlog_mkdir(cfg->state_dir) == -1 ||
	    chmod(cfg->state_dir, 0700) == -1) {
		log_warn("state dir %s: %s", cfg->state_dir, strerror(errno));
		return (-1);
	}
	if ((logs = realpath(cfg->log_dir, NULL)) == NULL ||
	    (state = realpath(cfg->state_dir, NULL)) == NULL)
		log_warn("log dir %s, state dir %s: %s", cfg->log_dir,
		    cfg->state_dir, strerror(errno));
	else if (cmdenv_inside(cfg->workspace, logs))
		log_warn("the log dir %s is inside the workspace %s: commands "
		    "could plant links there or read other commands' logs; "
		    "not starting (move one of them)", logs, cfg->workspace);
	else if (cmdenv_inside(cfg->workspace, state))
		log_warn("the state dir %s is inside the workspace %s: "
		    "commands could read or forge the audit log and the "
		    "spool; not starting", state, cfg->workspace);
	else if (cmdenv_inside(logs, state))
		log_warn("the state dir %s is inside the log dir %s: an item "
		    "id could name its files; not starting", state, logs);
	else
		rc = 0;
	free(logs);
	free(state);
	return (rc);
}

/* The HTTP side door. */
static int
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

struct worker *
worker_create(struct event_base *base, const struct config *cfg)
{
	struct worker		*w;
	struct worker_boundary	 b;
	struct queue_config	 qc;
	char			*cause, *shown;

	w = xcalloc(1, sizeof *w);
	w->base = base;
	w->cfg = cfg;
	LIST_INIT(&w->jobs);
	w->metrics = metrics_create();
	w->started_ms = worker_epoch_ms();
	if (gethostname(w->host, sizeof w->host - 1) != 0)
		strcpy(w->host, "unknown");
	if (worker_dirs(cfg) == -1)
		goto fail;
	worker_cleanup_logs(cfg);
	if ((w->audit = audit_open(cfg->state_dir)) == NULL) {
		log_warn("audit log in %s: %s", cfg->state_dir,
		    execlog_strerror(errno));
		goto fail;
	}
	if (rurl_parse(cfg->redis_url, &w->url, &cause) == -1) {
		log_warn("%s", cause);
		free(cause);
		goto fail;
	}
	/* Before any thread starts: it forks the namespace helper. */
	if (worker_boundary(cfg, &w->url, &b) == -1)
		goto fail;
	if (worker_confine_decide(w, &b) == -1) {
		confine_free(b.confine);
		cgroup_pool_free(b.pool);
		goto fail;
	}
	w->ecfg.shell = cfg->shell;
	w->ecfg.log_dir = cfg->log_dir;
	w->ecfg.kill_grace_ms = cfg->kill_grace_ms;
	w->ecfg.drain_ms = cfg->drain_ms;
	w->ecfg.log_fsync = cfg->log_fsync;
	w->ecfg.log_max_bytes = cfg->log_max_bytes;
	w->ecfg.max_pids = cfg->max_pids;
	w->ecfg.max_memory = cfg->max_memory;
	if ((w->syncer = syncer_create(base)) == NULL) {
		log_warn("syncer thread: %s", strerror(errno));
		confine_free(b.confine);
		cgroup_pool_free(b.pool);
		goto fail;
	}
	w->ecfg.syncer = w->syncer;
	/* Two files an item (log and metadata), for every slot at once. */
	w->ecfg.spare_files = cfg->max_procs * 2 + 2 > WORKER_SPARE_MAX ?
	    WORKER_SPARE_MAX : cfg->max_procs * 2 + 2;
	w->pool = b.pool;
	if (b.pool == NULL)
		log_warn("cgroups unavailable: falling back to process groups "
		    "and a subreaper sweep");
	if (exec_init(base, &w->ecfg, b.pool, b.confine) == -1) {
		log_warn("exec: %s", strerror(errno));
		goto fail;
	}
	if (worker_signals(w) == -1) {
		log_warn("cannot set up signal handling");
		goto fail;
	}
	memset(&qc, 0, sizeof qc);
	qc.url = &w->url;
	qc.queue = cfg->queue;
	qc.consumer = cfg->consumer;
	qc.claim_idle_ms = cfg->claim_idle_ms;
	qc.answer_ttl_s = cfg->answer_ttl_s;
	qc.max_item_bytes = cfg->max_item_bytes;
	qc.state_dir = cfg->state_dir;
	qc.syncer = w->syncer;
	w->q = queue_create(base, &qc, worker_item_cb, w);
	queue_on_event(w->q, worker_queue_event_cb, w);
	w->sessions = sessions_create(base, w->q, cfg, w->syncer,
	    worker_slot_cb, w);
	sessions_on_held(w->sessions, worker_held_list_cb, w);
	sessions_set_metrics(w->sessions, w->metrics);
	w->approvals = approvals_create(base, w->q, cfg);
	worker_publish(w, 0);		/* written when Redis is up */
	if (cfg->http[0] != '\0' && worker_http(w) == -1)
		goto fail;
	shown = rurl_display(&w->url);
	log_info("worker %s: queue %s on %s, %u slots, execution %s, "
	    "workspace %s, tier %s, network %s", cfg->consumer, cfg->queue,
	    shown, cfg->max_procs, cfg->enable_execute ? "ENABLED" :
	    "disabled", cfg->workspace, w->tier_name, cfg->network ? "on" :
	    "a grant");
	free(shown);
	worker_update_want(w);
	return (w);

fail:
	worker_free(w);
	return (NULL);
}

void
worker_free(struct worker *w)
{
	struct job	*j;
	size_t		 i;

	if (w == NULL)
		return;
	http_free(w->http);	/* it reads the queue and the sessions */
	queue_free(w->q);	/* no callbacks from here on */
	sessions_free(w->sessions);
	approvals_free(w->approvals);
	syncer_free(w->syncer);	/* finishes its fsyncs, calls nobody back */
	exec_shutdown();	/* kills what still runs, no callbacks */
	while ((j = LIST_FIRST(&w->jobs)) != NULL) {
		LIST_REMOVE(j, entry);
		worker_job_free(j);
	}
	if (w->ev_chld != NULL)
		event_free(w->ev_chld);
	if (w->ev_term != NULL)
		event_free(w->ev_term);
	if (w->ev_int != NULL)
		event_free(w->ev_int);
	if (w->ev_stop != NULL)
		event_free(w->ev_stop);
	if (w->ev_logs != NULL)
		event_free(w->ev_logs);
	if (w->ev_hup != NULL)
		event_free(w->ev_hup);
	rurl_release(&w->url);
	audit_close(w->audit);
	for (i = 0; w->allow != NULL && w->allow[i] != NULL; i++)
		free(w->allow[i]);
	free(w->allow);
	for (i = 0; i < WORKER_HELD_KEEP; i++)
		worker_held_forget(&w->ended[i]);
	metrics_free(w->metrics);
	free(w);
}
