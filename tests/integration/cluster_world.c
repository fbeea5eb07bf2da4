/*
 * The world of the Redis Cluster tests (test_cluster.c and others): a
 * real cluster of redis-server nodes on 127.0.0.1 (three primaries, and a
 * replica of each when asked), made by redis-cli --cluster create, and
 * what the tests do on it: a command on the node serving a key, queue
 * names on a chosen shard, items sent and answers read with the cluster
 * key names. Failures fail the running test (harness_fail).
 */

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <netinet/in.h>

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <hiredis/hiredis.h>
#include <jansson.h>

#include "queue/cluster.h"
#include "tests/integration/cluster_world.h"
#include "tests/integration/harness.h"

#define NODES		CLUSTER_WORLD_PRIMARIES
#define WAIT_MS		CLUSTER_WORLD_WAIT_MS

int		cluster_ports[CLUSTER_WORLD_MAX];
static char	pidfiles[CLUSTER_WORLD_MAX][600];
static int	cluster_dead[CLUSTER_WORLD_MAX];	/* killed by a test */
static int	cluster_replicas;	/* a replica of each primary */
int		cluster_nnodes;

/* A connection to node i; fails the test if there is none. */
redisContext *
cluster_node_ctx(struct harness *h, int i)
{
	redisContext	*c = redisConnect("127.0.0.1", cluster_ports[i]);

	if (c == NULL || c->err)
		harness_fail(h, "node %d (port %d): %s", i, cluster_ports[i],
		    c != NULL ? c->errstr : "no memory");
	return (c);
}

/* 1 if nobody listens on 127.0.0.1:port (a bind of our own works). */
static int
cluster_port_free(int port)
{
	struct sockaddr_in	sa;
	int			fd, ok;

	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		return (0);
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ok = bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0;
	close(fd);
	return (ok);
}

/*
 * A port for a node: free, and its cluster bus port (10000 above) free
 * too, so below 55536; none of the ports taken before.
 */
static int
cluster_node_port(struct harness *h, int taken)
{
	static int	next;
	int		i, p;

	if (next == 0)
		next = 20000 + (int)(getpid() % 5000) * 5;
	for (i = 0; i < 20000; i++) {
		p = next++;
		if (next > 45000)
			next = 20000;
		if (p != taken && cluster_port_free(p) && cluster_port_free(p + 10000))
			return (p);
	}
	harness_fail(h, "no free port pair for a cluster node");
}

/*
 * Starts three primaries (and a replica of each if replicas), not yet
 * one cluster (cluster_world_create), and waits until each answers.
 * node_timeout_ms: their cluster-node-timeout (0: Redis's own, 15 s).
 */
void
cluster_world_nodes(struct harness *h, int replicas, int node_timeout_ms)
{
	const char	*argv[32];
	char		 dir[512], port[16], timeout[16];
	redisContext	*c;
	int64_t		 deadline;
	int		 i, n;

	cluster_replicas = replicas;
	cluster_nnodes = NODES * (replicas ? 2 : 1);
	memset(cluster_dead, 0, sizeof cluster_dead);
	for (i = 0; i < cluster_nnodes; i++) {
		cluster_ports[i] = cluster_node_port(h, i > 0 ? cluster_ports[i - 1] : 0);
		snprintf(dir, sizeof dir, "%s/node%d", h->dir, i);
		if (mkdir(dir, 0700) == -1)
			harness_fail(h, "%s: %m", dir);
		snprintf(pidfiles[i], sizeof pidfiles[i], "%s/pid", dir);
		snprintf(port, sizeof port, "%d", cluster_ports[i]);
		n = 0;
		argv[n++] = "redis-server";
		argv[n++] = "--port";
		argv[n++] = port;
		argv[n++] = "--bind";
		argv[n++] = "127.0.0.1";
		argv[n++] = "--dir";
		argv[n++] = dir;
		argv[n++] = "--cluster-enabled";
		argv[n++] = "yes";
		argv[n++] = "--save";
		argv[n++] = "";
		argv[n++] = "--appendonly";
		argv[n++] = "no";
		argv[n++] = "--daemonize";
		argv[n++] = "yes";
		argv[n++] = "--pidfile";
		argv[n++] = pidfiles[i];
		argv[n++] = "--logfile";
		argv[n++] = "redis.log";
		if (node_timeout_ms > 0) {
			snprintf(timeout, sizeof timeout, "%d",
			    node_timeout_ms);
			argv[n++] = "--cluster-node-timeout";
			argv[n++] = timeout;
		}
		argv[n] = NULL;
		if (harness_run(h, argv, WAIT_MS) != 0)
			harness_fail(h, "redis-server on port %d did not start",
			    cluster_ports[i]);
	}
	for (i = 0; i < cluster_nnodes; i++) {
		for (deadline = harness_now_ms() + WAIT_MS;; harness_sleep_ms(20)) {
			c = redisConnect("127.0.0.1", cluster_ports[i]);
			if (c != NULL && !c->err)
				break;
			redisFree(c);
			if (harness_now_ms() > deadline)
				harness_fail(h, "node %d does not answer", i);
		}
		redisFree(c);
	}
}

