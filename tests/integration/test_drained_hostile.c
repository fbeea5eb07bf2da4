/*
 * A hostile pass over the blocking read after a drained read (reader.c:
 * a read that got less than it asked from every lane makes the next read
 * the blocking XREADGROUP, not the fetch script): a worker with eight
 * slots at low load, then bursts on several lanes at once, items one by
 * one as the last one finishes, control items among them, agents' own
 * lanes. Each item is answered once; waits have deadlines, times are
 * printed, never asserted.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <hiredis/hiredis.h>
#include <jansson.h>

#include "logs/xmalloc.h"
#include "tests/integration/harness.h"

#define WAIT_MS		30000	/* a loaded machine's deadline */
#define PROMPT_MS	5000	/* half the BLOCK (queue_int.h) */
#define SLOTS		"8"
#define BURST		60	/* items a lane in a burst */
#define ONE_BY_ONE	200
/* Runs until the test makes the file "go" in the workspace. */
#define BUSY		"while [ ! -e go ]; do sleep 0.05; done"

/* Makes the file "go" in the workspace. */
static void
drained_go(struct harness *h)
{
	char	*go;

	xasprintf(&go, "%s/go", h->ws);
	harness_write_file(go, "");
	free(go);
}

/*
 * Exactly one answer of id, of type type, on q:<reply_to>:normal
 * (reply_to NULL: the test's). Its position in that stream (0 first).
 */
static int
drained_once(struct harness *h, const char *reply_to, const char *id,
    const char *type)
{
	json_t	*all = harness_all_answers(h, reply_to), *a;
	size_t	 i;
	int	 n = 0, at = -1;

	json_array_foreach(all, i, a) {
		if (harness_jstr(a, "id") != NULL &&
		    strcmp(harness_jstr(a, "id"), id) == 0) {
			if (harness_jstr(a, "type") == NULL ||
			    strcmp(harness_jstr(a, "type"), type) != 0)
				harness_fail(h, "%s: an answer of type %s", id,
				    harness_jstr(a, "type"));
			n++;
			at = (int)i;
		}
	}
	json_decref(all);
	if (n != 1)
		harness_fail(h, "%s: %d answers of type %s", id, n, type);
	return (at);
}

/* Waits for id's answer and checks its type. */
static void
drained_wait(struct harness *h, const char *reply_to, const char *id,
    const char *type, int timeout_ms)
{
	json_t	*a = harness_wait_answer(h, reply_to, id, timeout_ms);

	if (strcmp(harness_jstr(a, "type"), type) != 0)
		harness_fail(h, "%s: %s, not %s", id, harness_jstr(a, "type"),
		    type);
	json_decref(a);
}

/* One item run and answered: the worker's last read got less than it
   asked, so it blocks now (drained). */
static void
drained_settle(struct harness *h, const char *name)
{
	const char	*id = harness_id(h, name);

	harness_submit(h, "normal", id, "true", NULL);
	drained_wait(h, NULL, id, "EXEC_RESULT", WAIT_MS);
}

/*
 * After a drained read, BURST items on low then BURST on high written at
 * once (one MULTI): each answered once, and the high lane's last answer
 * comes before the low lane's last (high is not starved by the low ones
 * the blocking read brought along).
 */
static void
test_burst_two_lanes(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*lo[BURST], *hi[BURST];
	char		 name[32];
	int64_t		 t0, t1;
	int		 i, at, last_lo = -1, last_hi = -1, round;

	harness_worker_start(h, NULL, "--max-procs", SLOTS, NULL);
	for (round = 0; round < 2; round++) {
		snprintf(name, sizeof name, "settle%d", round);
		drained_settle(h, name);
		freeReplyObject(harness_cmd(h, "MULTI"));
		for (i = 0; i < BURST; i++) {
			snprintf(name, sizeof name, "r%d-lo%d", round, i);
			lo[i] = harness_id(h, name);
			harness_submit(h, "low", lo[i], "true", NULL);
		}
		for (i = 0; i < BURST; i++) {
			snprintf(name, sizeof name, "r%d-hi%d", round, i);
			hi[i] = harness_id(h, name);
			harness_submit(h, "high", hi[i], "echo hi", NULL);
		}
		t0 = harness_now_ms();
		freeReplyObject(harness_cmd(h, "EXEC"));
		for (i = 0; i < BURST; i++) {
			drained_wait(h, NULL, hi[i], "EXEC_RESULT", WAIT_MS);
			drained_wait(h, NULL, lo[i], "EXEC_RESULT", WAIT_MS);
		}
		t1 = harness_now_ms();
		last_lo = last_hi = -1;
		for (i = 0; i < BURST; i++) {
			at = drained_once(h, NULL, lo[i], "EXEC_RESULT");
			if (at > last_lo)
				last_lo = at;
			at = drained_once(h, NULL, hi[i], "EXEC_RESULT");
			if (at > last_hi)
				last_hi = at;
		}
		fprintf(stderr, "# burst round %d: %d high and %d low items "
		    "answered in %lld ms; last high answer at %d, last low at "
		    "%d\n", round, BURST, BURST, (long long)(t1 - t0), last_hi,
		    last_lo);
		if (last_hi > last_lo)
			harness_fail(h, "round %d: the last high answer (%d) "
			    "after the last low one (%d)", round, last_hi,
			    last_lo);
	}
	assert_int_equal(harness_pending(h, "high"), 0);
	assert_int_equal(harness_pending(h, "low"), 0);
	harness_pass(h);
}

