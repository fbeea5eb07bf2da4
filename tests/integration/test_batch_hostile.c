/*
 * Issue 23's batch features under attack (a hostile agent, a careless
 * batch user), with real workers: agents' items stay their own under
 * cancel and delay, a fractional rate still starts items, a cancel
 * reaches an item wherever it waits (approved and waiting for the limits,
 * or held on another worker), a place of a killed worker comes back,
 * due items move once each, and dead letters stay whole and printable.
 */

#include <sys/types.h>

#include <setjmp.h>
#include <signal.h>
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
#define OPTOKEN		"op-token-0123456789abcdef0123456789"
/* Runs until the test makes the file "go" in the workspace. */
#define BUSY		"while [ ! -e go ]; do sleep 0.05; done; echo ran >> busy"

/* The client with args (after "--queue Q"); exit code, output in *out. */
static int
cli(struct harness *h, char **out, const char *args)
{
	struct harness_proc	 p;
	char			*script;
	int			 rc;

	xasprintf(&script, "$CLI %s", args);
	harness_cli_sh(h, &p, WAIT_MS, script);
	free(script);
	rc = harness_proc_exit(&p);
	xasprintf(out, "%s%s", p.out, p.err);
	harness_proc_release(&p);
	return (rc);
}

/* execq cancel ID on the test's queue; its exit code, output in *out. */
static int
cancel(struct harness *h, const char *id, char **out)
{
	char	*args;
	int	 rc;

	xasprintf(&args, "cancel --queue $EXECQ_QUEUE %s", id);
	rc = cli(h, out, args);
	free(args);
	return (rc);
}

/* The next answer for id on reply (NULL: h->reply): of type, else fail. */
static json_t *
next(struct harness *h, const char *reply, const char *id, const char *type)
{
	json_t	*a = harness_wait_answer(h, reply, id, WAIT_MS);

	if (strcmp(harness_jstr(a, "type"), type) != 0) {
		char	*s = json_dumps(a, JSON_COMPACT);

		harness_fail(h, "%s: wanted %s, got %s", id, type, s);
	}
	return (a);
}

/* The next answer for id: an ERROR of code. */
static void
expect_error(struct harness *h, const char *reply, const char *id,
    const char *code)
{
	json_t	*a = next(h, reply, id, "ERROR");

	if (strcmp(harness_jstr(a, "error.code"), code) != 0) {
		char	*s = json_dumps(a, JSON_COMPACT);

		harness_fail(h, "%s: wanted %s, got %s", id, code, s);
	}
	json_decref(a);
}

/* Makes the workspace's "go" file: BUSY commands end. */
static void
go(struct harness *h)
{
	char	*path;

	xasprintf(&path, "%s/go", h->ws);
	assert_int_equal(harness_write_file(path, "\n"), 0);
	free(path);
}

/* 1 if the workspace has file name. */
static int
ws_has(struct harness *h, const char *name)
{
	char	*path;
	int	 rc;

	xasprintf(&path, "%s/%s", h->ws, name);
	rc = access(path, F_OK) == 0;
	free(path);
	return (rc);
}

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

/* The queue_limits setting of h->queue: {"<queue>": limits}. */
static char *
limits(struct harness *h, const char *l)
{
	char	*json;

	xasprintf(&json, "{\"%s\": %s}", h->queue, l);
	return (json);
}

/*
 * Agent la may not cancel agent lb's items nor a shared-lane id, not
 * even with a wrong operator token, and learns nothing of them; its
 * delayed item, sent with lb's reply queue, is answered on its own; an
 * "attempt" field it forges skips its own item's delay only (it could
 * have sent no delay: harmless).
 */
