#ifndef EXECQ_CLIENT_H
#define EXECQ_CLIENT_H

/*
 * The keyspace from the side of a program that is not the worker (the
 * client, execq): every Redis command it sends is built here, with the
 * key names of queue/keyspace.h, and sent through a struct client (below)
 * on synchronous rconns (queue/rconn.h: no event_base; plain or TLS).
 *
 * Strings are borrowed. Nothing here prints: the caller says what failed,
 * and reads the reply. The login's functions (client_auth ... sentinel)
 * work on one rconn, and return what rconn_call returns (NULL: the
 * connection failed, rconn_errstr).
 */

#include <stddef.h>

struct backlog;
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
/*
 * The client: the first connection (logged in), and on a Redis Cluster
 * the nodes' connections, each made (by connect, logged in like the
 * first) when a key of its slots is first used. Every command goes to
 * the node serving its key, learnt from MOVED (the map then asked again
 * with CLUSTER SLOTS, the named node taken) and ASK (ASKING, then the
 * command, on the named node), at most 5 redirects a command.
 *
 * Key names: outside a cluster, those of queue/keyspace.h byte for byte;
 * on a cluster, each tagged with its queue (queue/cluster.h, cluster_tag):
 * q:{<queue>}:..., and execq:{<home>}:... for every execq: key, home
 * being the queue given here: one queue lives in one slot. The client
 * names them all here; a caller that needs a name (to XREAD it) asks
 * client_lane_key or client_out_key.
 */
struct client;

/*
 * A new connection to host:port (a cluster node), up and logged in as
 * the first one (AUTH, TLS settings; no SELECT): owned by the client
 * now. NULL with *why (allocated) if it could not be made.
 */
typedef struct rconn *(*client_connect_cb)(const char *host, int port,
    char **why, void *arg);

/*
 * Takes c (up, logged in; host NULL on a unix socket); cluster: 1 if it
 * is a cluster's node (client_cluster_node), connect then used to reach
 * the others (else never). Sends nothing. Never NULL.
 */
struct client	*client_create(struct rconn *c, const char *host, int port,
		    int cluster, const char *queue, client_connect_cb,
		    void *arg);
void		 client_free(struct client *);		/* NULL ok */
/* 1 if the server is a Redis Cluster's node. */
int		 client_cluster(const struct client *);
/* 1 while the first connection and the last one used are up. */
int		 client_up(const struct client *);
/* Why the last command that returned NULL failed. */
const char	*client_errstr(const struct client *);
/* q:<queue>:<lane> and execq:out:<id>, as named here (to free). */
char		*client_lane_key(const struct client *, const char *queue,
		    const char *lane);
char		*client_out_key(const struct client *, const char *id);

/*
 * Each function below returns what rconn_call returns: the reply (the
 * caller's to freeReplyObject, an error reply included), or NULL when
 * the connection failed (client_errstr says why).
 */

/* ACL WHOAMI: the Redis user this client is. */
struct redisReply *client_whoami(struct client *);

/* The dead letters of queue (q:<queue>:dead). */
/* XRANGE: the oldest count letters (count 0: all). */
struct redisReply *client_dead_list(struct client *, const char *queue,
	    long count);
/* The requeue script: 1, or 0 / -1 (queue/scripts.c says). */
struct redisReply *client_dead_requeue(struct client *, const char *queue,
	    const char *entry);
/* XDEL: 1 if it was there. */
struct redisReply *client_dead_drop(struct client *, const char *queue,
	    const char *entry);

/* Streams. */
/* XADD stream * item <json>: an item, or a PROCESS item, to a queue. */
struct redisReply *client_item_add(struct client *, const char *stream,
	    const char *json, size_t len);
/* ... only to a stream that exists (NOMKSTREAM): else nil. */
struct redisReply *client_item_add_existing(struct client *,
	    const char *stream, const char *json, size_t len);
/* XDEL stream entry: withdraws an item nobody read. */
struct redisReply *client_item_del(struct client *, const char *stream,
	    const char *entry);
/* DEL q:<reply>:normal q:<reply>:high: a private reply queue. */
struct redisReply *client_reply_del(struct client *,
	    const char *reply);
/* XREVRANGE stream + - COUNT 1: its newest entry. */
struct redisReply *client_stream_last(struct client *,
	    const char *stream);
/* XRANGE stream (<after> +: the entries after id after; "0": - +. */
struct redisReply *client_stream_after(struct client *,
	    const char *stream, const char *after);
/*
 * XREAD COUNT count [BLOCK block_ms] STREAMS streams... ids...: n streams,
 * each read after its id. block_ms < 0: no BLOCK (0 would block forever).
 */
struct redisReply *client_xread(struct client *, long count,
	    long long block_ms, int n, const char * const *streams,
	    const char * const *ids);
/* EXISTS key: the live output stream of a session, say. */
struct redisReply *client_exists(struct client *, const char *key);

/* Sessions. */
/* HGETALL execq:session:<id>. */
struct redisReply *client_session_get(struct client *, const char *id);
/* ZREVRANGE execq:sessions 0 count-1: the newest session ids. */
struct redisReply *client_sessions_newest(struct client *, long count);
/* ZCARD execq:sessions: how many the index holds. */
struct redisReply *client_sessions_count(struct client *);

/* Workers. */
/* HGETALL execq:workers: the registry. */
struct redisReply *client_workers_get(struct client *);
/* EXISTS execq:worker:<consumer>: 1 while the worker's lease lives. */
struct redisReply *client_worker_alive(struct client *,
	    const char *consumer);
/* HDEL execq:workers <consumer>; ZREM execq:workers:beat <consumer>. */
struct redisReply *client_workers_del(struct client *,
	    const char *consumer);
struct redisReply *client_workers_beat_del(struct client *,
	    const char *consumer);

/* Approvals. */
/* GET execq:approval:<request>: the request's record. */
struct redisReply *client_approval_get(struct client *,
	    const char *request);
/* ZRANGEBYSCORE execq:approvals:pending <now_ms> +inf: ids not expired. */
struct redisReply *client_approvals_pending(struct client *,
	    long long now_ms);
/* XADD execq:decisions MAXLEN ~ 10000 * item <json>: APPROVE, REJECT. */
struct redisReply *client_decision_add(struct client *,
	    const char *json, size_t len);

/*
 * Pipelines: each _append queues its command (as the function of the same
 * name without it would send it) without waiting, 0 or -1 (the
 * connection is down); client_next_reply then gives the replies in
 * order, each as above (NULL: the connection failed, or no command
 * waits for a reply).
 */
int	 client_session_get_append(struct client *, const char *id,
	    size_t len);
int	 client_worker_alive_append(struct client *,
	    const char *consumer, size_t len);
struct redisReply *client_next_reply(struct client *);

/*
 * backlog_read_sync (queue/backlog.h) through the client: on a cluster
 * the backlog's key names are named as here first, and each command
 * routed on its own. 0, or -1 (client_errstr).
 */
int	 client_backlog_read(struct client *, struct backlog *);

#endif
