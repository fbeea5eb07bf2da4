/*
 * The two Redis connections: connect, resolve, reconnect with backoff,
 * and the setup every new connection gets (AUTH, SELECT; on the read
 * side CLIENT ID, the version check and the consumer groups). A login
 * (AUTH, or a PING when there is no password) comes first; a refused
 * one is tried again after 1 s doubling to 60 s, said once when it
 * starts and once when it ends, and the first login is followed by a
 * probe without AUTH that finds out whether anyone could have come in
 * without a password: a rconn of its own to the same address, over TLS
 * with the same SSL_CTX and name when the connection is. The bottom of
 * the queue module: it calls nothing above it. What a connection
 * coming up or going down means (reading, flushing the outbox, spooling
 * it, announcing ourselves) is its owner's business, so conn.c tells it
 * through a callback that queue.c sets (queue_conn_init): the event is
 * queue/rconn.c's, on its stack, and a callback is how the layer below
 * reports a fact to the one above without knowing it.
 *
 * Each connection is a struct rconn (queue/rconn.c): a unix socket, TCP,
 * or TLS for rediss:// with the queue's one SSL_CTX, the URL's host its
 * SNI and the name its certificate must carry. It tells conn.c through
 * one state callback (queue_link_cb) that it came up or went down; a
 * connection that went down is freed there and made again with backoff.
 *
 * A connection that Redis stops answering is noticed: TCP ones get
 * keepalive probes (a half-open connection while idle), and every
 * connection a stall timer (a command outstanding longer than the
 * timeout: dropped and made again, the outbox resends what Redis did not
 * confirm). When Redis last sent anything is the rconn's to say
 * (rconn_last_read_ms).
 */

#include <sys/queue.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>
#include <hiredis/hiredis.h>

#include "logs/clock.h"
#include "logs/log.h"
#include "logs/syncer.h"
#include "logs/xmalloc.h"
#include "queue/cluster.h"
#include "queue/keyspace.h"
#include "queue/queue.h"
#include "queue/queue_int.h"
#include "queue/rconn.h"
#include "queue/rurl.h"
#include "queue/sentinel.h"
#include "queue/spool.h"

/*
 * Writes what is queued on c now instead of after the next epoll round:
 * one round trip less per command on the hot path. rconn_flush calls no
 * callback (a write error waits for the loop), so it is safe anywhere.
 */
void
queue_kick(struct qconn *c)
{
	if (c->up && c->rc != NULL)
		rconn_flush(c->rc);
}

/* Schedules a reconnect with exponential backoff. */
static void
queue_retry_later(struct qconn *c)
{
	struct timeval	tv;

	if (c->q->freeing)
		return;
	c->backoff_ms = c->backoff_ms == 0 ? QUEUE_BACKOFF_MIN_MS :
	    c->backoff_ms * 2;
	if (c->backoff_ms > QUEUE_BACKOFF_MAX_MS)
		c->backoff_ms = QUEUE_BACKOFF_MAX_MS;
	if (c->cluster_ms > c->auth_ms) {
		tv.tv_sec = c->cluster_ms / 1000;
		tv.tv_usec = 0;
	} else {
		tv.tv_sec = (c->auth_ms != 0 ? c->auth_ms : c->backoff_ms) /
		    1000;
		tv.tv_usec = (c->auth_ms != 0 ? 0 : c->backoff_ms % 1000) *
		    1000;
	}
	evtimer_add(c->ev_retry, &tv);
}

/* The reconnect timer. */
static void
queue_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	queue_connect(arg);
}

/* Any reply on a connection's setup commands: errors are logged. */
static void
queue_setup_cb(struct rconn *rc, redisReply *reply, void *arg)
{
	struct qconn	*c = arg;

	if (reply != NULL && c->rc == rc)
		c->stalled = 0;		/* Redis speaks */
	if (reply != NULL && reply->type == REDIS_REPLY_ERROR &&
	    strncmp(reply->str, "BUSYGROUP", 9) != 0) {
		log_warn("queue: redis %s: %s", c->name, reply->str);
		if (strstr(reply->str, "AUTH") != NULL ||
		    strstr(reply->str, "WRONGPASS") != NULL ||
		    strstr(reply->str, "NOPERM") != NULL)
			rconn_disconnect(rc, "refused");
	}
}

/* Creates the consumer group on every lane (BUSYGROUP is fine). */
void
queue_create_groups(struct queue *q)
{
	unsigned	i;

	for (i = 0; i < q->nlanes; i++)
		rconn_command(q->rd.rc, queue_setup_cb, &q->rd,
		    "XGROUP CREATE %s " QUEUE_GROUP " 0 MKSTREAM",
		    q->lanes[i].key);
}