static void
test_bh_agents_apart(void **state)
{
	struct harness	*h = harness_fixture(state);
	json_t		*a;
	redisReply	*r;

	harness_worker_start(h, NULL, "--agents", "la,lb", "--operator-token",
	    OPTOKEN, NULL);
	/* lb's delayed item, 10 minutes away. */
	harness_submit_json(h, "lb.normal", "{\"id\": \"lb.d1\", \"type\": "
	    "\"EXEC\", \"reply_to\": \"lb.r\", \"args\": {\"command\": "
	    "\"echo ran > lbran\", \"delay_ms\": 600000}}");
	a = next(h, "lb.r", "lb.d1", "EXEC_SCHEDULED");
	json_decref(a);
	/* la cancels it: from its own control lane, with a wrong token. */
	harness_submit_json(h, "la.ctl", "{\"id\": \"la.c1\", \"type\": "
	    "\"PROCESS\", \"reply_to\": \"la.r\", \"operator_token\": "
	    "\"op-token-0123456789abcdef0123456788\", \"args\": {\"action\": "
	    "\"cancel\", \"session_id\": \"lb.d1\"}}");
	expect_error(h, "la.r", "la.c1", "forbidden");
	/* A shared-lane id (no agent's): not la's either. */
	harness_submit_json(h, "la.ctl", "{\"id\": \"la.c2\", \"type\": "
	    "\"PROCESS\", \"reply_to\": \"la.r\", \"args\": {\"action\": "
	    "\"cancel\", \"session_id\": \"shared-1\"}}");
	expect_error(h, "la.r", "la.c2", "forbidden");
	r = harness_cmd(h, "ZSCORE q:%s:delayed lb.d1", h->queue);
	assert_int_equal(r->type, REDIS_REPLY_STRING);
	freeReplyObject(r);
	r = harness_cmd(h, "EXISTS execq:answer:shared-1");
	assert_int_equal(r->integer, 0);	/* no mark made */
	freeReplyObject(r);

	/* la's delayed item asks for lb's reply queue: refused, on la's. */
	harness_submit_json(h, "la.normal", "{\"id\": \"la.d2\", \"type\": "
	    "\"EXEC\", \"reply_to\": \"lb.r\", \"args\": {\"command\": "
	    "\"echo ran > la2ran\", \"delay_ms\": 200}}");
	expect_error(h, "la.replies", "la.d2", "bad_reply_to");
	assert_null(harness_try_entry(h, "q:lb.r:normal", "la.d2", 0));
	r = harness_cmd(h, "ZSCORE q:%s:delayed la.d2", h->queue);
	assert_int_equal(r->type, REDIS_REPLY_NIL);
	freeReplyObject(r);

	/* A forged attempt field: la's own item skips its own delay. */
	{
		const char	*body = "{\"id\": \"la.f1\", \"type\": "
		    "\"EXEC\", \"reply_to\": \"la.r\", \"args\": {\"command\": "
		    "\"echo ran > la3ran\", \"delay_ms\": 600000}}";

		r = harness_cmd(h, "XADD q:%s:la.normal * item %s attempt 1",
		    h->queue, body);
		freeReplyObject(r);
	}
	a = next(h, "la.r", "la.f1", "EXEC_RESULT");
	json_decref(a);
	/* lb's item is still there, never ran, and its owner cancels it. */
	assert_false(ws_has(h, "lbran"));
	harness_submit_json(h, "lb.ctl", "{\"id\": \"lb.c1\", \"type\": "
	    "\"PROCESS\", \"reply_to\": \"lb.r\", \"args\": {\"action\": "
	    "\"cancel\", \"session_id\": \"lb.d1\"}}");
	a = next(h, "lb.r", "lb.c1", "PROCESS_RESULT");
	assert_true(harness_jbool(a, "cancelled"));
	json_decref(a);
	expect_error(h, "lb.r", "lb.d1", "cancelled");
	harness_pass(h);
}

/*
 * max_per_s 0.5 (one start every two seconds): items start, one by one.
 * A bucket that holds only the rate (half a token) never held one.
 */
static void
test_bh_rate_fraction(void **state)
{
	struct harness	*h = harness_fixture(state);
	char		*l = limits(h, "{\"max_per_s\": 0.5}");
	json_t		*a;

	harness_worker_start(h, NULL, "--queue-limits", l, NULL);
	free(l);
	harness_submit(h, "normal", "f1", "true", NULL);
	harness_submit(h, "normal", "f2", "true", NULL);
	a = next(h, NULL, "f1", "EXEC_RESULT");
	json_decref(a);
	a = next(h, NULL, "f2", "EXEC_RESULT");
	json_decref(a);
	harness_pass(h);
}

