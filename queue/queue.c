/*
 * The reliable priority queue on Redis Streams (queue/queue.h): the
 * object, its heartbeat (lease, registry, takeover, lost sessions) and
 * its stats. The driver, on top of the module's other files: it hears
 * from queue/conn.c, through queue_conn_state_cb, that a connection came
 * up or went down, and sets reading, the outbox and the spool going.
 * queue/queue_int.h says which file holds the rest.
 */

#include <sys/queue.h>

#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>
#include <hiredis/hiredis.h>

#include "logs/clock.h"
#include "logs/log.h"
#include "logs/syncer.h"
#include "logs/token.h"
#include "logs/xmalloc.h"
#include "queue/item.h"
#include "queue/keyspace.h"
#include "queue/queue.h"
#include "queue/queue_int.h"
#include "queue/spool.h"

/* The work lane classes, in the order they are read. */
static const char *const queue_classes[QUEUE_NCLASS] = {
	KS_LANE_HIGH, KS_LANE_NORMAL, KS_LANE_LOW
};

static void	queue_write_status(struct queue *);
static void	queue_announce(struct queue *);
static void	queue_wrote(struct queue *, const redisReply *);

void
queue_retire(struct queue *q)
{
	struct qcmd	cmd;

	q->retired = 1;			/* no more heartbeats either */
	queue_cmd_init(&cmd);
	queue_arg(&cmd, "DEL");
	queue_argf(&cmd, "%s%s", q->k_worker, q->consumer);
	/* Never replayed: a later worker of this name may be alive then. */
	queue_push(q, queue_nospool(queue_cmd_req(&cmd)));
}

const char *
queue_consumer(const struct queue *q)
{
	return (q->consumer);
}

int
queue_connected(const struct queue *q)
{
	return (q->rd.up && q->wr.up);
}

/*
 * The old value of our lease key: none after we had one means it lapsed
 * (Redis could not hear from us for claim_idle), and others may have
 * declared our sessions lost.
 */
static void
queue_lease_cb(struct rconn *rc, redisReply *reply, void *arg)
{
	struct queue	*q = arg;

	(void)rc;
	if (reply == NULL || q->freeing)
		return;
	queue_wrote(q, reply);
	if (reply->type == REDIS_REPLY_NIL && q->leased) {
		log_warn("queue: our lease in Redis had lapsed; checking our "
		    "sessions");
		if (q->eventcb != NULL)
			q->eventcb(QUEUE_EV_LEASE_LOST, q->eventarg);
	}
	if (reply->type != REDIS_REPLY_ERROR)
		q->leased = 1;
}

/*
 * The reply to one of our writes (the lease, renewed with every beat):
 * whether Redis takes writes now. An error (OOM, MISCONF, READONLY) is
 * kept, for /healthz, until a write goes through; READONLY also says
 * that this is a replica, and a write that goes through that it is not.
 */
static void
queue_wrote(struct queue *q, const redisReply *reply)
{
	if (reply->type != REDIS_REPLY_ERROR) {
		if (q->refused[0] != '\0')
			log_info("queue: redis takes writes again");
		q->refused[0] = '\0';
		q->replica = 0;
		return;
	}
	if (q->refused[0] == '\0')
		log_warn("queue: redis refuses writes: %s", reply->str);
	snprintf(q->refused, sizeof q->refused, "%.*s",
	    (int)strcspn(reply->str, "\r\n"), reply->str);
	if (strncmp(reply->str, "READONLY", 8) == 0)
		q->replica = 1;
}

/* The registry's answer: how far our clock is from Redis's. */
static void
queue_status_cb(struct rconn *rc, redisReply *reply, void *arg)
{
	struct queue	*q = arg;
	long long	 skew;

	(void)rc;
	if (reply == NULL || q->freeing || reply->type != REDIS_REPLY_ARRAY ||
	    reply->elements != 2 || reply->element[1]->type !=
	    REDIS_REPLY_INTEGER)
		return;
	skew = reply->element[1]->integer;
	q->skew_ms = skew;
	if ((skew > 60000 || skew < -60000) != q->skewed)
		log_warn("queue: this host's clock is %lld s %s Redis's%s",
		    (skew < 0 ? -skew : skew) / 1000, skew < 0 ? "ahead of" :
		    "behind", skew > 60000 || skew < -60000 ? " (the fleet "
		    "registry uses Redis's)" : ": within a minute again");
	q->skewed = skew > 60000 || skew < -60000;
}

