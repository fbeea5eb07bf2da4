/*
 * The worker's driver: one item from delivery to its answer (check,
 * claim, run or park, answer), and the wiring of the queue, exec, the
 * sessions and the approvals. Its parts are below it (worker_int.h).
 */

#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <netinet/in.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>

#include "exec/cgroup.h"
#include "exec/confine.h"
#include "exec/exec.h"
#include "logs/execlog.h"
#include "logs/clock.h"
#include "logs/log.h"
#include "logs/token.h"
#include "logs/syncer.h"
#include "logs/xmalloc.h"
#include "policy/netaddr.h"
#include "queue/item.h"
#include "queue/queue.h"
#include "queue/rconn.h"
#include "queue/rurl.h"
#include "worker/approval.h"
#include "worker/audit.h"
#include "worker/config.h"
#include "worker/direct.h"
#include "worker/holder.h"
#include "worker/http.h"
#include "worker/live.h"
#include "worker/metrics.h"
#include "worker/proxy.h"
#include "worker/session.h"
#include "worker/worker.h"
#include "worker/worker_int.h"

/* A session ended: its slot is free. */
static void
worker_slot_cb(void *arg)
{
	worker_update_want(arg);
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
	char			*json, *kept;
	size_t			 len, kept_len;
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
	if (worker_attempt_policy(j) != NULL)
		ir.attempt = j->attempt;
	kept = item_result_to_json(&ir, &kept_len);
	if (j->live != NULL)
		worker_live_end(j, &r);
	metrics_add(j->w->metrics, METRICS_OUTPUT_BYTES, r.output_bytes,
	    "foreground", NULL);
	j->ex = NULL;
	if (worker_attempt_retry(j, 0, ir.timed_out, r.signal, r.exit_code,
	    kept, kept_len)) {
		json_decref(conf);
		exec_result_release(&r);
		free(kept);
		return;
	}
	if (j->retry_end != NULL) {	/* the last attempt says why */
		ir.retry_end = j->retry_end;
		free(kept);
		kept = item_result_to_json(&ir, &kept_len);
	}
	ir.token = j->token;		/* sent once, never kept */
	json = item_result_to_json(&ir, &len);
	json_decref(conf);
	exec_result_release(&r);
	worker_finish_kept(j, ERR_NONE, j->item->reply_to, j->item->id,
	    QUEUE_STORE_ANSWER, json, len, kept, kept_len);
	free(json);
	free(kept);
}

/* Job j's command runs now. */
static void
worker_spawned(struct job *j)
{
	/* A later delivery of this entry to us is not run again silently. */
	queue_started(j->w->q, j->item->id, j->entry_id);
	metrics_observe(j->w->metrics, METRICS_SPAWN,
	    (clock_mono_us() - j->received_us) / 1e6);
}

/* Starts a claimed job's command. */
/*
 * Its credential at the proxy, made now, when its decision gives it
 * domains and no host network; NULL: no proxy. Revoked as it ends.
 */
static const char *
worker_proxy_url(struct job *j)
{
	struct worker	*w = j->w;

	if (j->dec.domains == NULL || j->dec.network || w->proxy == NULL)
		return (NULL);
	if (j->proxy_url == NULL)
		j->proxy_url = proxy_grant(w->proxy, j->item->id,
		    (const char *const *)j->dec.domains);
	return (j->proxy_url);
}

