/* Redis Cluster: replies for other shards, delivered once from pending. */

/*
 * In cluster mode an answer's reply stream is another queue's, most often
 * on another shard, which the answer script cannot write (one script,
 * one slot). The script puts the reply in the queue's pending replies
 * (KS_REPLIES: a hash, mark -> "<reply stream>\n<json>") in the same step
 * as it acknowledges the item; here every worker of the queue sweeps that
 * hash and delivers each reply to its stream's primary, with a script
 * that adds it only if its mark was not left there before
 * (q:{<reply queue>}:sent:<mark>, SET NX, kept answer_ttl_s), then
 * deletes it from pending. A crash anywhere leaves the reply pending for
 * the next sweep (this worker's or another's); a delivery made twice
 * finds the mark and adds nothing: each reply once. With
 * redis_wait_replicas, a delivered reply leaves pending only once the
 * stream's replicas have it (WAIT on the link, after the script): its
 * shard's failover cannot take back a reply no longer kept here. A link
 * lost (its node killed, maybe for good) makes the sweep read the map
 * again before it tries that shard anew.
 *
 * A sweep runs after an answer that left a reply pending, when the write
 * connection comes up, after the lost-session check found some, and each
 * beat. One at a time: asked again meanwhile, it goes again when done.
 * Connections to other nodes ("links") are made when first needed, logged
 * in as ours are, and made again when next needed after a loss.
 */

#include <sys/queue.h>

#include <netinet/in.h>

#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <hiredis/hiredis.h>

#include "logs/log.h"
#include "logs/xmalloc.h"
#include "queue/cluster.h"
#include "queue/keyspace.h"
#include "queue/queue_int.h"
#include "queue/scripts.h"

#define QUEUE_SWEEP_COUNT	"128"	/* pending replies an HSCAN asks */
#define QUEUE_SWEEP_RETRY_MS	500	/* after a failed delivery, */
#define QUEUE_SWEEP_RETRY_MAX_MS 30000	/* doubling up to this */

struct qdeliver;

/* A connection to another node (or our own: every reply goes this way). */
struct qlink {
	LIST_ENTRY(qlink)	 entry;
	struct qshards		*s;
	struct cluster_node	 node;
	struct rconn		*rc;		/* NULL: none now */
	int			 warned;	/* its loss said, once */
	int			 short_said;	/* too few replicas, said */
	LIST_HEAD(, qdeliver)	 batch;		/* this round's, for a WAIT */
};

struct qshards {
	struct queue		*q;
	LIST_HEAD(, qlink)	 links;
	int			 sweeping;	/* an HSCAN or deliveries out */
	int			 again;		/* asked for while sweeping */
	int			 failed;	/* this round: try again later */
	int			 stale;		/* the map: read it again first */
	unsigned		 out;		/* deliveries waiting */
	char			*cursor;	/* the HSCAN's; "0": a new pass */
	char			**done;		/* this round's delivered marks:
						   one HDEL at its end */
	size_t			 ndone;
	struct event		*ev_later;
	unsigned long long	 delivered;
	unsigned		 retry_ms;	/* failed rounds in a row: the
						   next one's delay; 0: none */
};

/* One delivery on its way. */
struct qdeliver {
	LIST_ENTRY(qdeliver)	 entry;		/* in its link's batch */
	struct qshards		*s;
	char			*mark;
	int			 ok;		/* the node took it, or had
						   it */
	long long		 added;		/* 1: took it now */
	int			 waits;		/* in a batch: the WAIT ends
						   it */
};

static void	queue_sweep(struct qshards *);

/* The link's rconn said up or down: down, it goes (made again later). */
static void
queue_shard_link_cb(struct rconn *rc, int up, void *arg)
{
	struct qlink	*l = arg;

	if (up) {
		l->warned = 0;
		return;
	}
	if (!l->warned)
		log_warn("queue: redis node %s:%d (replies): %s", l->node.host,
		    l->node.port, rconn_errstr(rc)[0] != '\0' ?
		    rconn_errstr(rc) : "connection lost");
	l->warned = 1;
	if (l->rc == rc)
		l->rc = NULL;
	rconn_free(rc);		/* the memory goes when its frame ends */
}

