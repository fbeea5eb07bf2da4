/*
 * The keyspace from the client's side: builds every Redis command a
 * program that is not the worker sends, names its keys (tagged with
 * their queue on a Redis Cluster) and sends it synchronously to the node
 * serving its key (queue/rconn.c: plain or TLS), following MOVED and ASK.
 */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "logs/xmalloc.h"
#include "queue/backlog.h"
#include "queue/client.h"
#include "queue/cluster.h"
#include "queue/keyspace.h"
#include "queue/rconn.h"
#include "queue/scripts.h"

#define CLIENT_REDIRECTS	5	/* MOVED or ASK, per command */

/* One connection: the first one, or a cluster node's, made when needed. */
struct client_conn {
	char		*host;		/* NULL: the first, on a unix socket */
	int		 port;
	struct rconn	*c;
};

struct client {
	struct client_conn	*conns;		/* [0]: the first */
	size_t			 nconns;
	int			 cluster;	/* INFO cluster said so */
	char			*queue;		/* the home queue: execq:* */
	struct cluster_map	 map;		/* since a MOVED; or empty */
	client_connect_cb	 connect;
	void			*arg;
	struct rconn		*last;		/* the last command's */
	char			 err[256];	/* why the last call failed */
	redisReply		**replies;	/* cluster pipelines: taken in
						   order from head */
	size_t			 nreplies, head;
};

/* One command to send, in either of rconn's forms. */
struct client_cmd {
	const char	*fmt;		/* NULL: argv */
	va_list		*ap;
	int		 argc;
	const char	**argv;
	const size_t	*len;		/* NULL: strlen */
};

redisReply *
client_auth(struct rconn *c, const char *user, const char *password)
{
	if (user != NULL)
		return (rconn_call(c, "AUTH %s %s", user, password));
	return (rconn_call(c, "AUTH %s", password));
}

redisReply *
client_select(struct rconn *c, int db)
{
	char	buf[16];

	snprintf(buf, sizeof buf, "%d", db);
	return (rconn_call(c, "SELECT %s", buf));
}

redisReply *
client_role(struct rconn *c)
{
	return (rconn_call(c, "ROLE"));
}

int
client_cluster_node(struct rconn *c)
{
	redisReply	*r = rconn_call(c, "INFO cluster");
	int		 yes;

	yes = cluster_info_enabled(r);
	if (r != NULL)
		freeReplyObject(r);
	return (yes);
}

redisReply *
client_sentinel_master(struct rconn *c, const char *master)
{
	return (rconn_call(c, "SENTINEL GET-MASTER-ADDR-BY-NAME %s",
	    master));
}

struct client *
client_create(struct rconn *c, const char *host, int port, int cluster,
    const char *queue, client_connect_cb connect, void *arg)
{
	struct client	*cl;

	cl = xcalloc(1, sizeof *cl);
	cl->conns = xcalloc(1, sizeof *cl->conns);
	cl->nconns = 1;
	cl->conns[0].host = host != NULL ? xstrdup(host) : NULL;
	cl->conns[0].port = port;
	cl->conns[0].c = c;
	cl->last = c;
	cl->queue = xstrdup(queue);
	cl->connect = connect;
	cl->arg = arg;
	memset(cl->map.slot, 0xff, sizeof cl->map.slot);
	cl->cluster = cluster;
	return (cl);
}

/* The replies a cluster pipeline holds and nobody took: freed. */
static void
client_replies_clear(struct client *cl)
{
	while (cl->head < cl->nreplies)
		freeReplyObject(cl->replies[cl->head++]);
	free(cl->replies);
	cl->replies = NULL;
	cl->nreplies = cl->head = 0;
}

void
client_free(struct client *cl)
{
	size_t	i;

	if (cl == NULL)
		return;
	client_replies_clear(cl);
	for (i = 0; i < cl->nconns; i++) {
		rconn_free(cl->conns[i].c);
		free(cl->conns[i].host);
	}
	free(cl->conns);
	cluster_map_release(&cl->map);
	free(cl->queue);
	free(cl);
}

int
client_cluster(const struct client *cl)
{
	return (cl->cluster);
}

int
client_up(const struct client *cl)
{
	return (rconn_state(cl->conns[0].c) == RCONN_UP &&
	    rconn_state(cl->last) == RCONN_UP);
}

const char *
client_errstr(const struct client *cl)
{
	return (cl->err);
}

/*
 * key as it is named here: on a cluster, tagged with its queue (a q:
 * key's own, q:<queue>:...; an execq: key's, the home queue's), the one
 * place the client's key names change; else a copy. The caller frees.
 */