/* The read connection's id, to unblock it from the other one. */
static void
queue_client_id_cb(struct rconn *rc, redisReply *reply, void *arg)
{
	struct queue	*q = arg;

	(void)rc;
	if (reply != NULL && reply->type == REDIS_REPLY_INTEGER)
		q->rd_client_id = reply->integer;
	else if (reply != NULL && reply->type == REDIS_REPLY_ERROR)
		log_warn("queue: CLIENT ID: %s (new work waits for the read "
		    "timeout when all slots were busy)", reply->str);
}

/*
 * The server's version: the fetch script carries flags (Redis 7.0), and
 * takeover is XAUTOCLAIM (6.2). An older Redis refuses every fetch with
 * a compile error; say why once, plainly. A user without INFO (an ACL)
 * is not checked.
 */
static void
queue_version_cb(struct rconn *rc, redisReply *reply, void *arg)
{
	const char	*v;
	int		 major;

	(void)rc;
	(void)arg;
	if (reply == NULL || reply->type != REDIS_REPLY_STRING)
		return;
	if ((v = strstr(reply->str, "redis_version:")) == NULL ||
	    sscanf(v + 14, "%d", &major) != 1 || major >= 7)
		return;
	log_warn("queue: this Redis is %.*s: execq needs Redis 7.0 or later "
	    "(script flags); no item will be taken", (int)strcspn(v + 14,
	    "\r\n"), v + 14);
}

static void	queue_role_check(struct qconn *);

enum queue_door
queue_door(const struct queue *q)
{
	return (q->door);
}

/* The probe's answer: PONG without a password, or NOAUTH. */
static void
queue_door_cb(struct rconn *rc, redisReply *reply, void *arg)
{
	struct queue	*q = arg;
	char		*shown;

	if (reply == NULL)
		return;		/* gone, or freed with the queue */
	q->door = reply->type == REDIS_REPLY_ERROR ? QUEUE_DOOR_LOCKED :
	    QUEUE_DOOR_OPEN;
	rconn_disconnect(rc, "probe done");	/* queue_door_gone_cb */
	if (q->door != QUEUE_DOOR_OPEN)
		return;
	shown = rurl_display(&q->url);
	log_warn("queue: redis at %s lets ANYONE in WITHOUT A PASSWORD "
	    "(its default user needs none): whatever reaches it, a command "
	    "with the network grant too, can read tokens and output and "
	    "forge items and approvals; turn the default user off "
	    "(docs/CONFIG.md, \"Redis users\")", shown);
	free(shown);
}

/*
 * The probe's connection ended (or never came up: a refused certificate
 * among others, the door then unknown and asked at the next login): it
 * goes. Up, nothing to do: its PING is queued already.
 */
static void
queue_door_gone_cb(struct rconn *rc, int up, void *arg)
{
	struct qconn	*c = arg;

	if (up)
		return;
	if (c->probe == rc)
		c->probe = NULL;
	rconn_free(rc);		/* the memory goes when its frame ends */
}

/*
 * The name c's connection sent as SNI and checked in the certificate:
 * redis_tls_server_name, else the host it was made to (the primary's
 * name for a sentinel URL). Plain and unix connections ignore it.
 */
static const char *
queue_conn_tls_name(const struct qconn *c)
{
	const struct queue	*q = c->q;

	if (q->tls_name != NULL)
		return (q->tls_name);
	return (q->url.master != NULL ? c->primary : q->url.host);
}

/*
 * Once: does this Redis (this node) let in a client with no password?
 * The probe goes where c's connection went (its peer's address, the
 * same socket path), over TLS with the same SSL_CTX and name when c's
 * does: it never says anything in the clear that c would not.
 */