/* Renews our lease: execq:worker:<consumer>, for claim_idle. */
static void
queue_announce(struct queue *q)
{
	if (q->retired || !q->wr.up)
		return;
	rconn_command(q->wr.rc, queue_lease_cb, q, "SET %s%s %s EX %u GET",
	    q->k_worker, q->consumer, q->name, q->claim_idle_ms / 1000 + 1);
	queue_write_status(q);
}

/* The status for execq:workers, now (a lost write waits for the beat). */
static void
queue_write_status(struct queue *q)
{
	char		now[32];

	if (q->status == NULL || !q->wr.up)
		return;
	snprintf(now, sizeof now, "%lld", (long long)clock_wall_ms());
	rconn_command(q->wr.rc, queue_status_cb, q, "EVAL %s 2 %s %s %s %s %s "
	    "%s", queue_status_lua, q->k_workers, q->k_beat, q->consumer,
	    q->status, now, QUEUE_STATUS_KEEP_MS);
}

void
queue_set_status(struct queue *q, const char *json, int now)
{
	free(q->status);
	q->status = json != NULL ? xstrdup(json) : NULL;
	if (now)
		queue_write_status(q);
}

void
queue_stats(const struct queue *q, struct queue_stats *st)
{
	const struct qconn	*c;
	long long		 now, wait;
	int			 i;

	memset(st, 0, sizeof *st);
	st->connected = queue_connected(q);
	now = clock_mono_ms();
	for (i = 0; i < 2; i++) {
		c = i == 0 ? &q->rd : &q->wr;
		if ((wait = queue_conn_wait(c, now)) > st->waited_ms)
			st->waited_ms = wait;
		if (c->stalled || wait >= queue_conn_limit(c))
			st->stalled = 1;
	}
	st->replica = q->replica;
	st->unreplicated = q->unreplicated;
	st->refused = q->refused[0] != '\0' ? q->refused : NULL;
	st->reconnects = q->reconnects;
	st->outbox = queue_backlog(q);
	st->spooled = q->spool != NULL ? spool_pending(q->spool) : 0;
}

/* One INFO asked for: whom to tell. */
struct queue_info_req {
	queue_info_cb	 cb;
	void		*arg;
};

/* INFO's reply: told when there is one (NULL: lost, or freeing). */
static void
queue_info_reply_cb(struct rconn *rc, redisReply *reply, void *arg)
{
	struct queue_info_req	*req = arg;

	(void)rc;
	if (reply != NULL && reply->type == REDIS_REPLY_STRING)
		req->cb(reply->str, NULL, req->arg);
	else if (reply != NULL && reply->type == REDIS_REPLY_ERROR)
		req->cb(NULL, reply->str, req->arg);
	free(req);
}

void
queue_info(struct queue *q, const char *section, queue_info_cb cb,
    void *arg)
{
	struct queue_info_req	*req;

	if (!q->wr.up)
		return;
	req = xcalloc(1, sizeof *req);
	req->cb = cb;
	req->arg = arg;
	if (rconn_command(q->wr.rc, queue_info_reply_cb, req, "INFO %s",
	    section) == -1)
		free(req);		/* never called back */
}

void
queue_on_event(struct queue *q, queue_event_cb cb, void *arg)
{
	q->eventcb = cb;
	q->eventarg = arg;
}

/*
 * conn.c's word that connection c came up (up 1) or went down: the read
 * side reads; the write side announces us, says Redis is back, and sends
 * what waits in the outbox, or, going down, spools it.
 */
static void
queue_conn_state_cb(struct qconn *c, int up)
{
	struct queue	*q = c->q;

	if (c == &q->rd) {
		if (up)
			queue_read_next(q);
		else
			q->reading = 0;
		return;
	}
	if (!up) {
		queue_unack_all(q);
		queue_spool_out(q);
		return;
	}
	/* Announce ourselves at once: forwarding checks for it. */
	queue_announce(q);
	if (q->was_up && q->eventcb != NULL)
		q->eventcb(QUEUE_EV_RECONNECTED, q->eventarg);
	q->was_up = 1;
	queue_flush(q);
	if (q->cluster)		/* replies a dead worker left pending */
		event_active(q->ev_sweep, EV_TIMEOUT, 1);
	/*
	 * A slot that freed while it was down could not end the
	 * control-only read: it would wait for its BLOCK (10 s) to run out.
	 */
	queue_unblock(q);
}