static char *
client_key(const struct client *cl, const char *key)
{
	const char	*colon;
	char		*queue, *out;

	if (!cl->cluster)
		return (xstrdup(key));
	if (strncmp(key, KS_QUEUE, 2) != 0 || key[2] == '{' ||
	    (colon = strchr(key + 2, ':')) == NULL)
		return (cluster_tag(key, cl->queue));
	queue = xstrndup(key + 2, (size_t)(colon - key - 2));
	out = cluster_tag(key, queue);
	free(queue);
	return (out);
}

char *
client_lane_key(const struct client *cl, const char *queue,
    const char *lane)
{
	char	*key, *out;

	xasprintf(&key, KS_QUEUE_FMT, queue, lane);
	out = client_key(cl, key);
	free(key);
	return (out);
}

/* q:<queue>:dead, as named here. */
static char *
client_dead_key(const struct client *cl, const char *queue)
{
	char	*key, *out;

	xasprintf(&key, KS_DEAD_FMT, queue);
	out = client_key(cl, key);
	free(key);
	return (out);
}

char *
client_out_key(const struct client *cl, const char *id)
{
	char	*key, *out;

	xasprintf(&key, KS_OUT "%s", id);
	out = client_key(cl, key);
	free(key);
	return (out);
}

/* The connection to host:port, made (and logged in) if new; NULL: err. */
static struct client_conn *
client_node(struct client *cl, const char *host, int port)
{
	struct client_conn	*n;
	char			*why = NULL;
	size_t			 i;

	for (i = 0; i < cl->nconns; i++) {
		n = &cl->conns[i];
		if (n->host == NULL || n->port != port ||
		    strcmp(n->host, host) != 0)
			continue;
		if (i == 0 || (n->c != NULL && rconn_state(n->c) == RCONN_UP))
			return (n);
		rconn_free(n->c);	/* down, or never up: made again */
		n->c = NULL;
		break;
	}
	if (i == cl->nconns) {
		cl->conns = xreallocarray(cl->conns, cl->nconns + 1,
		    sizeof *cl->conns);
		n = &cl->conns[cl->nconns++];
		n->host = xstrdup(host);
		n->port = port;
		n->c = NULL;
	}
	n = &cl->conns[i];
	if ((n->c = cl->connect(host, port, &why, cl->arg)) == NULL) {
		snprintf(cl->err, sizeof cl->err, "cluster node %s:%d: %s",
		    host, port, why != NULL ? why : "cannot connect");
		free(why);
		return (NULL);
	}
	return (n);
}

/* Where a command on key goes: its slot's node if known, else the first. */
static struct client_conn *
client_route(struct client *cl, const char *key)
{
	const struct cluster_node	*node;

	if (!cl->cluster || key == NULL || cl->map.nnodes == 0 ||
	    (node = cluster_map_node(&cl->map,
	    cluster_keyslot(key, strlen(key)))) == NULL)
		return (&cl->conns[0]);
	return (client_node(cl, node->host, node->port));
}

/* After a MOVED: the map again, from the node that said it; else kept. */
static void
client_remap(struct client *cl, struct client_conn *n)
{
	struct cluster_map	 map;
	redisReply		*r;

	r = rconn_call(n->c, "CLUSTER SLOTS");
	if (cluster_map_parse(&map, r, n->host != NULL ? n->host :
	    "127.0.0.1") == 0) {
		cluster_map_release(&cl->map);
		cl->map = map;
	}
	if (r != NULL)
		freeReplyObject(r);
}

/* cmd sent once on n: the reply, or NULL (err said). */
static redisReply *
client_send(struct client *cl, struct client_conn *n,
    const struct client_cmd *cmd)
{
	redisReply	*r;
	va_list		 aq;

	cl->last = n->c;
	if (cmd->fmt != NULL) {
		va_copy(aq, *cmd->ap);
		r = rconn_vcall(n->c, cmd->fmt, aq);
		va_end(aq);
	} else
		r = rconn_call_argv(n->c, cmd->argc, cmd->argv, cmd->len);
	if (r == NULL)
		snprintf(cl->err, sizeof cl->err, "%s", rconn_errstr(n->c));
	return (r);
}

/*
 * cmd to the node serving key (NULL: no key, the first connection),
 * following up to CLIENT_REDIRECTS MOVED (the map asked again, the
 * named node taken) and ASK (ASKING, then the command, on the named
 * node): the reply, or NULL (err).
 */
