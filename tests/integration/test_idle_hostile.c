/*
 * A hostile pass over the 10 s blocking read, the 20 ms grace of the
 * control-only read and the quiet promote tick: items arriving as a read
 * runs out, a CLIENT UNBLOCK that cannot be sent (the write connection
 * lost while the control-only read blocks), a Redis restart under a
 * blocked read, a delayed item whose worker died. Each item is answered
 * once; the waits are printed as event times, never asserted.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <hiredis/hiredis.h>
#include <jansson.h>

#include "tests/integration/harness.h"

#define WAIT_MS		30000	/* a loaded machine's deadline */
#define PROMPT_MS	5000	/* half the BLOCK (queue_int.h) */
/* Runs until the test makes the file "go" in the workspace. */
#define BUSY		"while [ ! -e go ]; do sleep 0.05; done"

/* Makes the file "go" in the workspace. */
static void
hostile_go(struct harness *h)
{
	char	*go;

	if (asprintf(&go, "%s/go", h->ws) == -1)
		harness_fail(h, "out of memory");
	harness_write_file(go, "");
	free(go);
}

/* Exactly one answer of id of type type on the reply stream. */
static void
hostile_once(struct harness *h, const char *id, const char *type)
{
	json_t	*all = harness_all_answers(h, NULL), *a;
	size_t	 i;
	int	 n = 0;

	json_array_foreach(all, i, a) {
		if (harness_jstr(a, "id") != NULL &&
		    strcmp(harness_jstr(a, "id"), id) == 0 &&
		    strcmp(harness_jstr(a, "type"), type) == 0)
			n++;
	}
	json_decref(all);
	if (n != 1)
		harness_fail(h, "%s: %d answers of type %s", id, n, type);
}

/*
 * Kills every client but the sync one and the worker's blocked read:
 * the worker's write connection. Returns how many were killed.
 */
static int
hostile_kill_write(struct harness *h)
{
	redisReply	*me, *list;
	char		*s, *line, *save = NULL;
	long long	 id;
	int		 n = 0;

	me = harness_cmd(h, "CLIENT ID");
	list = harness_cmd(h, "CLIENT LIST");
	s = strdup(list->str);
	for (line = strtok_r(s, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "id=%lld", &id) != 1 || id == me->integer ||
		    strstr(line, "cmd=xreadgroup") != NULL)
			continue;
		freeReplyObject(harness_cmd(h, "CLIENT KILL ID %lld", id));
		n++;
	}
	free(s);
	freeReplyObject(list);
	freeReplyObject(me);
	return (n);
}

/* Waits until a client besides the sync one and the blocked read is
   connected: the worker's write connection is back. */
static void
hostile_wait_write(struct harness *h)
{
	int64_t		 deadline = harness_now_ms() + WAIT_MS;
	redisReply	*r;
	long long	 n;

	for (;;) {
		r = harness_cmd(h, "INFO clients");
		n = strstr(r->str, "connected_clients:") != NULL ?
		    atoll(strstr(r->str, "connected_clients:") + 18) : 0;
		freeReplyObject(r);
		if (n >= 3)
			return;
		if (harness_now_ms() > deadline)
			harness_fail(h, "the write connection did not come "
			    "back");
		harness_sleep_ms(20);
	}
}

/*
 * CLIENT UNBLOCK lost: the one slot is busy, so the read blocks on the
 * control lanes only; the write connection dies and cannot come back
 * (maxclients) as the slot frees, so CLIENT UNBLOCK cannot go. The item
 * waiting behind must run once the write connection is back, not when
 * the 10 s BLOCK runs out.
 */
static void
test_unblock_lost(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "busy");
	const char	*id2 = harness_id(h, "behind");
	int64_t		 t_go, t_back, t_ans;
	json_t		*a;

	harness_worker_start(h, NULL, "--max-procs", "1", NULL);
	harness_submit(h, "normal", id, BUSY, NULL);
	harness_wait_running(h, "go ]");
	harness_submit(h, "normal", id2, "echo behind", NULL);
	harness_sleep_ms(500);		/* the control-only read blocks */
	freeReplyObject(harness_cmd(h, "CONFIG SET maxclients 1"));
	if (hostile_kill_write(h) == 0)
		harness_fail(h, "no write connection to kill");
	hostile_go(h);
	t_go = harness_now_ms();
	harness_sleep_ms(1000);		/* the slot is free by now */
	freeReplyObject(harness_cmd(h, "CONFIG SET maxclients 10000"));
	hostile_wait_write(h);
	t_back = harness_now_ms();
	/* Half the BLOCK (as test_idle): not left to the read running out */
	a = harness_wait_answer(h, NULL, id2, PROMPT_MS);
	t_ans = harness_now_ms();
	assert_string_equal(harness_jstr(a, "type"), "EXEC_RESULT");
	json_decref(a);
	a = harness_wait_answer(h, NULL, id, WAIT_MS);
	assert_string_equal(harness_jstr(a, "type"), "EXEC_RESULT");
	json_decref(a);
	fprintf(stderr, "# unblock lost: the item behind answered %lld ms "
	    "after the slot freed, %lld ms after the write connection was "
	    "back\n", (long long)(t_ans - t_go), (long long)(t_ans - t_back));
	hostile_once(h, id, "EXEC_RESULT");
	hostile_once(h, id2, "EXEC_RESULT");
	harness_pass(h);
}

