/*
 * Reading the lanes: the fetch script and the blocking read, entries held
 * until the worker has room, tracked ones kept from takeover, XAUTOCLAIM,
 * and one-shot reads. Above queue/conn.c and queue/outbox.c (a claim
 * made as an entry was read is let go of there); queue.c starts it.
 */

#include <sys/queue.h>

#include <netinet/in.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>
#include <hiredis/hiredis.h>

#include "logs/log.h"
#include "logs/syncer.h"
#include "logs/xmalloc.h"
#include "queue/keyspace.h"
#include "queue/queue.h"
#include "queue/queue_int.h"
#include "queue/spool.h"

/* A one-shot read in flight. */
struct qread {
	struct queue	*q;
	queue_read_cb	 cb;
	void		*arg;
};

static void	queue_block_cb(struct rconn *, redisReply *, void *);
static void	queue_unblock_cb(struct rconn *, redisReply *, void *);

/* The field name of an entry's field list ("item"), or NULL. */
static const redisReply *
queue_field(const redisReply *fields, const char *name)
{
	size_t	i;

	if (fields == NULL || fields->type != REDIS_REPLY_ARRAY)
		return (NULL);
	for (i = 0; i + 1 < fields->elements; i += 2) {
		if (fields->element[i]->type == REDIS_REPLY_STRING &&
		    strcmp(fields->element[i]->str, name) == 0 &&
		    fields->element[i + 1]->type == REDIS_REPLY_STRING)
			return (fields->element[i + 1]);
	}
	return (NULL);
}

/* 1 if the entry is one we are working on. */
static int
queue_is_tracked(struct queue *q, const char *stream, const char *id)
{
	struct qtrack	*t;

	LIST_FOREACH(t, &q->tracked, entry) {
		if (strcmp(t->entry_id, id) == 0 &&
		    strcmp(t->stream, stream) == 0)
			return (1);
	}
	return (0);
}

/* Lane order of a stream key, for sorting a blocking read's result. */
static unsigned
queue_lane_index(struct queue *q, const char *stream)
{
	unsigned	i;

	for (i = 0; i < q->nlanes; i++)
		if (strcmp(q->lanes[i].key, stream) == 0)
			return (i);
	return (q->nlanes);
}

/*
 * Whose an entry is: the agent of its lane; on this worker's inbox, the
 * one named by the worker that forwarded it there (only workers write
 * inboxes); NULL: a shared lane's.
 */
static const char *
queue_owner(struct queue *q, unsigned lane, const redisReply *fields)
{
	const redisReply	*o;

	if (lane >= q->nlanes)
		return (NULL);
	if (lane == QUEUE_INBOX)
		return ((o = queue_field(fields, "owner")) != NULL ?
		    o->str : NULL);
	return (q->lanes[lane].owner);
}

/*
 * Hands one entry to the worker, or holds it when there is no room. size
 * is the item's size when only its head came (0: all of it); a body over
 * max_item_bytes that came whole (a blocking read) is cut to its head
 * here, so no more than that is kept. claim (NULL: none) is what the
 * fetch script's claim said: {outcome, answer, item id}. A held entry
 * keeps no claim: ours is released, and it is claimed when it is offered.
 */
