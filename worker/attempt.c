/*
 * An item's attempts: a delayed item waits before its first, a failed
 * run waits before the next (args.retry, or the queue's retry setting),
 * and what no worker can run, or ran out of attempts, joins the dead
 * letters; a cancel takes an item out before it runs. Each wait is in
 * Redis (queue_answer_send's "sched"), never in this worker's memory: a
 * worker that dies between attempts loses none.
 */

#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <jansson.h>

#include "logs/log.h"
#include "logs/xmalloc.h"
#include "queue/item.h"
#include "queue/keyspace.h"
#include "queue/queue.h"
#include "worker/config.h"
#include "worker/session.h"
#include "worker/worker_int.h"

/* Why a last attempt is the last, in its answer's "retry". */
#define ATTEMPT_SUCCEEDED	"succeeded"
#define ATTEMPT_NOT_COUNTED	"not_counted"	/* an outcome "on" omits */
#define ATTEMPT_EXHAUSTED	"exhausted"

static void	worker_limit_cancel(struct job *);

/*
 * Job j's entry waits in the delayed set, to come back as attempt; its
 * sender is told by notice (stolen). j is freed.
 */
static void
worker_attempt_wait(struct job *j, char *notice, size_t len, int64_t at_ms,
    long delay_ms, unsigned attempt)
{
	struct queue_answer	a;

	memset(&a, 0, sizeof a);
	a.reply_to = worker_reply_to(j, j->item->reply_to);
	a.lane = KS_LANE_NORMAL;
	a.item_id = j->item->id;
	a.store = QUEUE_STORE_NONE;
	a.stream = j->stream;
	a.entry_id = j->entry_id;
	a.json = notice;
	a.len = len;
	a.sched = 1;
	a.at_ms = at_ms;
	a.delay_ms = delay_ms;
	a.attempt = attempt;
	queue_answer_send(j->w->q, &a);
	free(notice);
	free(j->claim_id);	/* the script makes it "@sched" */
	j->claim_id = NULL;
	worker_answered(j, ERR_NONE);
	worker_drop(j);
}

int
worker_attempt_defer(struct job *j)
{
	const struct item	*it = j->item;
	int64_t			 now, at = 0;
	long			 delay = -1;
	char			*notice;
	size_t			 len;

	if (j->waited || it->type != ITEM_EXEC)
		return (0);	/* back from its wait: it runs now */
	if (it->not_before_ms > 0) {
		now = queue_redis_ms(j->w->q);
		if (it->not_before_ms <= now)
			return (0);
		at = it->not_before_ms;
		delay = (long)(at - now);
	} else if (it->delay_ms > 0)
		delay = it->delay_ms;
	else
		return (0);
	log_info("item %s: waits %ld ms before it runs", it->id, delay);
	notice = item_scheduled_to_json(it->id, "delay", 1, delay, NULL, &len);
	worker_attempt_wait(j, notice, len, at, delay, 1);
	return (1);
}

int
worker_attempt_retry(struct job *j, int spawn_failed, int timed_out,
    int signal, int exit_code, const char *last, size_t last_len)
{
	const struct item_retry	*r = worker_attempt_policy(j);
	char			*notice;
	size_t			 len;
	long			 delay;

	if (r == NULL)
		return (0);
	if (!item_retry_counts(r, spawn_failed, timed_out, signal,
	    exit_code)) {
		j->retry_end = spawn_failed || timed_out || signal != 0 ||
		    exit_code != 0 ? ATTEMPT_NOT_COUNTED : ATTEMPT_SUCCEEDED;
		return (0);
	}
	if (j->attempt >= r->max_attempts) {
		j->retry_end = ATTEMPT_EXHAUSTED;
		j->dead = 1;
		return (0);
	}
	delay = item_retry_delay(r, j->attempt, arc4random());
	log_info("item %s: attempt %u of %u failed; the next in %ld ms",
	    j->item->id, j->attempt, r->max_attempts, delay);
	notice = item_scheduled_to_json(j->item->id, "retry", j->attempt + 1,
	    delay, json_loadb(last, last_len, 0, NULL), &len);
	worker_attempt_wait(j, notice, len, 0, delay, j->attempt + 1);
	return (1);
}

