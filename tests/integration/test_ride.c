/*
 * The fetch that rides an answer (issue 25, item 4): a worker with a
 * backlog sends one script an item, the answer and the next fetch
 * together; and when that script's connection is lost before Redis ran
 * it, the answer goes again alone and the next item still runs, each
 * answered once.
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

#define WAIT_MS		20000
#define RIDE_ITEMS	40
#define RIDE_SCRIPT_BYTES 4096	/* the answer with its fetch: more than
				   either script alone */
/* Runs until the test makes the file "go" in the workspace. */
#define BUSY		"while [ ! -e go ]; do sleep 0.05; done"

/* Scripts Redis ran so far (EVAL and EVALSHA calls). */
static long long
ride_scripts(struct harness *h)
{
	redisReply	*r = harness_cmd(h, "INFO commandstats");
	const char	*p;
	long long	 n = 0;

	if ((p = strstr(r->str, "cmdstat_eval:calls=")) != NULL)
		n += strtoll(p + 19, NULL, 10);
	if ((p = strstr(r->str, "cmdstat_evalsha:calls=")) != NULL)
		n += strtoll(p + 22, NULL, 10);
	freeReplyObject(r);
	return (n);
}

/* Makes the file "go" in the workspace: BUSY ends. */
static void
ride_go(struct harness *h)
{
	char	*go;

	xasprintf(&go, "%s/go", h->ws);
	harness_write_file(go, "");
	free(go);
}

/* How many entries of the reply stream answer id. */
static int
ride_answers(struct harness *h, const char *id)
{
	json_t		*all, *a;
	size_t		 i;
	const char	*s;
	int		 n = 0;

	all = harness_all_answers(h, NULL);
	json_array_foreach(all, i, a) {
		s = harness_jstr(a, "id");
		if (s != NULL && strcmp(s, id) == 0)
			n++;
	}
	json_decref(all);
	return (n);
}

/*
 * RIDE_ITEMS items wait behind a busy one-slot worker: each answer
 * carries the next fetch, so Redis runs about one script an item (two
 * before: the answer, then the fetch), and each item is answered once.
 */
static void
test_ride_backlog(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*busy = harness_id(h, "busy");
	char		 name[32];
	long long	 before, ran;
	json_t		*a;
	int		 i;

	harness_worker_start(h, NULL, "--max-procs", "1", NULL);
	harness_submit(h, "normal", busy, BUSY, NULL);
	harness_wait_running(h, "go ]");
	for (i = 0; i < RIDE_ITEMS; i++) {
		snprintf(name, sizeof name, "item%d", i);
		harness_submit(h, "normal", harness_id(h, name), "true", NULL);
	}
	before = ride_scripts(h);
	ride_go(h);
	json_decref(harness_wait_answer(h, NULL, busy, WAIT_MS));
	for (i = 0; i < RIDE_ITEMS; i++) {
		snprintf(name, sizeof name, "item%d", i);
		a = harness_wait_answer(h, NULL, harness_id(h, name), WAIT_MS);
		assert_string_equal(harness_jstr(a, "type"), "EXEC_RESULT");
		json_decref(a);
	}
	ran = ride_scripts(h) - before;
	for (i = 0; i < RIDE_ITEMS; i++) {
		snprintf(name, sizeof name, "item%d", i);
		assert_int_equal(ride_answers(h, harness_id(h, name)), 1);
	}
	print_message("backlog: %d items after a busy one, %lld scripts\n",
	    RIDE_ITEMS, ran);
	/* The heartbeat's scripts come on top: a second's worth or so. */
	if (ran > RIDE_ITEMS + 1 + RIDE_ITEMS / 3)
		harness_fail(h, "%lld scripts for %d items: the fetch did not "
		    "go with the answers", ran, RIDE_ITEMS + 1);
	harness_pass(h);
}

/*
 * The id of the client Redis holds back (writes paused) with a script
 * of at least min bytes of arguments waiting to run, or 0 if none.
 */
static long long
ride_paused_script(struct harness *h, long min)
{
	redisReply	*r = harness_cmd(h, "CLIENT LIST");
	char		*text = xstrdup(r->str), *line, *save = NULL, *m;
	long long	 found = 0;

	freeReplyObject(r);
	for (line = strtok_r(text, "\n", &save); line != NULL && found == 0;
	    line = strtok_r(NULL, "\n", &save))
		if (strncmp(line, "id=", 3) == 0 &&
		    strstr(line, " cmd=eval ") != NULL &&
		    (m = strstr(line, " argv-mem=")) != NULL &&
		    strtol(m + 10, NULL, 10) >= min)
			found = strtoll(line + 3, NULL, 10);
	free(text);
	return (found);
}

/*
 * The answer and the fetch that rides it are sent, and the write
 * connection is killed before Redis runs them (writes paused): the
 * answer goes again, alone, once the worker is back; the item that
 * waited is read and run; each is answered once.
 */
static void
test_ride_lost(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*busy = harness_id(h, "busy");
	const char	*next = harness_id(h, "next");
	long long	 client = 0;
	json_t		*a;
	int		 i;

	harness_worker_start(h, NULL, "--max-procs", "1", NULL);
	harness_submit(h, "normal", busy, BUSY, NULL);
	harness_wait_running(h, "go ]");
	harness_submit(h, "normal", next, "echo next", NULL);
	freeReplyObject(harness_cmd(h, "CLIENT PAUSE 20000 WRITE"));
	ride_go(h);
	/* The answer and its fetch wait in Redis, as one script. */
	for (i = 0; i < 400 && client == 0; i++) {
		client = ride_paused_script(h, RIDE_SCRIPT_BYTES);
		if (client == 0)
			harness_sleep_ms(25);
	}
	if (client == 0) {
		freeReplyObject(harness_cmd(h, "CLIENT UNPAUSE"));
		harness_fail(h, "the answer never reached Redis");
	}
	freeReplyObject(harness_cmd(h, "CLIENT KILL ID %lld", client));
	freeReplyObject(harness_cmd(h, "CLIENT UNPAUSE"));
	a = harness_wait_answer(h, NULL, busy, WAIT_MS);
	assert_string_equal(harness_jstr(a, "type"), "EXEC_RESULT");
	json_decref(a);
	a = harness_wait_answer(h, NULL, next, WAIT_MS);
	assert_string_equal(harness_jstr(a, "stdout"), "next\n");
	json_decref(a);
	harness_submit(h, "normal", harness_id(h, "barrier"), "true", NULL);
	json_decref(harness_wait_answer(h, NULL, harness_id(h, "barrier"),
	    WAIT_MS));
	assert_int_equal(ride_answers(h, busy), 1);
	assert_int_equal(ride_answers(h, next), 1);
	assert_int_equal(harness_pending(h, "normal"), 0);
	harness_pass(h);
}

#define T(f)	cmocka_unit_test_setup_teardown(f, harness_setup, \
		    harness_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_ride_backlog),
		T(test_ride_lost),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