static redisReply *
client_cmd(struct client *cl, const char *key, const struct client_cmd *cmd)
{
	struct client_conn	*n;
	struct cluster_node	 to;
	redisReply		*r;
	unsigned		 slot;
	int			 ask = 0, hops;

	if ((n = client_route(cl, key)) == NULL)
		return (NULL);
	for (hops = 0;; hops++) {
		if (ask) {
			cl->last = n->c;
			if ((r = rconn_call(n->c, "ASKING")) == NULL) {
				snprintf(cl->err, sizeof cl->err, "%s",
				    rconn_errstr(n->c));
				return (NULL);
			}
			freeReplyObject(r);
		}
		if ((r = client_send(cl, n, cmd)) == NULL || !cl->cluster ||
		    r->type != REDIS_REPLY_ERROR || hops == CLIENT_REDIRECTS ||
		    !cluster_redirect(r->str, &ask, &slot, &to))
			return (r);
		freeReplyObject(r);
		if (!ask)
			client_remap(cl, n);
		if ((n = client_node(cl, to.host, to.port)) == NULL)
			return (NULL);
	}
}

/* client_cmd with hiredis' format. */
static redisReply *
client_call(struct client *cl, const char *key, const char *fmt, ...)
{
	struct client_cmd	 cmd;
	redisReply		*r;
	va_list			 ap;

	memset(&cmd, 0, sizeof cmd);
	va_start(ap, fmt);
	cmd.fmt = fmt;
	cmd.ap = &ap;
	r = client_cmd(cl, key, &cmd);
	va_end(ap);
	return (r);
}

/* client_cmd with an argv. */
static redisReply *
client_call_argv(struct client *cl, const char *key, int argc,
    const char **argv, const size_t *len)
{
	struct client_cmd	cmd;

	memset(&cmd, 0, sizeof cmd);
	cmd.argc = argc;
	cmd.argv = argv;
	cmd.len = len;
	return (client_cmd(cl, key, &cmd));
}

redisReply *
client_whoami(struct client *cl)
{
	return (client_call(cl, NULL, "ACL WHOAMI"));
}

redisReply *
client_dead_list(struct client *cl, const char *queue, long count)
{
	redisReply	*r;
	char		*key;

	key = client_dead_key(cl, queue);
	if (count > 0)
		r = client_call(cl, key, "XRANGE %s - + COUNT %ld", key,
		    count);
	else
		r = client_call(cl, key, "XRANGE %s - +", key);
	free(key);
	return (r);
}

redisReply *
client_dead_requeue(struct client *cl, const char *queue,
    const char *entry)
{
	redisReply	*r;
	char		*key, *marks;

	key = client_dead_key(cl, queue);
	marks = client_lane_key(cl, queue, KS_REQUEUED);
	r = client_call(cl, key, "EVAL %s 2 %s %s %s", queue_requeue_lua, key,
	    marks, entry);
	free(key);
	free(marks);
	return (r);
}

redisReply *
client_dead_drop(struct client *cl, const char *queue, const char *entry)
{
	redisReply	*r;
	char		*key;

	key = client_dead_key(cl, queue);
	r = client_call(cl, key, "XDEL %s %s", key, entry);
	free(key);
	return (r);
}

redisReply *
client_item_add(struct client *cl, const char *stream, const char *json,
    size_t len)
{
	return (client_call(cl, stream, "XADD %s * item %b", stream, json,
	    len));
}

redisReply *
client_item_add_existing(struct client *cl, const char *stream,
    const char *json, size_t len)
{
	return (client_call(cl, stream, "XADD %s NOMKSTREAM * item %b",
	    stream, json, len));
}

redisReply *
client_item_del(struct client *cl, const char *stream, const char *entry)
{
	return (client_call(cl, stream, "XDEL %s %s", stream, entry));
}

redisReply *
client_reply_del(struct client *cl, const char *reply)
{
	redisReply	*r;
	char		*normal, *high;

	normal = client_lane_key(cl, reply, KS_LANE_NORMAL);
	high = client_lane_key(cl, reply, KS_LANE_HIGH);
	r = client_call(cl, normal, "DEL %s %s", normal, high);
	free(normal);
	free(high);
	return (r);
}

redisReply *
client_stream_last(struct client *cl, const char *stream)
{
	return (client_call(cl, stream, "XREVRANGE %s + - COUNT 1", stream));
}

redisReply *
client_stream_after(struct client *cl, const char *stream,
    const char *after)
{
	redisReply	*r;
	char		*from;

	if (strcmp(after, "0") == 0)
		return (client_call(cl, stream, "XRANGE %s - +", stream));
	xasprintf(&from, "(%s", after);	/* exclusive: not that entry again */
	r = client_call(cl, stream, "XRANGE %s %s +", stream, from);
	free(from);
	return (r);
}