/* The link to node, connected (or connecting) and logged in; NULL. */
static struct rconn *
queue_shard_link(struct qshards *s, const struct cluster_node *node)
{
	struct queue	*q = s->q;
	struct qlink	*l;

	LIST_FOREACH(l, &s->links, entry)
		if (l->node.port == node->port &&
		    strcmp(l->node.host, node->host) == 0)
			break;
	if (l == NULL) {
		l = xcalloc(1, sizeof *l);
		l->s = s;
		l->node = *node;
		LIST_INIT(&l->batch);
		LIST_INSERT_HEAD(&s->links, l, entry);
	}
	if (l->rc != NULL)
		return (l->rc);
	l->rc = rconn_connect_host(q->base, node->host, node->port,
	    q->tls_ctx, q->tls_name != NULL ? q->tls_name : q->url.host,
	    queue_shard_link_cb, l);
	if (l->rc == NULL)
		return (NULL);
	rconn_set_timeout(l->rc, (int)q->timeout_ms, (int)q->timeout_ms);
	/* Sent as it connects; a refused login fails the deliveries. */
	queue_login(q, l->rc, NULL, NULL);
	return (l->rc);
}

/* The round's delivered replies leave pending: one HDEL for them all. */
static void
queue_sweep_clear(struct qshards *s)
{
	struct queue	*q = s->q;
	const char	**argv;
	size_t		 i;

	if (s->ndone == 0)
		return;
	if (!q->freeing && q->wr.up) {
		argv = xcalloc(s->ndone + 2, sizeof *argv);
		argv[0] = "HDEL";
		argv[1] = q->k_replies;
		for (i = 0; i < s->ndone; i++)
			argv[i + 2] = s->done[i];
		/* Lost: the next sweep finds them, and their marks. */
		(void)rconn_command_argv(q->wr.rc, NULL, NULL,
		    (int)s->ndone + 2, argv, NULL);
		free(argv);
	}
	for (i = 0; i < s->ndone; i++)
		free(s->done[i]);
	free(s->done);
	s->done = NULL;
	s->ndone = 0;
}

/* A round of the sweep is over: the next, now or later. */
static void
queue_sweep_done(struct qshards *s)
{
	struct timeval	tv = { 0, QUEUE_SWEEP_RETRY_MS * 1000 };

	s->sweeping = 0;
	queue_sweep_clear(s);
	if (s->failed) {
		/* A node that refuses (a login, WRONGTYPE) is not hammered:
		   0.5 s, doubling to 30 s, said once a streak. */
		s->failed = 0;
		s->retry_ms = s->retry_ms == 0 ? QUEUE_SWEEP_RETRY_MS :
		    s->retry_ms * 2;
		if (s->retry_ms > QUEUE_SWEEP_RETRY_MAX_MS)
			s->retry_ms = QUEUE_SWEEP_RETRY_MAX_MS;
		tv.tv_sec = s->retry_ms / 1000;
		tv.tv_usec = (s->retry_ms % 1000) * 1000;
		free(s->cursor);
		s->cursor = NULL;
		evtimer_add(s->ev_later, &tv);
		return;
	}
	s->retry_ms = 0;
	if ((s->cursor != NULL && strcmp(s->cursor, "0") != 0) || s->again) {
		if (s->cursor != NULL && strcmp(s->cursor, "0") == 0) {
			free(s->cursor);
			s->cursor = NULL;
		}
		s->again = 0;
		queue_sweep(s);
		return;
	}
	free(s->cursor);
	s->cursor = NULL;
}

/*
 * A delivery is over: the reply stream's node took the reply (or had it,
 * its mark there), and with redis_wait_replicas its replicas have it
 * too: it is no longer pending. Else it stays for the next round.
 */
static void
queue_deliver_end(struct qdeliver *d)
{
	struct qshards	*s = d->s;
	struct queue	*q = s->q;

	if (d->ok) {
		s->done = xreallocarray(s->done, s->ndone + 1,
		    sizeof *s->done);
		s->done[s->ndone++] = d->mark;	/* cleared with the round */
		d->mark = NULL;
		s->delivered += (unsigned long long)d->added;
	} else
		s->failed = 1;
	free(d->mark);
	free(d);
	if (q->freeing)
		return;
	if (--s->out == 0 && s->sweeping)
		queue_sweep_done(s);
}

/* The delivery script's answer: added (1) or had it (0), or not. */
static void
queue_deliver_cb(struct rconn *rc, redisReply *reply, void *arg)
{
	struct qdeliver	*d = arg;
	struct qshards	*s = d->s;
	struct queue	*q = s->q;
	struct cluster_node node;
	unsigned	 slot;
	int		 ask;

	(void)rc;
	if (reply != NULL && reply->type == REDIS_REPLY_INTEGER) {
		d->ok = 1;
		d->added = reply->integer;
	} else if (reply == NULL) {
		/*
		 * No reply: the link is lost, the node maybe gone for good
		 * (killed, its replica promoted). Only a new map says where
		 * the stream lives now: read it before the next try.
		 */
		s->stale = 1;
	} else if (reply->type == REDIS_REPLY_ERROR) {
		if (cluster_redirect(reply->str, &ask, &slot, &node))
			s->stale = 1;	/* the map moved on */
		else if (!q->freeing && s->retry_ms == 0)
			log_warn("queue: redis: delivering reply %s: %s "
			    "(kept, and tried again)", d->mark, reply->str);
	}
	if (!d->waits)
		queue_deliver_end(d);
}