/* Makes the nodes one cluster; waits until every node says ok. */
void
cluster_world_create(struct harness *h)
{
	const char	*argv[32];
	char		 addr[CLUSTER_WORLD_MAX][32];
	redisContext	*c;
	redisReply	*r;
	int64_t		 deadline;
	int		 i, n, ok;

	for (i = 0; i < cluster_nnodes; i++)
		snprintf(addr[i], sizeof addr[i], "127.0.0.1:%d",
		    cluster_ports[i]);
	n = 0;
	argv[n++] = "redis-cli";
	argv[n++] = "--cluster";
	argv[n++] = "create";
	for (i = 0; i < cluster_nnodes; i++)
		argv[n++] = addr[i];
	argv[n++] = "--cluster-replicas";
	argv[n++] = cluster_replicas ? "1" : "0";
	argv[n++] = "--cluster-yes";
	argv[n] = NULL;
	if (harness_run(h, argv, WAIT_MS) != 0)
		harness_fail(h, "redis-cli --cluster create failed");
	for (deadline = harness_now_ms() + WAIT_MS;; harness_sleep_ms(50)) {
		for (i = 0, ok = 0; i < cluster_nnodes; i++) {
			c = cluster_node_ctx(h, i);
			r = redisCommand(c, "CLUSTER INFO");
			ok += r != NULL && r->type == REDIS_REPLY_STRING &&
			    strstr(r->str, "cluster_state:ok") != NULL;
			freeReplyObject(r);
			redisFree(c);
		}
		if (ok == cluster_nnodes)
			break;
		if (harness_now_ms() > deadline)
			harness_fail(h, "the cluster is not ok after %d ms",
			    WAIT_MS);
	}
}

void
cluster_world_start_opts(struct harness *h, int replicas,
    int node_timeout_ms)
{
	cluster_world_nodes(h, replicas, node_timeout_ms);
	cluster_world_create(h);
}

void
cluster_world_start(struct harness *h, int replicas)
{
	cluster_world_start_opts(h, replicas, 0);
}

void
cluster_world_start3(struct harness *h)
{
	cluster_world_start(h, 0);
}

/* Stops the nodes this test started (by their pid files). */
int
cluster_world_teardown(void **state)
{
	char	*text;
	long	 pid;
	int	 i;

	for (i = 0; i < CLUSTER_WORLD_MAX; i++) {
		if (pidfiles[i][0] == '\0')
			continue;
		if ((text = harness_read_file(pidfiles[i], NULL)) != NULL &&
		    (pid = atol(text)) > 0)
			kill((pid_t)pid, SIGKILL);
		free(text);
		pidfiles[i][0] = '\0';
	}
	return (harness_teardown(state));
}

/* SIGKILLs node i and waits until its port takes no connection. */
void
cluster_node_kill(struct harness *h, int i)
{
	redisContext	*c;
	char		*text;
	long		 pid;
	int64_t		 deadline = harness_now_ms() + WAIT_MS;

	if ((text = harness_read_file(pidfiles[i], NULL)) == NULL ||
	    (pid = atol(text)) <= 0)
		harness_fail(h, "node %d: no pid in %s", i, pidfiles[i]);
	free(text);
	kill((pid_t)pid, SIGKILL);
	for (;; harness_sleep_ms(20)) {
		c = redisConnect("127.0.0.1", cluster_ports[i]);
		if (c == NULL || c->err) {
			redisFree(c);
			break;
		}
		redisFree(c);
		if (harness_now_ms() > deadline)
			harness_fail(h, "node %d outlived its SIGKILL", i);
	}
	cluster_dead[i] = 1;
}

/* Waits until node i is a primary (a failover ended). */
void
cluster_wait_primary(struct harness *h, int i)
{
	int64_t	deadline = harness_now_ms() + WAIT_MS;

	while (!cluster_is_primary(h, i)) {
		if (harness_now_ms() > deadline)
			harness_fail(h, "node %d is no primary after %d ms", i,
			    WAIT_MS);
		harness_sleep_ms(20);
	}
}