redisReply *
client_xread(struct client *cl, long count, long long block_ms, int n,
    const char * const *streams, const char * const *ids)
{
	const char	**argv;
	redisReply	 *r;
	char		  cnt[32], block[32];
	int		  argc = 0, i;

	argv = xcalloc(6 + 2 * (size_t)n, sizeof *argv);
	snprintf(cnt, sizeof cnt, "%ld", count);
	argv[argc++] = "XREAD";
	argv[argc++] = "COUNT";
	argv[argc++] = cnt;
	if (block_ms >= 0) {
		snprintf(block, sizeof block, "%lld", block_ms);
		argv[argc++] = "BLOCK";
		argv[argc++] = block;
	}
	argv[argc++] = "STREAMS";
	for (i = 0; i < n; i++)
		argv[argc++] = streams[i];
	for (i = 0; i < n; i++)
		argv[argc++] = ids[i];
	r = client_call_argv(cl, n > 0 ? streams[0] : NULL, argc, argv,
	    NULL);
	free(argv);
	return (r);
}

redisReply *
client_exists(struct client *cl, const char *key)
{
	return (client_call(cl, key, "EXISTS %s", key));
}

/*
 * The execq: key prefix and name (len bytes, NULs too) joined, as named
 * here; *keylen its length. The caller frees.
 */
static char *
client_named_key(const struct client *cl, const char *prefix,
    const char *name, size_t len, size_t *keylen)
{
	size_t	 plen = strlen(prefix);
	char	*key, *tagged;

	key = xmalloc(plen + len + 1);
	memcpy(key, prefix, plen);
	memcpy(key + plen, name, len);
	key[plen + len] = '\0';
	*keylen = plen + len;
	if (!cl->cluster)
		return (key);
	tagged = client_key(cl, key);	/* a name with a NUL: cut there */
	free(key);
	*keylen = strlen(tagged);
	return (tagged);
}

/* A command on one execq: key, prefix and name (len bytes) joined. */
static redisReply *
client_call_named(struct client *cl, const char *cmd, const char *prefix,
    const char *name, size_t len)
{
	redisReply	*r;
	size_t		 keylen;
	char		*key;

	key = client_named_key(cl, prefix, name, len, &keylen);
	r = client_call(cl, key, "%s %b", cmd, key, keylen);
	free(key);
	return (r);
}

redisReply *
client_session_get(struct client *cl, const char *id)
{
	return (client_call_named(cl, "HGETALL", KS_SESSION, id,
	    strlen(id)));
}

redisReply *
client_sessions_newest(struct client *cl, long count)
{
	redisReply	*r;
	char		 stop[32], *key;

	snprintf(stop, sizeof stop, "%ld", count - 1);
	key = client_key(cl, KS_SESSIONS);
	r = client_call(cl, key, "ZREVRANGE %s 0 %s", key, stop);
	free(key);
	return (r);
}

redisReply *
client_sessions_count(struct client *cl)
{
	return (client_call_named(cl, "ZCARD", KS_SESSIONS, "", 0));
}

redisReply *
client_workers_get(struct client *cl)
{
	return (client_call_named(cl, "HGETALL", KS_WORKERS, "", 0));
}

redisReply *
client_worker_alive(struct client *cl, const char *consumer)
{
	return (client_call_named(cl, "EXISTS", KS_WORKER, consumer,
	    strlen(consumer)));
}

/* A command on one execq: key with one argument more. */
static redisReply *
client_call_key_arg(struct client *cl, const char *cmd, const char *plain,
    const char *arg)
{
	redisReply	*r;
	char		*key;

	key = client_key(cl, plain);
	r = client_call(cl, key, "%s %s %s", cmd, key, arg);
	free(key);
	return (r);
}

redisReply *
client_workers_del(struct client *cl, const char *consumer)
{
	return (client_call_key_arg(cl, "HDEL", KS_WORKERS, consumer));
}

redisReply *
client_workers_beat_del(struct client *cl, const char *consumer)
{
	return (client_call_key_arg(cl, "ZREM", KS_WORKERS_BEAT, consumer));
}

redisReply *
client_approval_get(struct client *cl, const char *request)
{
	return (client_call_named(cl, "GET", KS_APPROVAL, request,
	    strlen(request)));
}

redisReply *
client_approvals_pending(struct client *cl, long long now_ms)
{
	redisReply	*r;
	char		 min[32], *key;

	snprintf(min, sizeof min, "%lld", now_ms);
	key = client_key(cl, KS_APPROVALS_PENDING);
	r = client_call(cl, key, "ZRANGEBYSCORE %s %s +inf", key, min);
	free(key);
	return (r);
}