static void
queue_door_probe(struct qconn *c)
{
	struct queue		*q = c->q;
	struct sockaddr_storage	 ss;
	socklen_t		 len = sizeof ss;
	char			*shown;
	int			 fd;

	if (q->door != QUEUE_DOOR_UNKNOWN || c->probe != NULL)
		return;
	if (q->url.password == NULL) {
		q->door = QUEUE_DOOR_OPEN;	/* we just did */
		shown = rurl_display(&q->url);
		log_warn("queue: redis at %s lets ANYONE in WITHOUT A "
		    "PASSWORD (this worker gives none): whatever reaches "
		    "it, a command with the network grant too, can read "
		    "tokens and output and forge items and approvals; give "
		    "it ACL users (docs/CONFIG.md, \"Redis users\")", shown);
		free(shown);
		return;
	}
	if (q->url.path != NULL)
		c->probe = rconn_connect_unix(q->base, q->url.path,
		    queue_door_gone_cb, c);
	else {
		if ((fd = rconn_fd(c->rc)) == -1 || getpeername(fd,
		    (struct sockaddr *)&ss, &len) == -1)
			return;		/* unknown: asked at the next login */
		c->probe = rconn_connect(q->base, (struct sockaddr *)&ss, len,
		    q->tls_ctx, queue_conn_tls_name(c), queue_door_gone_cb, c);
	}
	if (c->probe == NULL)
		return;
	rconn_set_timeout(c->probe, (int)q->timeout_ms, (int)q->timeout_ms);
	rconn_command(c->probe, queue_door_cb, q, "PING");
}

/*
 * The login's answer: SELECT, then ROLE. Refused (WRONGPASS, NOAUTH, a
 * user that is off): said once, then tried again after 1 s, 2 s... 60 s,
 * in silence, until it works; no secret is in Redis's message or ours.
 */
static void
queue_login_cb(struct rconn *rc, redisReply *reply, void *arg)
{
	struct qconn	*c = arg;
	struct rurl	*u = &c->q->url;
	char		 db[16];

	if (reply == NULL || c->q->freeing || c->rc != rc)
		return;		/* lost: queue_link_cb says so */
	c->stalled = 0;		/* Redis speaks */
	if (reply->type != REDIS_REPLY_ERROR) {
		if (c->auth_ms != 0)
			log_info("queue: redis %s: login accepted", c->name);
		c->auth_ms = 0;
		if (u->db != 0) {
			snprintf(db, sizeof db, "%d", u->db);
			rconn_command(rc, queue_setup_cb, c, "SELECT %s", db);
		}
		queue_role_check(c);
		return;
	}
	if (c->auth_ms == 0)
		log_warn("queue: redis %s: login %s%s refused: %s; trying "
		    "again in %d s, then doubling up to %d s, quietly, until "
		    "it works", c->name, u->password == NULL ?
		    "without a password" : "as user ", u->password == NULL ?
		    "" : u->user != NULL ? u->user : "default", reply->str,
		    QUEUE_AUTH_BACKOFF_MIN_MS / 1000,
		    QUEUE_AUTH_BACKOFF_MAX_MS / 1000);
	c->auth_ms = c->auth_ms == 0 ? QUEUE_AUTH_BACKOFF_MIN_MS :
	    c->auth_ms * 2;
	if (c->auth_ms > QUEUE_AUTH_BACKOFF_MAX_MS)
		c->auth_ms = QUEUE_AUTH_BACKOFF_MAX_MS;
	rconn_disconnect(rc, "login refused");	/* queue_link_cb: again */
}

void
queue_login(struct queue *q, struct rconn *rc, rconn_reply_cb cb, void *arg)
{
	if (q->url.password != NULL && q->url.user != NULL)
		rconn_command(rc, cb, arg, "AUTH %s %s", q->url.user,
		    q->url.password);
	else if (q->url.password != NULL)
		rconn_command(rc, cb, arg, "AUTH %s", q->url.password);
	else
		rconn_command(rc, cb, arg, "PING");
}

/* AUTH, or PING without a password: first on every new connection. */
static void
queue_hello(struct qconn *c)
{
	queue_login(c->q, c->rc, queue_login_cb, c);
}

/* ROLE's first element: "master", "slave", "sentinel"; NULL if odd. */
static const char *
queue_role_name(const redisReply *reply)
{
	if (reply == NULL || reply->type != REDIS_REPLY_ARRAY ||
	    reply->elements < 1 ||
	    reply->element[0]->type != REDIS_REPLY_STRING)
		return (NULL);
	return (reply->element[0]->str);
}

static void	queue_conn_ready(struct qconn *);
static void	queue_cluster_cb(struct rconn *, redisReply *, void *);

/*
 * ROLE (at connect, and every beat) counted n replicas of the primary:
 * too few, and writes count without them from now (no WAIT that could
 * only time out: a new primary after a failover has none yet); enough,
 * and they count once the replicas have them again.
 */
