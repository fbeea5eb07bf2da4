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

#include "queue/cluster.h"
#include "tests/integration/cluster_world.h"
#include "tests/integration/harness.h"

#define NODES		CLUSTER_WORLD_PRIMARIES
#define WAIT_MS		CLUSTER_WORLD_WAIT_MS

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

	cluster_world_start3(h);
	c = cluster_node_ctx(h, 0);
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
			assert_int_equal(want->port, cluster_ports[0]);
		freeReplyObject(r);
	}
	assert_true(moved > 0);		/* two nodes of three serve most */
	cluster_map_release(&map);
	redisFree(c);
	harness_pass(h);
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

	cluster_world_start3(h);
	for (i = 0; i < NODES; i++) {
		cluster_queue_on(h, i, "work", q[i], sizeof q[i]);
		cluster_queue_on(h, (i + 1) % NODES, "reply", rq[i], sizeof rq[i]);
	}
	/* What a worker of q[0] that died left: one reply to deliver, one
	   delivered already (its mark is there) but not yet cleared. */
	snprintf(pend, sizeof pend, "execq:{%s}:replies", q[0]);
	snprintf(stream, sizeof stream, "q:{%s}:normal", rq[0]);
	r = cluster_kcmd(h, pend, "HSET %s n:dead.1 %s\n{\"type\":\"EXEC_RESULT\","
	    "\"id\":\"left-1\",\"exit_code\":0} n:dead.2 %s\n{\"type\":"
	    "\"EXEC_RESULT\",\"id\":\"left-2\",\"exit_code\":0}", pend, stream,
	    stream);
	freeReplyObject(r);
	snprintf(sent, sizeof sent, "q:{%s}:sent:n:dead.2", rq[0]);
	freeReplyObject(cluster_kcmd(h, sent, "SET %s 1", sent));
	for (i = 0; i < NODES; i++) {
		snprintf(url, sizeof url, "redis://127.0.0.1:%d",
		    cluster_ports[(i + 2) % NODES]);
		snprintf(consumer, sizeof consumer, "cw%d", i);
		w[i] = harness_worker_launch(h, NULL, "--redis", url,
		    "--queue", q[i], "--consumer", consumer, "--kill-grace",
		    "1", "--shutdown-flush", "1", NULL);
	}
	for (i = 0; i < NODES; i++) {
		snprintf(id[i], sizeof id[i], "%s.fg", q[i]);
		snprintf(sid[i], sizeof sid[i], "%s.bg", q[i]);
		snprintf(cmd, sizeof cmd, "echo hello-%d", i);
		cluster_submit(h, q[i], id[i], rq[i], cmd, 0);
		cluster_submit(h, q[i], sid[i], rq[i], "echo session; exit 3", 1);
	}
	for (i = 0; i < NODES; i++) {
		snprintf(key, sizeof key, "q:{%s}:normal", rq[i]);
		a = cluster_wait_typed(h, key, id[i], "EXEC_RESULT");
		assert_int_equal(json_integer_value(json_object_get(a,
		    "exit_code")), 0);
		out = json_string_value(json_object_get(a, "stdout"));
		snprintf(cmd, sizeof cmd, "hello-%d\n", i);
		assert_non_null(out);
		assert_string_equal(out, cmd);
		json_decref(a);
		json_decref(cluster_wait_typed(h, key, sid[i], "EXEC_STARTED"));
		snprintf(key, sizeof key, "q:{%s}:high", rq[i]);
		a = cluster_wait_typed(h, key, sid[i], "EXEC_CALLBACK");
		assert_int_equal(json_integer_value(json_object_get(a,
		    "exit_code")), 3);
		json_decref(a);
	}
	/* The dead worker's: delivered once, the marked one not at all. */
	json_decref(cluster_wait_typed(h, stream, "left-1", "EXEC_RESULT"));
	for (i = 0; i < NODES; i++) {
		snprintf(key, sizeof key, "q:{%s}:normal", rq[i]);
		assert_int_equal(cluster_count_typed(h, key, id[i], "EXEC_RESULT"), 1);
		assert_int_equal(cluster_count_typed(h, key, sid[i], "EXEC_STARTED"),
		    1);
		snprintf(key, sizeof key, "q:{%s}:high", rq[i]);
		assert_int_equal(cluster_count_typed(h, key, sid[i], "EXEC_CALLBACK"),
		    1);
	}
	assert_int_equal(cluster_count_typed(h, stream, "left-1", "EXEC_RESULT"), 1);
	assert_int_equal(cluster_count_typed(h, stream, "left-2", "EXEC_RESULT"), 0);
	/* Nothing stays pending; each queue's keys are on its own shard. */
	for (i = 0; i < NODES; i++) {
		snprintf(pend, sizeof pend, "execq:{%s}:replies", q[i]);
		cluster_wait_empty(h, "HLEN", pend);
		snprintf(key, sizeof key, "execq:{%s}:session:%s", q[i],
		    sid[i]);
		r = cluster_kcmd(h, key, "HGET %s status", key);
		assert_int_equal(r->type, REDIS_REPLY_STRING);
		freeReplyObject(r);
		assert_int_equal(cluster_owner(h, key), i);
	}
	for (i = 0; i < NODES; i++)
		harness_stop_clean(h, w[i]);
	harness_pass(h);
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

	cluster_world_start(h, 1);
	for (primary = 0; !cluster_is_primary(h, primary); primary++)
		;
	cluster_queue_on(h, primary, "fo", q, sizeof q);
	for (i = 0; i < cluster_nnodes; i++)
		if (i != primary && cluster_is_primary(h, i))
			break;
	cluster_queue_on(h, i, "foreply", rq, sizeof rq);
	replica = cluster_replica_of(h, primary);
	snprintf(url, sizeof url, "redis://127.0.0.1:%d", cluster_ports[primary]);
	w = harness_worker_launch(h, NULL, "--redis", url, "--queue", q,
	    "--consumer", "fo1", "--kill-grace", "1", "--shutdown-flush", "1",
	    NULL);
	snprintf(path, sizeof path, "%s/ran", h->ws);
	snprintf(key, sizeof key, "q:{%s}:normal", rq);
	for (i = 0; i < n; i++) {
		snprintf(id, sizeof id, "fo-%d", i);
		snprintf(cmd, sizeof cmd, "echo %s >> %s", id, path);
		cluster_submit(h, q, id, rq, cmd, 0);
		if (i == n / 2) {
			/* Half way, and some answered: the replica takes over. */
			json_decref(cluster_wait_typed(h, key, "fo-10",
			    "EXEC_RESULT"));
			/* A manual failover gives up after 5 s when the
			   primary is slow to pause: asked again then. */
			deadline = harness_now_ms() + WAIT_MS;
			for (k = 0; !cluster_is_primary(h, replica); k++) {
				if (k % 250 == 0) {
					c = cluster_node_ctx(h, replica);
					r = redisCommand(c, "CLUSTER FAILOVER");
					if (k == 0 && (r == NULL ||
					    r->type == REDIS_REPLY_ERROR))
						harness_fail(h, "CLUSTER FAILOVER: "
						    "%s", r != NULL ? r->str :
						    c->errstr);
					freeReplyObject(r);
					redisFree(c);
				}
				if (harness_now_ms() > deadline)
					harness_fail(h, "no failover");
				harness_sleep_ms(20);
			}
		}
	}
	for (i = 0; i < n; i++) {
		snprintf(id, sizeof id, "fo-%d", i);
		a = cluster_wait_typed(h, key, id, "EXEC_RESULT");
		assert_int_equal(json_integer_value(json_object_get(a,
		    "exit_code")), 0);
		json_decref(a);
	}
	ran = harness_read_file(path, NULL);
	assert_non_null(ran);
	for (i = 0; i < n; i++) {
		char	line[80], *p;

		snprintf(id, sizeof id, "fo-%d", i);
		assert_int_equal(cluster_count_typed(h, key, id, "EXEC_RESULT"), 1);
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

/*
 * The client and the worker together on the cluster, each given the URL
 * of a node that serves neither the queue nor the reply: `execq run`
 * prints the command's output and exits with its code; a session started
 * with `execq spawn` is listed by `execq ps`, its log read with `execq
 * logs`, killed with `execq kill`, and `execq wait` sees it end; nothing
 * stays pending.
 */
static void
test_cluster_client_and_worker(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct harness_proc	 p;
	char			 q[64], url[64], wurl[64], pend[256];
	const char		*run[] = { "run", "--queue", q, "--", "sh", "-c",
				    "echo out-$((6*7)); exit 5", NULL };
	const char		*bg[] = { "spawn", "--queue", q, "--id", "cs-bg",
				    "--", "sh", "-c", "echo in-the-log; sleep 60",
				    NULL };
	const char		*ps[] = { "ps", "--queue", q, NULL };
	const char		*logs[] = { "logs", "--queue", q, "cs-bg",
				    NULL };
	const char		*kill[] = { "kill", "--queue", q, "cs-bg",
				    NULL };
	const char		*wait[] = { "wait", "--queue", q, "cs-bg",
				    NULL };
	int64_t			 deadline;
	pid_t			 w;

	cluster_world_start3(h);
	cluster_queue_on(h, 1, "cs", q, sizeof q);
	snprintf(wurl, sizeof wurl, "redis://127.0.0.1:%d", cluster_ports[0]);
	snprintf(url, sizeof url, "redis://127.0.0.1:%d", cluster_ports[2]);
	w = harness_worker_launch(h, NULL, "--redis", wurl, "--queue", q,
	    "--consumer", "cs1", "--kill-grace", "1", "--shutdown-flush", "1",
	    NULL);
	harness_cli(h, &p, url, WAIT_MS, run);
	if (harness_proc_exit(&p) != 5 || strstr(p.out, "out-42") == NULL)
		harness_fail(h, "execq run: exit %d, out '%s', err '%s'",
		    harness_proc_exit(&p), p.out, p.err);
	assert_null(strstr(p.err, "MOVED"));
	assert_null(strstr(p.err, "CROSSSLOT"));
	harness_proc_release(&p);
	harness_cli(h, &p, url, WAIT_MS, bg);
	if (harness_proc_exit(&p) != 0)
		harness_fail(h, "execq spawn: exit %d, err '%s'",
		    harness_proc_exit(&p), p.err);
	harness_proc_release(&p);
	for (deadline = harness_now_ms() + WAIT_MS;; harness_sleep_ms(50)) {
		harness_cli(h, &p, url, WAIT_MS, ps);
		if (harness_proc_exit(&p) == 0 && strstr(p.out, "cs-bg") !=
		    NULL)
			break;
		if (harness_now_ms() > deadline)
			harness_fail(h, "execq ps: exit %d, out '%s', err '%s'",
			    harness_proc_exit(&p), p.out, p.err);
		harness_proc_release(&p);
	}
	harness_proc_release(&p);
	for (deadline = harness_now_ms() + WAIT_MS;; harness_sleep_ms(50)) {
		harness_cli(h, &p, url, WAIT_MS, logs);
		if (harness_proc_exit(&p) == 0 && strstr(p.out,
		    "in-the-log") != NULL)
			break;
		if (harness_now_ms() > deadline)
			harness_fail(h, "execq logs: exit %d, out '%s', err "
			    "'%s'", harness_proc_exit(&p), p.out, p.err);
		harness_proc_release(&p);
	}
	harness_proc_release(&p);
	harness_cli(h, &p, url, WAIT_MS, kill);
	if (harness_proc_exit(&p) != 0)
		harness_fail(h, "execq kill: exit %d, out '%s', err '%s'",
		    harness_proc_exit(&p), p.out, p.err);
	harness_proc_release(&p);
	harness_cli(h, &p, url, WAIT_MS, wait);
	if (harness_proc_exit(&p) != 0 || strstr(p.out, "killed") == NULL)
		harness_fail(h, "execq wait: exit %d, out '%s', err '%s'",
		    harness_proc_exit(&p), p.out, p.err);
	harness_proc_release(&p);
	snprintf(pend, sizeof pend, "execq:{%s}:replies", q);
	cluster_wait_empty(h, "HLEN", pend);
	harness_stop_clean(h, w);
	harness_pass(h);
}

/*
 * The MCP server (`execq mcp`) on the cluster: a foreground exec's exit
 * code and output, a background exec's session, and a process call on
 * it (poll), each answered.
 */
static void
test_cluster_mcp(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct harness_proc	 p;
	char			 q[64], wurl[64], path[600], *script;
	const char		*text =
	    "{\"jsonrpc\":\"2.0\",\"id\":\"i\",\"method\":\"initialize\","
	    "\"params\":{\"protocolVersion\":\"2024-11-05\","
	    "\"capabilities\":{},\"clientInfo\":{\"name\":\"t\","
	    "\"version\":\"1\"}}}\n"
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
	    "{\"jsonrpc\":\"2.0\",\"id\":\"e\",\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"exec\",\"arguments\":{\"command\":"
	    "\"echo mcp-out; exit 4\"}}}\n"
	    "{\"jsonrpc\":\"2.0\",\"id\":\"b\",\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"exec\",\"arguments\":{\"command\":"
	    "\"echo bg-out; sleep 30\",\"background\":true}}}\n";
	json_t			*a, *o;
	json_error_t		 jerr;
	FILE			*f;
	char			*line, *nl;
	int			 seen_e = 0, seen_b = 0;
	pid_t			 w;

	cluster_world_start3(h);
	cluster_queue_on(h, 2, "mcpq", q, sizeof q);
	snprintf(wurl, sizeof wurl, "redis://127.0.0.1:%d", cluster_ports[1]);
	w = harness_worker_launch(h, NULL, "--redis", wurl, "--queue", q,
	    "--consumer", "cm1", "--kill-grace", "1", "--shutdown-flush", "1",
	    NULL);
	snprintf(path, sizeof path, "%s/mcp.jsonl", h->dir);
	if ((f = fopen(path, "w")) == NULL || fputs(text, f) == EOF ||
	    fclose(f) != 0)
		harness_fail(h, "cannot write %s", path);
	if (asprintf(&script, "EXECQ_QUEUE='%s' EXECQ_REDIS_URL="
	    "'redis://127.0.0.1:%d' exec \"$CLI\" mcp < '%s'", q,
	    cluster_ports[0], path) == -1)
		harness_fail(h, "no memory");
	harness_cli_sh(h, &p, WAIT_MS, script);
	free(script);
	if (harness_proc_exit(&p) != 0)
		harness_fail(h, "execq mcp: exit %d, err '%s'",
		    harness_proc_exit(&p), p.err);
	for (line = p.out; (nl = strchr(line, '\n')) != NULL; line = nl + 1) {
		*nl = '\0';
		if ((o = json_loads(line, 0, &jerr)) == NULL)
			harness_fail(h, "not JSON: %s", line);
		if (harness_jstr(o, "id") != NULL &&
		    strcmp(harness_jstr(o, "id"), "e") == 0) {
			seen_e = 1;
			if (harness_jint(o,
			    "result.structuredContent.exit_code") != 4)
				harness_fail(h, "mcp exec: exit code 4 "
				    "expected: %s", line);
		}
		if (harness_jstr(o, "id") != NULL &&
		    strcmp(harness_jstr(o, "id"), "b") == 0) {
			seen_b = 1;
			a = harness_jget(o, "result.structuredContent");
			if (a == NULL || harness_jstr(o,
			    "result.structuredContent.session_id") == NULL)
				harness_fail(h, "mcp exec background: a "
				    "session id expected: %s", line);
		}
		json_decref(o);
	}
	assert_true(seen_e && seen_b);
	assert_null(strstr(p.err, "CROSSSLOT"));
	harness_proc_release(&p);
	harness_stop_clean(h, w);
	harness_pass(h);
}

/*
 * The users of docs/acl/execq-cluster.acl, on every node (but the
 * default user's line: the test's own connections have no password), as
 * Redis loads them: ACL SETUSER with the line's rules, a selector in
 * parentheses one argument.
 */
static void
acl_load(struct harness *h, const char *path)
{
	char		*text, *line, *save, *p, *tok[64];
	const char	*argv[66];
	redisReply	*r;
	redisContext	*c;
	int		 n, i, depth;

	if ((text = harness_read_file(path, NULL)) == NULL)
		harness_fail(h, "cannot read %s", path);
	for (line = strtok_r(text, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == '#' || strncmp(line, "user ", 5) != 0 ||
		    strncmp(line, "user default ", 13) == 0)
			continue;
		n = 0;
		for (p = line + 5; *p != '\0' && n < 64;) {
			while (*p == ' ')
				*p++ = '\0';
			if (*p == '\0')
				break;
			tok[n++] = p;
			for (depth = 0; *p != '\0' && (*p != ' ' || depth > 0);
			    p++)
				depth += *p == '(' ? 1 : *p == ')' ? -1 : 0;
		}
		argv[0] = "ACL";
		argv[1] = "SETUSER";
		for (i = 0; i < n; i++) {
			argv[i + 2] = tok[i];
			if (strcmp(tok[i], ">WORKER_PASSWORD") == 0)
				argv[i + 2] = ">wk-pw-cluster";
			else if (strcmp(tok[i], ">AGENT_PASSWORD") == 0)
				argv[i + 2] = ">ag-pw-cluster";
			else if (strcmp(tok[i], ">OPERATOR_PASSWORD") == 0)
				argv[i + 2] = ">op-pw-cluster";
		}
		for (i = 0; i < cluster_nnodes; i++) {
			c = cluster_node_ctx(h, i);
			r = redisCommandArgv(c, n + 2, argv, NULL);
			if (r == NULL || r->type == REDIS_REPLY_ERROR)
				harness_fail(h, "ACL SETUSER %s: %s", tok[0],
				    r != NULL ? r->str : c->errstr);
			freeReplyObject(r);
			redisFree(c);
		}
	}
	free(text);
}

/*
 * docs/acl/execq-cluster.acl as shipped: the worker logs in as worker,
 * `execq run` as agent (its own lane, its own reply queue, on other
 * shards), `execq workers` and `execq ps` as operator; each works, and
 * no node refused a command of theirs but the agent's look at live
 * output, which execq.acl keeps from agents.
 */
static void
test_cluster_acl_users(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct harness_proc	 p;
	char			 wurl[128], aurl[128], ourl[128];
	const char		*run[] = { "run", "--queue", "exec", "--",
				    "echo", "agent-ok", NULL };
	const char		*workers[] = { "workers", "--queue", "exec",
				    NULL };
	const char		*ps[] = { "ps", "--queue", "exec", NULL };
	redisContext		*c;
	redisReply		*r;
	int64_t			 deadline;
	size_t			 j;
	pid_t			 w;
	int			 i;

	cluster_world_start3(h);
	acl_load(h, "docs/acl/execq-cluster.acl");
	for (i = 0; i < cluster_nnodes; i++) {
		c = cluster_node_ctx(h, i);
		freeReplyObject(redisCommand(c, "ACL LOG RESET"));
		redisFree(c);
	}
	snprintf(wurl, sizeof wurl, "redis://worker:wk-pw-cluster@127.0.0.1:"
	    "%d", cluster_ports[0]);
	snprintf(aurl, sizeof aurl, "redis://agent:ag-pw-cluster@127.0.0.1:"
	    "%d", cluster_ports[1]);
	snprintf(ourl, sizeof ourl, "redis://operator:op-pw-cluster@"
	    "127.0.0.1:%d", cluster_ports[2]);
	w = harness_worker_launch(h, NULL, "--redis", wurl, "--queue", "exec",
	    "--agents", "agent", "--consumer", "acl-w", "--kill-grace", "1",
	    "--shutdown-flush", "1", NULL);
	/* The worker makes the agent's lanes as it starts reading. */
	for (deadline = harness_now_ms() + WAIT_MS;; harness_sleep_ms(20)) {
		r = cluster_kcmd(h, "q:{exec}:agent.normal", "EXISTS %s",
		    "q:{exec}:agent.normal");
		i = (int)r->integer;
		freeReplyObject(r);
		if (i == 1)
			break;
		if (harness_now_ms() > deadline)
			harness_fail(h, "the worker made no lane for agent");
	}
	harness_cli(h, &p, aurl, WAIT_MS, run);
	if (harness_proc_exit(&p) != 0 || strstr(p.out, "agent-ok") == NULL)
		harness_fail(h, "execq run as agent: exit %d, out '%s', err "
		    "'%s'", harness_proc_exit(&p), p.out, p.err);
	harness_proc_release(&p);
	harness_cli(h, &p, ourl, WAIT_MS, workers);
	if (harness_proc_exit(&p) != 0 || strstr(p.out, "acl-w") == NULL)
		harness_fail(h, "execq workers as operator: exit %d, out '%s', "
		    "err '%s'", harness_proc_exit(&p), p.out, p.err);
	harness_proc_release(&p);
	harness_cli(h, &p, ourl, WAIT_MS, ps);
	if (harness_proc_exit(&p) != 0)
		harness_fail(h, "execq ps as operator: exit %d, err '%s'",
		    harness_proc_exit(&p), p.err);
	harness_proc_release(&p);
	for (i = 0; i < cluster_nnodes; i++) {
		c = cluster_node_ctx(h, i);
		r = redisCommand(c, "ACL LOG");
		if (r == NULL || r->type != REDIS_REPLY_ARRAY)
			harness_fail(h, "node %d: ACL LOG", i);
		/* The agent may not read live output (execq.acl says why):
		   the client's look at it is refused, and it goes without. */
		for (j = 0; j < r->elements; j++)
			if (strncmp(r->element[j]->element[7]->str,
			    "execq:{exec}:out:", 17) != 0)
				harness_fail(h, "node %d refused %s: %s",
				    i, r->element[j]->element[9]->str,
				    r->element[j]->element[7]->str);
		freeReplyObject(r);
		redisFree(c);
	}
	harness_stop_clean(h, w);
	harness_pass(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_cluster_slots_agree,
		    harness_setup, cluster_world_teardown),
		cmocka_unit_test_setup_teardown(test_cluster_three_queues,
		    harness_setup, cluster_world_teardown),
		cmocka_unit_test_setup_teardown(test_cluster_client_and_worker,
		    harness_setup, cluster_world_teardown),
		cmocka_unit_test_setup_teardown(test_cluster_acl_users,
		    harness_setup, cluster_world_teardown),
		cmocka_unit_test_setup_teardown(test_cluster_mcp,
		    harness_setup, cluster_world_teardown),
		cmocka_unit_test_setup_teardown(test_cluster_failover,
		    harness_setup, cluster_world_teardown),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