/* The first node that is not killed: where the map is asked. */
static int
cluster_alive(struct harness *h)
{
	int	i;

	for (i = 0; i < cluster_nnodes; i++)
		if (!cluster_dead[i])
			return (i);
	harness_fail(h, "every node is killed");
}

/* The node (index in ports) serving key's slot, from a live node's map. */
int
cluster_owner(struct harness *h, const char *key)
{
	struct cluster_map		 map;
	const struct cluster_node	*n;
	redisContext			*c;
	redisReply			*r;
	int				 i, found = -1;

	c = cluster_node_ctx(h, cluster_alive(h));
	r = redisCommand(c, "CLUSTER SLOTS");
	memset(&map, 0, sizeof map);
	if (cluster_map_parse(&map, r, "127.0.0.1") == -1)
		harness_fail(h, "CLUSTER SLOTS: no map");
	n = cluster_map_node(&map, cluster_keyslot(key, strlen(key)));
	for (i = 0; n != NULL && i < cluster_nnodes; i++)
		if (n->port == cluster_ports[i])
			found = i;
	cluster_map_release(&map);
	freeReplyObject(r);
	redisFree(c);
	if (found == -1)
		harness_fail(h, "no node serves %s", key);
	return (found);
}

/*
 * A command on the node serving key; a redirect (a failover under way),
 * or a map that still names a killed node, is tried again until the
 * deadline; any other error fails the test.
 */
redisReply *
cluster_kcmd(struct harness *h, const char *key, const char *fmt, ...)
{
	redisContext	*c;
	redisReply	*r;
	va_list		 ap;
	int64_t		 deadline = harness_now_ms() + WAIT_MS;
	int		 i;

	for (;; harness_sleep_ms(20)) {
		i = cluster_owner(h, key);
		if (cluster_dead[i] && harness_now_ms() < deadline)
			continue;	/* its replica has not taken over yet */
		c = cluster_node_ctx(h, i);
		va_start(ap, fmt);
		r = redisvCommand(c, fmt, ap);
		va_end(ap);
		if (r != NULL && r->type == REDIS_REPLY_ERROR &&
		    (strncmp(r->str, "MOVED", 5) == 0 ||
		    strncmp(r->str, "TRYAGAIN", 8) == 0 ||
		    strncmp(r->str, "CLUSTERDOWN", 11) == 0) &&
		    harness_now_ms() < deadline) {
			freeReplyObject(r);
			redisFree(c);
			continue;
		}
		break;
	}
	if (r == NULL || r->type == REDIS_REPLY_ERROR)
		harness_fail(h, "%s: %s", key, r != NULL ? r->str : c->errstr);
	redisFree(c);
	return (r);
}

/* A queue name, "<prefix><n>", whose slot node i serves. */
void
cluster_queue_on(struct harness *h, int i, const char *prefix, char *out,
    size_t len)
{
	int	n;

	for (n = 0; n < 1000; n++) {
		snprintf(out, len, "%s%d", prefix, n);
		if (cluster_owner(h, out) == i)
			return;
	}
	harness_fail(h, "no queue name for node %d", i);
}

/* The entries of stream (on its node) whose item has "id": id. */
json_t *
cluster_entries(struct harness *h, const char *stream, const char *id)
{
	redisReply	*r = cluster_kcmd(h, stream, "XRANGE %s - +", stream);
	json_t		*out = json_array(), *it;
	const char	*got;
	size_t		 i, j;

	for (i = 0; i < r->elements; i++) {
		redisReply *f = r->element[i]->element[1];

		for (j = 0; j + 1 < f->elements; j += 2) {
			if (strcmp(f->element[j]->str, "item") != 0 ||
			    (it = json_loads(f->element[j + 1]->str, 0,
			    NULL)) == NULL)
				continue;
			got = json_string_value(json_object_get(it, "id"));
			if (got != NULL && strcmp(got, id) == 0)
				json_array_append(out, it);
			json_decref(it);
		}
	}
	freeReplyObject(r);
	return (out);
}

/* The first entry of id on stream of type type, waited for. */
json_t *
cluster_wait_typed(struct harness *h, const char *stream, const char *id,
    const char *type)
{
	json_t		*all, *e, *found = NULL;
	int64_t		 deadline = harness_now_ms() + WAIT_MS;
	size_t		 i;

	for (;; harness_sleep_ms(20)) {
		all = cluster_entries(h, stream, id);
		json_array_foreach(all, i, e)
			if (found == NULL && strcmp(json_string_value(
			    json_object_get(e, "type")), type) == 0)
				found = json_incref(e);
		json_decref(all);
		if (found != NULL)
			return (found);
		if (harness_now_ms() > deadline)
			harness_fail(h, "no %s of %s on %s", type, id, stream);
	}
}

