/*
 * Holes found in review (the session of issues 23 and 24): a job freed
 * while a reply of Redis still names it.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <hiredis/hiredis.h>
#include <jansson.h>

#include "logs/xmalloc.h"
#include "tests/integration/harness.h"

#define WAIT_MS		30000
#define PAUSE_MS	3000

/* Waits until approval request req's record says approved. */
static void
wait_approved(struct harness *h, const char *req)
{
	int64_t		 end = harness_now_ms() + WAIT_MS;
	redisReply	*r;
	int		 yes;

	for (;;) {
		r = harness_cmd(h, "GET execq:approval:%s", req);
		yes = r->type == REDIS_REPLY_STRING &&
		    strstr(r->str, "\"approved\"") != NULL;
		freeReplyObject(r);
		if (yes)
			return;
		if (harness_now_ms() > end)
			harness_fail(h, "request %s: never approved", req);
		harness_sleep_ms(20);
	}
}

/*
 * An approved command waits for the place a running one holds
 * (max_running 1), asking the limits again every 250 ms at most; Redis
 * holds its writes (CLIENT PAUSE WRITE), so one such ask stays
 * unanswered, and the worker is stopped then: the stop ends the waiting
 * job, and the ask's late reply must not reach it (it ran, or the
 * worker crashed, or a sanitizer spoke). The command never runs; the
 * worker exits cleanly.
 */
static void
test_review_stop_while_limits_asked(void **state)
{
	struct harness		*h = harness_fixture(state);
	char			*l, *hi, *req, *path;
	pid_t			 pid;
	json_t			*a;
	struct harness_proc	 p;
	const char		*args[4];
	redisReply		*r;

	xasprintf(&l, "{\"%s\": {\"max_running\": 1}}", h->queue);
	pid = harness_worker_start(h, NULL, "--tier", "read_only",
	    "--queue-limits", l, NULL);
	free(l);
	harness_submit(h, "normal", "b1", "while [ ! -e go ]; do sleep 0.05; "
	    "done", NULL);
	harness_wait_running(h, "sleep 0.05");
	harness_submit(h, "normal", "h1", "touch made.txt", NULL);
	xasprintf(&hi, "q:%s:high", h->reply);
	a = harness_wait_entry(h, hi, "h1", WAIT_MS);
	assert_string_equal(harness_jstr(a, "type"), "APPROVAL_REQUEST");
	req = xstrdup(harness_jstr(a, "request"));
	json_decref(a);
	free(hi);
	args[0] = "approve";
	args[1] = req;
	args[2] = NULL;
	harness_cli(h, &p, NULL, WAIT_MS, args);
	assert_int_equal(harness_proc_exit(&p), 0);
	harness_proc_release(&p);
	wait_approved(h, req);
	free(req);
	/* Its next ask (within 250 ms) finds Redis holding writes. */
	r = harness_cmd(h, "CLIENT PAUSE %d WRITE", PAUSE_MS);
	freeReplyObject(r);
	harness_sleep_ms(600);
	harness_stop_clean(h, pid);
	xasprintf(&path, "%s/made.txt", h->ws);
	if (access(path, F_OK) == 0)
		harness_fail(h, "h1 ran after the worker was stopped");
	free(path);
	harness_pass(h);
}

/*
 * An entry with thousands of fields (anyone who writes a lane can add
 * them) that ends as a dead letter, or waits for a retry, keeps its item
 * only: the scripts never unpack more than a few values, so its answer
 * goes out, and later items are answered too.
 */
static void
test_review_many_fields(void **state)
{
	struct harness	*h = harness_fixture(state);
	redisReply	*r;
	json_t		*a;
	const char	**argv;
	size_t		*lens, n = 0, i;
	char		 key[128], names[5000][8];

	harness_worker_start(h, NULL, NULL);
	argv = calloc(2 * 5000 + 8, sizeof *argv);
	lens = calloc(2 * 5000 + 8, sizeof *lens);
	snprintf(key, sizeof key, "q:%s:normal", h->queue);
	argv[n++] = "XADD";
	argv[n++] = key;
	argv[n++] = "*";
	argv[n++] = "item";
	argv[n++] = "{\"id\":\"mf1\",\"type\":\"EXEC\",\"args\":{}}";
	for (i = 0; i < 5000; i++) {
		snprintf(names[i], sizeof names[i], "f%zu", i);
		argv[n++] = names[i];
		argv[n++] = "x";
	}
	for (i = 0; i < n; i++)
		lens[i] = strlen(argv[i]);
	r = redisCommandArgv(h->rc, (int)n, argv, lens);
	assert_non_null(r);
	assert_int_not_equal(r->type, REDIS_REPLY_ERROR);
	freeReplyObject(r);
	free(argv);
	free(lens);
	/* Its answer: no reply_to, so the default reply queue's. */
	a = harness_wait_answer(h, "replies", "mf1", WAIT_MS);
	assert_string_equal(harness_jstr(a, "type"), "ERROR");
	json_decref(a);
	r = harness_cmd(h, "XRANGE q:%s:dead - +", h->queue);
	assert_int_equal(r->elements, 1);
	assert_int_equal(r->element[0]->element[1]->elements, 8);
	freeReplyObject(r);
	harness_submit(h, "normal", "mf2", "true", NULL);
	a = harness_wait_answer(h, NULL, "mf2", WAIT_MS);
	assert_string_equal(harness_jstr(a, "type"), "EXEC_RESULT");
	json_decref(a);
	harness_pass(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_review_many_fields,
		    harness_setup, harness_teardown),
		cmocka_unit_test_setup_teardown(
		    test_review_stop_while_limits_asked, harness_setup,
		    harness_teardown),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