redisReply *
client_decision_add(struct client *cl, const char *json, size_t len)
{
	redisReply	*r;
	char		*key;

	key = client_key(cl, KS_DECISIONS);
	r = client_call(cl, key, "XADD %s MAXLEN ~ 10000 * item %b", key,
	    json, len);
	free(key);
	return (r);
}

/*
 * A pipelined command on an execq: key. Outside a cluster, appended on
 * the first connection; on a cluster, sent now (a redirect followed) and
 * its reply kept for client_next_reply: a node's pipeline cannot follow
 * a MOVED that comes in the middle of it.
 */
static int
client_append_named(struct client *cl, const char *cmd, const char *prefix,
    const char *name, size_t len)
{
	redisReply	*r;
	size_t		 keylen;
	char		*key;
	int		 rc;

	key = client_named_key(cl, prefix, name, len, &keylen);
	if (!cl->cluster) {
		cl->last = cl->conns[0].c;
		rc = rconn_append(cl->conns[0].c, "%s %b", cmd, key, keylen);
		if (rc == -1)
			snprintf(cl->err, sizeof cl->err, "%s",
			    rconn_errstr(cl->conns[0].c));
		free(key);
		return (rc);
	}
	r = client_call(cl, key, "%s %b", cmd, key, keylen);
	free(key);
	if (r == NULL)
		return (-1);
	cl->replies = xreallocarray(cl->replies, cl->nreplies + 1,
	    sizeof *cl->replies);
	cl->replies[cl->nreplies++] = r;
	return (0);
}

int
client_session_get_append(struct client *cl, const char *id, size_t len)
{
	return (client_append_named(cl, "HGETALL", KS_SESSION, id, len));
}

int
client_worker_alive_append(struct client *cl, const char *consumer,
    size_t len)
{
	return (client_append_named(cl, "EXISTS", KS_WORKER, consumer, len));
}

redisReply *
client_next_reply(struct client *cl)
{
	redisReply	*r;

	if (cl->head < cl->nreplies) {
		r = cl->replies[cl->head++];
		if (cl->head == cl->nreplies)
			client_replies_clear(cl);
		return (r);
	}
	if (cl->cluster) {
		snprintf(cl->err, sizeof cl->err, "no command waits for a "
		    "reply");
		return (NULL);
	}
	if ((r = rconn_next(cl->conns[0].c)) == NULL)
		snprintf(cl->err, sizeof cl->err, "%s",
		    rconn_errstr(cl->conns[0].c));
	return (r);
}

/* The backlog's key of a command: its first q: argument (TIME: none). */
static const char *
client_backlog_key(const struct backlog_cmd *cmd)
{
	int	i;

	for (i = 1; i < cmd->argc; i++)
		if (strncmp(cmd->argv[i], KS_QUEUE, 2) == 0)
			return (cmd->argv[i]);
	return (NULL);
}

/* The backlog's key names as named here (tagged on a cluster). */
static void
client_backlog_names(const struct client *cl, struct backlog *b)
{
	char	*key;
	size_t	 i;

	for (i = 0; i < b->nlanes; i++) {
		key = client_key(cl, b->lanes[i].key);
		free(b->lanes[i].key);
		b->lanes[i].key = key;
	}
	key = client_key(cl, b->delayed_key);
	free(b->delayed_key);
	b->delayed_key = key;
	key = client_key(cl, b->dead_key);
	free(b->dead_key);
	b->dead_key = key;
}

int
client_backlog_read(struct client *cl, struct backlog *b)
{
	struct backlog_cmd	 cmd;
	redisReply		*r;
	size_t			 i, n;
	int			 round;

	if (!cl->cluster) {
		cl->last = cl->conns[0].c;
		if (backlog_read_sync(b, cl->conns[0].c) == 0)
			return (0);
		snprintf(cl->err, sizeof cl->err, "%s",
		    rconn_errstr(cl->conns[0].c));
		return (-1);
	}
	/* One command at a time, each routed: a redirect followed. */
	client_backlog_names(cl, b);
	backlog_begin(b);
	for (round = 0; round < 2; round++) {
		n = backlog_ncommands(b, round);
		for (i = 0; i < n; i++) {
			backlog_command(b, round, i, &cmd);
			if ((r = client_call_argv(cl, client_backlog_key(&cmd),
			    cmd.argc, cmd.argv, cmd.len)) == NULL)
				return (-1);
			backlog_record(b, round, i, r);
			freeReplyObject(r);
		}
	}
	return (0);
}
