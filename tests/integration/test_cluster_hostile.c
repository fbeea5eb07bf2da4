/*
 * A hostile pass on the worker on a Redis Cluster (issue 25, item 5):
 * each test tries to break "nothing accepted is lost, nothing is done
 * twice, every reply once" on a real cluster (cluster_world.c): a
 * session's worker killed, the reply queue's shard killed while answers
 * are delivered, PROCESS items forwarded between two workers, retries
 * and dead letters, an ACL user, a worker killed mid-command, a worker
 * started before the cluster is, the node of its URL killed.
 */

#include <sys/types.h>

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

#include "tests/integration/cluster_world.h"
#include "tests/integration/harness.h"

#define WAIT_MS		CLUSTER_WORLD_WAIT_MS

/* A worker of queue on node i's URL (extra flags after; NULL-ended). */
static pid_t
worker(struct harness *h, int node, const char *queue, const char *consumer,
    const char *claim_idle, const char *wait_replicas)
{
	char	url[64];

	snprintf(url, sizeof url, "redis://127.0.0.1:%d", cluster_ports[node]);
	return (harness_worker_launch(h, NULL, "--redis", url, "--queue", queue,
	    "--consumer", consumer, "--kill-grace", "1", "--shutdown-flush",
	    "1", "--claim-idle", claim_idle, "--redis-wait-replicas",
	    wait_replicas, NULL));
}

/* A string member of an answer, or "". */
static const char *
jstr(json_t *o, const char *name)
{
	const char	*s = json_string_value(json_object_get(o, name));

	return (s != NULL ? s : "");
}

/* "execq:{queue}:replies" is emptied (every reply delivered). */
static void
expect_no_pending(struct harness *h, const char *queue)
{
	char	key[256];

	snprintf(key, sizeof key, "execq:{%s}:replies", queue);
	cluster_wait_empty(h, "HLEN", key);
}

/* Waits until stream key holds n entries. */
static void
wait_xlen(struct harness *h, const char *key, long long n)
{
	redisReply	*r;
	int64_t		 deadline = harness_now_ms() + WAIT_MS;
	long long	 got;

	for (;; harness_sleep_ms(20)) {
		r = cluster_kcmd(h, key, "XLEN %s", key);
		got = r->integer;
		freeReplyObject(r);
		if (got == n)
			return;
		if (harness_now_ms() > deadline)
			harness_fail(h, "%s holds %lld entries, not %lld", key,
			    got, n);
	}
}

/* A primary other than not (-1: any). */
static int
primary_but(struct harness *h, int not)
{
	int	i;

	for (i = 0; i < cluster_nnodes; i++)
		if (i != not && cluster_is_primary(h, i))
			return (i);
	harness_fail(h, "no primary but node %d", not);
}

/* How many lines of the workspace's file name are line. */
static int
ws_count(struct harness *h, const char *name, const char *line)
{
	char	path[600], want[128], *text, *p;
	int	n = 0;

	snprintf(path, sizeof path, "%s/%s", h->ws, name);
	if ((text = harness_read_file(path, NULL)) == NULL)
		return (0);
	snprintf(want, sizeof want, "%s\n", line);
	for (p = text; (p = strstr(p, want)) != NULL; p++)
		n += p == text || p[-1] == '\n';
	free(text);
	return (n);
}

/*
 * 1. A session's worker is SIGKILLed (its holder too); a second worker
 * of the queue declares the session lost: its one EXEC_CALLBACK goes
 * through the pending replies to the reply queue's shard, once.
 */