void
queue_replicas_seen(struct queue *q, long long n)
{
	if (q->wait_replicas == 0)
		return;
	if (n >= (long long)q->wait_replicas && q->unreplicated) {
		log_info("queue: redis: %lld replica(s): writes count once "
		    "they have them again", n);
		q->unreplicated = 0;
	} else if (n < (long long)q->wait_replicas && !q->unreplicated) {
		log_warn("queue: redis: the primary has %lld of the %u "
		    "replicas to wait for: going on without them until they "
		    "are back (a failover now may lose what it confirms)", n,
		    q->wait_replicas);
		q->unreplicated = 1;
	}
}

/*
 * ROLE's answer on a new connection: the primary comes up; anything else
 * (a replica, a sentinel) is refused, and the next attempt asks the
 * sentinels again. A user that may not run ROLE (an ACL without it) is
 * let in, once said: READONLY and +switch-master still move it.
 */
static void
queue_role_cb(struct rconn *rc, redisReply *reply, void *arg)
{
	struct qconn	*c = arg;
	const char	*role;

	if (reply == NULL || c->q->freeing || c->rc != rc)
		return;		/* gone already */
	c->stalled = 0;		/* Redis speaks */
	if (reply->type == REDIS_REPLY_ERROR &&
	    strncmp(reply->str, "NOPERM", 6) == 0) {
		if (!c->ever_up)
			log_warn("queue: redis %s: ROLE: %s (the node's role "
			    "is not checked: allow +role to this user)",
			    c->name, reply->str);
		queue_conn_ready(c);
		return;
	}
	if (reply->type == REDIS_REPLY_ERROR) {
		log_warn("queue: redis %s: ROLE: %s", c->name, reply->str);
		rconn_disconnect(rc, "ROLE refused");
		return;
	}
	if ((role = queue_role_name(reply)) != NULL &&
	    strcmp(role, "master") == 0) {
		c->q->replica = 0;
		if (c == &c->q->wr && reply->elements >= 3 &&
		    reply->element[2]->type == REDIS_REPLY_ARRAY)
			queue_replicas_seen(c->q,
			    (long long)reply->element[2]->elements);
		rconn_command(rc, queue_cluster_cb, c, "INFO cluster");
		return;
	}
	c->q->replica = 1;		/* /healthz: redis_replica */
	if (!c->refused)
		log_warn("queue: redis %s: the node is a %s, not the primary: "
		    "not used (asking again)", c->name, role != NULL ? role :
		    "(unknown role)");
	c->refused = 1;
	rconn_disconnect(rc, "not the primary");
}

/* Renames one key of ours for cluster mode (cluster_tag). */
static void
queue_tag_field(struct queue *q, char **key)
{
	char	*tagged = cluster_tag(*key, q->name);

	free(*key);
	*key = tagged;
}

/*
 * The first node that says it is a cluster's: from now every key of ours
 * carries the queue's name as its hash tag (cluster_tag). Nothing was
 * sent yet on either connection (this runs before the first one comes
 * up), so no callback holds an old name; the outbox renames what waits
 * in it as it sends (queue_req_tag).
 */
static void
queue_cluster_on(struct queue *q)
{
	unsigned	i;

	q->cluster = 1;
	q->slot = cluster_keyslot(q->name, strlen(q->name));
	queue_tag_field(q, &q->lane_prefix);
	for (i = 0; i < q->nlanes; i++)
		queue_tag_field(q, &q->lanes[i].key);
	queue_tag_field(q, &q->k_claim);
	queue_tag_field(q, &q->k_worker);
	queue_tag_field(q, &q->k_workers);
	queue_tag_field(q, &q->k_beat);
	queue_tag_field(q, &q->k_running);
	queue_tag_field(q, &q->k_replies);
	log_info("queue: redis is a Redis Cluster: every key of queue %s "
	    "carries the hash tag {%s} (slot %u): %sNAME", q->name, q->name,
	    q->slot, q->lane_prefix);
}

/* 1 if node is the one c is connected to. */
static int
queue_conn_at(const struct qconn *c, const struct cluster_node *node)
{
	return (node->port == c->at_port && strcmp(node->host, c->at) == 0);
}

int
queue_map_set(struct queue *q, const redisReply *reply, const char *host)
{
	struct cluster_map	map;

	memset(&map, 0, sizeof map);
	if (reply == NULL || cluster_map_parse(&map, reply, host) == -1)
		return (-1);
	cluster_map_release(&q->map);
	q->map = map;
	return (0);
}

/*
 * CLUSTER SLOTS's answer: the map, kept (shard.c routes replies with
 * it). The node that serves the queue's slot is the one both connections
 * use: this one is ready, or left for that one.
 */