static void
worker_start(struct job *j)
{
	struct worker		*w = j->w;
	struct exec_spec	 spec;
	enum errcode		 code;
	char			*cause, *json, *kept, *log_id = NULL;
	char			**argv;
	size_t			 len, kept_len;

	worker_job_move(j, JOB_RUNNING);
	if (j->item->background) {
		json = sessions_start(w->sessions, j->item, j->cwd, j->envp,
		    j->dec.network, worker_proxy_url(j), j->grant, &len, &kept,
		    &kept_len, &code, &cause);
		if (json == NULL) {
			/* Never ran: its grant goes (a session's is its own). */
			if (j->proxy_url != NULL)
				proxy_revoke(w->proxy, j->item->id);
			worker_fail(j, j->item->reply_to, j->item->id, code,
			    cause, QUEUE_STORE_RELEASE);
			free(cause);
			if (code == ERR_LOG_FAILED)
				worker_check_logs(w);
			return;
		}
		log_info("item %s: session started: %s", j->item->id,
		    j->item->command);
		if (j->item->shell)	/* its commands: at the item's tier */
			sessions_shell_set_tier(w->sessions, j->item->id,
			    (int)j->tier);
		worker_spawned(j);
		worker_finish_kept(j, ERR_NONE, j->item->reply_to, j->item->id,
		    QUEUE_STORE_ANSWER, json, len, kept, kept_len);
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
	spec.network = j->dec.network;
	spec.proxy_url = worker_proxy_url(j);
	spec.proxy_port = w->proxy != NULL ? proxy_port(w->proxy) : 0;
	spec.grant = j->grant;
	/* Its sender's key to the log, as a session's is (session.h). */
	token_new(j->token);
	spec.token = j->token;
	if (j->item->stream) {
		j->live = live_create(w->base, w->q, j->item->id, 1);
		spec.outputcb = worker_output_cb;
	}
	if (j->attempt > 1)	/* each attempt its own log */
		xasprintf(&log_id, "%s.attempt-%u", j->item->id, j->attempt);
	spec.log_id = log_id;
	/* Plain words: exec'd without the shell (worker/direct.h). */
	argv = direct_argv(j->item->command, w->cfg->shell);
	spec.argv_direct = argv;
	j->ex = exec_start(&spec, worker_exec_done, j, &code, &cause);
	direct_free(argv);
	free(log_id);
	if (j->ex == NULL && code == ERR_SPAWN_FAILED &&
	    worker_attempt_policy(j) != NULL) {
		json = item_error_to_json(j->item->id, code, cause, &len);
		item_json_add_attempt(&json, &len, j->attempt, NULL);
		if (worker_attempt_retry(j, 1, 0, 0, 0, json, len)) {
			free(json);
			free(cause);
			return;
		}
		item_json_add_attempt(&json, &len, j->attempt, j->retry_end);
		worker_finish(j, code, j->item->reply_to, j->item->id,
		    QUEUE_STORE_ANSWER, json, len);
		free(json);
		free(cause);
		return;
	}
	if (j->ex == NULL) {
		/* It never ran: the same id may be sent again. */
		worker_fail(j, j->item->reply_to, j->item->id, code, cause,
		    QUEUE_STORE_RELEASE);
		free(cause);
		if (code == ERR_LOG_FAILED)
			worker_check_logs(w);
		return;
	}
	worker_spawned(j);
	log_info("item %s: started pid %ld: %s", j->item->id,
	    (long)exec_pid(j->ex), j->item->command);
}

/* One line in the audit log about job j. */
/*
 * A human decided (or nobody did in time): held.c keeps the books, then
 * the job runs or is answered. Reached from held.c only through the
 * pointer worker_park gives it.
 */
static void
worker_decided_cb(struct approval *a, enum approval_outcome how,
    const char *by, const char *reason, void *arg)
{
	struct job	*j = arg;
	struct item	*it = j->item;
	char		*msg;

	worker_held_decided(j, a, how, by, reason);
	switch (how) {
	case APPROVAL_APPROVED:
		if (audit_error(j->w->audit) != 0) {	/* no line, no run */
			xasprintf(&msg, "approved, but its audit line could "
			    "not be written (%s); nothing ran, send it again",
			    strerror(audit_error(j->w->audit)));
			worker_fail(j, it->reply_to, it->id, ERR_AUDIT_FAILED,
			    msg, QUEUE_STORE_RELEASE);
			free(msg);
			break;
		}
		/* The approval opens exactly the path it named. */
		if (j->dec.grant_path != NULL)
			j->grant = xstrdup(j->dec.grant_path);
		if (worker_limited(j))	/* the fleet's limits first */
			worker_limit_take(j, worker_start);
		else
			worker_start(j);	/* it holds a slot again */
		break;
	case APPROVAL_REJECTED:
		xasprintf(&msg, "rejected by %s%s%s (request %s)", by,
		    reason != NULL ? ": " : "", reason != NULL ? reason : "",
		    j->request);
		worker_fail(j, it->reply_to, it->id, ERR_REJECTED, msg,
		    QUEUE_STORE_ANSWER);
		free(msg);
		break;
	default:
		if (approval_published(a))
			xasprintf(&msg, "nobody approved it within %u s "
			    "(request %s); it did not run",
			    j->w->cfg->approval_timeout_ms / 1000, j->request);
		else
			xasprintf(&msg, "its approval request could not be "
			    "published within %u s (Redis unreachable); it did "
			    "not run", j->w->cfg->approval_timeout_ms / 1000);
		worker_fail(j, it->reply_to, it->id, ERR_APPROVAL_EXPIRED, msg,
		    QUEUE_STORE_ANSWER);
		free(msg);
		break;
	}
}

/* Held: its slot is freed and a human is asked. */
static void
worker_park(struct job *j)
{
	worker_job_move(j, JOB_PARKED);
	worker_held_park(j, worker_decided_cb);
}

/* The audit line, then the start: no line, no run. */
static void
worker_run(struct job *j)
{
	struct item	*it = j->item;
	char		*msg;

	worker_audit(j, "run", NULL, NULL);
	if (audit_error(j->w->audit) != 0) {
		xasprintf(&msg, "its audit line could not be written (%s); "
		    "nothing ran, send it again",
		    strerror(audit_error(j->w->audit)));
		worker_fail(j, it->reply_to, it->id, ERR_AUDIT_FAILED, msg,
		    QUEUE_STORE_RELEASE);
		free(msg);
		return;
	}
	worker_start(j);
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
			worker_fail(j, it->reply_to, it->id, ERR_WORKER_STOPPING,
			    "the worker is shutting down; nothing ran, send it "
			    "again", QUEUE_STORE_RELEASE);
			break;
		}
		if (worker_attempt_defer(j))
			break;
		if (j->dec.action == CLS_HOLD) {
			worker_park(j);
			break;
		}
		if (worker_limited(j))	/* the fleet's limits first */
			worker_limit_take(j, worker_run);
		else
			worker_run(j);
		break;
	case QUEUE_CLAIM_ANSWERED:
		log_info("item %s: answered before, sending that answer again",
		    it->id);
		worker_finish(j, ERR_NONE, it->reply_to, NULL, QUEUE_STORE_NONE,
		    answer, len);
		break;
	case QUEUE_CLAIM_FAILED:
		/* Not ours yet: it stays pending and is taken over later. */
		log_info("item %s: Redis refused the claim; let go of it for "
		    "now", it->id);
		worker_drop(j);
		break;
	case QUEUE_CLAIM_LOST:
		worker_fail(j, it->reply_to, it->id, ERR_WORKER_LOST,
		    "the worker running this item stopped before answering; "
		    "it was not run again (set args.retries to allow that)",
		    QUEUE_STORE_ANSWER);
		break;
	default:
		worker_fail(j, it->reply_to, it->id, ERR_DUPLICATE_ID,
		    "an item with this id is already running",
		    QUEUE_STORE_NONE);
		break;
	}
}

