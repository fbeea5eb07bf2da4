#ifndef EXECQ_TEST_CLUSTER_WORLD_H
#define EXECQ_TEST_CLUSTER_WORLD_H

/*
 * A real Redis Cluster on 127.0.0.1 for the tests (cluster_world.c):
 * three primaries, and a replica of each when asked. Node i listens on
 * cluster_ports[i]; cluster_nnodes of them run. Every wait has a deadline
 * (CLUSTER_WORLD_WAIT_MS); failures fail the running test.
 */

#include <sys/types.h>

#include <stddef.h>

#include <hiredis/hiredis.h>
#include <jansson.h>

struct harness;

#define CLUSTER_WORLD_PRIMARIES	3
#define CLUSTER_WORLD_MAX	6
#define CLUSTER_WORLD_WAIT_MS	30000

extern int	cluster_ports[CLUSTER_WORLD_MAX];
extern int	cluster_nnodes;

/* Starts the nodes (replicas: one of each primary) and waits for ok. */
void		 cluster_world_start(struct harness *, int replicas);
/* The two steps of it: the nodes started, not yet one cluster ... */
void		 cluster_world_nodes(struct harness *, int replicas,
		    int node_timeout_ms);
/* ... and made one (redis-cli --cluster create), ok on every node. */
void		 cluster_world_create(struct harness *);
/* The same with their cluster-node-timeout (0: Redis's, 15 s). */
void		 cluster_world_start_opts(struct harness *, int replicas,
		    int node_timeout_ms);
/* Three primaries, no replica. */
void		 cluster_world_start3(struct harness *);
/* The teardown for cmocka: the nodes killed, then harness_teardown. */
int		 cluster_world_teardown(void **state);
/* A connection to node i. */
redisContext	*cluster_node_ctx(struct harness *, int i);
/* The node (index) serving key's slot. */
int		 cluster_owner(struct harness *, const char *key);
/* A command on the node serving key; redirects tried again. */
redisReply	*cluster_kcmd(struct harness *, const char *key,
		    const char *fmt, ...);
/* "<prefix><n>", a queue name whose slot node i serves. */
void		 cluster_queue_on(struct harness *, int i, const char *prefix,
		    char *out, size_t len);
/* The items of stream whose "id" is id, oldest first. */
json_t		*cluster_entries(struct harness *, const char *stream,
		    const char *id);
/* The first of them of type type, waited for. */
json_t		*cluster_wait_typed(struct harness *, const char *stream,
		    const char *id, const char *type);
/* How many of them have type type. */
int		 cluster_count_typed(struct harness *, const char *stream,
		    const char *id, const char *type);
/* An EXEC item to q:{queue}:normal, replying to reply. */
void		 cluster_submit(struct harness *, const char *queue,
		    const char *id, const char *reply, const char *command,
		    int background);
/* 1 if node i is a primary now (ROLE). */
int		 cluster_is_primary(struct harness *, int i);
/* The node replicating node i, once it is in sync. */
int		 cluster_replica_of(struct harness *, int i);
/*
 * SIGKILL to node i, waited for (its port refuses); the helpers above
 * then ask the others, and wait while the map still names it.
 */
void		 cluster_node_kill(struct harness *, int i);
/* Waits until node i is a primary. */
void		 cluster_wait_primary(struct harness *, int i);
/* XADD of item (JSON) to q:{queue}:lane. */
void		 cluster_xadd(struct harness *, const char *queue,
		    const char *lane, json_t *item);
/* The command on every node not killed (ACL SETUSER ...). */
void		 cluster_all_cmd(struct harness *, const char *fmt, ...);
/* Waits until "cmd key" (HLEN, XLEN, ZCARD) says 0 on key's node. */
void		 cluster_wait_empty(struct harness *, const char *cmd,
		    const char *key);

#endif