static void
test_hostile_lost_session(void **state)
{
	struct harness	*h = harness_fixture(state);
	char		 q[64], rq[64], high[256], normal[256], key[256];
	const char	*sid = "lost-1";
	redisReply	*r;
	json_t		*a;
	pid_t		 w1, w2;

	cluster_world_start3(h);
	cluster_queue_on(h, 0, "lost", q, sizeof q);
	cluster_queue_on(h, 1, "lostreply", rq, sizeof rq);
	snprintf(normal, sizeof normal, "q:{%s}:normal", rq);
	snprintf(high, sizeof high, "q:{%s}:high", rq);
	w1 = worker(h, 2, q, "la", "1", "0");
	cluster_submit(h, q, sid, rq, "sleep 7341", 1);
	json_decref(cluster_wait_typed(h, normal, sid, "EXEC_STARTED"));
	harness_wait_running(h, "sleep 7341");
	harness_worker_kill(h, w1);
	w2 = worker(h, 1, q, "lb", "1", "0");
	a = cluster_wait_typed(h, high, sid, "EXEC_CALLBACK");
	assert_string_equal(jstr(a, "status"), "lost");
	assert_string_equal(jstr(a, "worker"), "la");
	json_decref(a);
	expect_no_pending(h, q);
	assert_int_equal(cluster_count_typed(h, high, sid, "EXEC_CALLBACK"), 1);
	assert_int_equal(cluster_owner(h, high), 1);
	snprintf(key, sizeof key, "execq:{%s}:session:%s", q, sid);
	r = cluster_kcmd(h, key, "HGET %s status", key);
	assert_int_equal(r->type, REDIS_REPLY_STRING);
	assert_string_equal(r->str, "lost");
	freeReplyObject(r);
	harness_kill_procs("sleep 7341", SIGKILL);
	harness_stop_clean(h, w2);
	harness_pass(h);
}

/*
 * 2. The reply queue's primary is SIGKILLed while answers flow to it;
 * its replica takes over by itself (cluster-node-timeout 1 s). The
 * worker, on another shard, must find the slot's new primary for the
 * replies it holds: every answer arrives once, none runs twice, and
 * nothing stays pending. With redis_wait_replicas 1, a reply is let go
 * of only once the replica has it: the kill loses none.
 */
static void
test_hostile_reply_shard_killed(void **state)
{
	struct harness	*h = harness_fixture(state);
	char		 q[64], rq[64], id[64], key[256], cmd[1024];
	char		 path[600];
	int		 qp, rp, replica, i, n = 60;
	json_t		*a;
	pid_t		 w;

	cluster_world_start_opts(h, 1, 1000);
	qp = primary_but(h, -1);
	rp = primary_but(h, qp);
	cluster_queue_on(h, qp, "rk", q, sizeof q);
	cluster_queue_on(h, rp, "rkreply", rq, sizeof rq);
	replica = cluster_replica_of(h, rp);
	w = worker(h, qp, q, "rk1", "30", "1");
	snprintf(path, sizeof path, "%s/ran", h->ws);
	snprintf(key, sizeof key, "q:{%s}:normal", rq);
	for (i = 0; i < n; i++) {
		snprintf(id, sizeof id, "rk-%d", i);
		snprintf(cmd, sizeof cmd, "echo %s >> %s", id, path);
		cluster_submit(h, q, id, rq, cmd, 0);
		if (i == n / 3) {
			json_decref(cluster_wait_typed(h, key, "rk-5",
			    "EXEC_RESULT"));
			cluster_node_kill(h, rp);
		}
	}
	cluster_wait_primary(h, replica);
	for (i = 0; i < n; i++) {
		snprintf(id, sizeof id, "rk-%d", i);
		a = cluster_wait_typed(h, key, id, "EXEC_RESULT");
		assert_int_equal(json_integer_value(json_object_get(a,
		    "exit_code")), 0);
		json_decref(a);
	}
	expect_no_pending(h, q);
	for (i = 0; i < n; i++) {
		snprintf(id, sizeof id, "rk-%d", i);
		if (cluster_count_typed(h, key, id, "EXEC_RESULT") != 1)
			harness_fail(h, "%s answered %d times", id,
			    cluster_count_typed(h, key, id, "EXEC_RESULT"));
		if (ws_count(h, "ran", id) != 1)
			harness_fail(h, "%s ran %d times", id,
			    ws_count(h, "ran", id));
	}
	harness_stop_clean(h, w);
	harness_pass(h);
}

/*
 * 3. Two workers of one queue: PROCESS items for worker A's session,
 * all read by worker B while A is frozen (SIGSTOP), go to A's inbox
 * q:{Q}:ctl:<A> and are answered by A once each; a kill ends the session
 * with one callback.
 */