/*
 * Items and PROCESS items arriving around the moment the 10 s read runs
 * out and is sent again: each answered, once.
 */
static void
test_items_at_block_timeout(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*first = harness_id(h, "first");
	const char	*ids[12], *pids[12];
	char		 name[32];
	int64_t		 t_sub[12], t_ans, worst = 0;
	json_t		*a;
	int		 i;

	harness_worker_start(h, NULL, NULL);
	harness_submit(h, "normal", first, "true", NULL);
	json_decref(harness_wait_answer(h, NULL, first, WAIT_MS));
	harness_sleep_ms(9400);		/* the read's BLOCK about to end */
	for (i = 0; i < 12; i++) {
		snprintf(name, sizeof name, "edge%d", i);
		ids[i] = harness_id(h, name);
		t_sub[i] = harness_now_ms();
		if (i % 2 == 0) {
			harness_submit(h, "normal", ids[i], "echo edge", NULL);
			pids[i] = NULL;
		} else
			pids[i] = harness_submit_process(h,
			    "{\"action\": \"list\"}");
		harness_sleep_ms(100);
	}
	for (i = 0; i < 12; i++) {
		a = harness_wait_answer(h, NULL, i % 2 == 0 ? ids[i] : pids[i],
		    WAIT_MS);
		t_ans = harness_now_ms();
		if (t_ans - t_sub[i] > worst)
			worst = t_ans - t_sub[i];
		assert_string_equal(harness_jstr(a, "type"), i % 2 == 0 ?
		    "EXEC_RESULT" : "PROCESS_RESULT");
		json_decref(a);
	}
	for (i = 0; i < 12; i++)
		hostile_once(h, i % 2 == 0 ? ids[i] : pids[i], i % 2 == 0 ?
		    "EXEC_RESULT" : "PROCESS_RESULT");
	fprintf(stderr, "# block timeout: the slowest of 12 items answered "
	    "%lld ms after it was sent (an upper bound: answers are read in "
	    "order)\n", (long long)worst);
	harness_pass(h);
}

/*
 * Redis restarts while the idle worker's read is blocked: an item sent
 * afterwards runs.
 */
static void
test_restart_during_block(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*first = harness_id(h, "first");
	const char	*id = harness_id(h, "after");
	int64_t		 t_up, t_ans;
	json_t		*a;

	harness_worker_start(h, NULL, NULL);
	harness_submit(h, "normal", first, "true", NULL);
	json_decref(harness_wait_answer(h, NULL, first, WAIT_MS));
	harness_sleep_ms(1000);		/* blocked in its read */
	harness_redis_kill(h);
	harness_redis_start(h, "--appendonly", "yes");
	freeReplyObject(harness_cmd(h, "CONFIG SET appendonly no"));
	t_up = harness_now_ms();
	harness_submit(h, "normal", id, "echo after", NULL);
	a = harness_wait_answer(h, NULL, id, WAIT_MS);
	t_ans = harness_now_ms();
	assert_string_equal(harness_jstr(a, "type"), "EXEC_RESULT");
	json_decref(a);
	hostile_once(h, id, "EXEC_RESULT");
	fprintf(stderr, "# redis restart: an item sent after it answered in "
	    "%lld ms\n", (long long)(t_ans - t_up));
	harness_pass(h);
}

/*
 * A delayed item put in the delayed set by someone else (a worker that
 * died since, or a client writing the keys as the promote script reads
 * them) while this worker is quiet (none delayed at its last look): it
 * still runs. How late is printed.
 */
