/*
 * An item's attempts: a delayed item waits before its first, a failed
 * run waits before the next (args.retry, or the queue's retry setting),
 * and what no worker can run, or ran out of attempts, joins the dead
 * letters. Each wait is in Redis (queue_answer_send's "sched"), never in
 * this worker's memory: a worker that dies between attempts loses none.
 */

#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "logs/log.h"
#include "logs/xmalloc.h"
#include "queue/item.h"
#include "queue/keyspace.h"
#include "queue/queue.h"
#include "worker/worker_int.h"

/* Why a last attempt is the last, in its answer's "retry". */
#define ATTEMPT_SUCCEEDED	"succeeded"
#define ATTEMPT_NOT_COUNTED	"not_counted"	/* an outcome "on" omits */
#define ATTEMPT_EXHAUSTED	"exhausted"

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
