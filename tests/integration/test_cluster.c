/*
 * Redis Cluster (issue 25, item 5), on a real three-primary cluster the
 * test makes on 127.0.0.1 (redis-server --cluster-enabled yes, redis-cli
 * --cluster create): queue/cluster.c's key slots, slot map and MOVED
 * agree with the cluster's own; and workers of three queues on three
 * shards, each pointed at another node, answer through reply queues on
 * other shards, once each (queue/shard.c).
 */

#include <sys/stat.h>
#include <sys/socket.h>
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

#include "logs/xmalloc.h"
#include "queue/cluster.h"
#include "tests/integration/harness.h"

#define NODES		3	/* primaries */
#define NODES_MAX	6	/* ... and a replica of each */
#define WAIT_MS		30000

static int	ports[NODES_MAX];
static char	pidfiles[NODES_MAX][600];
static int	nnodes;

/* A connection to node i; fails the test if there is none. */
static redisContext *
node(struct harness *h, int i)
{
	redisContext	*c = redisConnect("127.0.0.1", ports[i]);

	if (c == NULL || c->err)
		harness_fail(h, "node %d (port %d): %s", i, ports[i],
		    c != NULL ? c->errstr : "no memory");
	return (c);
}

/* 1 if nobody listens on 127.0.0.1:port (a bind of our own works). */
static int
port_free(int port)
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
node_port(struct harness *h, int taken)
{
	static int	next;
	int		i, p;

	if (next == 0)
		next = 20000 + (int)(getpid() % 5000) * 5;
	for (i = 0; i < 20000; i++) {
		p = next++;
		if (next > 45000)
			next = 20000;
		if (p != taken && port_free(p) && port_free(p + 10000))
			return (p);
	}
	harness_fail(h, "no free port pair for a cluster node");
}

/*
 * Starts three primaries (and a replica of each if replicas) and makes
 * them one cluster; waits until every node says ok.
 */
static void
cluster_start_with(struct harness *h, int replicas)
{
	const char	*argv[32];
	char		 dir[512], port[16], addr[NODES_MAX][32];
	redisContext	*c;
	redisReply	*r;
	int64_t		 deadline;
	int		 i, n, ok;

	nnodes = NODES * (replicas ? 2 : 1);
	for (i = 0; i < nnodes; i++) {
		ports[i] = node_port(h, i > 0 ? ports[i - 1] : 0);
		snprintf(dir, sizeof dir, "%s/node%d", h->dir, i);
		if (mkdir(dir, 0700) == -1)
			harness_fail(h, "%s: %m", dir);
		snprintf(pidfiles[i], sizeof pidfiles[i], "%s/pid", dir);
		snprintf(port, sizeof port, "%d", ports[i]);
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
		argv[n] = NULL;
		if (harness_run(h, argv, WAIT_MS) != 0)
			harness_fail(h, "redis-server on port %d did not start",
			    ports[i]);
	}
	for (i = 0; i < nnodes; i++) {
		for (deadline = harness_now_ms() + WAIT_MS;; harness_sleep_ms(20)) {
			c = redisConnect("127.0.0.1", ports[i]);
			if (c != NULL && !c->err)
				break;
			redisFree(c);
			if (harness_now_ms() > deadline)
				harness_fail(h, "node %d does not answer", i);
		}
		redisFree(c);
		snprintf(addr[i], sizeof addr[i], "127.0.0.1:%d", ports[i]);
	}
	n = 0;
	argv[n++] = "redis-cli";
	argv[n++] = "--cluster";
	argv[n++] = "create";
	for (i = 0; i < nnodes; i++)
		argv[n++] = addr[i];
	argv[n++] = "--cluster-replicas";
	argv[n++] = replicas ? "1" : "0";
	argv[n++] = "--cluster-yes";
	argv[n] = NULL;
	if (harness_run(h, argv, WAIT_MS) != 0)
		harness_fail(h, "redis-cli --cluster create failed");
	for (deadline = harness_now_ms() + WAIT_MS;; harness_sleep_ms(50)) {
		for (i = 0, ok = 0; i < nnodes; i++) {
			c = node(h, i);
			r = redisCommand(c, "CLUSTER INFO");
			ok += r != NULL && r->type == REDIS_REPLY_STRING &&
			    strstr(r->str, "cluster_state:ok") != NULL;
			freeReplyObject(r);
			redisFree(c);
		}
		if (ok == nnodes)
			break;
		if (harness_now_ms() > deadline)
			harness_fail(h, "the cluster is not ok after %d ms",
			    WAIT_MS);
	}
}