static void
queue_offer(struct queue *q, const char *stream, const char *id,
    const redisReply *fields, int redelivered, size_t size,
    const redisReply *const *claim)
{
	const redisReply	*item = queue_field(fields, "item");
	const redisReply	*att = queue_field(fields, "attempt");
	unsigned		 attempt = 0;
	struct queue_entry	 e;
	struct qheld		*h;
	unsigned		 lane = queue_lane_index(q, stream);
	int			 ctl = lane < q->nctl;
	const char		*owner = queue_owner(q, lane, fields);
	size_t			 len = item != NULL ? item->len : 0;

	int			 requeued = !ctl &&
	    queue_field(fields, "requeue") != NULL;

	if (att != NULL && !ctl)
		attempt = (unsigned)strtoul(att->str, NULL, 10);
	if (size == 0 && len > q->max_item_bytes)
		size = len;
	if (size != 0 && len > QUEUE_HEAD_BYTES)
		len = QUEUE_HEAD_BYTES;
	if (q->want == 0 && !ctl) {
		if (claim != NULL && claim[0]->integer == QUEUE_CLAIM_RUN)
			queue_release(q, claim[2]->str, id);
		h = xcalloc(1, sizeof *h);
		h->stream = xstrdup(stream);
		h->entry_id = xstrdup(id);
		h->has_body = item != NULL;
		h->body = item != NULL ? xstrndup(item->str, len) : NULL;
		h->len = len;
		h->size = size;
		h->redelivered = redelivered;
		h->attempt = attempt;
		h->requeued = requeued;
		h->owner = owner != NULL ? xstrdup(owner) : NULL;
		TAILQ_INSERT_TAIL(&q->held, h, entry);
		queue_track(q, stream, id);	/* nobody takes it over */
		return;
	}
	if (!ctl)
		q->want--;
	e.stream = stream;
	e.entry_id = id;
	e.body = item != NULL ? item->str : NULL;
	e.len = len;
	e.size = size;
	e.redelivered = redelivered;
	e.control = ctl;
	e.owner = owner;
	e.attempt = attempt;
	e.requeued = requeued;
	e.claim = claim != NULL ? (int)claim[0]->integer : 0;
	e.claim_id = claim != NULL ? claim[2]->str : NULL;
	/*
	 * Ours, says the fetch, and this life ran it already (its answer
	 * was lost): "running", so the worker claims again and the claim
	 * counts that run (queue_claim).
	 */
	if (e.claim == QUEUE_CLAIM_RUN && queue_ran(q, e.claim_id, id))
		e.claim = QUEUE_CLAIM_RUNNING;
	/*
	 * With replicas to wait for, a claim counts once they have it: the
	 * worker claims again on the write connection, where the outbox
	 * waits (one round trip more an item, only then).
	 */
	if (e.claim == QUEUE_CLAIM_RUN && q->wait_replicas > 0 &&
	    !q->unreplicated)
		e.claim = QUEUE_CLAIM_RUNNING;
	e.answer = claim != NULL ? claim[1]->str : NULL;
	e.answer_len = claim != NULL ? claim[1]->len : 0;
	q->itemcb(&e, q->arg);
}

void
queue_hold_again(struct queue *q, const char *stream, const char *entry_id,
    const char *body, size_t len, const char *owner, unsigned attempt)
{
	struct qheld	*h;

	h = xcalloc(1, sizeof *h);
	h->stream = xstrdup(stream);
	h->entry_id = xstrdup(entry_id);
	h->has_body = body != NULL;
	h->body = body != NULL ? xstrndup(body, len) : NULL;
	h->len = len;
	h->attempt = attempt;
	h->owner = owner != NULL ? xstrdup(owner) : NULL;
	TAILQ_INSERT_HEAD(&q->held, h, entry);
	queue_track(q, stream, entry_id);	/* nobody takes it over */
}

/* Entries held back earlier go first, as room appears. */
static void
queue_offer_held(struct queue *q)
{
	struct qheld		*h;
	struct queue_entry	 e;

	while (q->want > 0 && !q->freeing &&
	    (h = TAILQ_FIRST(&q->held)) != NULL) {
		TAILQ_REMOVE(&q->held, h, entry);
		queue_untrack(q, h->stream, h->entry_id);
		q->want--;
		e.stream = h->stream;
		e.entry_id = h->entry_id;
		e.body = h->body;
		e.len = h->len;
		e.size = h->size;
		e.redelivered = h->redelivered;
		e.control = 0;
		e.owner = h->owner;
		e.attempt = h->attempt;
		e.requeued = h->requeued;
		e.claim = 0;
		e.claim_id = e.answer = NULL;
		e.answer_len = 0;
		q->itemcb(&e, q->arg);
		free(h->stream);
		free(h->entry_id);
		free(h->body);
		free(h->owner);
		free(h);
	}
}

/* Retries a read that failed (NOGROUP after a Redis restart, ...). */
void
queue_read_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	struct queue	*q = arg;

	(void)fd;
	(void)what;
	if (q->rd.up)
		queue_create_groups(q);
	queue_read_next(q);
}

/*
 * A read came back as an error (OOM, a missing group after a restart):
 * try again after a backoff that doubles while it goes on, saying so once
 * a second at most. READONLY (the fetch script and XREADGROUP write:
 * this node is a replica now) moves both connections to the primary at
 * once, as an answer refused with it does.
 */