/* The answer to a PROCESS item. */
static void
worker_process_answer_cb(enum errcode code, const char *text, size_t len,
    void *arg)
{
	struct job	*j = arg;

	if (code != ERR_NONE)
		worker_fail(j, j->item->reply_to, j->item->id, code, text,
		    QUEUE_STORE_NONE);
	else
		worker_finish(j, ERR_NONE, j->item->reply_to, NULL,
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
		    ERR_UNKNOWN_SESSION, "the worker that ran this session is "
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

	if (it->action == ITEM_ACTION_CANCEL) {
		worker_cancel(j, e);
		return;
	}
	if (it->action != ITEM_ACTION_LIST && it->session_id != NULL &&
	    worker_held_find(w, it->session_id, &h) == 0) {
		/* No token went out yet: only an operator looks at it. */
		if (!sessions_operator(w->cfg, it))
			worker_process_answer_cb(ERR_FORBIDDEN, "the item is held "
			    "for approval and has no session token yet; only "
			    "an operator may act on it", 0, j);
		else
			sessions_act_held(it, &h, worker_process_answer_cb, j);
		return;
	}
	/* A shell's command: classified here, as an item's would be. */
	if (it->action == ITEM_ACTION_EXEC &&
	    sessions_has(w->sessions, it->session_id) &&
	    sessions_may(w->sessions, it) && worker_classify_shell(j) == -1)
		return;
	if (it->action != ITEM_ACTION_LIST &&
	    !sessions_has(w->sessions, it->session_id)) {
		queue_forward(w->q, it->session_id, e->stream, e->entry_id,
		    e->body, e->len, j->owner, worker_forwarded_cb, j);
		return;
	}
	sessions_act(w->sessions, it, worker_process_answer_cb, j);
}

/* Checks a parsed item against the worker's gate and limits. */
/* A stream entry arrived: accept it as a job, check it, claim it. */
static void
worker_item_cb(const struct queue_entry *e, void *arg)
{
	struct worker		*w = arg;
	struct job		*j;
	struct item_error	 err;

	j = worker_job_create(w, e);
	queue_track(w->q, j->stream, j->entry_id);
	if (e->body != NULL && e->size == 0)
		j->item = item_parse(e->body, e->len, w->cfg->max_item_bytes,
		    &err);
	metrics_add(w->metrics, METRICS_RECEIVED, 1, worker_type_label(j),
	    NULL);
	if (e->body == NULL) {
		worker_fail(j, NULL, NULL, ERR_BAD_ITEM,
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
	if (worker_check_owner(j) == -1)
		return;
	/* Only PROCESS items ride the control lanes, and they hold no slot. */
	if (e->control && j->item->type != ITEM_PROCESS) {
		worker_fail(j, j->item->reply_to, j->item->id, ERR_BAD_ITEM,
		    "only PROCESS items may be sent to the control stream",
		    QUEUE_STORE_NONE);
		return;
	}
	if (j->item->type == ITEM_PROCESS) {
		if (j->state != JOB_CONTROL)
			worker_job_move(j, JOB_CONTROL);
		worker_process(j, e);
		return;
	}
	if (worker_check(j) == -1 || worker_classify(j) == -1)
		return;
	/* Over the queue's limits it goes back in line as it came. */
	if (w->limit_running > 0 || w->limit_rate > 0) {
		j->body = xmalloc(e->len + 1);
		memcpy(j->body, e->body, e->len);
		j->body[e->len] = '\0';
		j->body_len = e->len;
	}
	worker_job_move(j, JOB_CLAIMING);
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
	    j->item->retries, e->requeued, worker_claim_cb, j);
}

/*
 * INFO memory's answer: the sample recorded, and a warning once when the
 * answers kept are on the way to fill Redis (worker/metrics.h decides).
 */
static void
worker_redis_mem_cb(const char *text, const char *err, void *arg)
{
	struct worker			*w = arg;
	struct metrics_redis_mem	*rm = metrics_redis_mem(w->metrics);
	unsigned long long		 used, max;
	char				 msg[512];

	if (text == NULL || metrics_redis_mem_parse(text, &used, &max) == -1) {
		if (!rm->refused)
			log_info("redis memory: INFO memory %s: no memory "
			    "budget is watched", err != NULL ? err :
			    "gave no used_memory/maxmemory");
		rm->refused = 1;
		return;
	}
	if (metrics_redis_mem_update(rm, clock_mono_ms(), used, max,
	    w->cfg->answer_ttl_s)) {
		metrics_redis_mem_warning(rm, w->cfg->answer_ttl_s, msg,
		    sizeof msg);
		log_warn("%s", msg);
	}
}

/* At a beat: Redis's memory, at most every METRICS_REDIS_MEM_EVERY_MS. */
static void
worker_redis_mem(struct worker *w)
{
	struct metrics_redis_mem	*rm = metrics_redis_mem(w->metrics);
	long long			 now = clock_mono_ms();

	if (rm->refused || (rm->asked_ms != 0 &&
	    now - rm->asked_ms < METRICS_REDIS_MEM_EVERY_MS))
		return;
	rm->asked_ms = now;
	queue_info(w->q, "memory", worker_redis_mem_cb, w);
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
		worker_limit_renew(w);
		worker_publish(w, 0);
		worker_redis_mem(w);
		break;
	case QUEUE_EV_LEASE_LOST:
		sessions_fence(w->sessions);
		break;
	case QUEUE_EV_RECONNECTED:
		sessions_remirror(w->sessions);
		break;
	}
}

/* The value of a string setting, or NULL when it is empty (unset). */
static const char *
worker_setting(const char *s)
{
	return (s != NULL && *s != '\0' ? s : NULL);
}

/*
 * rediss://: the one SSL_CTX of every Redis connection, its CA, client
 * certificate and key loaded now, so that a bad file stops the start-up
 * with its name and what is wrong. *ctx NULL for any other URL, which
 * may not carry TLS settings: they would be ignored, and the worker
 * talk in the clear to someone who meant TLS. 0, or -1 (logged).
 */
static int
worker_tls(const struct config *cfg, const struct rurl *url, SSL_CTX **ctx)
{
	struct rconn_tls	 t;
	char			*cause;

	*ctx = NULL;
	memset(&t, 0, sizeof t);
	t.ca_file = worker_setting(cfg->redis_tls_ca);
	t.cert_file = worker_setting(cfg->redis_tls_cert);
	t.key_file = worker_setting(cfg->redis_tls_key);
	t.server_name = worker_setting(cfg->redis_tls_server_name);
	if (!url->tls) {
		if (t.ca_file == NULL && t.cert_file == NULL &&
		    t.key_file == NULL && t.server_name == NULL)
			return (0);
		log_warn("redis_tls_* settings are given, but the Redis URL "
		    "is not rediss:// (TLS): use rediss://, or unset them");
		return (-1);
	}
	if ((*ctx = rconn_tls_ctx(&t, &cause)) == NULL) {
		log_warn("redis: %s", cause);
		free(cause);
		return (-1);
	}
	return (0);
}

/*
 * The Redis login: redis_user and the password (redis_password_file or
 * redis_password) beat the URL's. A password typed into --redis shows in
 * ps: said once.
 */
static void
worker_redis_login(const struct config *cfg, struct rurl *u)
{
	if (*cfg->redis_user != '\0') {
		free(u->user);
		u->user = xstrdup(cfg->redis_user);
	}
	if (*cfg->redis_password != '\0') {
		if (u->password != NULL)
			explicit_bzero(u->password, strlen(u->password));
		free(u->password);
		u->password = xstrdup(cfg->redis_password);
	} else if (cfg->redis_url_secret_argv)
		log_warn("the Redis password is on the command line (--redis), "
		    "where ps shows it to every user of this host: use "
		    "redis_password_file, EXECQ_REDIS_PASSWORD_FILE or "
		    "EXECQ_REDIS_PASSWORD");
}

/* Names split by spaces or commas: NULL-terminated, allocated; NULL: none. */
static char **
worker_names(const char *list)
{
	char	*copy, *save, *p, **v = NULL;
	size_t	 n = 0;

	copy = xstrdup(list != NULL ? list : "");
	for (p = strtok_r(copy, " ,\t", &save); p != NULL;
	    p = strtok_r(NULL, " ,\t", &save)) {
		v = xreallocarray(v, n + 2, sizeof *v);
		v[n++] = xstrdup(p);
		v[n] = NULL;
	}
	free(copy);
	return (v);
}

/* One proxy connection's fate, in the audit log. */
static void
worker_proxy_audit_cb(const struct proxy_event *ev, void *arg)
{
	struct worker		*w = arg;
	struct audit_event	 e;
	char			*what, *why;

	xasprintf(&what, "%s %s:%d", ev->method, ev->host, ev->port);
	xasprintf(&why, "%s%s%s; %llu bytes sent, %llu received",
	    ev->addr != NULL ? ev->addr : "no address",
	    ev->reason != NULL ? ": " : "", ev->reason != NULL ? ev->reason :
	    "", ev->sent, ev->received);
	memset(&e, 0, sizeof e);
	e.event = strcmp(ev->verdict, "allowed") == 0 ? "connect" :
	    "connect-refused";
	e.id = ev->id;
	e.command = what;
	e.rule = "proxy";
	e.reason = why;
	e.queue = w->cfg->queue;
	e.worker = queue_consumer(w->q);
	audit_write(w->audit, &e);
	free(what);
	free(why);
}

/*
 * The egress proxy, in the commands' network namespace: never the
 * worker's Redis, whatever a name resolves to.
 */
static void
worker_proxy(struct worker *w)
{
	struct proxy_config	 pc;
	struct sockaddr_storage	 ss;
	socklen_t		 len = sizeof ss;
	struct sockaddr_in	*sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)&ss;

	memset(&pc, 0, sizeof pc);
	pc.netns_fd = exec_netns_fd();
	pc.private_hosts = (const char *const *)w->net_private;
	if (w->url.host != NULL && netaddr_parse(w->url.host, &ss, &len) ==
	    0) {
		if (ss.ss_family == AF_INET)
			sin->sin_port = htons((uint16_t)w->url.port);
		else
			sin6->sin6_port = htons((uint16_t)w->url.port);
		pc.refused = (struct sockaddr *)&ss;
		pc.refused_len = len;
	}
	pc.audit = worker_proxy_audit_cb;
	pc.arg = w;
	if ((w->proxy = proxy_create(w->base, &pc)) == NULL) {
		log_warn("egress proxy: %s: commands get no domain", strerror(
		    errno));
		return;
	}
	sessions_set_proxy(w->sessions, w->proxy);
	log_info("egress proxy at 127.0.0.1:%d %s; domains for every "
	    "command: %s", proxy_port(w->proxy), pc.netns_fd != -1 ?
	    "in the commands' network namespace" : "on the host (no "
	    "namespace)", w->cfg->network_domains[0] != '\0' ?
	    w->cfg->network_domains : "none");
}

