/*
 * The keyspace from the client's side: builds every Redis command a
 * program that is not the worker sends, and sends it synchronously.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "logs/xmalloc.h"
#include "queue/client.h"
#include "queue/keyspace.h"

redisReply *
client_auth(redisContext *c, const char *user, const char *password)
{
	if (user != NULL)
		return (redisCommand(c, "AUTH %s %s", user, password));
	return (redisCommand(c, "AUTH %s", password));
}

redisReply *
client_select(redisContext *c, int db)
{
	char	buf[16];

	snprintf(buf, sizeof buf, "%d", db);
	return (redisCommand(c, "SELECT %s", buf));
}

redisReply *
client_role(redisContext *c)
{
	return (redisCommand(c, "ROLE"));
}

redisReply *
client_sentinel_master(redisContext *c, const char *master)
{
	return (redisCommand(c, "SENTINEL GET-MASTER-ADDR-BY-NAME %s",
	    master));
}

redisReply *
client_whoami(redisContext *c)
{
	return (redisCommand(c, "ACL WHOAMI"));
}

redisReply *
client_item_add(redisContext *c, const char *stream, const char *json,
    size_t len)
{
	return (redisCommand(c, "XADD %s * item %b", stream, json, len));
}

redisReply *
client_item_del(redisContext *c, const char *stream, const char *entry)
{
	return (redisCommand(c, "XDEL %s %s", stream, entry));
}

redisReply *
client_reply_del(redisContext *c, const char *reply)
{
	redisReply	*r;
	char		*normal, *high;

	xasprintf(&normal, KS_QUEUE_FMT, reply, KS_LANE_NORMAL);
	xasprintf(&high, KS_QUEUE_FMT, reply, KS_LANE_HIGH);
	r = redisCommand(c, "DEL %s %s", normal, high);
	free(normal);
	free(high);
	return (r);
}

redisReply *
client_stream_last(redisContext *c, const char *stream)
{
	return (redisCommand(c, "XREVRANGE %s + - COUNT 1", stream));
}

redisReply *
client_stream_after(redisContext *c, const char *stream, const char *after)
{
	redisReply	*r;
	char		*from;

	if (strcmp(after, "0") == 0)
		return (redisCommand(c, "XRANGE %s - +", stream));
	xasprintf(&from, "(%s", after);	/* exclusive: not that entry again */
	r = redisCommand(c, "XRANGE %s %s +", stream, from);
	free(from);
	return (r);
}

redisReply *
client_xread(redisContext *c, long count, long long block_ms, int n,
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
	r = redisCommandArgv(c, argc, argv, NULL);
	free(argv);
	return (r);
}

redisReply *
client_exists(redisContext *c, const char *key)
{
	return (redisCommand(c, "EXISTS %s", key));
}

redisReply *
client_session_get(redisContext *c, const char *id)
{
	return (redisCommand(c, "HGETALL " KS_SESSION "%s", id));
}

redisReply *
client_sessions_newest(redisContext *c, long count)
{
	char	stop[32];

	snprintf(stop, sizeof stop, "%ld", count - 1);
	return (redisCommand(c, "ZREVRANGE " KS_SESSIONS " 0 %s", stop));
}

redisReply *
client_workers_get(redisContext *c)
{
	return (redisCommand(c, "HGETALL " KS_WORKERS));
}

redisReply *
client_worker_alive(redisContext *c, const char *consumer)
{
	return (redisCommand(c, "EXISTS " KS_WORKER "%s", consumer));
}

redisReply *
client_workers_del(redisContext *c, const char *consumer)
{
	return (redisCommand(c, "HDEL " KS_WORKERS " %s", consumer));
}

redisReply *
client_workers_beat_del(redisContext *c, const char *consumer)
{
	return (redisCommand(c, "ZREM " KS_WORKERS_BEAT " %s", consumer));
}

redisReply *
client_approval_get(redisContext *c, const char *request)
{
	return (redisCommand(c, "GET " KS_APPROVAL "%s", request));
}

redisReply *
client_approvals_pending(redisContext *c, long long now_ms)
{
	char	min[32];

	snprintf(min, sizeof min, "%lld", now_ms);
	return (redisCommand(c, "ZRANGEBYSCORE " KS_APPROVALS_PENDING
	    " %s +inf", min));
}

redisReply *
client_decision_add(redisContext *c, const char *json, size_t len)
{
	return (redisCommand(c, "XADD " KS_DECISIONS " MAXLEN ~ 10000 * "
	    "item %b", json, len));
}

int
client_session_get_append(redisContext *c, const char *id, size_t len)
{
	return (redisAppendCommand(c, "HGETALL " KS_SESSION "%b", id,
	    len) == REDIS_OK ? 0 : -1);
}

int
client_worker_alive_append(redisContext *c, const char *consumer, size_t len)
{
	return (redisAppendCommand(c, "EXISTS " KS_WORKER "%b", consumer,
	    len) == REDIS_OK ? 0 : -1);
}

redisReply *
client_next_reply(redisContext *c)
{
	void	*r;

	if (redisGetReply(c, &r) != REDIS_OK)
		return (NULL);
	return (r);
}