static void
queue_read_failed(struct queue *q, const char *what, const redisReply *r)
{
	struct timeval	tv;
	time_t		now = time(NULL);

	if (queue_readonly(q, r))
		return;		/* read again once on the primary */

	q->read_backoff_ms = q->read_backoff_ms == 0 ? QUEUE_BACKOFF_MIN_MS :
	    q->read_backoff_ms * 2;
	if (q->read_backoff_ms > QUEUE_ERR_BACKOFF_MAX_MS)
		q->read_backoff_ms = QUEUE_ERR_BACKOFF_MAX_MS;
	if (now != q->read_logged) {
		log_warn("queue: %s: %s (retrying in %u ms)", what, r->str,
		    q->read_backoff_ms);
		q->read_logged = now;
	}
	tv.tv_sec = q->read_backoff_ms / 1000;
	tv.tv_usec = (q->read_backoff_ms % 1000) * 1000;
	evtimer_add(q->ev_read_retry, &tv);
}

/*
 * Nothing waiting: block until something arrives on a control lane,
 * or on any lane when there is room (queue_want unblocks a control-only
 * read as soon as room appears). A blocking XREADGROUP returns at once
 * when entries are there already.
 */
static void
queue_block(struct queue *q)
{
	const char	**argv;
	char		  count[16];
	unsigned	  i, n, argc = 0;

	q->reading = 1;
	q->ctl_only = q->want == 0;
	n = q->ctl_only ? q->nctl : q->nlanes;
	q->block_count = q->ctl_only ? (unsigned)QUEUE_CTL_COUNT : q->want;
	snprintf(count, sizeof count, "%u", q->block_count);
	argv = xcalloc(9 + 2 * (size_t)n, sizeof *argv);
	argv[argc++] = "XREADGROUP";
	argv[argc++] = "GROUP";
	argv[argc++] = QUEUE_GROUP;
	argv[argc++] = q->consumer;
	argv[argc++] = "COUNT";
	argv[argc++] = count;
	argv[argc++] = "BLOCK";
	argv[argc++] = QUEUE_BLOCK_MS;
	argv[argc++] = "STREAMS";
	for (i = 0; i < n; i++)
		argv[argc++] = q->lanes[i].key;
	for (i = 0; i < n; i++)
		argv[argc++] = ">";
	rconn_command_argv(q->rd.rc, queue_block_cb, q, (int)argc, argv,
	    NULL);
	free(argv);
	queue_kick(&q->rd);
}

/*
 * The fetch script's reply: entries {stream, id, fields, size, claim,
 * answer, item id} in lane order; claim 0 when it claimed nothing.
 */
static void
queue_fetch_cb(struct rconn *rc, redisReply *reply, void *arg)
{
	redisReply	*e;
	struct queue	*q = arg;
	size_t		 i, n = 0;
	int		 claimed;

	(void)rc;
	q->reading = 0;
	q->fetch_queued = 0;
	if (reply == NULL || q->freeing)
		return;
	if (reply->type == REDIS_REPLY_ERROR) {
		queue_read_failed(q, "fetch", reply);
		return;
	}
	q->read_backoff_ms = 0;
	if (q->fetch_own)
		q->let_go = 0;
	for (i = 0; reply->type == REDIS_REPLY_ARRAY && i < reply->elements;
	    i++) {
		e = reply->element[i];
		if (e->type != REDIS_REPLY_ARRAY || e->elements != 7 ||
		    e->element[4]->type != REDIS_REPLY_INTEGER ||
		    e->element[5]->type != REDIS_REPLY_STRING ||
		    e->element[6]->type != REDIS_REPLY_STRING)
			continue;
		if (q->fetch_own && queue_is_tracked(q, e->element[0]->str,
		    e->element[1]->str))
			continue;	/* being worked on, or held */
		claimed = e->element[4]->integer != 0;
		queue_offer(q, e->element[0]->str, e->element[1]->str,
		    e->element[2], 0, (size_t)e->element[3]->integer,
		    claimed ? (const redisReply *const *)e->element + 4 : NULL);
		n++;
	}
	q->drained = n < q->fetch_asked;
	if (n > 0 || !q->rd.up) {
		queue_read_next(q);
		return;
	}
	queue_block(q);
}