static void
test_hostile_forward(void **state)
{
	struct harness	*h = harness_fixture(state);
	char		 q[64], rq[64], normal[256], high[256], inbox[256];
	char		 lease[256], pid_[64], token[128], ctl[256];
	const char	*sid = "fw-s";
	redisReply	*r;
	json_t		*a, *item;
	pid_t		 wa, wb, proc;
	int64_t		 deadline;
	int		 i, k = 5;

	cluster_world_start3(h);
	cluster_queue_on(h, 1, "fw", q, sizeof q);
	cluster_queue_on(h, 2, "fwreply", rq, sizeof rq);
	snprintf(normal, sizeof normal, "q:{%s}:normal", rq);
	snprintf(high, sizeof high, "q:{%s}:high", rq);
	wa = worker(h, 0, q, "fa", "30", "0");
	cluster_submit(h, q, sid, rq, "sleep 7342", 1);
	a = cluster_wait_typed(h, normal, sid, "EXEC_STARTED");
	snprintf(token, sizeof token, "%s", jstr(a, "session_token"));
	json_decref(a);
	assert_true(token[0] != '\0');
	wb = worker(h, 0, q, "fb", "30", "0");
	snprintf(lease, sizeof lease, "execq:{%s}:worker:fb", q);
	for (deadline = harness_now_ms() + WAIT_MS;; harness_sleep_ms(20)) {
		r = cluster_kcmd(h, lease, "EXISTS %s", lease);
		i = (int)r->integer;
		freeReplyObject(r);
		if (i == 1)
			break;
		if (harness_now_ms() > deadline)
			harness_fail(h, "worker fb holds no lease");
	}
	proc = harness_worker_proc(h, wa);
	kill(proc, SIGSTOP);
	for (i = 0; i < k; i++) {
		snprintf(pid_, sizeof pid_, "fw-p%d", i);
		item = json_pack("{s:s, s:s, s:s, s:{s:s, s:s, s:s}}", "id",
		    pid_, "type", "PROCESS", "reply_to", rq, "args", "action",
		    "poll", "session_id", sid, "token", token);
		cluster_xadd(h, q, "ctl", item);
		json_decref(item);
	}
	/* Each is in A's inbox, or read by A's blocked read as it froze. */
	snprintf(inbox, sizeof inbox, "q:{%s}:ctl:fa", q);
	snprintf(ctl, sizeof ctl, "q:{%s}:ctl", q);
	for (deadline = harness_now_ms() + WAIT_MS;; harness_sleep_ms(20)) {
		r = cluster_kcmd(h, inbox, "XLEN %s", inbox);
		i = (int)r->integer;
		freeReplyObject(r);
		r = cluster_kcmd(h, ctl, "XPENDING %s execq - + 100 fa", ctl);
		i += (int)r->elements;
		freeReplyObject(r);
		if (i == k)
			break;
		if (harness_now_ms() > deadline) {
			kill(proc, SIGCONT);
			harness_fail(h, "%s holds %d of %d", inbox, i, k);
		}
	}
	kill(proc, SIGCONT);
	for (i = 0; i < k; i++) {
		snprintf(pid_, sizeof pid_, "fw-p%d", i);
		a = cluster_wait_typed(h, normal, pid_, "PROCESS_RESULT");
		assert_string_equal(jstr(a, "status"), "running");
		json_decref(a);
	}
	item = json_pack("{s:s, s:s, s:s, s:{s:s, s:s, s:s, s:s}}", "id",
	    "fw-kill", "type", "PROCESS", "reply_to", rq, "args", "action",
	    "kill", "session_id", sid, "token", token, "signal", "KILL");
	cluster_xadd(h, q, "ctl", item);
	json_decref(item);
	json_decref(cluster_wait_typed(h, normal, "fw-kill", "PROCESS_RESULT"));
	json_decref(cluster_wait_typed(h, high, sid, "EXEC_CALLBACK"));
	expect_no_pending(h, q);
	cluster_wait_empty(h, "XLEN", inbox);
	for (i = 0; i < k; i++) {
		snprintf(pid_, sizeof pid_, "fw-p%d", i);
		assert_int_equal(cluster_count_typed(h, normal, pid_,
		    "PROCESS_RESULT"), 1);
		assert_int_equal(cluster_count_typed(h, normal, pid_, "ERROR"),
		    0);
	}
	assert_int_equal(cluster_count_typed(h, normal, "fw-kill",
	    "PROCESS_RESULT"), 1);
	assert_int_equal(cluster_count_typed(h, high, sid, "EXEC_CALLBACK"), 1);
	harness_stop_clean(h, wa);
	harness_stop_clean(h, wb);
	harness_pass(h);
}

