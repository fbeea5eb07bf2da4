/*
 * The command policy against a real redis-server and the real worker:
 * read-only commands run, catastrophic ones are refused and never
 * proposed, everything else is held for a human; approve, reject and
 * expiry end a held command exactly once; only an ACL approver can write
 * a decision; the path sandbox; item tiers; bad rules stop the worker;
 * every decision lands in the audit log.
 */

#include <sys/stat.h>
#include <sys/types.h>

#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hiredis/hiredis.h>
#include <jansson.h>

#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "logs/xmalloc.h"
#include "tests/integration/harness.h"

#define WAIT_MS		10000
#define CLI_MS		15000

/* The workers' operator token: held items have no token of their own. */
#define OPTOKEN	"op-0123456789abcdef"

/* Starts a worker under the default policy (plus extra flags). */
static void
policy_worker(struct harness *h, ...)
{
	const char	*extra[8], *s;
	va_list		 ap;
	size_t		 n = 0;

	va_start(ap, h);
	while ((s = va_arg(ap, const char *)) != NULL && n < 7)
		extra[n++] = s;
	va_end(ap);
	extra[n] = NULL;
	harness_worker_start(h, NULL, "--tier", "read_only", "--sandbox",
	    "hold", "--operator-token", OPTOKEN, extra[0], extra[1], extra[2],
	    extra[3], extra[4], extra[5], extra[6], NULL);
}

/* The reply queue's high lane, where APPROVAL_REQUESTs go. */
static const char *
high_lane(struct harness *h)
{
	static char	key[256];

	snprintf(key, sizeof key, "q:%s:high", h->reply);
	return (key);
}

/* Waits for the APPROVAL_REQUEST of item id; returns its request id. */
static char *
wait_request(struct harness *h, const char *id, const char *risk)
{
	json_t	*a;
	char	*req;

	a = harness_wait_entry(h, high_lane(h), id, WAIT_MS);
	assert_string_equal(harness_jstr(a, "type"), "APPROVAL_REQUEST");
	assert_string_equal(harness_jstr(a, "state"), "pending");
	if (risk != NULL)
		assert_string_equal(harness_jstr(a, "risk"), risk);
	assert_non_null(harness_jstr(a, "rule"));
	assert_non_null(harness_jstr(a, "reason"));
	assert_string_equal(harness_jstr(a, "cwd"), h->ws);
	assert_true(harness_jint(a, "expires_ms") >
	    harness_jint(a, "created_ms"));
	req = xstrdup(harness_jstr(a, "request"));
	assert_int_equal(strlen(req), 32);
	json_decref(a);
	return (req);
}

/* The request's record in Redis (fails if missing). */
static json_t *
record(struct harness *h, const char *req)
{
	redisReply	*r;
	json_t		*o;

	r = harness_cmd(h, "GET execq:approval:%s", req);
	if (r->type != REDIS_REPLY_STRING)
		harness_fail(h, "no record for request %s", req);
	o = json_loads(r->str, 0, NULL);
	freeReplyObject(r);
	assert_non_null(o);
	return (o);
}

/* Waits until the record's state is want. */
static void
wait_state(struct harness *h, const char *req, const char *want)
{
	int64_t	 deadline = harness_now_ms() + WAIT_MS;
	json_t	*o;
	int	 ok;

	for (;;) {
		o = record(h, req);
		ok = strcmp(harness_jstr(o, "state"), want) == 0;
		json_decref(o);
		if (ok)
			return;
		if (harness_now_ms() > deadline)
			harness_fail(h, "request %s never became %s", req, want);
		harness_sleep_ms(20);
	}
}

/* 1 if the audit log has a line for id with this event. */
static int
audited(struct harness *h, const char *id, const char *event,
    const char *by)
{
	char	 path[PATH_MAX], *text, *line, *save;
	json_t	*o;
	int	 found = 0;

	snprintf(path, sizeof path, "%s/audit.log", h->state_dir);
	if ((text = harness_read_file(path, NULL)) == NULL)
		return (0);
	for (line = strtok_r(text, "\n", &save); line != NULL && !found;
	    line = strtok_r(NULL, "\n", &save)) {
		if ((o = json_loads(line, 0, NULL)) == NULL)
			harness_fail(h, "audit line is not JSON: %s", line);
		found = harness_jstr(o, "id") != NULL &&
		    strcmp(harness_jstr(o, "id"), id) == 0 &&
		    strcmp(harness_jstr(o, "event"), event) == 0 &&
		    harness_jstr(o, "time") != NULL &&
		    harness_jstr(o, "rule") != NULL &&
		    (by == NULL || (harness_jstr(o, "by") != NULL &&
		    strcmp(harness_jstr(o, "by"), by) == 0));
		json_decref(o);
	}
	free(text);
	return (found);
}