/* The blocking read: [[stream, [[id, fields], ...]], ...]. */
static void
queue_block_cb(struct rconn *rc, redisReply *reply, void *arg)
{
	redisReply	*s, *e;
	struct queue	*q = arg;
	size_t		 i, j;
	unsigned	 lane, *at, asked;
	int		 was_ctl, drained = 1;

	(void)rc;
	q->reading = q->fetch_queued;	/* a fetch waits behind it */
	was_ctl = q->ctl_only;
	asked = q->block_count;
	q->ctl_only = 0;
	if (reply == NULL || q->freeing)
		return;
	if (reply->type == REDIS_REPLY_ERROR) {
		if (strncmp(reply->str, "UNBLOCKED", 9) != 0)
			queue_read_failed(q, "XREADGROUP", reply);
		else
			queue_read_next(q);
		return;
	}
	q->read_backoff_ms = 0;
	if (reply->type != REDIS_REPLY_ARRAY || reply->elements == 0) {
		if (!was_ctl)
			q->drained = 1;
		/*
		 * The BLOCK ran out and nothing came: the same read again
		 * at once. No fetch: what came meanwhile the new read
		 * returns, so an idle worker costs Redis one read a period.
		 */
		if (!q->reading && q->rd.up && !q->let_go && !q->freeing &&
		    TAILQ_EMPTY(&q->held) && was_ctl == (q->want == 0))
			queue_block(q);
		else
			queue_read_next(q);
		return;
	}
	/* Several lanes may answer at once: control first, then high. */
	at = xcalloc(reply->elements, sizeof *at);
	for (i = 0; i < reply->elements; i++) {
		s = reply->element[i];
		at[i] = s->type == REDIS_REPLY_ARRAY && s->elements == 2 &&
		    s->element[0]->type == REDIS_REPLY_STRING &&
		    s->element[1]->type == REDIS_REPLY_ARRAY ?
		    queue_lane_index(q, s->element[0]->str) : q->nlanes;
		if (at[i] < q->nlanes && s->element[1]->elements >= asked)
			drained = 0;	/* more may wait there */
	}
	/* While they are offered, no read starts (queue_want): the lanes'
	   counts decide below which one follows. */
	q->reading = 1;
	for (lane = 0; lane < q->nlanes; lane++) {
		for (i = 0; i < reply->elements; i++) {
			s = reply->element[i];
			if (at[i] != lane)
				continue;
			for (j = 0; j < s->element[1]->elements; j++) {
				e = s->element[1]->element[j];
				if (e->type == REDIS_REPLY_ARRAY &&
				    e->elements == 2)
					queue_offer(q, s->element[0]->str,
					    e->element[0]->str, e->element[1],
					    0, 0, NULL);
			}
		}
	}
	free(at);
	q->reading = q->fetch_queued;
	if (!was_ctl)
		q->drained = drained;
	queue_read_next(q);
}

/*
 * How many entries a fetch asks for (0: none, block instead); sets
 * fetch_own, whether it reads this consumer's own pending entries.
 */
static unsigned
queue_fetch_count(struct queue *q)
{
	struct qtrack	*t;
	unsigned	 n = q->want;

	q->fetch_own = q->let_go && q->want > 0 && !q->stopped;
	if (q->fetch_own)	/* the tracked ones come back too */
		LIST_FOREACH(t, &q->tracked, entry)
			n++;
	return (n);
}

/*
 * Sends the fetch script for n entries. Within a class the lanes take
 * turns at going first, so no agent's backlog starves another's.
 */
static void
queue_fetch(struct queue *q, unsigned n)
{
	const char	**argv;
	char		  nkeys[16], count[16], nctl[16], max[32], ttl[16];
	unsigned	  c, i, per = q->nagents + 1, turn, argc = 0;

	snprintf(nkeys, sizeof nkeys, "%u", q->nlanes);
	snprintf(count, sizeof count, "%u", n);
	q->fetch_asked = n;
	snprintf(nctl, sizeof nctl, "%u", q->nctl);
	snprintf(max, sizeof max, "%zu", q->max_item_bytes);
	snprintf(ttl, sizeof ttl, "%u", q->answer_ttl_s);
	argv = xcalloc(12 + (size_t)q->nlanes, sizeof *argv);
	argv[argc++] = "EVAL";
	argv[argc++] = queue_fetch_lua;
	argv[argc++] = nkeys;
	for (i = 0; i < q->nctl; i++)
		argv[argc++] = q->lanes[i].key;
	turn = q->turn++ % per;
	for (c = 0; c < QUEUE_NCLASS; c++)
		for (i = 0; i < per; i++)
			argv[argc++] = q->lanes[q->nctl + c * per +
			    (turn + i) % per].key;
	argv[argc++] = QUEUE_GROUP;
	argv[argc++] = q->consumer;
	argv[argc++] = count;
	argv[argc++] = nctl;
	argv[argc++] = q->fetch_own ? "0" : ">";
	argv[argc++] = max;
	argv[argc++] = ttl;
	argv[argc++] = q->life;
	argv[argc++] = q->lane_prefix;
	q->reading = 1;
	rconn_command_argv(q->rd.rc, queue_fetch_cb, q, (int)argc, argv,
	    NULL);
	free(argv);
	queue_kick(&q->rd);
}