/*
 * 4. An item that fails (exit 1) with retries: each failed attempt waits
 * in the delayed set, comes back, and the last goes to the dead letters;
 * its notices and its answer reach the reply queue's shard once each.
 */
static void
test_hostile_retry_dead(void **state)
{
	struct harness	*h = harness_fixture(state);
	char		 q[64], rq[64], normal[256], key[256], cmd[700];
	const char	*id = "rt-1";
	json_t		*item, *a;
	pid_t		 w;

	cluster_world_start3(h);
	cluster_queue_on(h, 2, "rt", q, sizeof q);
	cluster_queue_on(h, 0, "rtreply", rq, sizeof rq);
	snprintf(normal, sizeof normal, "q:{%s}:normal", rq);
	w = worker(h, 1, q, "rt1", "30", "0");
	snprintf(cmd, sizeof cmd, "echo try >> %s/tries; exit 1", h->ws);
	item = json_pack("{s:s, s:s, s:s, s:{s:s, s:{s:i, s:[s], s:i}}}",
	    "id", id, "type", "EXEC", "reply_to", rq, "args", "command", cmd,
	    "retry", "max_attempts", 3, "on", "exit", "initial_ms", 50);
	cluster_xadd(h, q, "normal", item);
	json_decref(item);
	a = cluster_wait_typed(h, normal, id, "EXEC_RESULT");
	assert_string_equal(jstr(a, "retry"), "exhausted");
	assert_int_equal(json_integer_value(json_object_get(a, "attempt")), 3);
	json_decref(a);
	snprintf(key, sizeof key, "q:{%s}:dead", q);
	wait_xlen(h, key, 1);
	expect_no_pending(h, q);
	snprintf(key, sizeof key, "q:{%s}:delayed", q);
	cluster_wait_empty(h, "ZCARD", key);
	assert_int_equal(cluster_count_typed(h, normal, id, "EXEC_SCHEDULED"),
	    2);
	assert_int_equal(cluster_count_typed(h, normal, id, "EXEC_RESULT"), 1);
	assert_int_equal(ws_count(h, "tries", "try"), 3);
	harness_stop_clean(h, w);
	harness_pass(h);
}

/*
 * 5. An ACL user (docs/acl/execq.acl's worker line, on every node) in
 * the worker's URL; the default user may run no script, so a connection
 * that did not log in (a reply link to another node) fails its
 * deliveries. Answers arrive on other shards, and no node logged a
 * command refused.
 */
static void
test_hostile_acl_user(void **state)
{
	struct harness	*h = harness_fixture(state);
	char		 q[64], rq[64], url[128], normal[256], high[256];
	redisContext	*c;
	redisReply	*r;
	json_t		*a;
	pid_t		 w;
	int		 i;

	cluster_world_start3(h);
	cluster_all_cmd(h, "ACL SETUSER wk on >wk-secret-pw resetkeys ~q:* "
	    "~execq:* resetchannels +@all -@dangerous +client|id "
	    "+client|unblock +info +role");
	cluster_all_cmd(h, "ACL SETUSER default -eval -evalsha -eval_ro "
	    "-evalsha_ro -fcall -fcall_ro");
	cluster_all_cmd(h, "ACL LOG RESET");
	cluster_queue_on(h, 0, "acl", q, sizeof q);
	cluster_queue_on(h, 1, "aclreply", rq, sizeof rq);
	snprintf(normal, sizeof normal, "q:{%s}:normal", rq);
	snprintf(high, sizeof high, "q:{%s}:high", rq);
	snprintf(url, sizeof url, "redis://wk:wk-secret-pw@127.0.0.1:%d",
	    cluster_ports[2]);
	w = harness_worker_launch(h, NULL, "--redis", url, "--queue", q,
	    "--consumer", "acl1", "--kill-grace", "1", "--shutdown-flush", "1",
	    NULL);
	cluster_submit(h, q, "acl-fg", rq, "echo acl", 0);
	cluster_submit(h, q, "acl-bg", rq, "exit 4", 1);
	a = cluster_wait_typed(h, normal, "acl-fg", "EXEC_RESULT");
	assert_string_equal(jstr(a, "stdout"), "acl\n");
	json_decref(a);
	a = cluster_wait_typed(h, high, "acl-bg", "EXEC_CALLBACK");
	assert_int_equal(json_integer_value(json_object_get(a, "exit_code")),
	    4);
	json_decref(a);
	expect_no_pending(h, q);
	assert_int_equal(cluster_count_typed(h, normal, "acl-fg",
	    "EXEC_RESULT"), 1);
	assert_int_equal(cluster_count_typed(h, high, "acl-bg",
	    "EXEC_CALLBACK"), 1);
	for (i = 0; i < cluster_nnodes; i++) {
		c = cluster_node_ctx(h, i);
		r = redisCommand(c, "ACL LOG");
		if (r == NULL || r->type != REDIS_REPLY_ARRAY)
			harness_fail(h, "node %d: ACL LOG", i);
		if (r->elements != 0)
			harness_fail(h, "node %d refused %zu command(s) of the "
			    "worker", i, r->elements);
		freeReplyObject(r);
		redisFree(c);
	}
	harness_stop_clean(h, w);
	harness_pass(h);
}