/* Asserts an ERROR answer with this code; returns its message (copy). */
static char *
expect_error(struct harness *h, const char *id, const char *code)
{
	json_t	*a;
	char	*msg;

	a = harness_wait_answer(h, NULL, id, WAIT_MS);
	if (harness_jstr(a, "error.code") == NULL ||
	    strcmp(harness_jstr(a, "error.code"), code) != 0)
		harness_fail(h, "item %s: expected ERROR %s, got %s", id, code,
		    json_dumps(a, JSON_COMPACT));
	msg = xstrdup(harness_jstr(a, "error.message"));
	json_decref(a);
	return (msg);
}

/* Asserts an EXEC_RESULT with exit 0; returns it. */
static json_t *
expect_ran(struct harness *h, const char *id)
{
	json_t	*a;

	a = harness_wait_answer(h, NULL, id, WAIT_MS);
	if (harness_jstr(a, "type") == NULL ||
	    strcmp(harness_jstr(a, "type"), "EXEC_RESULT") != 0 ||
	    harness_jint(a, "exit_code") != 0)
		harness_fail(h, "item %s did not run cleanly: %s", id,
		    json_dumps(a, JSON_COMPACT));
	return (a);
}

/* 1 if path exists in the workspace. */
static int
ws_exists(struct harness *h, const char *name)
{
	char		path[PATH_MAX];
	struct stat	sb;

	snprintf(path, sizeof path, "%s/%s", h->ws, name);
	return (stat(path, &sb) == 0);
}

/* execq approve|reject ... on url (NULL: the test's Redis). */
static void
decide(struct harness *h, struct harness_proc *p, const char *url, ...)
{
	const char	*args[12], *s;
	va_list		 ap;
	size_t		 n = 0;

	va_start(ap, url);
	while ((s = va_arg(ap, const char *)) != NULL && n < 11)
		args[n++] = s;
	va_end(ap);
	args[n] = NULL;
	harness_cli(h, p, url, CLI_MS, args);
}

/* A read-only command runs at once under the read_only tier. */
static void
test_approval_read_only_runs(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "ls");
	json_t		*a;

	policy_worker(h, NULL);
	harness_submit(h, "normal", id, "ls -la | wc -l && git --version "
	    ">/dev/null 2>&1; echo done", NULL);
	a = expect_ran(h, id);
	assert_null(harness_jget(a, "approval"));
	json_decref(a);
	assert_true(audited(h, id, "run", NULL));

	/* The same command with an env that changes what git runs waits. */
	id = harness_id(h, "env");
	harness_submit(h, "normal", id, "git --version",
	    "{\"env\": {\"GIT_SSH_COMMAND\": \"touch pwned\"}}");
	a = harness_wait_entry(h, high_lane(h), id, WAIT_MS);
	assert_string_equal(harness_jstr(a, "rule"), "unknown:environment");
	json_decref(a);
	harness_pass(h);
}

/* Catastrophes are refused and never reach a human. */
static void
test_approval_blocked_never_proposed(void **state)
{
	static const char	*cmds[] = {
		"rm -rf /", "rm -fr -- /*", "sudo rm --no-preserve-root -r /",
		"sh -c 'rm -rf ~'", "echo hi; rm -r -f \"$HOME\"",
		":(){ :|:& };:", "mkfs.ext4 /dev/sda1", "dd if=/dev/zero "
		"of=/dev/sda", "shutdown -h now", "chmod -R 777 /",
		"kill -9 -1", "cat x > /dev/sda",
	};
	struct harness	*h = harness_fixture(state);
	const char	*id;
	redisReply	*r;
	char		*msg, name[32];
	size_t		 i;

	policy_worker(h, NULL);
	for (i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
		snprintf(name, sizeof name, "blocked%zu", i);
		id = harness_id(h, name);
		harness_submit(h, "normal", id, cmds[i], NULL);
		msg = expect_error(h, id, "blocked");
		assert_non_null(strstr(msg, "blocked:"));
		free(msg);
		assert_null(harness_try_entry(h, high_lane(h), id, 0));
		assert_true(audited(h, id, "refused", NULL));
	}
	r = harness_cmd(h, "XLEN execq:approvals");
	assert_int_equal(r->type, REDIS_REPLY_INTEGER);
	freeReplyObject(r);
	r = harness_cmd(h, "XRANGE execq:approvals - +");
	for (i = 0; i < r->elements; i++) {
		if (strstr(r->element[i]->element[1]->element[1]->str,
		    h->queue) != NULL)
			harness_fail(h, "a blocked command was proposed: %s",
			    r->element[i]->element[1]->element[1]->str);
	}
	freeReplyObject(r);
	harness_pass(h);
}