static void
queue_slots_cb(struct rconn *rc, redisReply *reply, void *arg)
{
	struct qconn			*c = arg;
	struct queue			*q = c->q;
	const struct cluster_node	*node;

	if (reply == NULL || q->freeing || c->rc != rc)
		return;
	if (queue_map_set(q, reply, c->at) == -1) {
		log_warn("queue: redis %s: CLUSTER SLOTS: %s", c->name,
		    reply->type == REDIS_REPLY_ERROR ? reply->str :
		    "not a slot map");
		rconn_disconnect(rc, "no slot map");
		return;
	}
	if ((node = cluster_map_node(&q->map, q->slot)) == NULL) {
		log_warn("queue: redis %s: no node serves slot %u of queue "
		    "%s (the cluster is down?): asking again", c->name,
		    q->slot, q->name);
		rconn_disconnect(rc, "slot not served");
		return;
	}
	if (queue_conn_at(c, node)) {
		c->cluster_ms = 0;
		queue_conn_ready(c);
		return;
	}
	log_info("queue: redis %s: slot %u of queue %s is served by %s:%d: "
	    "moving there", c->name, q->slot, q->name, node->host, node->port);
	snprintf(c->primary, sizeof c->primary, "%s", node->host);
	c->primary_port = node->port;
	c->backoff_ms = 0;
	rconn_disconnect(rc, "not the slot's node");
}

/*
 * INFO cluster's answer, on a primary: a node of a Redis Cluster turns
 * cluster mode on (queue_cluster_on) and asks where the queue's slot is
 * (queue_slots_cb). A user without +info is let in as on one Redis.
 */
static void
queue_cluster_cb(struct rconn *rc, redisReply *reply, void *arg)
{
	struct qconn	*c = arg;

	if (reply == NULL || c->q->freeing || c->rc != rc)
		return;
	if (!cluster_info_enabled(reply)) {
		if (c->q->cluster)
			log_warn("queue: redis %s: this node is not a "
			    "cluster's, but an earlier one was: the keys keep "
			    "their cluster names", c->name);
		queue_conn_ready(c);
		return;
	}
	if (!c->q->cluster)
		queue_cluster_on(c->q);
	rconn_command(rc, queue_slots_cb, c, "CLUSTER SLOTS");
}

/* Asks the node its role; queue_role_cb decides. */
static void
queue_role_check(struct qconn *c)
{
	rconn_command(c->rc, queue_role_cb, c, "ROLE");
}

/* The heartbeat's ROLE: a primary that became a replica is left. */
static void
queue_role_beat_cb(struct rconn *rc, redisReply *reply, void *arg)
{
	struct queue	*q = arg;
	const char	*role;

	(void)rc;
	if (reply == NULL || q->freeing || reply->type == REDIS_REPLY_ERROR)
		return;
	if ((role = queue_role_name(reply)) != NULL &&
	    strcmp(role, "master") != 0) {
		if (!q->replica)
			log_warn("queue: redis is a %s, not a primary: it takes "
			    "no writes", role);
		q->replica = 1;
		queue_conn_switch(q, "the primary became a replica");
	} else if (role != NULL) {
		q->replica = 0;
		/* ROLE of a master: its replicas are the third element. */
		if (reply->elements >= 3 &&
		    reply->element[2]->type == REDIS_REPLY_ARRAY)
			queue_replicas_seen(q,
			    (long long)reply->element[2]->elements);
	}
}

void
queue_role_beat(struct queue *q)
{
	if (q->wr.up && q->wr.rc != NULL)
		rconn_command(q->wr.rc, queue_role_beat_cb, q, "ROLE");
}

/* Drops a connection, from an event of its own (queue_conn_switch). */
static void
queue_drop_cb(evutil_socket_t fd, short what, void *arg)
{
	struct qconn	*c = arg;
	struct rconn	*rc = c->rc;

	(void)fd;
	(void)what;
	if (rc == NULL || c->q->freeing)
		return;		/* asking, or waiting to: anew either way */
	if (!c->linked) {
		c->rc = NULL;	/* no state callback for this one */
		rconn_free(rc);
		queue_retry_later(c);
		return;
	}
	/* queue_link_cb: down, freed, reconnect */
	rconn_disconnect(rc, "leaving this node");
}

void
queue_conn_switch(struct queue *q, const char *why)
{
	if (q->freeing)
		return;
	log_warn("queue: redis: %s: leaving this node, finding the primary",
	    why);
	q->rd.primary_port = q->wr.primary_port = 0;
	event_active(q->rd.ev_drop, EV_TIMEOUT, 1);
	event_active(q->wr.ev_drop, EV_TIMEOUT, 1);
}

