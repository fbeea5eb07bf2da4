/*
 * Redis Cluster (issue 25, item 5), on a real three-primary cluster the
 * test makes on 127.0.0.1 (redis-server --cluster-enabled yes, redis-cli
 * --cluster create): queue/cluster.c's key slots, slot map and MOVED
 * agree with the cluster's own; and until execq runs on a cluster, the
 * worker and the client pointed at a node say so, plainly, instead of
 * failing with MOVED and CROSSSLOT.
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

#define NODES		3
#define WAIT_MS		30000

static int	ports[NODES];
static char	pidfiles[NODES][600];

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

/* Starts three cluster nodes and makes them one cluster; waits for ok. */
static void
cluster_start(struct harness *h)
{
	const char	*argv[32];
	char		 dir[512], port[16], addr[NODES][32];
	redisContext	*c;
	redisReply	*r;
	int64_t		 deadline;
	int		 i, n, ok;

	for (i = 0; i < NODES; i++) {
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
	for (i = 0; i < NODES; i++) {
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
	for (i = 0; i < NODES; i++)
		argv[n++] = addr[i];
	argv[n++] = "--cluster-replicas";
	argv[n++] = "0";
	argv[n++] = "--cluster-yes";
	argv[n] = NULL;
	if (harness_run(h, argv, WAIT_MS) != 0)
		harness_fail(h, "redis-cli --cluster create failed");
	for (deadline = harness_now_ms() + WAIT_MS;; harness_sleep_ms(50)) {
		for (i = 0, ok = 0; i < NODES; i++) {
			c = node(h, i);
			r = redisCommand(c, "CLUSTER INFO");
			ok += r != NULL && r->type == REDIS_REPLY_STRING &&
			    strstr(r->str, "cluster_state:ok") != NULL;
			freeReplyObject(r);
			redisFree(c);
		}
		if (ok == NODES)
			break;
		if (harness_now_ms() > deadline)
			harness_fail(h, "the cluster is not ok after %d ms",
			    WAIT_MS);
	}
}

/* Stops the nodes this test started (by their pid files). */
static int
cluster_teardown(void **state)
{
	char	*text;
	long	 pid;
	int	 i;

	for (i = 0; i < NODES; i++) {
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

/* The worker and the client pointed at a node: said plainly. */
static void
test_cluster_refused_plainly(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct harness_proc	 p;
	char			 url[64], *err;
	const char		*args[] = { "run", "--", "echo", "hi", NULL };
	int64_t			 deadline;
	pid_t			 w;

	cluster_start(h);
	snprintf(url, sizeof url, "redis://127.0.0.1:%d", ports[1]);
	w = harness_worker_launch(h, NULL, "--redis", url, "--kill-grace", "1",
	    "--shutdown-flush", "1", NULL);
	for (deadline = harness_now_ms() + WAIT_MS;; harness_sleep_ms(50)) {
		err = harness_read_file(h->w[h->nw - 1].err_path, NULL);
		if (err != NULL && strstr(err, "is a node of a Redis Cluster")
		    != NULL)
			break;
		free(err);
		if (harness_now_ms() > deadline)
			harness_fail(h, "the worker did not say it is a "
			    "cluster");
	}
	assert_null(strstr(err, "CROSSSLOT"));
	assert_null(strstr(err, "MOVED"));
	free(err);
	assert_true(harness_worker_alive(h, w));	/* waits, retries */
	harness_cli(h, &p, url, WAIT_MS, args);
	assert_int_not_equal(harness_proc_exit(&p), 0);
	assert_non_null(strstr(p.err, "is a node of a Redis Cluster"));
	assert_null(strstr(p.err, "MOVED"));
	harness_proc_release(&p);
	harness_stop_clean(h, w);
	harness_pass(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_cluster_slots_agree,
		    harness_setup, cluster_teardown),
		cmocka_unit_test_setup_teardown(test_cluster_refused_plainly,
		    harness_setup, cluster_teardown),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