/*
 * A write is held, its slot freed (a read-only command runs meanwhile on
 * a one-slot worker), and runs once approved, exactly as requested.
 */
static void
test_approval_approve_runs_it(void **state)
{
	struct harness		*h = harness_fixture(state);
	const char		*id = harness_id(h, "touch");
	const char		*ro = harness_id(h, "ro");
	struct harness_proc	 p;
	char			*req;
	json_t			*a;

	policy_worker(h, "--max-procs", "1", NULL);
	harness_submit(h, "normal", id, "touch made.txt", NULL);
	req = wait_request(h, id, "write");
	assert_false(ws_exists(h, "made.txt"));
	assert_true(audited(h, id, "held", NULL));
	harness_submit(h, "normal", ro, "pwd", NULL);
	json_decref(expect_ran(h, ro));

	harness_cli(h, &p, NULL, CLI_MS, (const char *[]){ "approvals",
	    NULL });
	assert_int_equal(harness_proc_exit(&p), 0);
	/* A header row names the columns, the time left among them. */
	assert_int_equal(strncmp(p.out, "REQUEST ", 8), 0);
	assert_non_null(strstr(p.out, " EXPIRES IN "));
	assert_true(strstr(p.out, " EXPIRES IN ") < strstr(p.out, req));
	assert_non_null(strstr(p.out, req));
	assert_non_null(strstr(p.out, "touch made.txt"));
	harness_proc_release(&p);

	decide(h, &p, NULL, "approve", req, "--by", "alice", NULL);
	if (harness_proc_exit(&p) != 0)
		harness_fail(h, "approve exited %d: %s", harness_proc_exit(&p),
		    p.err);
	assert_non_null(strstr(p.out, "approved"));
	harness_proc_release(&p);
	a = expect_ran(h, id);
	assert_string_equal(harness_jstr(a, "approval.by"), "alice");
	assert_string_equal(harness_jstr(a, "approval.request"), req);
	json_decref(a);
	assert_true(ws_exists(h, "made.txt"));
	assert_true(audited(h, id, "approved", "alice"));
	wait_state(h, req, "approved");

	/* A second decision on the same request changes nothing. */
	decide(h, &p, NULL, "reject", req, "--reason", "late", NULL);
	assert_int_equal(harness_proc_exit(&p), 1);
	assert_non_null(strstr(p.err, "already approved"));
	harness_proc_release(&p);
	free(req);
	harness_pass(h);
}

/* A rejected command never runs; the agent learns who and why. */
static void
test_approval_reject(void **state)
{
	struct harness		*h = harness_fixture(state);
	const char		*id = harness_id(h, "rej");
	struct harness_proc	 p;
	char			*req, *msg;

	policy_worker(h, NULL);
	harness_submit(h, "normal", id, "touch nope.txt", NULL);
	req = wait_request(h, id, "write");
	/* A prefix of the id is enough. */
	req[8] = '\0';
	decide(h, &p, NULL, "reject", req, "--by", "bob", "--reason",
	    "not today", NULL);
	if (harness_proc_exit(&p) != 0)
		harness_fail(h, "reject exited %d: %s", harness_proc_exit(&p),
		    p.err);
	harness_proc_release(&p);
	msg = expect_error(h, id, "rejected");
	assert_non_null(strstr(msg, "bob"));
	assert_non_null(strstr(msg, "not today"));
	free(msg);
	assert_false(ws_exists(h, "nope.txt"));
	assert_true(audited(h, id, "rejected", "bob"));
	free(req);
	harness_pass(h);
}