/*
 * 6. A worker SIGKILLed mid-command, on an item with args.retries 1: the
 * next worker takes it over and runs it again (it ran only once to the
 * end), and its one answer reaches the reply queue's shard.
 */
static void
test_hostile_crash_redelivery(void **state)
{
	struct harness	*h = harness_fixture(state);
	char		 q[64], rq[64], normal[256], cmd[1024];
	const char	*id = "cr-1";
	json_t		*item, *a;
	pid_t		 w1, w2;

	cluster_world_start3(h);
	cluster_queue_on(h, 1, "cr", q, sizeof q);
	cluster_queue_on(h, 0, "crreply", rq, sizeof rq);
	snprintf(normal, sizeof normal, "q:{%s}:normal", rq);
	w1 = worker(h, 1, q, "cr1", "1", "0");
	snprintf(cmd, sizeof cmd, "if [ -e %s/mark ]; then echo second; else "
	    "touch %s/mark; sleep 7343; fi", h->ws, h->ws);
	item = json_pack("{s:s, s:s, s:s, s:{s:s, s:i}}", "id", id, "type",
	    "EXEC", "reply_to", rq, "args", "command", cmd, "retries", 1);
	cluster_xadd(h, q, "normal", item);
	json_decref(item);
	harness_wait_running(h, "sleep 7343");
	harness_worker_kill(h, w1);
	w2 = worker(h, 2, q, "cr2", "1", "0");
	a = cluster_wait_typed(h, normal, id, "EXEC_RESULT");
	assert_string_equal(jstr(a, "stdout"), "second\n");
	json_decref(a);
	expect_no_pending(h, q);
	assert_int_equal(cluster_count_typed(h, normal, id, "EXEC_RESULT"), 1);
	assert_int_equal(cluster_count_typed(h, normal, id, "ERROR"), 0);
	harness_kill_procs("sleep 7343", SIGKILL);
	harness_stop_clean(h, w2);
	harness_pass(h);
}

/* Waits until worker i's stderr says what. */
static void
wait_log(struct harness *h, unsigned i, const char *what)
{
	char	*text;
	int64_t	 deadline = harness_now_ms() + WAIT_MS;

	for (;; harness_sleep_ms(20)) {
		text = harness_read_file(h->w[i].err_path, NULL);
		if (text != NULL && strstr(text, what) != NULL) {
			free(text);
			return;
		}
		free(text);
		if (harness_now_ms() > deadline)
			harness_fail(h, "worker %u never said \"%s\"", i, what);
	}
}

/*
 * 7. A worker started before its nodes are one cluster (each says it is
 * a cluster node and serves no slot yet): it waits, and once the cluster
 * is made it serves its queue; an item is answered once, on its reply
 * queue's shard.
 */