/* Sessions found lost (logged) */
static void
queue_lost_cb(struct rconn *rc, redisReply *reply, void *arg)
{
	struct queue	*q = arg;

	(void)rc;
	if (reply != NULL && reply->type == REDIS_REPLY_INTEGER &&
	    reply->integer > 0) {
		log_warn("queue: %lld session(s) of a vanished worker ended "
		    "as lost", reply->integer);
		if (q->cluster)		/* their callbacks wait in replies */
			event_active(q->ev_sweep, EV_TIMEOUT, 1);
	}
	else if (reply != NULL && reply->type == REDIS_REPLY_ERROR)
		log_warn("queue: lost-session check: %s", reply->str);
}

int64_t
queue_redis_ms(const struct queue *q)
{
	return (clock_wall_ms() + q->skew_ms);
}

#define QUEUE_PROMOTE_BATCH	100	/* items one script moves */
#define QUEUE_PROMOTE_ROUNDS	50	/* scripts a second, at most */

static void	queue_promote(struct queue *);

/*
 * What the promote script said, {moved, still delayed}: a full batch
 * means more may be due, so another goes at once, up to
 * QUEUE_PROMOTE_ROUNDS a second (each about a millisecond of Redis's
 * time). None delayed, and none delayed by us since it went out (and
 * nothing of ours on its way): quiet, the next look is a beat away.
 */
static void
queue_promote_cb(struct rconn *rc, redisReply *reply, void *arg)
{
	struct queue	*q = arg;
	long long	 moved;

	(void)rc;
	if (reply == NULL || q->freeing)
		return;
	if (reply->type == REDIS_REPLY_ERROR) {
		log_warn("queue: delayed items: %s", reply->str);
		return;
	}
	if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 2 ||
	    reply->element[0]->type != REDIS_REPLY_INTEGER ||
	    reply->element[1]->type != REDIS_REPLY_INTEGER)
		return;
	moved = reply->element[0]->integer;
	q->promote_quiet = reply->element[1]->integer == 0 &&
	    q->sched_seen == q->sched_sent && q->nout == 0;
	if (moved > 0) {
		log_debug("queue: %lld delayed item(s) due: back in their "
		    "lanes", moved);
		if (moved >= QUEUE_PROMOTE_BATCH &&
		    ++q->promote_rounds < QUEUE_PROMOTE_ROUNDS)
			queue_promote(q);
	}
}

/* One run of the promote script. */
static void
queue_promote(struct queue *q)
{
	if (!q->wr.up || q->stopped || q->retired || q->freeing)
		return;
	q->sched_seen = q->sched_sent;
	rconn_command(q->wr.rc, queue_promote_cb, q, "EVAL %s 2 %sdelayed "
	    "%s" KS_DELAYED_ITEMS " %s %d %u", queue_promote_lua,
	    q->lane_prefix, q->lane_prefix, q->k_claim, QUEUE_PROMOTE_BATCH,
	    q->answer_ttl_s);
}

/*
 * Every second: delayed items that are due go back to their lanes. Any
 * worker of the queue may move them; the script moves each once. While
 * none is delayed (quiet), every claim_idle/3 only: the worker that
 * delays an item looks each second again (queue_answer_send), so only
 * the items of a worker that died since wait up to that much longer.
 */
static void
queue_promote_tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct queue	*q = arg;

	(void)fd;
	(void)what;
	q->promote_rounds = 0;
	if (q->promote_quiet && q->sched_seen == q->sched_sent &&
	    ++q->promote_skipped < q->promote_every)
		return;
	q->promote_skipped = 0;
	queue_promote(q);
}

/*
 * Every claim_idle/3: keep our entries fresh, announce ourselves, and take
 * over entries that a dead worker left idle for longer than claim_idle.
 */
static void
queue_beat_cb(evutil_socket_t fd, short what, void *arg)
{
	struct queue	*q = arg;
	struct qtrack	*t;
	char		 idle[16], count[16];
	unsigned	 i;

	(void)fd;
	(void)what;
	if (!q->wr.up)
		return;
	queue_role_beat(q);	/* still the primary? */
	LIST_FOREACH(t, &q->tracked, entry)
		rconn_command(q->wr.rc, NULL, NULL, "XCLAIM %s " QUEUE_GROUP
		    " %s 0 %s JUSTID", t->stream, q->consumer, t->entry_id);
	/* Before anyone's work is taken over: the worker kills what dead
	   workers on this host left running (and says how it is). */
	if (q->eventcb != NULL)
		q->eventcb(QUEUE_EV_BEAT, q->eventarg);
	queue_announce(q);
	if (q->cluster)
		event_active(q->ev_sweep, EV_TIMEOUT, 1);
	rconn_command(q->wr.rc, queue_lost_cb, q, "EVAL %s 1 %s %lld %u %s",
	    queue_lost_lua, q->k_running, (long long)clock_wall_ms(),
	    q->answer_ttl_s, q->lost_cb);
	if (q->want == 0 || q->stopped)
		return;
	snprintf(idle, sizeof idle, "%u", q->claim_idle_ms);
	snprintf(count, sizeof count, "%u", q->want);
	for (i = 0; i < q->nlanes; i++)
		rconn_command(q->wr.rc, queue_autoclaim_cb, q->lanes[i].key,
		    "XAUTOCLAIM %s " QUEUE_GROUP " %s %s 0-0 COUNT %s",
		    q->lanes[i].key, q->consumer, idle, count);
}