/* Nobody answers: approval_expired, never a run; late approval refused. */
static void
test_approval_expires(void **state)
{
	struct harness		*h = harness_fixture(state);
	const char		*id = harness_id(h, "exp");
	struct harness_proc	 p;
	redisReply		*r;
	char			*req, *msg;

	policy_worker(h, "--approval-timeout", "1", NULL);
	harness_submit(h, "normal", id, "touch late.txt", NULL);
	req = wait_request(h, id, NULL);
	msg = expect_error(h, id, "approval_expired");
	free(msg);
	wait_state(h, req, "expired");
	r = harness_cmd(h, "ZSCORE execq:approvals:pending %s", req);
	assert_int_equal(r->type, REDIS_REPLY_NIL);
	freeReplyObject(r);
	decide(h, &p, NULL, "approve", req, NULL);
	assert_int_equal(harness_proc_exit(&p), 1);
	harness_proc_release(&p);
	/* The barrier: a stopped worker runs nothing more. */
	harness_stop_clean(h, h->w[0].pid);
	assert_false(ws_exists(h, "late.txt"));
	assert_true(audited(h, id, "expired", NULL));
	free(req);
	harness_pass(h);
}

/* ACL: an agent cannot write a decision; an approver can. */
static void
test_approval_acl(void **state)
{
	struct harness		*h = harness_fixture(state);
	const char		*id = harness_id(h, "acl");
	struct harness_proc	 p;
	redisContext		*c;
	redisReply		*r;
	char			 agent[160], approver[160], url[PATH_MAX + 400];
	char			*req;
	json_t			*a;

	snprintf(agent, sizeof agent, "%s-agent", h->queue);
	snprintf(approver, sizeof approver, "%s-approver", h->queue);
	/* As docs/PROTOCOL.md, "Approvals and the Redis ACL". */
	freeReplyObject(harness_cmd(h, "ACL SETUSER %s on >agentpw resetkeys "
	    "~q:* %%R~execq:* resetchannels +@all -@dangerous", agent));
	freeReplyObject(harness_cmd(h, "ACL SETUSER %s on >approverpw "
	    "resetkeys %%R~execq:* %%RW~execq:decisions resetchannels "
	    "-@all +xadd +get +zrangebyscore +xrange +xrevrange +xread "
	    "+ping +hello +auth +select +acl|whoami", approver));

	policy_worker(h, NULL);
	harness_submit(h, "normal", id, "touch acl.txt", NULL);
	req = wait_request(h, id, "write");

	/* The agent, straight to Redis and through the client. */
	c = redisConnectUnix(h->redis_path);
	assert_non_null(c);
	r = redisCommand(c, "AUTH %s agentpw", agent);
	assert_int_equal(r->type, REDIS_REPLY_STATUS);
	freeReplyObject(r);
	r = redisCommand(c, "XADD execq:decisions * item "
	    "{\"type\":\"APPROVE\",\"request\":\"%s\",\"by\":\"me\"}", req);
	assert_int_equal(r->type, REDIS_REPLY_ERROR);
	assert_non_null(strstr(r->str, "NOPERM"));
	freeReplyObject(r);
	r = redisCommand(c, "SET execq:approval:%s x", req);
	assert_int_equal(r->type, REDIS_REPLY_ERROR);
	freeReplyObject(r);
	redisFree(c);
	snprintf(url, sizeof url, "unix://%s:agentpw@%s", agent,
	    h->redis_path);
	decide(h, &p, url, "approve", req, NULL);
	assert_int_equal(harness_proc_exit(&p), 125);
	assert_non_null(strstr(p.err, "NOPERM"));
	harness_proc_release(&p);
	/* Refused by Redis: no decision names it, so nothing can have run. */
	assert_int_equal(harness_count_entries(h, "execq:decisions", req), 0);
	assert_false(ws_exists(h, "acl.txt"));

	/* The approver: "by" is its Redis user. */
	snprintf(url, sizeof url, "unix://%s:approverpw@%s", approver,
	    h->redis_path);
	decide(h, &p, url, "approve", req, NULL);
	if (harness_proc_exit(&p) != 0)
		harness_fail(h, "approver's approve exited %d: %s",
		    harness_proc_exit(&p), p.err);
	harness_proc_release(&p);
	a = expect_ran(h, id);
	assert_string_equal(harness_jstr(a, "approval.by"), approver);
	json_decref(a);
	assert_true(ws_exists(h, "acl.txt"));
	freeReplyObject(harness_cmd(h, "ACL DELUSER %s %s", agent, approver));
	free(req);
	harness_pass(h);
}