/* How many entries of id on stream have type type. */
int
cluster_count_typed(struct harness *h, const char *stream, const char *id,
    const char *type)
{
	json_t		*all = cluster_entries(h, stream, id), *e;
	size_t		 i;
	int		 n = 0;

	json_array_foreach(all, i, e)
		n += strcmp(json_string_value(json_object_get(e, "type")),
		    type) == 0;
	json_decref(all);
	return (n);
}

/* XADD of an EXEC item to q:{queue}:normal, on its node. */
void
cluster_submit(struct harness *h, const char *queue, const char *id,
    const char *reply, const char *command, int background)
{
	char	 key[256], *text;
	json_t	*item;

	item = json_pack("{s:s, s:s, s:s, s:{s:s, s:b}}", "id", id, "type",
	    "EXEC", "reply_to", reply, "args", "command", command,
	    "background", background);
	text = json_dumps(item, JSON_COMPACT);
	snprintf(key, sizeof key, "q:{%s}:normal", queue);
	freeReplyObject(cluster_kcmd(h, key, "XADD %s * item %s", key, text));
	free(text);
	json_decref(item);
}

/* ROLE's first element on node i. */
int
cluster_is_primary(struct harness *h, int i)
{
	redisContext	*c = cluster_node_ctx(h, i);
	redisReply	*r = redisCommand(c, "ROLE");
	int		 yes;

	yes = r != NULL && r->type == REDIS_REPLY_ARRAY &&
	    strcmp(r->element[0]->str, "master") == 0;
	freeReplyObject(r);
	redisFree(c);
	return (yes);
}

/* The node (index) that replicates node i, once it is in sync. */
int
cluster_replica_of(struct harness *h, int i)
{
	redisContext	*c;
	redisReply	*r;
	int64_t		 deadline = harness_now_ms() + WAIT_MS;
	int		 j, port;

	for (;; harness_sleep_ms(20)) {
		c = cluster_node_ctx(h, i);
		r = redisCommand(c, "ROLE");
		redisFree(c);
		if (r != NULL && r->type == REDIS_REPLY_ARRAY &&
		    r->elements >= 3 && r->element[2]->elements >= 1)
			break;
		freeReplyObject(r);
		if (harness_now_ms() > deadline)
			harness_fail(h, "node %d has no replica", i);
	}
	port = atoi(r->element[2]->element[0]->element[1]->str);
	freeReplyObject(r);
	for (j = 0; j < cluster_nnodes; j++)
		if (cluster_ports[j] == port)
			return (j);
	harness_fail(h, "the replica of node %d is not ours", i);
}


/* XADD of item (JSON) to q:{queue}:lane, on its node. */
void
cluster_xadd(struct harness *h, const char *queue, const char *lane,
    json_t *item)
{
	char	 key[256], *text = json_dumps(item, JSON_COMPACT);

	snprintf(key, sizeof key, "q:{%s}:%s", queue, lane);
	freeReplyObject(cluster_kcmd(h, key, "XADD %s * item %s", key, text));
	free(text);
}

/* A command on every live node; an error reply fails the test. */
void
cluster_all_cmd(struct harness *h, const char *fmt, ...)
{
	redisContext	*c;
	redisReply	*r;
	va_list		 ap;
	int		 i;

	for (i = 0; i < cluster_nnodes; i++) {
		if (cluster_dead[i])
			continue;
		c = cluster_node_ctx(h, i);
		va_start(ap, fmt);
		r = redisvCommand(c, fmt, ap);
		va_end(ap);
		if (r == NULL || r->type == REDIS_REPLY_ERROR)
			harness_fail(h, "node %d: %s", i, r != NULL ? r->str :
			    c->errstr);
		freeReplyObject(r);
		redisFree(c);
	}
}

/* Waits until key (on its node) is gone or empty: HLEN, XLEN, ZCARD. */
void
cluster_wait_empty(struct harness *h, const char *cmd, const char *key)
{
	redisReply	*r;
	int64_t		 deadline = harness_now_ms() + WAIT_MS;
	long long	 n;

	for (;; harness_sleep_ms(20)) {
		r = cluster_kcmd(h, key, "%s %s", cmd, key);
		n = r->integer;
		freeReplyObject(r);
		if (n == 0)
			return;
		if (harness_now_ms() > deadline)
			harness_fail(h, "%s %s is %lld after %d ms", cmd, key,
			    n, WAIT_MS);
	}
}
