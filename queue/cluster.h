#ifndef EXECQ_CLUSTER_H
#define EXECQ_CLUSTER_H

/*
 * Redis Cluster, the pure part: which of the 16384 hash slots a key is
 * in (CRC16 of the key, or of its hash tag: the part between the first
 * '{' and the next '}', when that is not empty), which node serves a
 * slot (from CLUSTER SLOTS), and what a MOVED or ASK reply says. The
 * worker and the client share it; nothing here talks to Redis.
 */

#include <stddef.h>

struct redisReply;

#define CLUSTER_SLOTS		16384
#define CLUSTER_HOST_MAX	256

/* One node, as CLUSTER SLOTS names it. */
struct cluster_node {
	char	host[CLUSTER_HOST_MAX];
	int	port;
};

/* The primaries and which one serves each slot. */
struct cluster_map {
	struct cluster_node	*nodes;
	unsigned		 nnodes;
	short			 slot[CLUSTER_SLOTS];	/* index in nodes; -1 */
};

/* The slot of key (len bytes, NUL not needed). */
unsigned	 cluster_keyslot(const char *key, size_t len);
/*
 * Fills map from a CLUSTER SLOTS reply ([[start, end, [host, port, id],
 * replicas...], ...]): the primaries only. An empty host (a node that
 * does not know its own address) is taken as fallback_host. 0, or -1 if
 * the reply is not one (map left empty).
 */
int		 cluster_map_parse(struct cluster_map *,
		    const struct redisReply *, const char *fallback_host);
void		 cluster_map_release(struct cluster_map *);
/* The node serving slot, or NULL when none does. */
const struct cluster_node *cluster_map_node(const struct cluster_map *,
		    unsigned slot);
/*
 * A redirect in an error reply: "MOVED 3999 127.0.0.1:6381" or "ASK
 * ...". 1 with *ask (0 for MOVED), *slot and *node filled; 0 if err is
 * no redirect.
 */
int		 cluster_redirect(const char *err, int *ask, unsigned *slot,
		    struct cluster_node *node);

/*
 * A key's name in cluster mode, where every key of a queue carries the
 * queue's name as its hash tag, so that one queue lives in one slot:
 * "q:<queue>:<rest>" becomes "q:{<queue>}:<rest>" and "execq:<rest>"
 * becomes "execq:{<queue>}:<rest>" (queue: the one the key belongs to;
 * for execq: keys, the worker's own). Anything else, or a key tagged
 * already, is copied as it is. The caller frees the result.
 */
char		*cluster_tag(const char *key, const char *queue);

/* 1 if an INFO cluster reply says the server is a cluster node. */
int		 cluster_info_enabled(const struct redisReply *);

#endif