/* A PROCESS_RESULT for cancel: cancelled or not, and the item's state. */
static void
worker_cancel_answer(struct job *j, int cancelled, const char *state,
    const char *note)
{
	char	*json;
	size_t	 len;

	json = item_process_result_to_json(j->item->id, "cancel",
	    j->item->session_id, json_pack("{s:b, s:s, s:s*}", "cancelled",
	    cancelled, "state", state, "note", note), &len);
	worker_finish(j, ERR_NONE, j->item->reply_to, NULL, QUEUE_STORE_NONE,
	    json, len);
	free(json);
}

/*
 * Whose the item id is: from an agent's lane, only the agent's own
 * ids; from a shared lane, any id not in an agent's namespace. An
 * operator's token may cancel any.
 */
static int
worker_cancel_allowed(const struct job *j)
{
	const char	*id = j->item->session_id;
	size_t		 i;

	if (sessions_operator(j->w->cfg, j->item))
		return (1);
	if (j->owner != NULL)
		return (worker_owned_name(j->owner, id));
	for (i = 0; j->w->agents != NULL && j->w->agents[i] != NULL; i++)
		if (worker_owned_name(j->w->agents[i], id))
			return (0);
	return (1);
}

/*
 * A delayed item taken out of the delayed set (text: what waited there,
 * {"s": lane, "f": the entry's fields}): its sender gets the ERROR, kept
 * as the id's answer, on the queue its answer would have gone to.
 */
static void
worker_cancel_delayed(struct job *j, const char *text, size_t len,
    const char *error, size_t error_len)
{
	struct worker		*w = j->w;
	struct queue_answer	 a;
	json_t			*d, *f, *item;
	const char		*lane, *body = NULL, *reply, *name;
	char			*owner = NULL, *reply_own = NULL;
	size_t			 i, plen = strlen(w->cfg->queue) + 3;

	d = json_loadb(text, len, 0, NULL);
	lane = json_string_value(json_object_get(d, "s"));
	f = json_object_get(d, "f");
	for (i = 0; i + 1 < json_array_size(f); i += 2)
		if (json_is_string(json_array_get(f, i)) && strcmp(
		    json_string_value(json_array_get(f, i)), "item") == 0)
			body = json_string_value(json_array_get(f, i + 1));
	item = body != NULL ? json_loads(body, 0, NULL) : NULL;
	reply = json_string_value(json_object_get(item, "reply_to"));
	if (reply != NULL && !item_id_valid(reply))
		reply = NULL;
	/* An agent's lane, q:<queue>:<agent>.<lane>: the agent's rules. */
	if (lane != NULL && strlen(lane) > plen &&
	    (name = strchr(lane + plen, '.')) != NULL) {
		owner = xstrndup(lane + plen, (size_t)(name - lane - plen));
		if (reply == NULL || !worker_owned_name(owner, reply)) {
			xasprintf(&reply_own, "%s." WORKER_OWNER_REPLIES,
			    owner);
			reply = reply_own;
		}
	}
	memset(&a, 0, sizeof a);
	a.reply_to = reply != NULL ? reply : w->cfg->reply_default;
	a.lane = KS_LANE_NORMAL;
	a.item_id = j->item->session_id;
	a.store = QUEUE_STORE_ANSWER;
	a.json = error;
	a.len = error_len;
	queue_answer_send(w->q, &a);
	json_decref(item);
	json_decref(d);
	free(owner);
	free(reply_own);
}

/* What became of a forwarded cancel. */
static void
worker_cancel_forwarded_cb(long long how, void *arg)
{
	struct job	*j = arg;

	if (how == 1) {
		worker_drop(j);		/* the script acknowledged it */
		return;
	}
	worker_cancel_answer(j, 0, "running", how == -1 ? "its worker is "
	    "gone: another takes it over, and it runs then" : "it runs: "
	    "kill it (a session's token, or an operator's)");
}

