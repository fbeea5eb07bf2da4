#include <sys/queue.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "exec/cgroup.h"
#include "exec/classify.h"
#include "exec/exec.h"
#include "exec/policy.h"
#include "logs/cleanup.h"
#include "logs/execlog.h"
#include "logs/log.h"
#include "logs/xmalloc.h"
#include "queue/item.h"
#include "queue/queue.h"
#include "queue/rurl.h"
#include "worker/approval.h"
#include "worker/audit.h"
#include "worker/config.h"
#include "worker/policyconf.h"
#include "worker/session.h"
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
	struct event		*ev_chld, *ev_term, *ev_int;
	struct event		*ev_stop;	/* shutdown steps */
	int			 stop_step;
};

/* Tells the queue how many more items fit. */
static void
worker_update_want(struct worker *w)
{
	unsigned	used;

	if (w->stopping)
		return;
	used = w->nslots + sessions_running(w->sessions);
	queue_want(w->q, w->cfg->max_procs > used ? w->cfg->max_procs - used :
	    0);
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
	policy_env_free(j->envp);
	free(j->cwd);
	free(j->rule);
	free(j->reason);
	free(j->request);
	free(j->approved_by);
	free(j->stream);
	free(j->entry_id);
	free(j);
}

/* Forgets a job whose entry is acknowledged (or will be) elsewhere. */
static void
worker_drop(struct job *j)
{
	struct worker	*w = j->w;

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
worker_finish(struct job *j, const char *reply_to, const char *id,
    enum queue_store store, const char *json, size_t len)
{
	struct worker	*w = j->w;

	queue_answer(w->q, worker_reply_to(w, reply_to), "normal", id, store,
	    j->stream, j->entry_id, json, len);
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
	worker_finish(j, reply_to, id, store, json, len);
	free(json);
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

	exec_result(ex, &r);
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
	log_info("item %s: exit %d%s in %lld ms", j->item->id, r.exit_code,
	    ir.timed_out ? " (timed out)" : "", (long long)r.duration_ms);
	json = item_result_to_json(&ir, &len);
	exec_result_release(&r);
	j->ex = NULL;
	worker_finish(j, j->item->reply_to, j->item->id, QUEUE_STORE_ANSWER,
	    json, len);
	free(json);
}

/* Starts a claimed job's command. */
static void
worker_start(struct job *j)
{
	struct worker		*w = j->w;
	struct exec_spec	 spec;
	const char		*code;
	char			*cause, *json;
	size_t			 len;

	if (j->item->background) {
		json = sessions_start(w->sessions, j->item, j->cwd, j->envp,
		    &len, &code, &cause);
		if (json == NULL) {
			worker_fail(j, j->item->reply_to, j->item->id, code,
			    cause, QUEUE_STORE_RELEASE);
			free(cause);
			return;
		}
		log_info("item %s: session started: %s", j->item->id,
		    j->item->command);
		worker_finish(j, j->item->reply_to, j->item->id,
		    QUEUE_STORE_ANSWER, json, len);
		free(json);
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
	j->ex = exec_start(&spec, worker_exec_done, j, &code, &cause);
	if (j->ex == NULL) {
		/* It never ran: the same id may be sent again. */
		worker_fail(j, j->item->reply_to, j->item->id, code, cause,
		    QUEUE_STORE_RELEASE);
		free(cause);
		return;
	}
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

/* A human decided (or nobody did in time). */
static void
worker_decided_cb(struct approval *a, enum approval_outcome how,
    const char *by, const char *reason, void *arg)
{
	struct job	*j = arg;
	struct item	*it = j->item;
	char		*msg;

	j->request = xstrdup(approval_request(a));
	j->approval = NULL;
	switch (how) {
	case APPROVAL_APPROVED:
		worker_audit(j, "approved", by, reason);
		j->approved_by = xstrdup(by);
		j->control = 0;		/* it holds a slot again */
		j->w->nslots++;
		worker_update_want(j->w);
		worker_start(j);
		break;
	case APPROVAL_REJECTED:
		worker_audit(j, "rejected", by, reason);
		xasprintf(&msg, "rejected by %s%s%s (request %s)", by,
		    reason != NULL ? ": " : "", reason != NULL ? reason : "",
		    j->request);
		worker_fail(j, it->reply_to, it->id, "rejected", msg,
		    QUEUE_STORE_ANSWER);
		free(msg);
		break;
	default:
		worker_audit(j, "expired", NULL, NULL);
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
	j->approval = approvals_park(w->approvals, &req, worker_decided_cb, j);
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
		worker_finish(j, it->reply_to, NULL, QUEUE_STORE_NONE, answer,
		    len);
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
		worker_finish(j, j->item->reply_to, NULL, QUEUE_STORE_NONE, text,
		    len);
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
	struct worker	*w = j->w;
	struct item	*it = j->item;

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
		    "ENABLE_EXECUTE=1 or enable_execute in the config file)", QUEUE_STORE_NONE);
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
	j->cwd = policy_resolve_cwd(w->cfg->workspace, it->cwd, &code, &cause);
	if (j->cwd == NULL) {
		worker_fail(j, it->reply_to, it->id, code, cause,
		    QUEUE_STORE_NONE);
		free(cause);
		return (-1);
	}
	j->envp = policy_build_env(environ, it->env, it->pty, it->id, &code,
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

	j->tier = w->cfg->tier_level;
	if (it->tier == NULL)
		return (0);
	if (cls_tier_parse(it->tier, &j->tier) != 0) {
		worker_fail(j, it->reply_to, it->id, "bad_item", "args.tier "
		    "must be read_only, read_write or admin", QUEUE_STORE_NONE);
		return (-1);
	}
	if (j->tier > w->cfg->tier_level) {
		xasprintf(&msg, "args.tier %s is above this queue's tier %s; "
		    "an item may only lower it", it->tier, w->cfg->tier);
		worker_fail(j, it->reply_to, it->id, "bad_tier", msg,
		    QUEUE_STORE_NONE);
		free(msg);
		return (-1);
	}
	return (0);
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
	cls_classify(policyconf_policy(w->cfg->policy), it->command,
	    strlen(it->command), j->cwd, &v);
	cls_classify_env(&v, it->env);
	j->action = cls_decide(&v, j->tier, w->cfg->sandbox_mode, &rule,
	    &reason);
	j->risk = v.risk;
	j->rule = xstrdup(rule);
	j->reason = xstrdup(reason);
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
	if (!j->control)
		w->nslots++;
	queue_track(w->q, j->stream, j->entry_id);
	if (e->body == NULL) {
		worker_fail(j, NULL, NULL, "bad_item",
		    "the stream entry has no 'item' field", QUEUE_STORE_NONE);
		return;
	}
	j->item = item_parse(e->body, e->len, w->cfg->max_item_bytes, &err);
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
	queue_claim(w->q, j->item->id, j->entry_id, e->redelivered,
	    j->item->retries, worker_claim_cb, j);
}

/* One SIGCHLD can stand for several children. */
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

/*
 * Shutdown, one step per tick: stop reading; let running commands finish
 * for kill_grace, then kill them; wait (up to 5 s) for the answers to
 * reach Redis; leave the loop.
 */
static void
worker_stop_cb(evutil_socket_t fd, short what, void *arg)
{
	struct worker	*w = arg;
	struct job	*j;
	struct timeval	 tv = { 0, 100000 };
	unsigned	 ticks_grace = w->cfg->kill_grace_ms / 100;

	(void)fd;
	(void)what;
	w->stop_step++;
	if ((w->njobs > 0 || sessions_running(w->sessions) > 0) &&
	    w->stop_step == (int)ticks_grace + 1) {
		log_info("shutdown: killing %u running command(s)", w->njobs);
		LIST_FOREACH(j, &w->jobs, entry)
			if (j->ex != NULL)
				exec_kill(j->ex, SIGTERM, EXEC_END_SHUTDOWN);
	}
	if (w->njobs == 0 && sessions_running(w->sessions) == 0 &&
	    !w->retired) {
		queue_retire(w->q);	/* nothing more is forwarded here */
		w->retired = 1;
	}
	if ((w->njobs > 0 || sessions_running(w->sessions) > 0 ||
	    queue_backlog(w->q) > 0) &&
	    w->stop_step < (int)ticks_grace + 50 + 20 +
	    (int)(w->cfg->kill_grace_ms / 100)) {
		evtimer_add(w->ev_stop, &tv);
		return;
	}
	if (w->njobs > 0 || queue_backlog(w->q) > 0)
		log_warn("shutdown: leaving %u job(s), %u answer(s) unsent",
		    w->njobs, queue_backlog(w->q));
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
		approval_cancel(j->approval);
		j->approval = NULL;
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

	(void)what;
	if (w->stopping) {
		log_warn("second signal %d: exiting now", (int)sig);
		event_base_loopbreak(w->base);
		return;
	}
	log_info("signal %d: stopping (%u item(s), %u session(s) running)",
	    (int)sig, w->njobs, sessions_running(w->sessions));
	w->stopping = 1;
	queue_stop_reading(w->q);
	worker_cancel_parked(w);
	/* Sessions would not end by themselves: TERM now, KILL after grace. */
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
	if (w->ev_chld == NULL || w->ev_term == NULL || w->ev_int == NULL ||
	    w->ev_stop == NULL || event_add(w->ev_chld, NULL) == -1 ||
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

/* The process slots' cgroups, or NULL (logged) for the fallback. */
static struct cgroup_pool *
worker_cgroups(const struct config *cfg)
{
	struct cgroup_pool	*pool;
	char			*cause;

	pool = cgroup_pool_create(cfg->cgroup, cfg->max_procs, &cause);
	if (pool != NULL) {
		log_info("process trees are contained in cgroups under %s",
		    cgroup_pool_path(pool));
		return (pool);
	}
	if (cause != NULL) {
		log_warn("cgroups unavailable (%s): falling back to process "
		    "groups and a subreaper sweep", cause);
		free(cause);
	}
	return (NULL);
}

struct worker *
worker_create(struct event_base *base, const struct config *cfg)
{
	struct worker		*w;
	struct queue_config	 qc;
	char			*cause, *shown;

	w = xcalloc(1, sizeof *w);
	w->base = base;
	w->cfg = cfg;
	LIST_INIT(&w->jobs);
	if (execlog_mkdir(cfg->log_dir) == -1) {
		log_warn("log dir %s: %s", cfg->log_dir, strerror(errno));
		goto fail;
	}
	worker_cleanup_logs(cfg);
	if ((w->audit = audit_open(cfg->log_dir)) == NULL) {
		log_warn("audit log in %s: %s", cfg->log_dir, strerror(errno));
		goto fail;
	}
	if (rurl_parse(cfg->redis_url, &w->url, &cause) == -1) {
		log_warn("%s", cause);
		free(cause);
		goto fail;
	}
	w->ecfg.shell = cfg->shell;
	w->ecfg.log_dir = cfg->log_dir;
	w->ecfg.kill_grace_ms = cfg->kill_grace_ms;
	w->ecfg.drain_ms = cfg->drain_ms;
	w->ecfg.log_fsync = cfg->log_fsync;
	w->ecfg.log_max_bytes = cfg->log_max_bytes;
	if (exec_init(base, &w->ecfg, worker_cgroups(cfg)) == -1) {
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
	w->q = queue_create(base, &qc, worker_item_cb, w);
	w->sessions = sessions_create(base, w->q, cfg, worker_slot_cb, w);
	w->approvals = approvals_create(base, w->q, cfg);
	shown = rurl_display(&w->url);
	log_info("worker %s: queue %s on %s, %u slots, execution %s, "
	    "workspace %s", cfg->consumer, cfg->queue, shown, cfg->max_procs,
	    cfg->enable_execute ? "ENABLED" : "disabled", cfg->workspace);
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

	if (w == NULL)
		return;
	queue_free(w->q);	/* no callbacks from here on */
	sessions_free(w->sessions);
	approvals_free(w->approvals);
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
	rurl_release(&w->url);
	audit_close(w->audit);
	free(w);
}