struct worker *
worker_create(struct event_base *base, const struct config *cfg)
{
	struct worker		*w;
	struct worker_boundary	 b;
	struct queue_config	 qc;
	SSL_CTX			*tls = NULL;
	char			*cause, *shown;
	unsigned		 n;

	w = xcalloc(1, sizeof *w);
	w->base = base;
	w->cfg = cfg;
	LIST_INIT(&w->jobs);
	w->metrics = metrics_create();
	w->started_ms = clock_wall_ms();
	if (gethostname(w->host, sizeof w->host - 1) != 0)
		strcpy(w->host, "unknown");
	w->holder = holder_link_open();	/* the sessions to adopt */
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
	worker_redis_login(cfg, &w->url);
	if (worker_tls(cfg, &w->url, &tls) == -1)
		goto fail;
	/* Before any thread starts: it forks the namespace helper. */
	if (worker_boundary(cfg, &w->url, 0, holder_link_pid(w->holder),
	    holder_link_leaves(w->holder), &b) == -1)
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
	qc.agents = cfg->agents;
	qc.claim_idle_ms = cfg->claim_idle_ms;
	qc.answer_ttl_s = cfg->answer_ttl_s;
	qc.max_item_bytes = cfg->max_item_bytes;
	qc.state_dir = cfg->state_dir;
	qc.syncer = w->syncer;
	qc.timeout_ms = cfg->redis_timeout_ms;
	/* auto: a Sentinel fleet has replicas, and a failover to lose to. */
	qc.wait_replicas = strcmp(cfg->redis_wait_replicas, "auto") == 0 ?
	    (w->url.master != NULL ? 1 : 0) :
	    (unsigned)strtoul(cfg->redis_wait_replicas, NULL, 10);
	qc.tls_ctx = tls;
	qc.tls_server_name = worker_setting(cfg->redis_tls_server_name);
	tls = NULL;			/* the queue's now */
	w->q = queue_create(base, &qc, worker_item_cb, w);
	queue_on_event(w->q, worker_queue_event_cb, w);
	w->sessions = sessions_create(base, w->q, cfg, w->syncer,
	    worker_slot_cb, w);
	sessions_on_held(w->sessions, worker_held_list_cb, w);
	sessions_set_metrics(w->sessions, w->metrics);
	sessions_set_holder(w->sessions, w->holder);
	if (w->holder != NULL) {
		n = sessions_adopt(w->sessions);
		/* What else runs in our leaves was a dead worker's item. */
		cgroup_pool_reclaim(w->pool);
		if (holder_link_up(w->holder, base) == -1) {
			log_warn("holder: %s", strerror(errno));
			goto fail;
		}
		log_info("holder %ld: %u session(s) adopted",
		    holder_link_pid(w->holder), n);
	}
	w->approvals = approvals_create(base, w->q, cfg);
	w->net_domains = worker_names(cfg->network_domains);
	w->agents = worker_names(cfg->agents);
	if (cfg->queue_limits[0] != '\0') {	/* checked as it loaded */
		json_t	*l, *v = json_loads(cfg->queue_limits, 0, NULL);

		l = json_object_get(v, cfg->queue);
		w->limit_running = (unsigned)json_integer_value(
		    json_object_get(l, "max_running"));
		w->limit_rate = json_number_value(json_object_get(l,
		    "max_per_s"));
		json_decref(v);
	}
	if (cfg->retry[0] != '\0') {	/* checked as the config loaded */
		json_t			*v;
		struct item_error	 err;

		memset(&err, 0, sizeof err);
		v = json_loads(cfg->retry, 0, NULL);
		if ((w->retry = item_retry_parse(v, &err)) == NULL)
			fatal("retry: %s", err.message);
		json_decref(v);
	}
	w->net_private = worker_names(cfg->network_private_hosts);
	worker_proxy(w);
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
	rconn_tls_ctx_free(tls);
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
	worker_backlog_free();
	queue_free(w->q);	/* no callbacks from here on */
	sessions_free(w->sessions);
	proxy_free(w->proxy);	/* after the sessions: they revoke */
	xstrvfree(w->net_domains);
	xstrvfree(w->agents);
	xstrvfree(w->net_private);
	free(w->retry);
	approvals_free(w->approvals);
	syncer_free(w->syncer);	/* finishes its fsyncs, calls nobody back */
	exec_shutdown();	/* kills what still runs, no callbacks */
	holder_link_free(w->holder);
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
	if (w->ev_limit != NULL)
		event_free(w->ev_limit);
	if (w->ev_hup != NULL)
		event_free(w->ev_hup);
	if (w->ev_usr2 != NULL)
		event_free(w->ev_usr2);
	rurl_release(&w->url);
	audit_close(w->audit);
	for (i = 0; w->allow != NULL && w->allow[i] != NULL; i++)
		free(w->allow[i]);
	free(w->allow);
	worker_held_release(w);
	metrics_free(w->metrics);
	free(w);
}