/* What Redis did with the cancel. */
static void
worker_cancel_cb(enum queue_claim what, const char *text, size_t len,
    void *arg)
{
	struct job	*j = arg;
	char		*error;
	size_t		 elen;

	switch ((int)what) {
	case QUEUE_CANCEL_DELAYED:
		error = item_error_to_json(j->item->session_id, ERR_CANCELLED,
		    "cancelled before it ran", &elen);
		worker_cancel_delayed(j, text != NULL ? text : "", len, error,
		    elen);
		free(error);
		log_info("item %s: cancelled while it waited",
		    j->item->session_id);
		worker_cancel_answer(j, 1, "delayed", NULL);
		break;
	case QUEUE_CANCEL_ANSWERED:
		worker_cancel_answer(j, 0, "answered", "it ran, or was "
		    "refused, already");
		break;
	case QUEUE_CANCEL_CLAIMED:
		if (text != NULL && *text != '\0' &&
		    strcmp(text, queue_consumer(j->w->q)) != 0) {
			queue_forward(j->w->q, j->item->session_id, j->stream,
			    j->entry_id, j->body, j->body_len, j->owner,
			    worker_cancel_forwarded_cb, j);
			break;
		}
		worker_cancel_forwarded_cb(0, j);
		break;
	case QUEUE_CANCEL_MARKED:
		log_info("item %s: cancelled before a worker took it",
		    j->item->session_id);
		worker_cancel_answer(j, 1, "queued", "its sender gets "
		    "cancelled when a worker reaches it; an id not sent yet "
		    "is cancelled when it comes, within answer_ttl_s");
		break;
	default:
		worker_fail(j, j->item->reply_to, j->item->id, ERR_CANCELLED,
		    "Redis refused the cancel; nothing changed, send it again",
		    QUEUE_STORE_NONE);
		break;
	}
}

void
worker_cancel(struct job *j, const struct queue_entry *e)
{
	struct job	*h;
	const char	*id = j->item->session_id;
	char		*error;
	size_t		 len;

	if (!worker_cancel_allowed(j)) {
		worker_fail(j, j->item->reply_to, j->item->id, ERR_FORBIDDEN,
		    "only the agent whose id it is, or an operator, may "
		    "cancel it", QUEUE_STORE_NONE);
		return;
	}
	LIST_FOREACH(h, &j->w->jobs, entry)
		if (h->state == JOB_PARKED && strcmp(h->item->id, id) == 0)
			break;
	/* Approved, it waits here for the queue's limits: no approval left. */
	if (h != NULL && h->approval == NULL) {
		worker_limit_cancel(h);
		worker_cancel_answer(j, 1, "held", "approved, it waited for "
		    "the queue's limits");
		return;
	}
	if (h != NULL) {
		worker_held_cancel(h, "cancelled by its sender", ERR_CANCELLED,
		    "cancelled while it waited for approval; it did not run",
		    QUEUE_STORE_ANSWER);
		worker_cancel_answer(j, 1, "held", NULL);
		return;
	}
	j->body = xmalloc(e->len + 1);
	memcpy(j->body, e->body, e->len);
	j->body[e->len] = '\0';
	j->body_len = e->len;
	error = item_error_to_json(id, ERR_CANCELLED, "cancelled before it "
	    "ran", &len);
	queue_cancel(j->w->q, id, error, len, worker_cancel_cb, j);
	free(error);
}

int
worker_limited(const struct job *j)
{
	return ((j->w->limit_running > 0 || j->w->limit_rate > 0) &&
	    !j->limited);
}

/* The worker takes items again: the first is the one that waited. */
void
worker_limit_open_cb(int fd, short what, void *arg)
{
	struct worker	*w = arg;

	(void)fd;
	(void)what;
	w->limit_wait = 0;
	worker_update_want(w);
}