/*
 * WAIT's answer, after a round's deliveries to a link (redis_wait_replicas):
 * once the reply stream's replicas have them, a failover of its shard
 * cannot take them back, and they may leave the pending replies. Too few
 * within QUEUE_WAIT_MS: they count anyway, as the outbox's writes do
 * (said once for the node, whose next WAITs wait 1 ms until it has them
 * again: a new primary after a failover has none yet); no answer: they
 * stay pending, and a delivery made again finds its mark if the node
 * kept it. The scripts' answers came first, on the same link.
 */
static void
queue_deliver_wait_cb(struct rconn *rc, redisReply *reply, void *arg)
{
	struct qlink	*l = arg;
	struct queue	*q = l->s->q;
	struct qdeliver	*d;

	(void)rc;
	if (reply == NULL)
		l->s->stale = 1;
	else if (!q->freeing && (reply->type != REDIS_REPLY_INTEGER ||
	    reply->integer < (long long)q->wait_replicas)) {
		if (!l->short_said)
			log_warn("queue: redis node %s:%d (replies): %lld of "
			    "%u replicas confirmed delivered replies within %d "
			    "ms: going on without them (a failover now may "
			    "lose them)", l->node.host, l->node.port,
			    reply->type == REDIS_REPLY_INTEGER ?
			    reply->integer : 0, q->wait_replicas,
			    QUEUE_WAIT_MS);
		l->short_said = 1;
	} else
		l->short_said = 0;
	while ((d = LIST_FIRST(&l->batch)) != NULL) {
		LIST_REMOVE(d, entry);
		if (reply == NULL)
			d->ok = 0;
		queue_deliver_end(d);
	}
}

/* After a round's deliveries: one WAIT on each link that took some. */
static void
queue_deliver_waits(struct qshards *s)
{
	struct queue	*q = s->q;
	struct qlink	*l;
	struct qdeliver	*d;

	LIST_FOREACH(l, &s->links, entry) {
		if (LIST_EMPTY(&l->batch))
			continue;
		if (l->rc != NULL && rconn_command(l->rc,
		    queue_deliver_wait_cb, l, "WAIT %u %d", q->wait_replicas,
		    l->short_said ? 1 : QUEUE_WAIT_MS) == 0) {
			rconn_flush(l->rc);
			continue;
		}
		/* Not sent: each ends with its script's answer. */
		while ((d = LIST_FIRST(&l->batch)) != NULL) {
			LIST_REMOVE(d, entry);
			d->waits = 0;
		}
	}
}

/* Sends one pending reply ("<stream>\n<json>") to its stream's node. */
static void
queue_deliver(struct qshards *s, const redisReply *mark,
    const redisReply *value)
{
	struct queue			*q = s->q;
	const struct cluster_node	*node;
	struct qdeliver			*d;
	struct qlink			*l;
	struct rconn			*rc;
	const char			*nl, *close;
	char				*stream, *sent;
	char				 ttl[16];

	if (mark->type != REDIS_REPLY_STRING ||
	    value->type != REDIS_REPLY_STRING ||
	    (nl = memchr(value->str, '\n', value->len)) == NULL) {
		log_warn("queue: redis: a pending reply that is not one: "
		    "left in %s", q->k_replies);
		return;
	}
	stream = xstrndup(value->str, (size_t)(nl - value->str));
	node = cluster_map_node(&q->map,
	    cluster_keyslot(stream, strlen(stream)));
	if (node == NULL || (close = strchr(stream, '}')) == NULL) {
		s->stale = 1;
		s->failed = 1;
		free(stream);
		return;
	}
	/* The mark, beside the stream: q:{<queue>}:sent:<mark>. */
	xasprintf(&sent, "%.*s:" KS_SENT "%s", (int)(close + 1 - stream),
	    stream, mark->str);
	snprintf(ttl, sizeof ttl, "%u", q->answer_ttl_s);
	d = xcalloc(1, sizeof *d);
	d->s = s;
	d->mark = xstrdup(mark->str);
	if ((rc = queue_shard_link(s, node)) == NULL ||
	    rconn_command(rc, queue_deliver_cb, d, "EVAL %s 2 %s %s %s %b %s",
	    queue_deliver_lua, stream, sent, QUEUE_REPLY_MAXLEN, nl + 1,
	    value->len - (size_t)(nl + 1 - value->str), ttl) == -1) {
		s->failed = 1;
		free(d->mark);
		free(d);
	} else {
		s->out++;
		if (q->wait_replicas > 0) {	/* queue_deliver_waits */
			l = rconn_arg(rc);
			d->waits = 1;
			LIST_INSERT_HEAD(&l->batch, d, entry);
		}
		rconn_flush(rc);
	}
	free(sent);
	free(stream);
}