int
queue_readonly(struct queue *q, const void *r)
{
	const redisReply	*reply = r;
	struct cluster_node	 node;
	unsigned		 slot;
	int			 ask;

	if (reply == NULL || reply->type != REDIS_REPLY_ERROR)
		return (0);
	if (q->cluster && cluster_redirect(reply->str, &ask, &slot, &node) &&
	    !ask) {
		/* The queue's slot moved (a failover, resharding). */
		if (q->freeing)
			return (1);
		log_warn("queue: redis: %s: following the queue's slot there",
		    reply->str);
		snprintf(q->rd.primary, sizeof q->rd.primary, "%s", node.host);
		snprintf(q->wr.primary, sizeof q->wr.primary, "%s", node.host);
		q->rd.primary_port = q->wr.primary_port = node.port;
		event_active(q->rd.ev_drop, EV_TIMEOUT, 1);
		event_active(q->wr.ev_drop, EV_TIMEOUT, 1);
		return (1);
	}
	if (strstr(reply->str, "READONLY") == NULL)
		return (0);
	queue_conn_switch(q, reply->str);
	return (1);
}

/* The sentinels' +switch-master for our master. */
static void
queue_switch_cb(const char *host, int port, void *arg)
{
	struct queue	*q = arg;
	char		 why[320];

	snprintf(why, sizeof why, "the sentinels moved the primary to %s:%d",
	    host, port);
	queue_conn_switch(q, why);
}

void
queue_follow(struct queue *q)
{
	if (q->url.master != NULL)
		q->watch = sentinel_watch(q->base, &q->url, queue_switch_cb, q);
}

void
queue_unfollow(struct queue *q)
{
	sentinel_watch_free(q->watch);
	q->watch = NULL;
}

/* The sentinels' answer: connect to the primary, or try again later. */
static void
queue_found_cb(const char *host, int port, const char *why, void *arg)
{
	struct qconn	*c = arg;

	c->ask = NULL;		/* freed by sentinel.c after this call */
	if (c->q->freeing)
		return;
	if (host == NULL) {
		log_warn("queue: redis %s: no sentinel knows master %s (%s)",
		    c->name, c->q->url.master, why);
		queue_retry_later(c);
		return;
	}
	if (strlen(host) >= sizeof c->primary) {
		queue_retry_later(c);
		return;
	}
	memcpy(c->primary, host, strlen(host) + 1);
	c->primary_port = port;
	queue_connect(c);
}

/*
 * The node is the primary (ROLE said so): the connection is up. Nothing
 * of ours went to it before: a replica, or a primary since demoted, gets
 * no write.
 */
static void
queue_conn_ready(struct qconn *c)
{
	log_info("queue: redis %s connection up", c->name);
	c->up = 1;
	c->up_ms = clock_mono_ms();
	c->refused = 0;
	if (c->ever_up)
		c->q->reconnects++;
	c->ever_up = 1;
	c->backoff_ms = 0;
	if (c == &c->q->rd) {
		rconn_command(c->rc, queue_client_id_cb, c->q, "CLIENT ID");
		rconn_command(c->rc, queue_version_cb, c->q, "INFO server");
		queue_create_groups(c->q);
		queue_door_probe(c);
	}
	c->cb(c, 1);
}

/*
 * The rconn's word. Up (connected, TLS handshake done): the login's
 * answer goes on (queue_login_cb: SELECT, then ROLE). Down: everything
 * pending got a NULL reply already; the rconn is freed and made again
 * later. A connection that never came up failed to connect (a refused
 * certificate among others: said); one that did is lost, and the owner
 * hears of it (a refused login said so already: not again).
 */
static void
queue_link_cb(struct rconn *rc, int up, void *arg)
{
	struct qconn	*c = arg;
	int		 linked = c->linked, was_up = c->up;

	if (up) {
		c->linked = 1;	/* the login's answer goes on */
		return;
	}
	c->missed = !linked;
	if (!linked)
		log_warn("queue: redis %s: connect: %s", c->name,
		    rconn_errstr(rc));
	else if (c->primary_port != 0 && c->q->cluster)
		log_debug("queue: redis %s: left for the slot's node",
		    c->name);	/* queue_slots_cb said where */
	else if (was_up || c->auth_ms == 0)	/* a refused login said so */
		log_warn("queue: redis %s connection lost%s%s", c->name,
		    rconn_errstr(rc)[0] != '\0' ? ": " : "",
		    rconn_errstr(rc));
	c->rc = NULL;
	c->linked = 0;
	c->up = 0;
	rconn_free(rc);		/* the memory goes when its frame ends */
	if (c->q->freeing)
		return;
	if (linked)
		c->cb(c, 0);
	queue_retry_later(c);
}

