/*
 * The client (execq) on a Redis Cluster (issue 25, item 5), on a real
 * three-primary cluster the test makes on 127.0.0.1: every key of a
 * queue carries the queue's name as hash tag (q:{Q}:normal,
 * execq:{Q}:session:<id>), each command goes to the node serving its
 * key (the client's URL names a node that does not serve Q: MOVED is
 * followed), and the answers are read from the reply queue's shard, the
 * live output from the queue's. No worker: the test writes what a
 * worker would, on the right node, with a connection of its own.
 */

#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
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
#include "tests/integration/cluster_world.h"
#include "tests/integration/harness.h"

#define WAIT_MS		CLUSTER_WORLD_WAIT_MS

/* The cluster's slot map, as node 0 tells it. */
static void
cluster_map_get(struct harness *h, struct cluster_map *map)
{
	redisContext	*c = cluster_node_ctx(h, 0);
	redisReply	*r = redisCommand(c, "CLUSTER SLOTS");

	if (cluster_map_parse(map, r, "127.0.0.1") == -1)
		harness_fail(h, "CLUSTER SLOTS: no map");
	freeReplyObject(r);
	redisFree(c);
}

/* The port of the node serving key. */
static int
key_port(const struct cluster_map *map, const char *key)
{
	const struct cluster_node	*n;

	n = cluster_map_node(map, cluster_keyslot(key, strlen(key)));
	return (n != NULL ? n->port : -1);
}

/* A connection to the node serving key (the test's own, no redirect). */
static redisContext *
key_node(struct harness *h, const struct cluster_map *map, const char *key)
{
	redisContext	*c = redisConnect("127.0.0.1", key_port(map, key));

	if (c == NULL || c->err)
		harness_fail(h, "the node of %s: %s", key,
		    c != NULL ? c->errstr : "no memory");
	return (c);
}

/*
 * Names for the queue Q and the reply queue R (prefixes pq and pr): Q
 * not served by node 0, where the client connects, and R by a third
 * node, neither Q's nor node 0's.
 */
static void
pick_queues(struct harness *h, const struct cluster_map *map,
    const char *pq, const char *pr, char *q, char *r, size_t size)
{
	int	i, qport = -1;

	for (i = 0; i < 1000; i++) {
		snprintf(q, size, "%s%d", pq, i);
		if ((qport = key_port(map, q)) != cluster_ports[0])
			break;
	}
	for (i = 0; i < 1000; i++) {
		snprintf(r, size, "%s%d", pr, i);
		if (key_port(map, r) != qport && key_port(map, r) != cluster_ports[0])
			return;
	}
	harness_fail(h, "no names on the shards wanted");
}

/* A client run in the background: its pid, its output's files. */
struct bg {
	pid_t	pid;
	char	out[600], err[610];
};