/* Reads more if there is room and no read outstanding. */
void
queue_read_next(struct queue *q)
{
	unsigned	n;

	queue_offer_held(q);
	if (q->reading || !q->rd.up || q->freeing)
		return;
	/*
	 * No room: only control items can be taken, and their order does
	 * not matter, so the blocking read alone does (it returns at once
	 * with what is there): one script less per item. It waits a grace
	 * first: a slot that frees within it (a short command) fetches at
	 * once, with no control-only read to end (a read and a CLIENT
	 * UNBLOCK less an item); a control item waits that much longer.
	 */
	if ((n = queue_fetch_count(q)) == 0) {
		if (!q->ctl_due) {
			if (!evtimer_pending(q->ev_ctl, NULL)) {
				struct timeval	tv = { 0,
				    QUEUE_CTL_GRACE_MS * 1000 };

				evtimer_add(q->ev_ctl, &tv);
			}
			return;
		}
		q->ctl_due = 0;
		queue_block(q);
		return;
	}
	evtimer_del(q->ev_ctl);
	q->ctl_due = 0;
	/*
	 * The last read left every lane with less than it asked for: a
	 * fetch now would read them all for nothing (a script with a read
	 * per lane: one an item at low load). The blocking read goes
	 * instead; it returns at once with anything that came meanwhile.
	 */
	if (q->drained && !q->fetch_own && TAILQ_EMPTY(&q->held)) {
		queue_block(q);
		return;
	}
	queue_fetch(q, n);
}

void
queue_ctl_grace_cb(evutil_socket_t fd, short what, void *arg)
{
	struct queue	*q = arg;

	(void)fd;
	(void)what;
	q->ctl_due = 1;
	queue_read_next(q);
}

/*
 * Ends a read blocked on the control lanes only: there is room for work
 * now. The blocking command may not have reached Redis yet (it travels
 * on the other connection), so when nothing was unblocked, try again.
 * The fetch goes out at once, behind the blocked read on its own
 * connection: Redis runs it as soon as the read ends, a round trip
 * sooner than after the read's answer.
 */
void
queue_unblock(struct queue *q)
{
	unsigned	n;

	if (q->reading && q->ctl_only && q->want > 0 && q->rd_client_id > 0 &&
	    q->wr.up) {
		rconn_command(q->wr.rc, queue_unblock_cb, q, "CLIENT UNBLOCK "
		    "%lld ERROR", q->rd_client_id);
		queue_kick(&q->wr);
		if (!q->fetch_queued && q->rd.up && !q->freeing &&
		    (n = queue_fetch_count(q)) > 0) {
			q->fetch_queued = 1;
			queue_fetch(q, n);
		}
	}
}

/* CLIENT UNBLOCK's answer: 0 means the read was not blocked yet. */
static void
queue_unblock_cb(struct rconn *rc, redisReply *reply, void *arg)
{
	struct queue	*q = arg;
	struct timeval	 tv = { 0, 1000 };

	(void)rc;
	if (reply == NULL || q->freeing)
		return;
	if (reply->type == REDIS_REPLY_INTEGER && reply->integer == 0)
		evtimer_add(q->ev_unblock, &tv);
	else if (reply->type == REDIS_REPLY_ERROR)	/* an ACL, maybe */
		log_warn("queue: CLIENT UNBLOCK: %s (new work waits for the "
		    "read timeout)", reply->str);
}

/* The retry timer. */
void
queue_unblock_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	queue_unblock(arg);
}

void
queue_want(struct queue *q, unsigned n)
{
	q->want = q->stopped ? 0 : n;
	queue_unblock(q);	/* a control-only read would not see work */
	queue_read_next(q);
}

void
queue_stop_reading(struct queue *q)
{
	q->stopped = 1;		/* control lanes are still read */
	q->want = 0;
}

/* Entries of an XRANGE-shaped reply ([[id, [field, value...]]...]). */
static size_t
queue_read_entries(const redisReply *r, const char *stream,
    struct queue_entry *out, size_t max)
{
	const redisReply	*e, *item;
	size_t			 i, n = 0;