/* On the resolver's thread: the host's first address, as text. */
static int
queue_resolve_work(void *arg)
{
	struct qconn	*c = arg;
	struct addrinfo	 hints, *res;
	int		 rc;

	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if ((rc = getaddrinfo(c->q->url.host, NULL, &hints, &res)) != 0) {
		c->gai_error = gai_strerror(rc);
		return (EHOSTUNREACH);
	}
	if (res->ai_family == AF_INET6)
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)
		    (void *)res->ai_addr)->sin6_addr, c->addr, sizeof c->addr);
	else
		inet_ntop(AF_INET, &((struct sockaddr_in *)
		    (void *)res->ai_addr)->sin_addr, c->addr, sizeof c->addr);
	freeaddrinfo(res);
	return (0);
}

/* Back on the loop with the address: connect to it. */
static void
queue_resolved_cb(int err, void *arg)
{
	struct qconn	*c = arg;

	c->resolving = 0;
	if (c->q->freeing)
		return;
	if (err != 0) {
		log_warn("queue: redis %s: cannot resolve %s: %s", c->name,
		    c->q->url.host, c->gai_error);
		queue_retry_later(c);
		return;
	}
	queue_connect(c);
}

/* 1 if host is an address already (no lookup). */
int
queue_numeric(const char *host)
{
	unsigned char	buf[sizeof(struct in6_addr)];

	return (inet_pton(AF_INET, host, buf) == 1 ||
	    inet_pton(AF_INET6, host, buf) == 1);
}

/* When Redis last sent anything on c's connection; 0: nothing yet. */
static long long
queue_conn_heard(const struct qconn *c)
{
	return (c->rc != NULL ? rconn_last_read_ms(c->rc) : 0);
}

/*
 * How long c has waited for Redis now: since its oldest command went out
 * or Redis last sent anything, whichever is later, and, unless it was
 * dropped for a stall, not before it connected. 0 when nothing waits.
 */
long long
queue_conn_wait(const struct qconn *c, long long now)
{
	long long	since, heard = queue_conn_heard(c);

	if (!c->up || c->busy_ms == 0)
		return (0);
	since = c->busy_ms > heard ? c->busy_ms : heard;
	if (!c->stalled && c->up_ms > since)
		since = c->up_ms;
	return (now - since);
}

/* The longest wait that is not a stall: the blocking read's BLOCK more. */
long long
queue_conn_limit(const struct qconn *c)
{
	return (c->q->timeout_ms + (c == &c->q->rd ? atoi(QUEUE_BLOCK_MS) : 0));
}

/*
 * Every second: a command Redis has not answered within the timeout means
 * the connection is stuck (Redis paused or gone without a word): it is
 * dropped (every pending callback gets NULL, the outbox resends) and made
 * again. Dropped for a stall, c stays "stalled" until Redis says anything.
 */
static void
queue_stall_cb(evutil_socket_t fd, short what, void *arg)
{
	struct qconn	*c = arg;
	long long	 now = clock_mono_ms(), since, heard;

	(void)fd;
	(void)what;
	if (!c->up || c->rc == NULL || c->q->freeing)
		return;
	if (rconn_pending(c->rc) == 0) {
		c->busy_ms = 0;
		return;
	}
	if (c->busy_ms == 0)
		c->busy_ms = now;
	heard = queue_conn_heard(c);
	since = c->busy_ms > heard ? c->busy_ms : heard;
	if (c->up_ms > since)
		since = c->up_ms;
	if (now - since < queue_conn_limit(c))
		return;
	log_warn("queue: redis %s: no answer for %lld ms: dropping the "
	    "connection", c->name, now - since);
	c->stalled = 1;
	/* queue_link_cb: down (the owner told), freed, reconnect */
	rconn_disconnect(c->rc, "no answer: dropped");
}

/*
 * Watches a new connection: keepalive on a TCP socket (idle 5 s, then a
 * probe every 2 s, 3 missed: a half-open connection is found in about
 * 11 s), and a deadline on connecting (the TLS handshake included): the
 * command timeout.
 */
