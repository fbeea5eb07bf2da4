#ifndef EXECQ_CLIENT_H
#define EXECQ_CLIENT_H

/*
 * The keyspace from the side of a program that is not the worker (the
 * client, execq): every Redis command it sends is built here, with the
 * key names of queue/keyspace.h, and sent on a synchronous rconn
 * (queue/rconn.h: rconn_connect with no event_base; plain or TLS).
 *
 * Each function returns what rconn_call returns: the reply (the caller's
 * to freeReplyObject, an error reply included), or NULL when the
 * connection failed (rconn_errstr says why; it stays down). Strings are
 * borrowed. Nothing here prints: the caller says what failed, and reads
 * the reply.
 */

#include <stddef.h>

struct rconn;
struct redisReply;

/* The login: AUTH [user] password (user may be NULL); SELECT db. */
struct redisReply *client_auth(struct rconn *, const char *user,
	    const char *password);
struct redisReply *client_select(struct rconn *, int db);
/* ROLE: ["master", ...] on the primary. */
struct redisReply *client_role(struct rconn *);
/* 1 if the server is a node of a Redis Cluster (INFO cluster), else 0. */
int		 client_cluster_node(struct rconn *);
/* SENTINEL GET-MASTER-ADDR-BY-NAME master, on a sentinel: [ip, port]. */
struct redisReply *client_sentinel_master(struct rconn *,
	    const char *master);
/* ACL WHOAMI: the Redis user this connection is. */
struct redisReply *client_whoami(struct rconn *);

/* The dead letters of queue (q:<queue>:dead). */
/* XRANGE: the oldest count letters (count 0: all). */
struct redisReply *client_dead_list(struct rconn *, const char *queue,
	    long count);
/* The requeue script: 1, or 0 / -1 (queue/scripts.c says). */
struct redisReply *client_dead_requeue(struct rconn *, const char *queue,
	    const char *entry);
/* XDEL: 1 if it was there. */
struct redisReply *client_dead_drop(struct rconn *, const char *queue,
	    const char *entry);

/* Streams. */
/* XADD stream * item <json>: an item, or a PROCESS item, to a queue. */
struct redisReply *client_item_add(struct rconn *, const char *stream,
	    const char *json, size_t len);
/* ... only to a stream that exists (NOMKSTREAM): else nil. */
struct redisReply *client_item_add_existing(struct rconn *,
	    const char *stream, const char *json, size_t len);
/* XDEL stream entry: withdraws an item nobody read. */
struct redisReply *client_item_del(struct rconn *, const char *stream,
	    const char *entry);
/* DEL q:<reply>:normal q:<reply>:high: a private reply queue. */
struct redisReply *client_reply_del(struct rconn *,
	    const char *reply);
/* XREVRANGE stream + - COUNT 1: its newest entry. */
struct redisReply *client_stream_last(struct rconn *,
	    const char *stream);
/* XRANGE stream (<after> +: the entries after id after; "0": - +. */
struct redisReply *client_stream_after(struct rconn *,
	    const char *stream, const char *after);
/*
 * XREAD COUNT count [BLOCK block_ms] STREAMS streams... ids...: n streams,
 * each read after its id. block_ms < 0: no BLOCK (0 would block forever).
 */
struct redisReply *client_xread(struct rconn *, long count,
	    long long block_ms, int n, const char * const *streams,
	    const char * const *ids);
/* EXISTS key: the live output stream of a session, say. */
struct redisReply *client_exists(struct rconn *, const char *key);

/* Sessions. */
/* HGETALL execq:session:<id>. */
struct redisReply *client_session_get(struct rconn *, const char *id);
/* ZREVRANGE execq:sessions 0 count-1: the newest session ids. */
struct redisReply *client_sessions_newest(struct rconn *, long count);
/* ZCARD execq:sessions: how many the index holds. */
struct redisReply *client_sessions_count(struct rconn *);

/* Workers. */
/* HGETALL execq:workers: the registry. */
struct redisReply *client_workers_get(struct rconn *);
/* EXISTS execq:worker:<consumer>: 1 while the worker's lease lives. */
struct redisReply *client_worker_alive(struct rconn *,
	    const char *consumer);
/* HDEL execq:workers <consumer>; ZREM execq:workers:beat <consumer>. */
struct redisReply *client_workers_del(struct rconn *,
	    const char *consumer);
struct redisReply *client_workers_beat_del(struct rconn *,
	    const char *consumer);

/* Approvals. */
/* GET execq:approval:<request>: the request's record. */
struct redisReply *client_approval_get(struct rconn *,
	    const char *request);
/* ZRANGEBYSCORE execq:approvals:pending <now_ms> +inf: ids not expired. */
struct redisReply *client_approvals_pending(struct rconn *,
	    long long now_ms);
/* XADD execq:decisions MAXLEN ~ 10000 * item <json>: APPROVE, REJECT. */
struct redisReply *client_decision_add(struct rconn *,
	    const char *json, size_t len);

/*
 * Pipelines: each _append queues its command (as the function of the same
 * name without it would send it) without waiting, 0 or -1 (the
 * connection is down); client_next_reply then gives the replies in
 * order, each as above (NULL: the connection failed, or no command
 * waits for a reply).
 */
int	 client_session_get_append(struct rconn *, const char *id,
	    size_t len);
int	 client_worker_alive_append(struct rconn *,
	    const char *consumer, size_t len);
struct redisReply *client_next_reply(struct rconn *);

#endif