static void
test_hostile_before_cluster(void **state)
{
	struct harness	*h = harness_fixture(state);
	char		 rq[64], normal[256];
	const char	*q = "early";
	json_t		*a;
	pid_t		 w;

	cluster_world_nodes(h, 0, 0);
	w = worker(h, 1, q, "early1", "30", "0");
	wait_log(h, 0, "no node serves slot");
	cluster_world_create(h);
	cluster_queue_on(h, (cluster_owner(h, q) + 1) % cluster_nnodes,
	    "earlyreply", rq, sizeof rq);
	snprintf(normal, sizeof normal, "q:{%s}:normal", rq);
	cluster_submit(h, q, "early-1", rq, "echo early", 0);
	a = cluster_wait_typed(h, normal, "early-1", "EXEC_RESULT");
	assert_string_equal(jstr(a, "stdout"), "early\n");
	json_decref(a);
	expect_no_pending(h, q);
	assert_int_equal(cluster_count_typed(h, normal, "early-1",
	    "EXEC_RESULT"), 1);
	harness_stop_clean(h, w);
	harness_pass(h);
}

/*
 * 8. The node of the worker's URL is killed (its replica takes over)
 * and the worker's connections are cut: with the URL's node down, it
 * finds its queue's node through the slot map it knows, and every item,
 * before and after, is answered once.
 */
static void
test_hostile_url_node_down(void **state)
{
	struct harness	*h = harness_fixture(state);
	char		 q[64], rq[64], normal[256], id[64];
	redisContext	*c;
	redisReply	*r;
	int		 qp, xp, rp, xr, i, n = 10;
	json_t		*a;
	pid_t		 w;

	cluster_world_start_opts(h, 1, 1000);
	qp = primary_but(h, -1);
	xp = primary_but(h, qp);
	for (rp = 0; rp == qp || rp == xp || !cluster_is_primary(h, rp); rp++)
		;
	cluster_queue_on(h, qp, "ud", q, sizeof q);
	cluster_queue_on(h, rp, "udreply", rq, sizeof rq);
	snprintf(normal, sizeof normal, "q:{%s}:normal", rq);
	xr = cluster_replica_of(h, xp);
	w = worker(h, xp, q, "ud1", "30", "0");
	cluster_submit(h, q, "ud-0", rq, "echo 0", 0);
	json_decref(cluster_wait_typed(h, normal, "ud-0", "EXEC_RESULT"));
	cluster_node_kill(h, xp);
	cluster_wait_primary(h, xr);
	c = cluster_node_ctx(h, qp);
	r = redisCommand(c, "CLIENT KILL TYPE normal");
	if (r == NULL || r->type != REDIS_REPLY_INTEGER)
		harness_fail(h, "CLIENT KILL: %s", r != NULL ? r->str :
		    c->errstr);
	freeReplyObject(r);
	redisFree(c);
	for (i = 1; i < n; i++) {
		snprintf(id, sizeof id, "ud-%d", i);
		cluster_submit(h, q, id, rq, "echo again", 0);
	}
	for (i = 0; i < n; i++) {
		snprintf(id, sizeof id, "ud-%d", i);
		a = cluster_wait_typed(h, normal, id, "EXEC_RESULT");
		assert_int_equal(json_integer_value(json_object_get(a,
		    "exit_code")), 0);
		json_decref(a);
	}
	expect_no_pending(h, q);
	for (i = 0; i < n; i++) {
		snprintf(id, sizeof id, "ud-%d", i);
		assert_int_equal(cluster_count_typed(h, normal, id,
		    "EXEC_RESULT"), 1);
	}
	harness_stop_clean(h, w);
	harness_pass(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_hostile_lost_session,
		    harness_setup, cluster_world_teardown),
		cmocka_unit_test_setup_teardown(test_hostile_reply_shard_killed,
		    harness_setup, cluster_world_teardown),
		cmocka_unit_test_setup_teardown(test_hostile_forward,
		    harness_setup, cluster_world_teardown),
		cmocka_unit_test_setup_teardown(test_hostile_retry_dead,
		    harness_setup, cluster_world_teardown),
		cmocka_unit_test_setup_teardown(test_hostile_acl_user,
		    harness_setup, cluster_world_teardown),
		cmocka_unit_test_setup_teardown(test_hostile_crash_redelivery,
		    harness_setup, cluster_world_teardown),
		cmocka_unit_test_setup_teardown(test_hostile_before_cluster,
		    harness_setup, cluster_world_teardown),
		cmocka_unit_test_setup_teardown(test_hostile_url_node_down,
		    harness_setup, cluster_world_teardown),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