/*
 * max_running 1: an approved command waits in its worker for the place
 * that a running one holds; cancelled then, it never runs, its sender
 * gets cancelled, and the worker lives on.
 */
static void
test_bh_cancel_approved_waiting(void **state)
{
	struct harness		*h = harness_fixture(state);
	char			*l = limits(h, "{\"max_running\": 1}"), *out;
	char			*hi, *req;
	pid_t			 pid;
	json_t			*a;
	struct harness_proc	 p;
	const char		*args[4];

	pid = harness_worker_start(h, NULL, "--tier", "read_only",
	    "--queue-limits", l, "--operator-token", OPTOKEN, NULL);
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
	/* Approved (the worker saw it), it waits for b1's place. */
	wait_approved(h, req);
	free(req);
	if (cancel(h, "h1", &out) != 0 || strstr(out, "cancelled h1") ==
	    NULL)
		harness_fail(h, "cancel h1: %s", out);
	free(out);
	expect_error(h, NULL, "h1", "cancelled");
	go(h);
	a = next(h, NULL, "b1", "EXEC_RESULT");
	json_decref(a);
	assert_true(harness_worker_alive(h, pid));
	assert_false(ws_has(h, "made.txt"));
	harness_pass(h);
}

/* Waits until the control lane holds left entries (the rest read). */
static void
wait_ctl_read(struct harness *h, long long left)
{
	int64_t		 end = harness_now_ms() + WAIT_MS;
	redisReply	*r;
	long long	 n;

	for (;;) {
		r = harness_cmd(h, "XLEN q:%s:ctl", h->queue);
		n = r->integer;
		freeReplyObject(r);
		if (n == left)
			return;
		if (harness_now_ms() > end)
			harness_fail(h, "the control lane was not read");
		harness_sleep_ms(20);
	}
}

/*
 * A dummy PROCESS list on the control lane: 1 if it is pending for the
 * stopped worker pid (its read, blocked in Redis, took it), 0 if the
 * other worker answered it.
 */
static int
soaked(struct harness *h, pid_t pid, int n)
{
	int64_t		 end = harness_now_ms() + WAIT_MS;
	redisReply	*r;
	char		*json;
	unsigned	 i;
	int		 mine;

	xasprintf(&json, "{\"id\": \"dummy%d\", \"type\": \"PROCESS\", "
	    "\"reply_to\": \"x\", \"args\": {\"action\": \"list\"}}", n);
	harness_submit_json(h, "ctl", json);
	free(json);
	for (i = 0; i < h->nw && h->w[i].pid != pid; i++)
		;
	assert_true(i < h->nw);
	for (;;) {
		r = harness_cmd(h, "XPENDING q:%s:ctl execq - + 10", h->queue);
		mine = r->elements == 1 && strcmp(r->element[0]->element[1]->str,
		    h->w[i].consumer) == 0;
		freeReplyObject(r);
		if (mine)
			return (1);
		r = harness_cmd(h, "XLEN q:%s:ctl", h->queue);
		if (r->integer == 0) {
			freeReplyObject(r);
			return (0);
		}
		freeReplyObject(r);
		if (harness_now_ms() > end)
			harness_fail(h, "dummy%d was not read", n);
		harness_sleep_ms(10);
	}
}

/*
 * Two workers: one holds an item for approval; a cancel the other reads
 * reaches it (forwarded to its inbox) and the item is cancelled, not
 * "running".
 */