/* Paths outside the workspace: held, or refused with --sandbox refuse. */
static void
test_approval_sandbox(void **state)
{
	/*
	 * Outside the workspace and outside what the boundary lets any
	 * command read (read_paths such as /etc count as inside when every
	 * confinement layer is on).
	 */
	static const char	*outside[] = { "cat /root/notes.txt",
		"ls ../..", "cd /tmp && ls", "ls -la link/",
		"wc -l < /var/log/syslog" };
	struct harness	*h = harness_fixture(state);
	char		 link[PATH_MAX], name[32], *msg;
	const char	*id;
	json_t		*a;
	size_t		 i;

	snprintf(link, sizeof link, "%s/link", h->ws);
	assert_int_equal(symlink("/var", link), 0);
	policy_worker(h, NULL);
	for (i = 0; i < sizeof outside / sizeof outside[0]; i++) {
		snprintf(name, sizeof name, "out%zu", i);
		id = harness_id(h, name);
		harness_submit(h, "normal", id, outside[i], NULL);
		a = harness_wait_entry(h, high_lane(h), id, WAIT_MS);
		if (strcmp(harness_jstr(a, "rule"), "sandbox") != 0)
			harness_fail(h, "%s: held by %s, not the sandbox",
			    outside[i], harness_jstr(a, "rule"));
		json_decref(a);
	}
	id = harness_id(h, "inside");
	harness_submit(h, "normal", id, "ls -la . && cat /dev/null", NULL);
	json_decref(expect_ran(h, id));
	harness_worker_stop(h, h->w[0].pid);

	policy_worker(h, "--sandbox", "refuse", NULL);
	id = harness_id(h, "refused");
	harness_submit(h, "normal", id, "cat /root/notes.txt", NULL);
	msg = expect_error(h, id, "outside_workspace");
	assert_non_null(strstr(msg, "/root/notes.txt"));
	free(msg);
	harness_pass(h);
}

/* An item may lower its queue's tier, never raise it. */
static void
test_approval_item_tier(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*w1 = harness_id(h, "w1"), *w2 = harness_id(h, "w2");
	const char	*w3 = harness_id(h, "w3");
	char		*req, *msg;

	policy_worker(h, "--tier", "read_write", NULL);
	harness_submit(h, "normal", w1, "touch one.txt", NULL);
	json_decref(expect_ran(h, w1));
	harness_submit(h, "normal", w2, "touch two.txt",
	    "{\"tier\": \"read_only\"}");
	req = wait_request(h, w2, "write");
	free(req);
	assert_false(ws_exists(h, "two.txt"));
	harness_submit(h, "normal", w3, "touch three.txt",
	    "{\"tier\": \"admin\"}");
	msg = expect_error(h, w3, "bad_tier");
	free(msg);
	harness_pass(h);
}

/* A rule whose examples fail keeps the worker from starting. */
static void
test_approval_bad_rule_stops_start(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct harness_proc	 p;
	char			 cfg[PATH_MAX], ok[PATH_MAX];
	FILE			*f;
	const char		*argv[] = { h->bin, "--config", cfg,
				    "--workspace", h->ws, "-v", NULL };
	const char		*classify[] = { "classify", "--config", ok,
				    "--workspace", h->ws, "-c",
				    "make test && ls", NULL };

	snprintf(cfg, sizeof cfg, "%s/bad.json", h->dir);
	f = fopen(cfg, "w");
	assert_non_null(f);
	fputs("{\"rules\": [{\"name\": \"make-test\", \"match\": "
	    "\"make tset*\", \"risk\": \"write\", \"reason\": \"builds\", "
	    "\"examples\": [\"make test\"]}]}\n", f);
	fclose(f);
	harness_capture(h, argv, NULL, WAIT_MS, &p);
	assert_int_not_equal(harness_proc_exit(&p), 0);
	assert_non_null(strstr(p.err, "make-test"));
	assert_non_null(strstr(p.err, "make test"));
	harness_proc_release(&p);

	snprintf(ok, sizeof ok, "%s/ok.json", h->dir);
	f = fopen(ok, "w");
	assert_non_null(f);
	fputs("{\"rules\": [{\"name\": \"make-test\", \"match\": "
	    "\"make test*\", \"risk\": \"read_only\", \"reason\": \"only "
	    "runs the tests\", \"examples\": [\"make test\"], "
	    "\"counter_examples\": [\"make install\"]}]}\n", f);
	fclose(f);
	harness_cli(h, &p, NULL, WAIT_MS, classify);
	if (harness_proc_exit(&p) != 0 ||
	    strstr(p.out, "\"risk\":\"read_only\"") == NULL ||
	    strstr(p.out, "rule:make-test") == NULL)
		harness_fail(h, "classify with the rule: %s %s", p.out, p.err);
	harness_proc_release(&p);
	harness_pass(h);
}

