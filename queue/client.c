/*
 * The keyspace from the client's side: builds every Redis command a
 * program that is not the worker sends, and sends it synchronously on
 * its rconn (queue/rconn.c: plain or TLS).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "logs/xmalloc.h"
#include "queue/client.h"
#include "queue/cluster.h"
#include "queue/keyspace.h"
#include "queue/rconn.h"
#include "queue/scripts.h"

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

redisReply *
client_whoami(struct rconn *c)
{
	return (rconn_call(c, "ACL WHOAMI"));
}

redisReply *
client_dead_list(struct rconn *c, const char *queue, long count)
{
	redisReply	*r;
	char		*key;

	xasprintf(&key, KS_DEAD_FMT, queue);
	if (count > 0)
		r = rconn_call(c, "XRANGE %s - + COUNT %ld", key, count);
	else
		r = rconn_call(c, "XRANGE %s - +", key);
	free(key);
	return (r);
}

redisReply *
client_dead_requeue(struct rconn *c, const char *queue, const char *entry)
{
	redisReply	*r;
	char		*key;

	xasprintf(&key, KS_DEAD_FMT, queue);
	r = rconn_call(c, "EVAL %s 2 %s " KS_QUEUE "%s:" KS_REQUEUED " %s",
	    queue_requeue_lua, key, queue, entry);
	free(key);
	return (r);
}

redisReply *
client_dead_drop(struct rconn *c, const char *queue, const char *entry)
{
	redisReply	*r;
	char		*key;

	xasprintf(&key, KS_DEAD_FMT, queue);
	r = rconn_call(c, "XDEL %s %s", key, entry);
	free(key);
	return (r);
}

redisReply *
client_item_add(struct rconn *c, const char *stream, const char *json,
    size_t len)
{
	return (rconn_call(c, "XADD %s * item %b", stream, json, len));
}

redisReply *
client_item_add_existing(struct rconn *c, const char *stream,
    const char *json, size_t len)
{
	return (rconn_call(c, "XADD %s NOMKSTREAM * item %b", stream, json,
	    len));
}

redisReply *
client_item_del(struct rconn *c, const char *stream, const char *entry)
{
	return (rconn_call(c, "XDEL %s %s", stream, entry));
}

redisReply *
client_reply_del(struct rconn *c, const char *reply)
{
	redisReply	*r;
	char		*normal, *high;

	xasprintf(&normal, KS_QUEUE_FMT, reply, KS_LANE_NORMAL);
	xasprintf(&high, KS_QUEUE_FMT, reply, KS_LANE_HIGH);
	r = rconn_call(c, "DEL %s %s", normal, high);
	free(normal);
	free(high);
	return (r);
}

redisReply *
client_stream_last(struct rconn *c, const char *stream)
{
	return (rconn_call(c, "XREVRANGE %s + - COUNT 1", stream));
}

redisReply *
client_stream_after(struct rconn *c, const char *stream, const char *after)
{
	redisReply	*r;
	char		*from;

	if (strcmp(after, "0") == 0)
		return (rconn_call(c, "XRANGE %s - +", stream));
	xasprintf(&from, "(%s", after);	/* exclusive: not that entry again */
	r = rconn_call(c, "XRANGE %s %s +", stream, from);
	free(from);
	return (r);
}

redisReply *
client_xread(struct rconn *c, long count, long long block_ms, int n,
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
	r = rconn_call_argv(c, argc, argv, NULL);
	free(argv);
	return (r);
}

redisReply *
client_exists(struct rconn *c, const char *key)
{
	return (rconn_call(c, "EXISTS %s", key));
}

redisReply *
client_session_get(struct rconn *c, const char *id)
{
	return (rconn_call(c, "HGETALL " KS_SESSION "%s", id));
}

redisReply *
client_sessions_newest(struct rconn *c, long count)
{
	char	stop[32];

	snprintf(stop, sizeof stop, "%ld", count - 1);
	return (rconn_call(c, "ZREVRANGE " KS_SESSIONS " 0 %s", stop));
}

redisReply *
client_sessions_count(struct rconn *c)
{
	return (rconn_call(c, "ZCARD " KS_SESSIONS));
}

redisReply *
client_workers_get(struct rconn *c)
{
	return (rconn_call(c, "HGETALL " KS_WORKERS));
}

redisReply *
client_worker_alive(struct rconn *c, const char *consumer)
{
	return (rconn_call(c, "EXISTS " KS_WORKER "%s", consumer));
}

redisReply *
client_workers_del(struct rconn *c, const char *consumer)
{
	return (rconn_call(c, "HDEL " KS_WORKERS " %s", consumer));
}

redisReply *
client_workers_beat_del(struct rconn *c, const char *consumer)
{
	return (rconn_call(c, "ZREM " KS_WORKERS_BEAT " %s", consumer));
}

redisReply *
client_approval_get(struct rconn *c, const char *request)
{
	return (rconn_call(c, "GET " KS_APPROVAL "%s", request));
}

redisReply *
client_approvals_pending(struct rconn *c, long long now_ms)
{
	char	min[32];

	snprintf(min, sizeof min, "%lld", now_ms);
	return (rconn_call(c, "ZRANGEBYSCORE " KS_APPROVALS_PENDING
	    " %s +inf", min));
}

redisReply *
client_decision_add(struct rconn *c, const char *json, size_t len)
{
	return (rconn_call(c, "XADD " KS_DECISIONS " MAXLEN ~ 10000 * "
	    "item %b", json, len));
}

int
client_session_get_append(struct rconn *c, const char *id, size_t len)
{
	return (rconn_append(c, "HGETALL " KS_SESSION "%b", id, len));
}

int
client_worker_alive_append(struct rconn *c, const char *consumer, size_t len)
{
	return (rconn_append(c, "EXISTS " KS_WORKER "%b", consumer, len));
}

redisReply *
client_next_reply(struct rconn *c)
{
	return (rconn_next(c));
}