static void
test_bh_cancel_held_elsewhere(void **state)
{
	struct harness	*h = harness_fixture(state);
	pid_t		 w1, w2;
	char		*hi, *out;
	json_t		*a;
	int		 i, mine = 0;

	w1 = harness_worker_start(h, NULL, "--tier", "read_only", NULL);
	harness_submit(h, "normal", "h2", "touch made2.txt", NULL);
	xasprintf(&hi, "q:%s:high", h->reply);
	a = harness_wait_entry(h, hi, "h2", WAIT_MS);
	assert_string_equal(harness_jstr(a, "type"), "APPROVAL_REQUEST");
	json_decref(a);
	free(hi);
	/*
	 * Only the second worker reads while the first is stopped: a
	 * read the first had blocked in Redis is fed dummies until one
	 * is pending for it (or two went to the second: it had none).
	 */
	w2 = harness_worker_start(h, NULL, "--tier", "read_only", NULL);
	kill(harness_worker_proc(h, w1), SIGSTOP);
	for (i = 0; i < 2 && !(mine = soaked(h, w1, i)); i++)
		;
	harness_submit_json(h, "ctl", "{\"id\": \"c2\", \"type\": "
	    "\"PROCESS\", \"reply_to\": \"x\", \"args\": {\"action\": "
	    "\"cancel\", \"session_id\": \"h2\"}}");
	wait_ctl_read(h, mine);
	kill(harness_worker_proc(h, w1), SIGCONT);
	a = harness_wait_answer(h, "x", "c2", WAIT_MS);
	if (harness_jbool(a, "cancelled") != 1) {
		out = json_dumps(a, JSON_COMPACT);
		harness_fail(h, "cancel of h2 held on the other worker: %s",
		    out);
	}
	json_decref(a);
	expect_error(h, NULL, "h2", "cancelled");
	assert_false(ws_has(h, "made2.txt"));
	assert_true(harness_worker_alive(h, w2));
	harness_pass(h);
}

/*
 * max_running 1: the worker holding the place is killed (SIGKILL); the
 * other's item starts once the lease lapses (claim_idle), and the killed
 * worker's item is taken over (worker_lost) without running twice at once.
 */
static void
test_bh_place_of_killed_worker(void **state)
{
	struct harness	*h = harness_fixture(state);
	char		*l = limits(h, "{\"max_running\": 1}");
	pid_t		 w1;
	json_t		*a;

	w1 = harness_worker_start(h, NULL, "--queue-limits", l,
	    "--claim-idle", "2", NULL);
	harness_submit(h, "normal", "k1", "echo k1 >> k1runs; sleep 600",
	    NULL);
	harness_wait_ws_lines(h, "k1runs", 1, WAIT_MS);
	harness_worker_start(h, NULL, "--queue-limits", l, "--claim-idle",
	    "2", NULL);
	free(l);
	harness_worker_kill(h, w1);
	(void)harness_kill_procs("sleep 600", SIGKILL);
	harness_submit(h, "normal", "k2", "echo k2 > k2ran", NULL);
	a = next(h, NULL, "k2", "EXEC_RESULT");
	json_decref(a);
	expect_error(h, NULL, "k1", "worker_lost");
	assert_int_equal(harness_ws_lines(h, "k1runs"), 1);
	harness_pass(h);
}

/*
 * Two workers promote 300 due items (more than one beat's batch of
 * 100): each runs once.
 */
static void
test_bh_promote_once(void **state)
{
	struct harness	*h = harness_fixture(state);
	redisReply	*r;
	char		 id[32], *body;
	int		 i, n = 300;

	for (i = 0; i < n; i++) {
		snprintf(id, sizeof id, "p%d", i);
		xasprintf(&body, "{\"s\": \"q:%s:normal\", \"a\": \"1\", "
		    "\"f\": [\"item\", \"{\\\"id\\\": \\\"%s\\\", "
		    "\\\"type\\\": \\\"EXEC\\\", \\\"reply_to\\\": \\\"%s\\\", "
		    "\\\"args\\\": {\\\"command\\\": \\\"echo %s >> runs\\\"}}"
		    "\"]}", h->queue, id, h->reply, id);
		r = harness_cmd(h, "HSET q:%s:delayed:items %s %s", h->queue,
		    id, body);
		freeReplyObject(r);
		r = harness_cmd(h, "ZADD q:%s:delayed 1 %s", h->queue, id);
		freeReplyObject(r);
		free(body);
	}
	harness_worker_start(h, NULL, "--max-procs", "8", NULL);
	harness_worker_start(h, NULL, "--max-procs", "8", NULL);
	harness_wait_ws_lines(h, "runs", n, 4 * WAIT_MS);
	for (i = 0; i < n; i++) {
		json_t	*a;

		snprintf(id, sizeof id, "p%d", i);
		a = next(h, NULL, id, "EXEC_RESULT");
		json_decref(a);
	}
	assert_int_equal(harness_ws_lines(h, "runs"), n);
	harness_pass(h);
}