/* A held background session starts once approved and calls back. */
static void
test_approval_session(void **state)
{
	struct harness		*h = harness_fixture(state);
	const char		*id = harness_id(h, "bg");
	struct harness_proc	 p;
	char			*req;
	json_t			*a;

	policy_worker(h, NULL);
	harness_submit(h, "normal", id, "touch bg.txt && echo made",
	    "{\"background\": true}");
	req = wait_request(h, id, "write");
	decide(h, &p, NULL, "approve", req, "--by", "carol", NULL);
	assert_int_equal(harness_proc_exit(&p), 0);
	harness_proc_release(&p);
	a = harness_wait_answer(h, NULL, id, WAIT_MS);
	assert_string_equal(harness_jstr(a, "type"), "EXEC_STARTED");
	json_decref(a);
	a = harness_wait_callback(h, id, WAIT_MS);
	assert_int_equal(harness_jint(a, "exit_code"), 0);
	json_decref(a);
	assert_true(ws_exists(h, "bg.txt"));
	assert_true(audited(h, id, "approved", "carol"));
	free(req);
	harness_pass(h);
}

/* Shutdown answers a held command (it never ran) and cancels it. */
static void
test_approval_shutdown_cancels(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "stop");
	char		*req, *msg;

	policy_worker(h, NULL);
	harness_submit(h, "normal", id, "touch stop.txt", NULL);
	req = wait_request(h, id, NULL);
	assert_int_equal(harness_worker_stop(h, h->w[0].pid), 0);
	msg = expect_error(h, id, "worker_stopping");
	free(msg);
	wait_state(h, req, "cancelled");
	assert_true(audited(h, id, "cancelled", NULL));
	free(req);
	harness_pass(h);
}

/* A PROCESS action on a held item (as an operator), answered at once. */
static json_t *
held_process(struct harness *h, const char *action, const char *id)
{
	char	*args;
	json_t	*a;

	xasprintf(&args, "{\"action\": \"%s\", \"session_id\": \"%s\", "
	    "\"operator_token\": \"" OPTOKEN "\"}", action, id);
	a = harness_process(h, args, WAIT_MS);
	free(args);
	return (a);
}

/*
 * Held is not gone: poll, wait, log and list show a held item's state
 * (held, the request, its expiry), write and kill say it is held,
 * "execq ps" lists it; after a rejection poll says rejected; after an
 * approval it runs.
 */
