/* A job's states and its slot, the want the queue is told, a job's end. */

#include <sys/queue.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "exec/cmdenv.h"
#include "logs/execlog.h"
#include "logs/clock.h"
#include "logs/log.h"
#include "logs/xmalloc.h"
#include "queue/item.h"
#include "queue/keyspace.h"
#include "queue/queue.h"
#include "worker/approval.h"
#include "worker/audit.h"
#include "worker/config.h"
#include "worker/live.h"
#include "worker/metrics.h"
#include "worker/proxy.h"
#include "worker/session.h"
#include "worker/worker_int.h"

#define JOB_BIT(s)	(1u << (s))

/* The moves each state allows (see enum job_state). */
static const unsigned worker_job_next[] = {
	[JOB_NEW] = JOB_BIT(JOB_CHECKING) | JOB_BIT(JOB_CONTROL),
	[JOB_CHECKING] = JOB_BIT(JOB_CONTROL) | JOB_BIT(JOB_CLAIMING) |
	    JOB_BIT(JOB_ENDED),
	[JOB_CONTROL] = JOB_BIT(JOB_ENDED),
	[JOB_CLAIMING] = JOB_BIT(JOB_PARKED) | JOB_BIT(JOB_RUNNING) |
	    JOB_BIT(JOB_ENDED),
	[JOB_PARKED] = JOB_BIT(JOB_RUNNING) | JOB_BIT(JOB_ENDED),
	[JOB_RUNNING] = JOB_BIT(JOB_ENDED),
	[JOB_ENDED] = 0,
};

/* The states that hold a process slot. */
static const unsigned worker_job_slot = JOB_BIT(JOB_CHECKING) |
    JOB_BIT(JOB_CLAIMING) | JOB_BIT(JOB_RUNNING);

void
worker_update_want(struct worker *w)
{
	unsigned	used;

	if (w->stopping)
		return;
	/* Nothing would have a log, or may start now. */
	if (w->logs_broken || w->limit_wait) {
		queue_want(w->q, 0);
		return;
	}
	used = w->nslots + sessions_running(w->sessions);
	queue_want(w->q, w->cfg->max_procs > used ? w->cfg->max_procs - used :
	    0);
}

/*
 * If logs cannot be written in the log dir at all (gone and not to be
 * made again, read-only, full, no permission), the worker stops taking
 * items rather than failing each one, says why, and looks again every
 * second.
 */
void
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

int
worker_owned_name(const char *agent, const char *name)
{
	size_t	n = strlen(agent);

	return (name != NULL && strncmp(name, agent, n) == 0 &&
	    name[n] == '.' && name[n + 1] != '\0');
}

const char *
worker_reply_to(const struct job *j, const char *reply_to)
{
	if (j->owner != NULL && !worker_owned_name(j->owner, reply_to))
		return (j->owner_reply);
	return (reply_to != NULL ? reply_to : j->w->cfg->reply_default);
}

struct job *
worker_job_create(struct worker *w, const struct queue_entry *e)
{
	struct job	*j;

	j = xcalloc(1, sizeof *j);
	j->w = w;
	j->stream = xstrdup(e->stream);
	j->entry_id = xstrdup(e->entry_id);
	if (e->owner != NULL) {
		j->owner = xstrdup(e->owner);
		xasprintf(&j->owner_reply, "%s." WORKER_OWNER_REPLIES,
		    e->owner);
	}
	j->received_us = clock_mono_us();
	j->attempt = e->attempt != 0 ? e->attempt : 1;
	j->waited = e->attempt != 0;
	if (e->claim == QUEUE_CLAIM_RUN)
		j->claim_id = xstrdup(e->claim_id);
	worker_job_move(j, e->control ? JOB_CONTROL : JOB_CHECKING);
	return (j);
}

void
worker_job_move(struct job *j, enum job_state to)
{
	struct worker	*w = j->w;
	enum job_state	 from = j->state;
	int		 had, has;

	if (!(worker_job_next[from] & JOB_BIT(to)))
		fatal("job %s: state %d cannot become %d", j->entry_id,
		    (int)from, (int)to);
	j->state = to;
	had = (worker_job_slot & JOB_BIT(from)) != 0;
	has = (worker_job_slot & JOB_BIT(to)) != 0;
	if (from == JOB_NEW) {
		LIST_INSERT_HEAD(&w->jobs, j, entry);
		w->njobs++;
	} else if (to == JOB_ENDED) {
		LIST_REMOVE(j, entry);
		w->njobs--;
	}
	if (had && !has)
		w->nslots--;
	else if (!had && has)
		w->nslots++;
	/* A slot taken at delivery was counted by the queue already. */
	if (from != JOB_NEW && (had != has || to == JOB_ENDED))
		worker_update_want(w);
}

void
worker_job_free(struct job *j)
{
	if (j->limited)		/* a session counts as it starts only */
		queue_limit_done(j->w->q, j->item->id);
	if (j->ev_limit != NULL)
		event_free(j->ev_limit);
	/* A session's grant ends with the session (session.c). */
	if (j->proxy_url != NULL && j->w->proxy != NULL &&
	    !j->item->background)
		proxy_revoke(j->w->proxy, j->item->id);
	item_free(j->item);
	cmdenv_env_free(j->envp);
	free(j->cwd);
	decide_release(&j->dec);
	free(j->request);
	free(j->approved_by);
	free(j->grant);
	live_free(j->live);
	free(j->proxy_url);
	free(j->stream);
	free(j->owner);
	free(j->owner_reply);
	free(j->entry_id);
	free(j->claim_id);
	free(j->body);
	free(j);
}