/* Adds a lane: "<owner>.<lane>" when it is an agent's. */
static void
queue_add_lane(struct queue *q, const char *owner, const char *lane)
{
	struct qlane	*l = &q->lanes[q->nlanes++];

	if (owner != NULL) {
		xasprintf(&l->key, "%s%s.%s", q->lane_prefix, owner, lane);
		l->owner = xstrdup(owner);
	} else
		xasprintf(&l->key, "%s%s", q->lane_prefix, lane);
}

/*
 * The lanes, in the order they are read: the shared control lane, this
 * worker's inbox and each agent's control lane; then for each class the
 * shared lane and each agent's. agents: names split by spaces or commas.
 */
static void
queue_make_lanes(struct queue *q, const char *agents)
{
	char		*list, *save, *p, *inbox, **names = NULL;
	unsigned	 c, i, n = 0;

	list = xstrdup(agents != NULL ? agents : "");
	for (p = strtok_r(list, " ,\t", &save); p != NULL;
	    p = strtok_r(NULL, " ,\t", &save)) {
		names = xreallocarray(names, n + 1, sizeof *names);
		names[n++] = p;
	}
	q->nagents = n;
	q->lanes = xcalloc((size_t)(n + 1) * (QUEUE_NCLASS + 1) + 1,
	    sizeof *q->lanes);
	xasprintf(&q->lane_prefix, KS_QUEUE "%s:", q->name);
	xasprintf(&inbox, KS_LANE_CTL ":%s", q->consumer);
	queue_add_lane(q, NULL, KS_LANE_CTL);
	queue_add_lane(q, NULL, inbox);
	for (i = 0; i < n; i++)
		queue_add_lane(q, names[i], KS_LANE_CTL);
	q->nctl = q->nlanes;
	for (c = 0; c < QUEUE_NCLASS; c++) {
		queue_add_lane(q, NULL, queue_classes[c]);
		for (i = 0; i < n; i++)
			queue_add_lane(q, names[i], queue_classes[c]);
	}
	free(inbox);
	free(names);
	free(list);
}