static void
cluster_start(struct harness *h)
{
	cluster_start_with(h, 0);
}

/* Stops the nodes this test started (by their pid files). */
static int
cluster_teardown(void **state)
{
	char	*text;
	long	 pid;
	int	 i;

	for (i = 0; i < NODES_MAX; i++) {
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

/* Slots, the slot map and MOVED, against the cluster's own answers. */
static void
test_cluster_slots_agree(void **state)
{
	struct harness			*h = harness_fixture(state);
	struct cluster_map		 map;
	const struct cluster_node	*want;
	struct cluster_node		 got;
	redisContext			*c;
	redisReply			*r;
	char				 key[64];
	unsigned			 s, moved = 0;
	int				 i, ask;

	cluster_start(h);
	c = node(h, 0);
	for (i = 0; i < 300; i++) {
		snprintf(key, sizeof key, i % 3 == 0 ? "q:{q%d}:normal" :
		    i % 3 == 1 ? "execq:claim:%d" : "{}x%d{y}", i);
		r = redisCommand(c, "CLUSTER KEYSLOT %s", key);
		assert_int_equal(r->type, REDIS_REPLY_INTEGER);
		assert_int_equal(cluster_keyslot(key, strlen(key)),
		    (unsigned)r->integer);
		freeReplyObject(r);
	}
	r = redisCommand(c, "CLUSTER SLOTS");
	assert_int_equal(cluster_map_parse(&map, r, "127.0.0.1"), 0);
	freeReplyObject(r);
	assert_int_equal(map.nnodes, NODES);
	for (s = 0; s < CLUSTER_SLOTS; s++)
		assert_non_null(cluster_map_node(&map, s));
	/* A key another node serves: MOVED names the map's node. */
	for (i = 0; i < 60; i++) {
		snprintf(key, sizeof key, "k%d", i);
		r = redisCommand(c, "GET %s", key);
		want = cluster_map_node(&map, cluster_keyslot(key,
		    strlen(key)));
		if (r->type == REDIS_REPLY_ERROR) {
			assert_int_equal(cluster_redirect(r->str, &ask, &s,
			    &got), 1);
			assert_int_equal(ask, 0);
			assert_int_equal(s, cluster_keyslot(key, strlen(key)));
			assert_string_equal(got.host, want->host);
			assert_int_equal(got.port, want->port);
			moved++;
		} else
			assert_int_equal(want->port, ports[0]);
		freeReplyObject(r);
	}
	assert_true(moved > 0);		/* two nodes of three serve most */
	cluster_map_release(&map);
	redisFree(c);
	harness_pass(h);
}

/* The node (index in ports) serving key's slot, from node 0's map. */
static int
owner(struct harness *h, const char *key)
{
	struct cluster_map		 map;
	const struct cluster_node	*n;
	redisContext			*c = node(h, 0);
	redisReply			*r = redisCommand(c, "CLUSTER SLOTS");
	int				 i, found = -1;

	memset(&map, 0, sizeof map);
	if (cluster_map_parse(&map, r, "127.0.0.1") == -1)
		harness_fail(h, "CLUSTER SLOTS: no map");
	n = cluster_map_node(&map, cluster_keyslot(key, strlen(key)));
	for (i = 0; n != NULL && i < nnodes; i++)
		if (n->port == ports[i])
			found = i;
	cluster_map_release(&map);
	freeReplyObject(r);
	redisFree(c);
	if (found == -1)
		harness_fail(h, "no node serves %s", key);
	return (found);
}

/*
 * A command on the node serving key; a redirect (a failover under way)
 * is tried again until the deadline; any other error fails the test.
 */
static redisReply *
kcmd(struct harness *h, const char *key, const char *fmt, ...)
{
	redisContext	*c;
	redisReply	*r;
	va_list		 ap;
	int64_t		 deadline = harness_now_ms() + WAIT_MS;

	for (;; harness_sleep_ms(20)) {
		c = node(h, owner(h, key));
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
static void
queue_on(struct harness *h, int i, const char *prefix, char *out,
    size_t len)
{
	int	n;

	for (n = 0; n < 1000; n++) {
		snprintf(out, len, "%s%d", prefix, n);
		if (owner(h, out) == i)
			return;
	}
	harness_fail(h, "no queue name for node %d", i);
}

/* The entries of stream (on its node) whose item has "id": id. */
static json_t *
entries(struct harness *h, const char *stream, const char *id)
{
	redisReply	*r = kcmd(h, stream, "XRANGE %s - +", stream);
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
static json_t *
wait_typed(struct harness *h, const char *stream, const char *id,
    const char *type)
{
	json_t		*all, *e, *found = NULL;
	int64_t		 deadline = harness_now_ms() + WAIT_MS;
	size_t		 i;

	for (;; harness_sleep_ms(20)) {
		all = entries(h, stream, id);
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
static int
count_typed(struct harness *h, const char *stream, const char *id,
    const char *type)
{
	json_t		*all = entries(h, stream, id), *e;
	size_t		 i;
	int		 n = 0;

	json_array_foreach(all, i, e)
		n += strcmp(json_string_value(json_object_get(e, "type")),
		    type) == 0;
	json_decref(all);
	return (n);
}

/* XADD of an EXEC item to q:{queue}:normal, on its node. */
static void
submit(struct harness *h, const char *queue, const char *id,
    const char *reply, const char *command, int background)
{
	char	 key[256], *text;
	json_t	*item;

	item = json_pack("{s:s, s:s, s:s, s:{s:s, s:b}}", "id", id, "type",
	    "EXEC", "reply_to", reply, "args", "command", command,
	    "background", background);
	text = json_dumps(item, JSON_COMPACT);
	snprintf(key, sizeof key, "q:{%s}:normal", queue);
	freeReplyObject(kcmd(h, key, "XADD %s * item %s", key, text));
	free(text);
	json_decref(item);
}

/*
 * Three queues on three shards, each worker given the URL of a node
 * that is not its queue's (it follows the slot), each answering to a
 * reply queue on yet another shard: a foreground item's answer and a
 * session's EXEC_STARTED and EXEC_CALLBACK each arrive once, nothing
 * stays pending, and the delivery left its mark. A reply a dead worker
 * left pending is delivered by the next; one delivered already (its mark
 * there) is not added again.
 */
static void
test_cluster_three_queues(void **state)
{
	struct harness	*h = harness_fixture(state);
	char		 q[NODES][64], rq[NODES][64], url[64], consumer[64];
	char		 id[NODES][64], sid[NODES][64], key[256], cmd[128];
	char		 pend[256], sent[600], stream[256];
	const char	*out;
	redisReply	*r;
	json_t		*a;
	pid_t		 w[NODES];
	int		 i;

	cluster_start(h);
	for (i = 0; i < NODES; i++) {
		queue_on(h, i, "work", q[i], sizeof q[i]);
		queue_on(h, (i + 1) % NODES, "reply", rq[i], sizeof rq[i]);
	}
	/* What a worker of q[0] that died left: one reply to deliver, one
	   delivered already (its mark is there) but not yet cleared. */
	snprintf(pend, sizeof pend, "execq:{%s}:replies", q[0]);
	snprintf(stream, sizeof stream, "q:{%s}:normal", rq[0]);
	r = kcmd(h, pend, "HSET %s n:dead.1 %s\n{\"type\":\"EXEC_RESULT\","
	    "\"id\":\"left-1\",\"exit_code\":0} n:dead.2 %s\n{\"type\":"
	    "\"EXEC_RESULT\",\"id\":\"left-2\",\"exit_code\":0}", pend, stream,
	    stream);
	freeReplyObject(r);
	snprintf(sent, sizeof sent, "q:{%s}:sent:n:dead.2", rq[0]);
	freeReplyObject(kcmd(h, sent, "SET %s 1", sent));
	for (i = 0; i < NODES; i++) {
		snprintf(url, sizeof url, "redis://127.0.0.1:%d",
		    ports[(i + 2) % NODES]);
		snprintf(consumer, sizeof consumer, "cw%d", i);
		w[i] = harness_worker_launch(h, NULL, "--redis", url,
		    "--queue", q[i], "--consumer", consumer, "--kill-grace",
		    "1", "--shutdown-flush", "1", NULL);
	}
	for (i = 0; i < NODES; i++) {
		snprintf(id[i], sizeof id[i], "%s.fg", q[i]);
		snprintf(sid[i], sizeof sid[i], "%s.bg", q[i]);
		snprintf(cmd, sizeof cmd, "echo hello-%d", i);
		submit(h, q[i], id[i], rq[i], cmd, 0);
		submit(h, q[i], sid[i], rq[i], "echo session; exit 3", 1);
	}
	for (i = 0; i < NODES; i++) {
		snprintf(key, sizeof key, "q:{%s}:normal", rq[i]);
		a = wait_typed(h, key, id[i], "EXEC_RESULT");
		assert_int_equal(json_integer_value(json_object_get(a,
		    "exit_code")), 0);
		out = json_string_value(json_object_get(a, "stdout"));
		snprintf(cmd, sizeof cmd, "hello-%d\n", i);
		assert_non_null(out);
		assert_string_equal(out, cmd);
		json_decref(a);
		json_decref(wait_typed(h, key, sid[i], "EXEC_STARTED"));
		snprintf(key, sizeof key, "q:{%s}:high", rq[i]);
		a = wait_typed(h, key, sid[i], "EXEC_CALLBACK");
		assert_int_equal(json_integer_value(json_object_get(a,
		    "exit_code")), 3);
		json_decref(a);
	}
	/* The dead worker's: delivered once, the marked one not at all. */
	json_decref(wait_typed(h, stream, "left-1", "EXEC_RESULT"));
	for (i = 0; i < NODES; i++) {
		snprintf(key, sizeof key, "q:{%s}:normal", rq[i]);
		assert_int_equal(count_typed(h, key, id[i], "EXEC_RESULT"), 1);
		assert_int_equal(count_typed(h, key, sid[i], "EXEC_STARTED"),
		    1);
		snprintf(key, sizeof key, "q:{%s}:high", rq[i]);
		assert_int_equal(count_typed(h, key, sid[i], "EXEC_CALLBACK"),
		    1);
	}
	assert_int_equal(count_typed(h, stream, "left-1", "EXEC_RESULT"), 1);
	assert_int_equal(count_typed(h, stream, "left-2", "EXEC_RESULT"), 0);
	/* Nothing stays pending; each queue's keys are on its own shard. */
	for (i = 0; i < NODES; i++) {
		int64_t	deadline = harness_now_ms() + WAIT_MS;

		snprintf(pend, sizeof pend, "execq:{%s}:replies", q[i]);
		for (;; harness_sleep_ms(20)) {
			r = kcmd(h, pend, "HLEN %s", pend);
			if (r->integer == 0)
				break;
			freeReplyObject(r);
			if (harness_now_ms() > deadline)
				harness_fail(h, "%s is not emptied", pend);
		}
		freeReplyObject(r);
		snprintf(key, sizeof key, "execq:{%s}:session:%s", q[i],
		    sid[i]);
		r = kcmd(h, key, "HGET %s status", key);
		assert_int_equal(r->type, REDIS_REPLY_STRING);
		freeReplyObject(r);
		assert_int_equal(owner(h, key), i);
	}
	for (i = 0; i < NODES; i++)
		harness_stop_clean(h, w[i]);
	harness_pass(h);
}

/* ROLE's first element on node i. */
static int
is_primary(struct harness *h, int i)
{
	redisContext	*c = node(h, i);
	redisReply	*r = redisCommand(c, "ROLE");
	int		 yes;

	yes = r != NULL && r->type == REDIS_REPLY_ARRAY &&
	    strcmp(r->element[0]->str, "master") == 0;
	freeReplyObject(r);
	redisFree(c);
	return (yes);
}

/* The node (index) that replicates node i, once it is in sync. */
static int
replica_of(struct harness *h, int i)
{
	redisContext	*c;
	redisReply	*r;
	int64_t		 deadline = harness_now_ms() + WAIT_MS;
	int		 j, port;

	for (;; harness_sleep_ms(20)) {
		c = node(h, i);
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
	for (j = 0; j < nnodes; j++)
		if (ports[j] == port)
			return (j);
	harness_fail(h, "the replica of node %d is not ours", i);
}

/*
 * A queue's shard fails over (CLUSTER FAILOVER on its replica) while
 * items flow: the worker follows the slot to the new primary (MOVED,
 * ROLE), and every item is answered exactly once, none lost, none run
 * twice (each command appends its id to a file of the workspace).
 */
static void
test_cluster_failover(void **state)
{
	struct harness	*h = harness_fixture(state);
	char		 q[64], rq[64], url[64], id[64], key[256], cmd[1024];
	char		 path[600], *ran;
	int		 primary, replica, i, n = 200, k;
	redisContext	*c;
	redisReply	*r;
	json_t		*a;
	pid_t		 w;
	int64_t		 deadline;

	cluster_start_with(h, 1);
	for (primary = 0; !is_primary(h, primary); primary++)
		;
	queue_on(h, primary, "fo", q, sizeof q);
	for (i = 0; i < nnodes; i++)
		if (i != primary && is_primary(h, i))
			break;
	queue_on(h, i, "foreply", rq, sizeof rq);
	replica = replica_of(h, primary);
	snprintf(url, sizeof url, "redis://127.0.0.1:%d", ports[primary]);
	w = harness_worker_launch(h, NULL, "--redis", url, "--queue", q,
	    "--consumer", "fo1", "--kill-grace", "1", "--shutdown-flush", "1",
	    NULL);
	snprintf(path, sizeof path, "%s/ran", h->ws);
	snprintf(key, sizeof key, "q:{%s}:normal", rq);
	for (i = 0; i < n; i++) {
		snprintf(id, sizeof id, "fo-%d", i);
		snprintf(cmd, sizeof cmd, "echo %s >> %s", id, path);
		submit(h, q, id, rq, cmd, 0);
		if (i == n / 2) {
			/* Half way, and some answered: the replica takes over. */
			json_decref(wait_typed(h, key, "fo-10", "EXEC_RESULT"));
			c = node(h, replica);
			r = redisCommand(c, "CLUSTER FAILOVER");
			if (r == NULL || r->type == REDIS_REPLY_ERROR)
				harness_fail(h, "CLUSTER FAILOVER: %s", r !=
				    NULL ? r->str : c->errstr);
			freeReplyObject(r);
			redisFree(c);
			deadline = harness_now_ms() + WAIT_MS;
			while (!is_primary(h, replica)) {
				if (harness_now_ms() > deadline)
					harness_fail(h, "no failover");
				harness_sleep_ms(20);
			}
		}
	}
	for (i = 0; i < n; i++) {
		snprintf(id, sizeof id, "fo-%d", i);
		a = wait_typed(h, key, id, "EXEC_RESULT");
		assert_int_equal(json_integer_value(json_object_get(a,
		    "exit_code")), 0);
		json_decref(a);
	}
	ran = harness_read_file(path, NULL);
	assert_non_null(ran);
	for (i = 0; i < n; i++) {
		char	line[80], *p;

		snprintf(id, sizeof id, "fo-%d", i);
		assert_int_equal(count_typed(h, key, id, "EXEC_RESULT"), 1);
		snprintf(line, sizeof line, "%s\n", id);
		for (k = 0, p = ran; (p = strstr(p, line)) != NULL; p++)
			k += p == ran || p[-1] == '\n';
		if (k != 1)
			harness_fail(h, "%s ran %d times", id, k);
	}
	free(ran);
	harness_stop_clean(h, w);
	harness_pass(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_cluster_slots_agree,
		    harness_setup, cluster_teardown),
		cmocka_unit_test_setup_teardown(test_cluster_three_queues,
		    harness_setup, cluster_teardown),
		cmocka_unit_test_setup_teardown(test_cluster_failover,
		    harness_setup, cluster_teardown),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