const char *
worker_type_label(const struct job *j)
{
	if (j->item == NULL)
		return ("invalid");
	return (j->item->type == ITEM_PROCESS ? "PROCESS" : "EXEC");
}

void
worker_answered(struct job *j, enum errcode code)
{
	metrics_add(j->w->metrics, METRICS_ANSWERED, 1, worker_type_label(j),
	    code == ERR_NONE ? "ok" : errcode_name(code));
	metrics_observe(j->w->metrics, METRICS_ANSWER,
	    (clock_mono_us() - j->received_us) / 1e6);
}

int
worker_dead_code(enum errcode code)
{
	switch (code) {
	case ERR_ITEM_TOO_LARGE:
	case ERR_COMMAND_TOO_LONG:
	case ERR_NUL_BYTE:
	case ERR_BAD_JSON:
	case ERR_BAD_ITEM:
	case ERR_BAD_ID:
	case ERR_UNKNOWN_TYPE:
	case ERR_BAD_REPLY_TO:
	case ERR_MISSING_COMMAND:
	case ERR_BAD_TIMEOUT:
	case ERR_BAD_ENV:
	case ERR_ENV_FORBIDDEN:
	case ERR_CWD_OUTSIDE_WORKSPACE:
	case ERR_CWD_NOT_FOUND:
	case ERR_BAD_TIER:
	case ERR_BAD_ARGS:
	case ERR_BLOCKED:
	case ERR_OUTSIDE_WORKSPACE:
	case ERR_APPROVAL_EXPIRED:
	case ERR_WORKER_LOST:
		return (1);
	default:
		return (0);
	}
}

const struct item_retry *
worker_attempt_policy(const struct job *j)
{
	if (j->item == NULL || j->item->background || j->item->no_retry)
		return (NULL);
	return (j->item->retry != NULL ? j->item->retry : j->w->retry);
}

/*
 * Forgets a job whose entry is acknowledged (or will be) elsewhere. A
 * claim made as it was read, for an item that never ran, is let go.
 */
void
worker_drop(struct job *j)
{
	struct worker	*w = j->w;

	if (j->claim_id != NULL)
		queue_release(w->q, j->claim_id, j->entry_id);
	queue_untrack(w->q, j->stream, j->entry_id);
	worker_job_move(j, JOB_ENDED);
	worker_job_free(j);
}

/*
 * The one way a job ends: its answer goes out with the ack (and does store
 * to the record of item id: kept, when it is not json), and its slot is
 * free again.
 */
void
worker_finish_kept(struct job *j, enum errcode code, const char *reply_to,
    const char *id, enum queue_store store, const char *json, size_t len,
    const char *kept, size_t kept_len)
{
	struct worker		*w = j->w;
	struct queue_answer	 a;

	/* Refused after its claim: the answer lets go of it. */
	if (j->claim_id != NULL && store == QUEUE_STORE_NONE && id != NULL &&
	    strcmp(id, j->claim_id) == 0) {
		store = QUEUE_STORE_RELEASE;
		free(j->claim_id);
		j->claim_id = NULL;
	}
	memset(&a, 0, sizeof a);
	a.reply_to = worker_reply_to(j, reply_to);
	a.lane = KS_LANE_NORMAL;
	a.item_id = id;
	a.store = store;
	a.stream = j->stream;
	a.entry_id = j->entry_id;
	a.json = json;
	a.len = len;
	a.kept = kept;
	a.kept_len = kept_len;
	/* What no worker can run stays in sight: the dead letters. */
	a.dead = j->state != JOB_CONTROL && (j->dead ||
	    worker_dead_code(code));
	queue_answer_send(w->q, &a);
	worker_answered(j, code);
	worker_drop(j);
}

void
worker_finish(struct job *j, enum errcode code, const char *reply_to,
    const char *id, enum queue_store store, const char *json, size_t len)
{
	worker_finish_kept(j, code, reply_to, id, store, json, len, NULL, 0);
}

/* Answers a job with an ERROR. */
void
worker_fail(struct job *j, const char *reply_to, const char *id,
    enum errcode code, const char *message, enum queue_store store)
{
	char	*json;
	size_t	 len;

	log_info("item %s: %s: %s", id != NULL ? id : "(no id)",
	    errcode_name(code), message);
	json = item_error_to_json(id, code, message, &len);
	if (worker_attempt_policy(j) != NULL)
		item_json_add_attempt(&json, &len, j->attempt, NULL);
	worker_finish(j, code, reply_to, id, store, json, len);
	free(json);
}

void
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
	e.risk = cls_risk_name(j->dec.risk);
	e.rule = j->dec.rule;
	e.reason = reason != NULL ? reason : j->dec.reason;
	e.tier = cls_tier_name(j->tier);
	e.by = by;
	e.queue = w->cfg->queue;
	e.worker = queue_consumer(w->q);
	audit_write(w->audit, &e);
}