struct queue *
queue_create(struct event_base *base, const struct queue_config *cfg,
    queue_item_cb itemcb, void *arg)
{
	struct queue	*q;
	struct timeval	 tv;
	unsigned	 beat_ms;
	char		 life[TOKEN_LEN + 1];

	q = xcalloc(1, sizeof *q);
	q->base = base;
	rurl_copy(&q->url, cfg->url);
	/* Never in the clear what was asked over TLS. */
	if (q->url.tls && cfg->tls_ctx == NULL)
		fatal("queue: rediss:// without a TLS context");
	q->tls_ctx = cfg->tls_ctx;
	if (cfg->tls_server_name != NULL)
		q->tls_name = xstrdup(cfg->tls_server_name);
	q->name = xstrdup(cfg->queue);
	q->consumer = xstrdup(cfg->consumer);
	/* Claims made by an earlier life of this name were a dead worker's. */
	token_new(life);
	memcpy(q->life, life, QUEUE_LIFE_LEN);
	log_info("queue: consumer %s, life %s", q->consumer, q->life);
	q->lost_cb = item_lost_template(NULL);
	queue_make_lanes(q, cfg->agents);
	q->k_claim = xstrdup(KS_CLAIM);
	q->k_worker = xstrdup(KS_WORKER);
	q->k_workers = xstrdup(KS_WORKERS);
	q->k_beat = xstrdup(KS_WORKERS_BEAT);
	q->k_running = xstrdup(KS_RUNNING);
	q->k_replies = xstrdup(KS_REPLIES);
	q->claim_idle_ms = cfg->claim_idle_ms;
	q->wait_replicas = cfg->wait_replicas;
	q->timeout_ms = cfg->timeout_ms != 0 ? cfg->timeout_ms :
	    QUEUE_TIMEOUT_MS;
	q->answer_ttl_s = cfg->answer_ttl_s;
	q->max_item_bytes = cfg->max_item_bytes != 0 ? cfg->max_item_bytes :
	    SIZE_MAX;
	q->itemcb = itemcb;
	q->arg = arg;
	TAILQ_INIT(&q->out);
	TAILQ_INIT(&q->held);
	LIST_INIT(&q->tracked);
	queue_conn_init(q, &q->rd, "read", queue_conn_state_cb);
	queue_conn_init(q, &q->wr, "write", queue_conn_state_cb);
	q->ev_read_retry = evtimer_new(base, queue_read_retry_cb, q);
	q->ev_flush = evtimer_new(base, queue_flush_retry_cb, q);
	q->ev_unblock = evtimer_new(base, queue_unblock_retry_cb, q);
	q->ev_ctl = evtimer_new(base, queue_ctl_grace_cb, q);
	q->ev_beat = event_new(base, -1, EV_PERSIST, queue_beat_cb, q);
	q->ev_promote = event_new(base, -1, EV_PERSIST, queue_promote_tick_cb,
	    q);
	queue_shards_init(q);
	if (q->ev_read_retry == NULL || q->ev_flush == NULL ||
	    q->ev_unblock == NULL || q->ev_ctl == NULL || q->ev_beat == NULL ||
	    q->ev_promote == NULL)
		fatal("out of memory (libevent)");
	tv.tv_sec = 1;
	tv.tv_usec = 0;
	event_add(q->ev_promote, &tv);
	beat_ms = q->claim_idle_ms / 3 < 1000 ? 1000 : q->claim_idle_ms / 3;
	q->promote_every = beat_ms / 1000;
	tv.tv_sec = beat_ms / 1000;
	tv.tv_usec = (beat_ms % 1000) * 1000;
	event_add(q->ev_beat, &tv);
	if (cfg->state_dir != NULL)
		queue_spool_open(q, cfg);
	if (q->url.host != NULL && !queue_numeric(q->url.host) &&
	    (q->resolver = syncer_create(base)) == NULL)
		log_warn("queue: no resolver thread (%s): %s is looked up on "
		    "the loop", strerror(errno), q->url.host);
	queue_follow(q);
	queue_connect(&q->rd);
	queue_connect(&q->wr);
	return (q);
}

void
queue_free(struct queue *q)
{
	struct qreq	*req;
	struct qheld	*h;
	struct qtrack	*t;
	int		 i;

	if (q == NULL)
		return;
	q->freeing = 1;
	syncer_free(q->resolver);	/* a lookup under way ends first */
	queue_unfollow(q);
	queue_conn_release(&q->rd);
	queue_conn_release(&q->wr);
	queue_shards_free(q);
	queue_log_unsaved(q);
	spool_close(q->spool);	/* what is not done stays on disk */
	while ((req = TAILQ_FIRST(&q->out)) != NULL) {
		TAILQ_REMOVE(&q->out, req, entry);
		queue_req_free(req);
	}
	while ((h = TAILQ_FIRST(&q->held)) != NULL) {
		TAILQ_REMOVE(&q->held, h, entry);
		free(h->stream);
		free(h->entry_id);
		free(h->body);
		free(h->owner);
		free(h);
	}
	while ((t = LIST_FIRST(&q->tracked)) != NULL) {
		LIST_REMOVE(t, entry);
		free(t->stream);
		free(t->entry_id);
		free(t);
	}
	event_free(q->ev_read_retry);
	event_free(q->ev_flush);
	event_free(q->ev_unblock);
	event_free(q->ev_ctl);
	event_free(q->ev_beat);
	event_free(q->ev_promote);
	free(q->status);
	free(q->lost_cb);
	for (i = 0; i < (int)q->nlanes; i++) {
		free(q->lanes[i].key);
		free(q->lanes[i].owner);
	}
	free(q->lanes);
	free(q->lane_prefix);
	free(q->k_claim);
	free(q->k_worker);
	free(q->k_workers);
	free(q->k_beat);
	free(q->k_running);
	free(q->k_replies);
	cluster_map_release(&q->map);
	for (i = 0; i < QUEUE_RAN_KEEP; i++)
		free(q->ran[i]);
	rurl_release(&q->url);
	rconn_tls_ctx_free(q->tls_ctx);	/* after every connection */
	free(q->tls_name);
	free(q->name);
	free(q->consumer);
	free(q);
}