/* HSCAN's answer: each pending reply goes to its shard. */
static void
queue_sweep_scan_cb(struct rconn *rc, redisReply *reply, void *arg)
{
	struct qshards	*s = arg;
	const redisReply *list;
	size_t		 i;

	(void)rc;
	if (s->q->freeing)
		return;
	if (reply == NULL || reply->type != REDIS_REPLY_ARRAY ||
	    reply->elements != 2 ||
	    reply->element[0]->type != REDIS_REPLY_STRING ||
	    reply->element[1]->type != REDIS_REPLY_ARRAY) {
		if (reply != NULL && reply->type == REDIS_REPLY_ERROR)
			log_warn("queue: redis: HSCAN %s: %s", s->q->k_replies,
			    reply->str);
		s->failed = 1;
		queue_sweep_done(s);
		return;
	}
	free(s->cursor);
	s->cursor = xstrdup(reply->element[0]->str);
	list = reply->element[1];
	s->out++;		/* none completes the round meanwhile */
	for (i = 0; i + 1 < list->elements; i += 2)
		queue_deliver(s, list->element[i], list->element[i + 1]);
	if (s->q->wait_replicas > 0)
		queue_deliver_waits(s);
	if (--s->out == 0)
		queue_sweep_done(s);
}

/* CLUSTER SLOTS's answer, for a sweep that found the map stale. */
static void
queue_sweep_slots_cb(struct rconn *rc, redisReply *reply, void *arg)
{
	struct qshards		*s = arg;
	struct queue		*q = s->q;

	(void)rc;
	if (q->freeing)
		return;
	if (queue_map_set(q, reply, q->wr.at) == -1) {
		s->failed = 1;
		queue_sweep_done(s);
		return;
	}
	s->stale = 0;
	s->sweeping = 0;
	queue_sweep(s);
}

/* One round: the map if stale, then the next HSCAN page. */
static void
queue_sweep(struct qshards *s)
{
	struct queue	*q = s->q;
	int		 rc;

	if (!q->cluster || !q->wr.up || q->freeing)
		return;
	if (s->sweeping) {
		s->again = 1;
		return;
	}
	s->sweeping = 1;
	if (s->stale)
		rc = rconn_command(q->wr.rc, queue_sweep_slots_cb, s,
		    "CLUSTER SLOTS");
	else
		rc = rconn_command(q->wr.rc, queue_sweep_scan_cb, s,
		    "HSCAN %s %s COUNT " QUEUE_SWEEP_COUNT, q->k_replies,
		    s->cursor != NULL ? s->cursor : "0");
	if (rc == -1)
		s->sweeping = 0;	/* the connection's back: swept then */
	else
		queue_kick(&q->wr);
}

/* ev_sweep: a reply may be pending (outbox.c, queue.c say so). */
static void
queue_sweep_cb(evutil_socket_t fd, short what, void *arg)
{
	struct queue	*q = arg;

	(void)fd;
	(void)what;
	queue_sweep(q->shards);
}

static void
queue_sweep_later_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	queue_sweep(arg);
}

void
queue_shards_init(struct queue *q)
{
	struct qshards	*s;

	s = xcalloc(1, sizeof *s);
	s->q = q;
	LIST_INIT(&s->links);
	s->ev_later = evtimer_new(q->base, queue_sweep_later_cb, s);
	q->ev_sweep = event_new(q->base, -1, 0, queue_sweep_cb, q);
	if (s->ev_later == NULL || q->ev_sweep == NULL)
		fatal("out of memory (libevent)");
	q->shards = s;
}

void
queue_shards_free(struct queue *q)
{
	struct qshards	*s = q->shards;
	struct qlink	*l;

	if (s == NULL)
		return;
	while ((l = LIST_FIRST(&s->links)) != NULL) {
		LIST_REMOVE(l, entry);
		if (l->rc != NULL)
			rconn_free(l->rc);	/* pending: NULL replies */
		free(l);
	}
	event_free(s->ev_later);
	event_free(q->ev_sweep);
	queue_sweep_clear(s);	/* q->freeing: only freed */
	free(s->cursor);
	free(s);
	q->shards = NULL;
}

unsigned long long
queue_shards_delivered(const struct queue *q)
{
	return (q->shards != NULL ? q->shards->delivered : 0);
}