static void
test_delayed_by_another(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*first = harness_id(h, "first");
	const char	*id = harness_id(h, "later");
	int64_t		 t_due, t_ans;
	json_t		*item, *d;
	redisReply	*r;
	char		*text, *dtext;
	long long	 now_ms;

	harness_worker_start(h, NULL, NULL);
	harness_submit(h, "normal", first, "true", NULL);
	json_decref(harness_wait_answer(h, NULL, first, WAIT_MS));
	harness_sleep_ms(2500);		/* a promote found none delayed */
	item = json_pack("{s:s, s:s, s:s, s:{s:s}}", "id", id, "type", "EXEC",
	    "reply_to", h->reply, "args", "command", "echo later");
	text = json_dumps(item, JSON_COMPACT);
	if (asprintf(&dtext, "q:%s:normal", h->queue) == -1)
		harness_fail(h, "out of memory");
	d = json_pack("{s:s, s:i, s:[s, s]}", "s", dtext, "a", 1, "f",
	    "item", text);
	free(dtext);
	dtext = json_dumps(d, JSON_COMPACT);
	r = harness_cmd(h, "TIME");
	now_ms = atoll(r->element[0]->str) * 1000 +
	    atoll(r->element[1]->str) / 1000;
	freeReplyObject(r);
	freeReplyObject(harness_cmd(h, "HSET q:%s:delayed:items %s %s",
	    h->queue, id, dtext));
	freeReplyObject(harness_cmd(h, "ZADD q:%s:delayed %lld %s",
	    h->queue, now_ms + 1000, id));
	t_due = harness_now_ms() + 1000;
	{
		json_t	*a = harness_wait_answer(h, NULL, id, WAIT_MS * 2);

		t_ans = harness_now_ms();
		assert_string_equal(harness_jstr(a, "type"), "EXEC_RESULT");
		json_decref(a);
	}
	hostile_once(h, id, "EXEC_RESULT");
	fprintf(stderr, "# delayed by another: ran about %lld ms after it was "
	    "due\n", (long long)(t_ans - t_due));
	json_decref(item);
	json_decref(d);
	free(text);
	free(dtext);
	harness_pass(h);
}

/*
 * A Redis user that may not run INFO (-info): the cluster check after
 * ROLE must let it in, and it serves.
 */
static void
test_user_without_info(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "noinfo");
	const char	*env[3];
	char		*pwfile, *e, *log;
	json_t		*a;
	pid_t		 pid;

	freeReplyObject(harness_cmd(h, "ACL SETUSER noinfo reset on "
	    ">pw-noinfo-5e1 ~* &* +@all -info"));
	if (asprintf(&pwfile, "%s/noinfo.pass", h->dir) == -1 ||
	    asprintf(&e, "EXECQ_REDIS_PASSWORD_FILE=%s", pwfile) == -1)
		harness_fail(h, "out of memory");
	harness_write_file(pwfile, "pw-noinfo-5e1");
	chmod(pwfile, 0600);
	env[0] = "EXECQ_REDIS_USER=noinfo";
	env[1] = e;
	env[2] = NULL;
	pid = harness_worker_start(h, env, NULL);
	harness_submit(h, "normal", id, "echo served", NULL);
	a = harness_wait_answer(h, NULL, id, WAIT_MS);
	assert_string_equal(harness_jstr(a, "type"), "EXEC_RESULT");
	json_decref(a);
	log = harness_read_file(h->w[0].err_path, NULL);
	if (log != NULL && strstr(log, "Redis Cluster") != NULL)
		harness_fail(h, "a user without +info taken for a cluster");
	free(log);
	free(e);
	free(pwfile);
	harness_stop_clean(h, pid);
	freeReplyObject(harness_cmd(h, "ACL DELUSER noinfo"));
	harness_pass(h);
}

/*
 * One slot, short commands back to back with control items between
 * them: slots free within the 20 ms grace as control items arrive.
 * Each answered once.
 */
static void
test_grace_churn(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*ids[40];
	char		 name[32];
	int64_t		 t0, t1;
	json_t		*a;
	int		 i;

	harness_worker_start(h, NULL, "--max-procs", "1", NULL);
	t0 = harness_now_ms();
	for (i = 0; i < 40; i++) {
		snprintf(name, sizeof name, "churn%d", i);
		if (i % 2 == 0) {
			ids[i] = harness_id(h, name);
			harness_submit(h, "normal", ids[i], "sleep 0.01",
			    NULL);
		} else
			ids[i] = harness_submit_process(h,
			    "{\"action\": \"list\"}");
		harness_sleep_ms(7 * (i % 4));
	}
	for (i = 0; i < 40; i++) {
		a = harness_wait_answer(h, NULL, ids[i], WAIT_MS);
		assert_string_equal(harness_jstr(a, "type"), i % 2 == 0 ?
		    "EXEC_RESULT" : "PROCESS_RESULT");
		json_decref(a);
	}
	t1 = harness_now_ms();
	for (i = 0; i < 40; i++)
		hostile_once(h, ids[i], i % 2 == 0 ? "EXEC_RESULT" :
		    "PROCESS_RESULT");
	fprintf(stderr, "# grace churn: 20 commands and 20 control items "
	    "on one slot, all answered in %lld ms\n", (long long)(t1 - t0));
	harness_pass(h);
}

#define T(f)	cmocka_unit_test_setup_teardown(f, harness_setup, \
		    harness_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_unblock_lost),
		T(test_items_at_block_timeout),
		T(test_restart_during_block),
		T(test_delayed_by_another),
		T(test_user_without_info),
		T(test_grace_churn),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