/*
 * ONE_BY_ONE items, each written as soon as the last one is answered
 * (the worker has just finished one and its read is on its way or
 * blocked), on the three lanes in turn: each answered within half the
 * BLOCK, so never left to the read running out, and once.
 */
static void
test_one_by_one(void **state)
{
	static const char *const lanes[] = { "normal", "high", "low" };
	struct harness	*h = harness_fixture(state);
	const char	*ids[ONE_BY_ONE];
	char		 name[32];
	int64_t		 t0, t, worst = 0;
	int		 i;

	harness_worker_start(h, NULL, "--max-procs", SLOTS, NULL);
	drained_settle(h, "settle");
	t0 = harness_now_ms();
	for (i = 0; i < ONE_BY_ONE; i++) {
		snprintf(name, sizeof name, "one%d", i);
		ids[i] = harness_id(h, name);
		t = harness_now_ms();
		harness_submit(h, lanes[i % 3], ids[i], i % 2 ? "true" :
		    "echo one", NULL);
		drained_wait(h, NULL, ids[i], "EXEC_RESULT", PROMPT_MS);
		if (harness_now_ms() - t > worst)
			worst = harness_now_ms() - t;
	}
	for (i = 0; i < ONE_BY_ONE; i++)
		drained_once(h, NULL, ids[i], "EXEC_RESULT");
	fprintf(stderr, "# one by one: %d items in %lld ms, the slowest "
	    "%lld ms\n", ONE_BY_ONE, (long long)(harness_now_ms() - t0),
	    (long long)worst);
	harness_pass(h);
}

/*
 * Control items with the bursts: after a drained read, commands and
 * PROCESS items written at once; then every slot busy (the read on the
 * control lanes only) with items behind and PROCESS items, answered
 * while the slots stay busy; then the slots free. Each answered once.
 */
static void
test_process_mixed(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*ids[48], *busy[8];
	char		 name[32];
	int		 i, n = 0, round;

	harness_worker_start(h, NULL, "--max-procs", SLOTS, NULL);
	for (round = 0; round < 3; round++) {
		snprintf(name, sizeof name, "settle%d", round);
		drained_settle(h, name);
		freeReplyObject(harness_cmd(h, "MULTI"));
		for (i = 0; i < 16; i++) {
			snprintf(name, sizeof name, "r%d-m%d", round, i);
			if (i % 2 == 0) {
				ids[i] = harness_id(h, name);
				harness_submit(h, i % 4 ? "high" : "normal",
				    ids[i], "echo mixed", NULL);
			} else
				ids[i] = harness_submit_process(h,
				    "{\"action\": \"list\"}");
		}
		freeReplyObject(harness_cmd(h, "EXEC"));
		for (i = 0; i < 16; i++)
			drained_wait(h, NULL, ids[i], i % 2 == 0 ?
			    "EXEC_RESULT" : "PROCESS_RESULT", WAIT_MS);
		for (i = 0; i < 16; i++)
			drained_once(h, NULL, ids[i], i % 2 == 0 ?
			    "EXEC_RESULT" : "PROCESS_RESULT");
	}
	/* Every slot busy: the read is on the control lanes only. */
	drained_settle(h, "settle-busy");
	for (i = 0; i < 8; i++) {
		snprintf(name, sizeof name, "busy%d", i);
		busy[i] = harness_id(h, name);
		harness_submit(h, "normal", busy[i], BUSY, NULL);
	}
	harness_wait_running(h, "go ]");
	for (i = 0; i < 24; i++) {
		snprintf(name, sizeof name, "behind%d", i);
		if (i % 3 == 2)
			ids[n++] = harness_submit_process(h,
			    "{\"action\": \"list\"}");
		else {
			ids[n] = harness_id(h, name);
			harness_submit(h, i % 2 ? "low" : "normal", ids[n++],
			    "true", NULL);
		}
	}
	/* The control items do not wait for a slot. */
	for (i = 0; i < n; i++)
		if (i % 3 == 2)
			drained_wait(h, NULL, ids[i], "PROCESS_RESULT",
			    WAIT_MS);
	drained_go(h);
	for (i = 0; i < 8; i++)
		drained_wait(h, NULL, busy[i], "EXEC_RESULT", WAIT_MS);
	for (i = 0; i < n; i++)
		if (i % 3 != 2)
			drained_wait(h, NULL, ids[i], "EXEC_RESULT", WAIT_MS);
	for (i = 0; i < 8; i++)
		drained_once(h, NULL, busy[i], "EXEC_RESULT");
	for (i = 0; i < n; i++)
		drained_once(h, NULL, ids[i], i % 3 == 2 ? "PROCESS_RESULT" :
		    "EXEC_RESULT");
	harness_pass(h);
}