/*
 * An item over max_item_bytes is a dead letter whole, and requeued it is
 * refused again; a letter requeued while an item of its id runs is a
 * duplicate (one run, never two at once); the listing of a
 * letter that is not UTF-8 nor JSON, with terminal controls, prints
 * escaped, in both forms.
 */
static void
test_bh_dead_letters(void **state)
{
	struct harness	*h = harness_fixture(state);
	redisReply	*r;
	char		*big, *json, *out, *args;
	size_t		 i, n = 6000;
	int		 found = 0, rc;

	harness_worker_start(h, NULL, "--max-item-bytes", "2000", NULL);
	big = xmalloc(n + 1);
	for (i = 0; i < n; i++)
		big[i] = 'a' + i % 26;
	big[n] = '\0';
	xasprintf(&json, "{\"id\": \"big1\", \"type\": \"EXEC\", "
	    "\"reply_to\": \"%s\", \"args\": {\"command\": \"echo %s\"}}",
	    h->reply, big);
	harness_submit_json(h, "normal", json);
	expect_error(h, NULL, "big1", "item_too_large");
	r = harness_cmd(h, "XRANGE q:%s:dead - +", h->queue);
	for (i = 0; i < r->elements; i++) {
		redisReply	*f = r->element[i]->element[1];
		size_t		 k;

		for (k = 0; k + 1 < f->elements; k += 2)
			if (strcmp(f->element[k]->str, "item") == 0 &&
			    f->element[k + 1]->len == strlen(json) &&
			    memcmp(f->element[k + 1]->str, json,
			    strlen(json)) == 0)
				found = 1;
	}
	freeReplyObject(r);
	if (!found)
		harness_fail(h, "the too large item is not a whole letter");
	free(big);
	free(json);

	/* Requeued, it is refused again, as large: a letter again. */
	xasprintf(&args, "dead --queue $EXECQ_QUEUE requeue big1");
	if ((rc = cli(h, &out, args)) != 0)
		harness_fail(h, "requeue of big1: %d: %s", rc, out);
	free(out);
	free(args);
	expect_error(h, NULL, "big1", "item_too_large");

	/* A letter requeued while its id runs: a duplicate, one run. */
	harness_submit(h, "normal", "rq1", BUSY, NULL);
	harness_wait_running(h, "sleep 0.05");
	xasprintf(&json, "{\"id\": \"rq1\", \"type\": \"EXEC\", "
	    "\"reply_to\": \"%s\", \"args\": {\"command\": \"echo again "
	    ">> busy\"}}", h->reply);
	r = harness_cmd(h, "XADD q:%s:dead * id rq1 lane q:%s:normal item %s "
	    "answer {}", h->queue, h->queue, json);
	freeReplyObject(r);
	free(json);
	xasprintf(&args, "dead --queue $EXECQ_QUEUE requeue rq1");
	if (cli(h, &out, args) != 0)
		harness_fail(h, "requeue of rq1: %s", out);
	free(out);
	free(args);
	expect_error(h, NULL, "rq1", "duplicate_id");
	go(h);
	json_decref(next(h, NULL, "rq1", "EXEC_RESULT"));
	assert_int_equal(harness_ws_lines(h, "busy"), 1);

	/* A letter of bytes: not UTF-8, not JSON, an escape in its id. */
	r = harness_cmd(h, "XADD q:%s:dead * id %b lane %s item %b answer %s",
	    h->queue, "x\033[2Jy", (size_t)6, "q:x:normal",
	    "\xff\xfe\033]0;pwn\007", (size_t)9, "{\"type\":\"ERROR\"}");
	freeReplyObject(r);
	xasprintf(&args, "dead --queue $EXECQ_QUEUE");
	if (cli(h, &out, args) != 0 || strchr(out, '\033') != NULL ||
	    strstr(out, "big1") == NULL)
		harness_fail(h, "execq dead: %s", out);
	free(out);
	free(args);
	xasprintf(&args, "dead --json --queue $EXECQ_QUEUE");
	if (cli(h, &out, args) != 0 || strchr(out, '\033') != NULL ||
	    strstr(out, "\"letter\"") == NULL || strstr(out, "(null)") !=
	    NULL)
		harness_fail(h, "execq dead --json: %s", out);
	found = 0;
	for (i = 0; out[i] != '\0'; i++)	/* one object a line */
		if (out[i] == '\n')
			found++;
	if (found < 2)
		harness_fail(h, "execq dead --json: %s", out);
	free(out);
	free(args);
	harness_pass(h);
}