/* An approved job's wait for the limits is over: ask again. */
static void
worker_limit_again_cb(int fd, short what, void *arg)
{
	struct job	*j = arg;

	(void)fd;
	(void)what;
	worker_limit_take(j, j->limit_go);
}

/* An approved job cancelled while it waited for the limits: it ends. */
static void
worker_limit_cancelled(struct job *j)
{
	worker_audit(j, "cancelled", NULL, "cancelled by its sender");
	worker_fail(j, j->item->reply_to, j->item->id, ERR_CANCELLED,
	    "cancelled while it waited for the queue's limits; it did not run",
	    QUEUE_STORE_ANSWER);
}

/* An approved job whose ask of the limits was out as the worker stopped. */
static void
worker_limit_stopped(struct job *j)
{
	worker_fail(j, j->item->reply_to, j->item->id, ERR_WORKER_STOPPING,
	    "the worker is shutting down while the approved command waited "
	    "for the queue's limits; it did not run, send it again",
	    QUEUE_STORE_RELEASE);
}

/*
 * Cancels an approved job that waits for the limits: now if it sleeps
 * till it asks again; else the limits' reply, on its way with the job as
 * its argument, ends it (whatever it says; a place taken goes back).
 */
static void
worker_limit_cancel(struct job *j)
{
	if (j->ev_limit != NULL && evtimer_pending(j->ev_limit, NULL))
		worker_limit_cancelled(j);
	else
		j->limit_go = worker_limit_cancelled;
}

/* What the limits said: 0, go; else wait that many ms. */
static void
worker_limit_cb(long long wait, void *arg)
{
	struct job	*j = arg;
	struct worker	*w = j->w;
	struct timeval	 tv;
	char		*stream, *entry, *body, *owner;
	size_t		 len;
	unsigned	 attempt;

	if (j->limit_go == worker_limit_cancelled) {
		j->limited = wait <= 0;
		worker_limit_cancelled(j);
		return;
	}
	if (w->stopping && j->state == JOB_PARKED) {	/* approved */
		j->limited = wait <= 0;
		worker_limit_stopped(j);
		return;
	}
	if (wait <= 0) {
		j->limited = 1;
		j->limit_go(j);
		return;
	}
	tv.tv_sec = wait / 1000;
	tv.tv_usec = (wait % 1000) * 1000;
	if (j->state != JOB_CLAIMING) {		/* approved: it waits here */
		if (j->ev_limit == NULL && (j->ev_limit = evtimer_new(w->base,
		    worker_limit_again_cb, j)) == NULL)
			fatal("out of memory (libevent)");
		evtimer_add(j->ev_limit, &tv);
		return;
	}
	/* Back in line, first: its entry waits, its claim let go. */
	log_debug("item %s: over the queue's limits; again in %lld ms",
	    j->item->id, wait);
	stream = j->stream;
	entry = j->entry_id;
	body = j->body;
	len = j->body_len;
	owner = j->owner;
	attempt = j->waited ? j->attempt : 0;
	j->stream = j->entry_id = j->body = j->owner = NULL;
	w->limit_wait = 1;
	evtimer_add(w->ev_limit, &tv);
	queue_untrack(w->q, stream, entry);
	queue_release(w->q, j->item->id, entry);
	worker_job_move(j, JOB_ENDED);
	worker_job_free(j);
	queue_hold_again(w->q, stream, entry, body, len, owner, attempt);
	free(stream);
	free(entry);
	free(body);
	free(owner);
}

void
worker_limit_take(struct job *j, void (*go)(struct job *))
{
	j->limit_go = go;
	queue_limit_take(j->w->q, j->item->id, j->w->limit_running,
	    j->w->limit_rate, j->w->cfg->claim_idle_ms, worker_limit_cb, j);
}

void
worker_limit_renew(struct worker *w)
{
	struct job	*j;

	LIST_FOREACH(j, &w->jobs, entry)
		if (j->limited)
			queue_limit_renew(w->q, j->item->id,
			    w->cfg->claim_idle_ms);
}