static void
queue_conn_watch(struct qconn *c)
{
	int	fd = rconn_fd(c->rc), on = 1, idle = 5, intvl = 2, cnt = 3;

	rconn_set_timeout(c->rc, (int)c->q->timeout_ms, 0);
	if (c->q->url.path == NULL && fd != -1 && (setsockopt(fd, SOL_SOCKET,
	    SO_KEEPALIVE, &on, sizeof on) == -1 || setsockopt(fd, IPPROTO_TCP,
	    TCP_KEEPIDLE, &idle, sizeof idle) == -1 || setsockopt(fd,
	    IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl) == -1 ||
	    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt) == -1))
		log_warn("queue: redis %s: keepalive: %s", c->name,
		    strerror(errno));
}

/*
 * Starts connecting c; failures come back through the callbacks. A host
 * name is looked up first on the resolver's thread, on every attempt (a
 * failover may move it), so a slow DNS never stops the loop.
 */
void
queue_connect(struct qconn *c)
{
	struct queue			*q = c->q;
	const struct cluster_node	*node;

	if (q->url.master != NULL && c->primary_port == 0) {
		/* Sentinel: where is the primary now? */
		if (c->ask == NULL)
			c->ask = sentinel_ask(q->base, &q->url, 0,
			    queue_found_cb, c);
		return;
	}
	if (q->url.path == NULL && q->resolver != NULL && !c->resolving &&
	    c->addr[0] == '\0') {
		c->resolving = 1;
		syncer_call(q->resolver, queue_resolve_work, queue_resolved_cb,
		    c);
		return;
	}
	if (q->cluster && c->primary_port == 0 && c->missed &&
	    q->map.nnodes > 0) {
		/* The node we knew failed: ask the next one of the map. */
		node = &q->map.nodes[q->map_next++ % q->map.nnodes];
		snprintf(c->primary, sizeof c->primary, "%s", node->host);
		c->primary_port = node->port;
	}
	c->linked = 0;
	if (q->url.path != NULL) {
		c->rc = rconn_connect_unix(q->base, q->url.path, queue_link_cb,
		    c);
		snprintf(c->at, sizeof c->at, "%s", q->url.path);
		c->at_port = 0;
	} else if (c->primary_port != 0) {
		/* The sentinels' primary, or the node of our slot. */
		c->rc = rconn_connect_host(q->base, c->primary,
		    c->primary_port, q->tls_ctx, queue_conn_tls_name(c),
		    queue_link_cb, c);
		snprintf(c->at, sizeof c->at, "%s", c->primary);
		c->at_port = c->primary_port;
	} else {
		snprintf(c->at, sizeof c->at, "%s", c->addr[0] != '\0' ?
		    c->addr : q->url.host);
		c->at_port = q->url.port;
		c->rc = rconn_connect_host(q->base, c->at, c->at_port,
		    q->tls_ctx, queue_conn_tls_name(c), queue_link_cb, c);
	}
	c->addr[0] = '\0';	/* looked up again next time */
	c->primary_port = 0;	/* ... and asked again */
	if (c->rc == NULL) {
		log_warn("queue: redis %s: %s", c->name, strerror(errno));
		queue_retry_later(c);
		return;
	}
	queue_conn_watch(c);
	queue_hello(c);
}

/* Sets up one connection's state. */
void
queue_conn_init(struct queue *q, struct qconn *c, const char *name,
    queue_conn_cb cb)
{
	struct timeval	tv = { 1, 0 };

	c->q = q;
	c->name = name;
	c->cb = cb;
	c->ev_retry = evtimer_new(q->base, queue_retry_cb, c);
	c->ev_drop = event_new(q->base, -1, 0, queue_drop_cb, c);
	c->ev_stall = event_new(q->base, -1, EV_PERSIST, queue_stall_cb, c);
	if (c->ev_retry == NULL || c->ev_drop == NULL || c->ev_stall == NULL)
		fatal("out of memory (libevent)");
	event_add(c->ev_stall, &tv);
}

/* Closes a connection; its pending callbacks see NULL replies. */
void
queue_conn_release(struct qconn *c)
{
	struct rconn	*rc = c->rc;

	sentinel_ask_free(c->ask);
	c->ask = NULL;
	c->rc = NULL;
	c->up = 0;
	rconn_free(rc);		/* NULL ok; no state callback */
	rc = c->probe;
	c->probe = NULL;
	rconn_free(rc);		/* its PING's callback gets NULL */
	if (c->ev_drop != NULL)
		event_free(c->ev_drop);
	c->ev_drop = NULL;
	if (c->ev_retry != NULL)
		event_free(c->ev_retry);
	c->ev_retry = NULL;
	if (c->ev_stall != NULL)
		event_free(c->ev_stall);
	c->ev_stall = NULL;
}