/* Starts the client with args against node 0, not waiting for it. */
static void
bg_start(struct harness *h, struct bg *b, const char *const *args)
{
	const char	*argv[32];
	char		 url[64], state[600];
	size_t		 i;
	int		 fd;

	snprintf(url, sizeof url, "redis://127.0.0.1:%d", cluster_ports[0]);
	snprintf(state, sizeof state, "%s/cli-state", h->dir);
	snprintf(b->out, sizeof b->out, "%s/bg.%d.out", h->dir,
	    (int)harness_now_ms() % 100000);
	snprintf(b->err, sizeof b->err, "%s.err", b->out);
	argv[0] = harness_cli_path(h);
	for (i = 0; args[i] != NULL && i < 30; i++)
		argv[i + 1] = args[i];
	argv[i + 1] = NULL;
	if ((b->pid = fork()) == -1)
		harness_fail(h, "fork: %m");
	if (b->pid > 0)
		return;
	/* The child: our environment minus EXECQ_*, plus the URL. */
	for (i = 0; environ[i] != NULL;)
		if (strncmp(environ[i], "EXECQ_", 6) == 0) {
			char	*eq = strchr(environ[i], '='), name[256];

			snprintf(name, sizeof name, "%.*s",
			    (int)(eq - environ[i]), environ[i]);
			unsetenv(name);
		} else
			i++;
	setenv("EXECQ_REDIS_URL", url, 1);
	setenv("XDG_STATE_HOME", state, 1);
	if ((fd = open(b->out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) == -1 || dup2(fd, 1) == -1)
		_exit(126);
	if ((fd = open(b->err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) == -1 || dup2(fd, 2) == -1)
		_exit(126);
	execv(argv[0], (char *const *)argv);
	_exit(127);
}

/* Waits (a deadline) for the client to end: its exit code; *out, *err. */
static int
bg_wait(struct harness *h, struct bg *b, char **out, char **err)
{
	int64_t	deadline = harness_now_ms() + WAIT_MS;
	int	status;
	pid_t	p;

	while ((p = waitpid(b->pid, &status, WNOHANG)) == 0) {
		if (harness_now_ms() > deadline) {
			kill(b->pid, SIGKILL);
			waitpid(b->pid, &status, 0);
			harness_fail(h, "the client did not end");
		}
		harness_sleep_ms(20);
	}
	if (p == -1)
		harness_fail(h, "waitpid: %m");
	*out = harness_read_file(b->out, NULL);
	*err = harness_read_file(b->err, NULL);
	return (WIFEXITED(status) ? WEXITSTATUS(status) : 128 +
	    WTERMSIG(status));
}

/*
 * Waits (a deadline) for the first item of stream on its node: the
 * item's JSON (the caller decrefs). The client that puts it there is
 * still running (or failed: then its stderr says why).
 */
static json_t *
wait_item(struct harness *h, const struct cluster_map *map,
    const char *stream, struct bg *b)
{
	int64_t		 deadline = harness_now_ms() + WAIT_MS;
	redisContext	*c = key_node(h, map, stream);
	redisReply	*r;
	json_t		*item = NULL;
	char		*err;

	for (;; harness_sleep_ms(20)) {
		r = redisCommand(c, "XRANGE %s - + COUNT 1", stream);
		if (r != NULL && r->type == REDIS_REPLY_ARRAY &&
		    r->elements == 1 && r->element[0]->elements == 2 &&
		    r->element[0]->element[1]->elements >= 2)
			item = json_loads(r->element[0]->element[1]->element[1]
			    ->str, 0, NULL);
		freeReplyObject(r);
		if (item != NULL)
			break;
		if (harness_now_ms() > deadline ||
		    waitpid(b->pid, NULL, WNOHANG) == b->pid) {
			err = harness_read_file(b->err, NULL);
			harness_fail(h, "no item on %s; the client said: %s",
			    stream, err != NULL ? err : "");
		}
	}
	redisFree(c);
	return (item);
}

/* XADD stream * <field> <value>..., on the stream's node. */
static void
xadd(struct harness *h, const struct cluster_map *map, const char *stream,
    int n, const char **fv)
{
	redisContext	*c = key_node(h, map, stream);
	redisReply	*r;
	const char	*argv[16];
	int		 i;

	argv[0] = "XADD";
	argv[1] = stream;
	argv[2] = "*";
	for (i = 0; i < n && i < 12; i++)
		argv[3 + i] = fv[i];
	r = redisCommandArgv(c, 3 + i, argv, NULL);
	if (r == NULL || r->type != REDIS_REPLY_STRING)
		harness_fail(h, "XADD %s: %s", stream, r == NULL ? c->errstr :
		    r->type == REDIS_REPLY_ERROR ? r->str : "not an id");
	freeReplyObject(r);
	redisFree(c);
}

/*
 * execq submit: its item on q:{Q}:normal, on Q's shard (the client's
 * URL names another node: MOVED followed); the answer written there by
 * hand on q:{R}:normal, R's shard, read and printed.
 */
static void
test_cluster_client_submit_answer(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct cluster_map	 map;
	struct bg		 b;
	json_t			*item;
	char			 q[32], r[32], lane[64], answers[64];
	char			 raw[256], *out, *err;
	const char		*args[] = { "submit", "--queue", q, "--wait",
				    "30", "--raw", raw, NULL };
	const char		*answer[] = { "item",
				    "{\"type\":\"EXEC_RESULT\",\"id\":\"cc-1\","
				    "\"exit_code\":0,\"stdout\":\"hi\\n\","
				    "\"stderr\":\"\"}" };

	cluster_world_start3(h);
	cluster_map_get(h, &map);
	pick_queues(h, &map, "cq", "cr", q, r, sizeof q);
	snprintf(lane, sizeof lane, "q:{%s}:normal", q);
	snprintf(answers, sizeof answers, "q:{%s}:normal", r);
	snprintf(raw, sizeof raw, "{\"id\":\"cc-1\",\"type\":\"EXEC\","
	    "\"reply_to\":\"%s\",\"args\":{\"cmd\":\"echo hi\"}}", r);
	bg_start(h, &b, args);
	item = wait_item(h, &map, lane, &b);
	assert_string_equal(harness_jstr(item, "id"), "cc-1");
	assert_string_equal(harness_jstr(item, "reply_to"), r);
	json_decref(item);
	xadd(h, &map, answers, 2, answer);
	assert_int_equal(bg_wait(h, &b, &out, &err), 0);
	assert_non_null(strstr(out, "\"id\":\"cc-1\""));
	assert_null(strstr(err, "MOVED"));
	free(out);
	free(err);
	cluster_map_release(&map);
	harness_pass(h);
}

/*
 * execq run: the live output, on Q's shard (execq:{Q}:out:<id>), and
 * the answer, on the private reply queue's, read apart (one XREAD on
 * both would be CROSSSLOT): the output shown, the exit code taken.
 */
static void
test_cluster_client_run_live(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct cluster_map	 map;
	struct bg		 b;
	json_t			*item;
	char			 q[32], r[32], lane[64], live[128];
	char			 answers[256], result[256], *out, *err;
	const char		*args[] = { "run", "--queue", q, "--wait",
				    "30", "--", "echo", "hi", NULL };
	const char		*chunk[] = { "fd", "1", "offset", "0", "data",
				    "hi\n" };
	const char		*answer[] = { "item", result };

	cluster_world_start3(h);
	cluster_map_get(h, &map);
	pick_queues(h, &map, "rq", "rr", q, r, sizeof q);
	snprintf(lane, sizeof lane, "q:{%s}:normal", q);
	bg_start(h, &b, args);
	item = wait_item(h, &map, lane, &b);
	assert_true(harness_jbool(item, "args.stream"));
	snprintf(live, sizeof live, "execq:{%s}:out:%s", q,
	    harness_jstr(item, "id"));
	snprintf(answers, sizeof answers, "q:{%s}:normal",
	    harness_jstr(item, "reply_to"));
	snprintf(result, sizeof result, "{\"type\":\"EXEC_RESULT\",\"id\":"
	    "\"%s\",\"exit_code\":3,\"stdout\":\"hi\\n\",\"stderr\":\"\"}",
	    harness_jstr(item, "id"));
	json_decref(item);
	xadd(h, &map, live, 6, chunk);
	xadd(h, &map, answers, 2, answer);
	assert_int_equal(bg_wait(h, &b, &out, &err), 3);
	assert_non_null(strstr(out, "hi\n"));
	assert_null(strstr(err, "CROSSSLOT"));
	assert_null(strstr(err, "MOVED"));
	free(out);
	free(err);
	cluster_map_release(&map);
	harness_pass(h);
}

/* A command of the client, run to its end: its exit code, *out. */
static int
cli_run(struct harness *h, const char *const *args, char **out)
{
	struct bg	 b;
	char		*err;
	int		 rc;

	bg_start(h, &b, args);
	rc = bg_wait(h, &b, out, &err);
	if (rc != 0)
		fprintf(stderr, "execq %s: %s\n", args[0], err);
	free(err);
	return (rc);
}

/*
 * The execq: keys are the queue's: execq ps lists a session written at
 * execq:{Q}:session:<id> (indexed in execq:{Q}:sessions), execq dead
 * (the list) reads q:{Q}:dead, execq queues counts it, execq workers reads
 * execq:{Q}:workers; each on Q's shard, the URL naming another node.
 */
static void
test_cluster_client_keys_of_the_queue(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct cluster_map	 map;
	redisContext		*c;
	redisReply		*rep;
	json_t			*o;
	char			 q[32], r[32], key[128], *out;
	const char		*ps[] = { "ps", "--queue", q, NULL };
	const char		*dead[] = { "dead", "--queue", q, "--json",
				    NULL };
	const char		*queues[] = { "queues", "--queue", q, "--json",
				    NULL };
	const char		*workers[] = { "workers", "--queue", q, NULL };
	const char		*letter[] = { "item", "{\"id\":\"cc-dead-1\","
				    "\"type\":\"EXEC\",\"args\":{\"cmd\":"
				    "\"false\"}}", "lane", "", "id",
				    "cc-dead-1" };

	cluster_world_start3(h);
	cluster_map_get(h, &map);
	pick_queues(h, &map, "kq", "kr", q, r, sizeof q);
	snprintf(key, sizeof key, "execq:{%s}:session:cc-sess-1", q);
	c = key_node(h, &map, key);
	rep = redisCommand(c, "HSET %s status running command %s worker w1 "
	    "pid 42 started_ms %lld", key, "sleep 60",
	    (long long)harness_now_ms());
	assert_int_equal(rep->type, REDIS_REPLY_INTEGER);
	freeReplyObject(rep);
	rep = redisCommand(c, "ZADD execq:{%s}:sessions %lld cc-sess-1", q,
	    (long long)harness_now_ms());
	assert_int_equal(rep->type, REDIS_REPLY_INTEGER);
	freeReplyObject(rep);
	redisFree(c);
	assert_int_equal(cli_run(h, ps, &out), 0);
	assert_non_null(strstr(out, "cc-sess-1"));
	free(out);

	snprintf(key, sizeof key, "q:{%s}:dead", q);
	letter[3] = key;
	xadd(h, &map, key, 6, letter);
	assert_int_equal(cli_run(h, dead, &out), 0);
	assert_non_null(strstr(out, "cc-dead-1"));
	free(out);
	assert_int_equal(cli_run(h, queues, &out), 0);
	o = json_loads(out, 0, NULL);
	assert_non_null(o);
	assert_int_equal(harness_jint(o, "dead"), 1);
	json_decref(o);
	free(out);
	assert_int_equal(cli_run(h, workers, &out), 0);
	free(out);
	cluster_map_release(&map);
	harness_pass(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_cluster_client_submit_answer, harness_setup,
		    cluster_world_teardown),
		cmocka_unit_test_setup_teardown(test_cluster_client_run_live,
		    harness_setup, cluster_world_teardown),
		cmocka_unit_test_setup_teardown(
		    test_cluster_client_keys_of_the_queue, harness_setup,
		    cluster_world_teardown),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