/*
 * A failed item waits for its retry; its id sent again meanwhile is a
 * duplicate (it does not run); cancelled, it leaves the delayed set, and
 * sent again after, it is answered cancelled: one run in all.
 */
static void
test_bh_resend_while_retrying(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*retry = "{\"retry\": {\"max_attempts\": 3, "
	    "\"initial_ms\": 600000, \"max_ms\": 600000}}";
	json_t		*a;
	char		*out;

	harness_worker_start(h, NULL, NULL);
	harness_submit(h, "normal", "rs1", "echo run >> rruns; exit 1", retry);
	a = next(h, NULL, "rs1", "EXEC_SCHEDULED");
	assert_int_equal(harness_jint(a, "attempt"), 2);
	json_decref(a);
	harness_submit(h, "normal", "rs1", "echo run >> rruns; exit 1", retry);
	expect_error(h, NULL, "rs1", "duplicate_id");
	if (cancel(h, "rs1", &out) != 0 || strstr(out, "delayed") == NULL)
		harness_fail(h, "cancel rs1: %s", out);
	free(out);
	expect_error(h, NULL, "rs1", "cancelled");
	harness_submit(h, "normal", "rs1", "echo run >> rruns; exit 1", retry);
	expect_error(h, NULL, "rs1", "cancelled");
	assert_int_equal(harness_ws_lines(h, "rruns"), 1);
	harness_pass(h);
}

/*
 * A field "requeue" alone (which anyone who can write a lane can add)
 * does not make a worker forget an answered id: only the requeue
 * script's mark does. The id is answered again as stored; it ran once.
 */
static void
test_bh_forged_requeue(void **state)
{
	struct harness	*h = harness_fixture(state);
	redisReply	*r;
	json_t		*a;
	char		*path, *text;
	int		 n = 0;

	harness_worker_start(h, NULL, NULL);
	harness_submit(h, "normal", "fq1", "echo run >> fqruns", NULL);
	a = harness_wait_answer(h, NULL, "fq1", 30000);
	assert_string_equal(harness_jstr(a, "type"), "EXEC_RESULT");
	json_decref(a);
	r = harness_cmd(h, "XADD q:%s:normal * item %s requeue 1-1", h->queue,
	    "{\"id\":\"fq1\",\"type\":\"EXEC\",\"reply_to\":\"x\","
	    "\"args\":{\"command\":\"echo run >> fqruns\"}}");
	freeReplyObject(r);
	a = harness_wait_answer(h, "x", "fq1", 30000);
	assert_string_equal(harness_jstr(a, "type"), "EXEC_RESULT");
	json_decref(a);
	xasprintf(&path, "%s/fqruns", h->ws);
	text = harness_read_file(path, NULL);
	free(path);
	for (path = text; path != NULL && *path != '\0'; path++)
		n += *path == '\n';
	free(text);
	assert_int_equal(n, 1);
	harness_pass(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_bh_agents_apart,
		    harness_setup, harness_teardown),
		cmocka_unit_test_setup_teardown(test_bh_rate_fraction,
		    harness_setup, harness_teardown),
		cmocka_unit_test_setup_teardown(
		    test_bh_cancel_approved_waiting, harness_setup,
		    harness_teardown),
		cmocka_unit_test_setup_teardown(test_bh_cancel_held_elsewhere,
		    harness_setup, harness_teardown),
		cmocka_unit_test_setup_teardown(
		    test_bh_place_of_killed_worker, harness_setup,
		    harness_teardown),
		cmocka_unit_test_setup_teardown(test_bh_promote_once,
		    harness_setup, harness_teardown),
		cmocka_unit_test_setup_teardown(test_bh_forged_requeue,
		    harness_setup, harness_teardown),
		cmocka_unit_test_setup_teardown(test_bh_dead_letters,
		    harness_setup, harness_teardown),
		cmocka_unit_test_setup_teardown(
		    test_bh_resend_while_retrying, harness_setup,
		    harness_teardown),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