/* An EXEC item of agent's on its own lane; reply_to "<agent>.r". */
static void
drained_submit_as(struct harness *h, const char *agent, const char *lane,
    const char *id, const char *command)
{
	json_t	*item;
	char	*text, *reply, *key;

	xasprintf(&reply, "%s.r", agent);
	xasprintf(&key, "%s.%s", agent, lane);
	item = json_pack("{s:s, s:s, s:s, s:{s:s}}", "id", id, "type", "EXEC",
	    "reply_to", reply, "args", "command", command);
	text = json_dumps(item, JSON_COMPACT);
	harness_submit_json(h, key, text);
	free(text);
	json_decref(item);
	free(reply);
	free(key);
}

/*
 * Agents' own lanes (--agents la,lb): after a drained read, a burst on
 * la's and lb's high and normal lanes and the shared low lane, written
 * at once; then la's item one by one. Each answered once.
 */
static void
test_agents_burst(void **state)
{
	static const char *const agents[] = { "la", "lb" };
	static const char *const lanes[] = { "normal", "high" };
	struct harness	*h = harness_fixture(state);
	const char	*shared[20];
	char		 ids[2][2][20][32], name[32], reply[8];
	int		 a, l, i, round;

	harness_worker_start(h, NULL, "--agents", "la,lb", "--max-procs",
	    SLOTS, NULL);
	for (round = 0; round < 2; round++) {
		snprintf(name, sizeof name, "settle%d", round);
		drained_settle(h, name);
		freeReplyObject(harness_cmd(h, "MULTI"));
		for (i = 0; i < 20; i++) {
			for (a = 0; a < 2; a++)
				for (l = 0; l < 2; l++) {
					snprintf(ids[a][l][i], sizeof ids[a][l][i],
					    "%s.r%d-%s%d", agents[a], round,
					    lanes[l], i);
					drained_submit_as(h, agents[a],
					    lanes[l], ids[a][l][i], "true");
				}
			snprintf(name, sizeof name, "r%d-shared%d", round, i);
			shared[i] = harness_id(h, name);
			harness_submit(h, "low", shared[i], "true", NULL);
		}
		freeReplyObject(harness_cmd(h, "EXEC"));
		for (i = 0; i < 20; i++) {
			for (a = 0; a < 2; a++) {
				snprintf(reply, sizeof reply, "%s.r",
				    agents[a]);
				for (l = 0; l < 2; l++)
					drained_wait(h, reply, ids[a][l][i],
					    "EXEC_RESULT", WAIT_MS);
			}
			drained_wait(h, NULL, shared[i], "EXEC_RESULT",
			    WAIT_MS);
		}
		for (i = 0; i < 20; i++) {
			for (a = 0; a < 2; a++) {
				snprintf(reply, sizeof reply, "%s.r",
				    agents[a]);
				for (l = 0; l < 2; l++)
					drained_once(h, reply, ids[a][l][i],
					    "EXEC_RESULT");
			}
			drained_once(h, NULL, shared[i], "EXEC_RESULT");
		}
	}
	/* la's items one by one, each as the last is answered. */
	for (i = 0; i < 20; i++) {
		snprintf(ids[0][0][i], sizeof ids[0][0][i], "la.one%d", i);
		drained_submit_as(h, "la", i % 2 ? "high" : "normal",
		    ids[0][0][i], "true");
		drained_wait(h, "la.r", ids[0][0][i], "EXEC_RESULT",
		    PROMPT_MS);
	}
	for (i = 0; i < 20; i++)
		drained_once(h, "la.r", ids[0][0][i], "EXEC_RESULT");
	harness_pass(h);
}

#define T(f)	cmocka_unit_test_setup_teardown(f, harness_setup, \
		    harness_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_burst_two_lanes),
		T(test_one_by_one),
		T(test_process_mixed),
		T(test_agents_burst),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