static void
test_approval_held_is_not_gone(void **state)
{
	static const char	*acts[] = { "poll", "wait", "log" };
	struct harness		*h = harness_fixture(state);
	const char		*id = harness_id(h, "held");
	const char		*rej = harness_id(h, "heldrej");
	struct harness_proc	 p;
	json_t			*a, *s;
	char			*req, *req2, *msg;
	size_t			 i;
	int			 found = 0;

	policy_worker(h, NULL);
	harness_submit(h, "normal", id, "touch held.txt", NULL);
	req = wait_request(h, id, "write");
	for (i = 0; i < sizeof acts / sizeof acts[0]; i++) {
		a = held_process(h, acts[i], id);
		if (harness_jstr(a, "status") == NULL ||
		    strcmp(harness_jstr(a, "status"), "held") != 0 ||
		    harness_jstr(a, "request") == NULL ||
		    strcmp(harness_jstr(a, "request"), req) != 0 ||
		    harness_jint(a, "expires_ms") <= harness_jint(a,
		    "created_ms") || strcmp(harness_jstr(a, "rule"),
		    "write:touch") != 0)
			harness_fail(h, "%s of a held item: %s", acts[i],
			    json_dumps(a, 0));
		assert_string_equal(harness_jstr(a, "action"), acts[i]);
		assert_string_equal(harness_jstr(a, "session_id"), id);
		json_decref(a);
	}
	a = held_process(h, "log", id);
	assert_string_equal(harness_jstr(a, "output"), "");
	json_decref(a);
	a = harness_process(h, "{\"action\": \"list\", \"operator_token\": \""
	    OPTOKEN "\"}", WAIT_MS);
	s = harness_jget(a, "sessions");
	for (i = 0; s != NULL && i < json_array_size(s); i++)
		if (strcmp(harness_jstr(json_array_get(s, i), "session_id"),
		    id) == 0) {
			assert_string_equal(harness_jstr(json_array_get(s, i),
			    "status"), "held");
			found = 1;
		}
	if (!found)
		harness_fail(h, "list without the held item: %s",
		    json_dumps(a, 0));
	json_decref(a);
	a = held_process(h, "kill", id);
	assert_string_equal(harness_jstr(a, "error.code"), "held");
	assert_non_null(strstr(harness_jstr(a, "error.message"), req));
	json_decref(a);
	harness_cli(h, &p, NULL, CLI_MS, (const char *[]){ "ps", NULL });
	assert_int_equal(harness_proc_exit(&p), 0);
	if (strstr(p.out, id) == NULL || strstr(p.out, "held") == NULL)
		harness_fail(h, "ps without the held item: %s", p.out);
	harness_proc_release(&p);
	/* A second worker on the queue hands polls to the one holding it. */
	policy_worker(h, NULL);
	for (i = 0; i < 6; i++) {
		a = held_process(h, "poll", id);
		if (harness_jstr(a, "status") == NULL ||
		    strcmp(harness_jstr(a, "status"), "held") != 0)
			harness_fail(h, "poll %zu with two workers: %s", i,
			    json_dumps(a, 0));
		json_decref(a);
	}

	/* Rejected: poll says so, and the item never ran. */
	harness_submit(h, "normal", rej, "touch rej.txt", NULL);
	req2 = wait_request(h, rej, "write");
	decide(h, &p, NULL, "reject", req2, "--by", "bob", "--reason", "no",
	    NULL);
	if (harness_proc_exit(&p) != 0)
		harness_fail(h, "reject exited %d: %s", harness_proc_exit(&p),
		    p.err);
	harness_proc_release(&p);
	msg = expect_error(h, rej, "rejected");
	free(msg);
	a = held_process(h, "poll", rej);
	assert_string_equal(harness_jstr(a, "status"), "rejected");
	assert_string_equal(harness_jstr(a, "decided_by"), "bob");
	assert_true(harness_jbool(a, "eof"));
	json_decref(a);
	harness_cli(h, &p, NULL, CLI_MS, (const char *[]){ "ps", "--all",
	    NULL });
	if (strstr(p.out, rej) == NULL || strstr(p.out, "rejected") == NULL)
		harness_fail(h, "ps --all without the rejected item: %s",
		    p.out);
	harness_proc_release(&p);

	/* Approved: it runs as any item does. */
	decide(h, &p, NULL, "approve", req, "--by", "alice", NULL);
	assert_int_equal(harness_proc_exit(&p), 0);
	harness_proc_release(&p);
	json_decref(expect_ran(h, id));
	assert_true(ws_exists(h, "held.txt"));
	assert_false(ws_exists(h, "rej.txt"));
	free(req);
	free(req2);
	harness_pass(h);
}

int
main(void)
{
#define T(f)	cmocka_unit_test_setup_teardown(f, harness_setup, \
		    harness_teardown)
	const struct CMUnitTest tests[] = {
		T(test_approval_read_only_runs),
		T(test_approval_blocked_never_proposed),
		T(test_approval_approve_runs_it),
		T(test_approval_reject),
		T(test_approval_expires),
		T(test_approval_acl),
		T(test_approval_sandbox),
		T(test_approval_item_tier),
		T(test_approval_bad_rule_stops_start),
		T(test_approval_shutdown_cancels),
		T(test_approval_session),
		T(test_approval_held_is_not_gone),
	};
#undef T

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