	for (i = 0; r->type == REDIS_REPLY_ARRAY && i < r->elements &&
	    n < max; i++) {
		e = r->element[i];
		if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 ||
		    e->element[0]->type != REDIS_REPLY_STRING)
			continue;
		memset(&out[n], 0, sizeof out[n]);
		out[n].stream = stream;
		out[n].entry_id = e->element[0]->str;
		if ((item = queue_field(e->element[1], "item")) != NULL) {
			out[n].body = item->str;
			out[n].len = item->len;
		}
		n++;
	}
	return (n);
}

/* The reply to queue_read(): XREAD's [[stream, entries]] or entries. */
static void
queue_read_reply_cb(struct rconn *rc, redisReply *reply, void *arg)
{
	struct qread		*rd = arg;
	struct queue_entry	 entries[QUEUE_READ_MAX];
	const redisReply	*list = reply;
	const char		*stream = "";
	size_t			 n = 0;

	(void)rc;
	if (rd->q->freeing) {
		free(rd);
		return;
	}
	if (reply == NULL || reply->type == REDIS_REPLY_ERROR) {
		rd->cb(NULL, 0, -1, rd->arg);
		free(rd);
		return;
	}
	if (reply->type == REDIS_REPLY_ARRAY && reply->elements == 1 &&
	    reply->element[0]->type == REDIS_REPLY_ARRAY &&
	    reply->element[0]->elements == 2 &&
	    reply->element[0]->element[0]->type == REDIS_REPLY_STRING) {
		stream = reply->element[0]->element[0]->str;
		list = reply->element[0]->element[1];
	}
	if (list->type == REDIS_REPLY_ARRAY)
		n = queue_read_entries(list, stream, entries, QUEUE_READ_MAX);
	rd->cb(entries, n, 0, rd->arg);
	free(rd);
}

int
queue_read(struct queue *q, struct qcmd *cmd, queue_read_cb cb, void *arg)
{
	struct qread	*rd;
	int		 rc = -1;

	if (!q->wr.up || q->freeing)
		goto out;
	rd = xcalloc(1, sizeof *rd);
	rd->q = q;
	rd->cb = cb;
	rd->arg = arg;
	if (q->cluster)
		queue_cmd_tag(q, cmd);
	if (rconn_command_argv(q->wr.rc, queue_read_reply_cb, rd, cmd->argc,
	    cmd->argv, cmd->len) == -1) {
		free(rd);
		goto out;
	}
	queue_kick(&q->wr);
	rc = 0;
out:
	queue_cmd_release(cmd);
	return (rc);
}

void
queue_track(struct queue *q, const char *stream, const char *entry_id)
{
	struct qtrack	*t;

	t = xcalloc(1, sizeof *t);
	t->stream = xstrdup(stream);
	t->entry_id = xstrdup(entry_id);
	LIST_INSERT_HEAD(&q->tracked, t, entry);
}

void
queue_untrack(struct queue *q, const char *stream, const char *entry_id)
{
	struct qtrack	*t;

	LIST_FOREACH(t, &q->tracked, entry) {
		if (strcmp(t->entry_id, entry_id) == 0 &&
		    strcmp(t->stream, stream) == 0)
			break;
	}
	if (t == NULL)
		return;
	LIST_REMOVE(t, entry);
	free(t->stream);
	free(t->entry_id);
	free(t);
}

/* XAUTOCLAIM: [cursor, [[id, fields|nil], ...], [deleted...]]. */
void
queue_autoclaim_cb(struct rconn *rc, redisReply *reply, void *arg)
{
	redisReply	*e;
	struct queue	*q = ((struct qconn *)rconn_arg(rc))->q;
	const char	*stream = arg;
	size_t		 i;

	if (reply == NULL || q->freeing || q->stopped)
		return;
	if (reply->type == REDIS_REPLY_ERROR) {
		if (strncmp(reply->str, "NOGROUP", 7) != 0)
			log_warn("queue: XAUTOCLAIM %s: %s", stream, reply->str);
		return;
	}
	if (reply->type != REDIS_REPLY_ARRAY || reply->elements < 2)
		return;
	for (i = 0; i < reply->element[1]->elements; i++) {
		e = reply->element[1]->element[i];
		if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 ||
		    queue_is_tracked(q, stream, e->element[0]->str))
			continue;
		log_info("queue: taking over %s %s from a silent worker",
		    stream, e->element[0]->str);
		queue_offer(q, stream, e->element[0]->str, e->element[1], 1, 0,
		    NULL);
	}
}
