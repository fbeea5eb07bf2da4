/*
 * The worker binary against a real Redis: one behaviour per test, each
 * with its own worker, queue, workspace and log dir (tests/integration/
 * harness.h). Process numbers such as "sleep 7771" are unique to one test
 * so the /proc scans for survivors cannot see another test's processes.
 */

#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hiredis/hiredis.h>
#include <jansson.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "logs/xmalloc.h"
#include "tests/integration/harness.h"

/* A string member, never NULL: assert_string_equal must not see NULL. */
static const char *
jstr(json_t *a, const char *path)
{
	const char	*s = harness_jstr(a, path);

	return (s != NULL ? s : "<missing or not a string>");
}

/* Asserts a is an ERROR with code; id NULL means "id": null. */
static void
expect_error(json_t *a, const char *id, const char *code)
{
	assert_string_equal(jstr(a, "type"), "ERROR");
	assert_string_equal(jstr(a, "error.code"), code);
	assert_true(strlen(jstr(a, "error.message")) > 0);
	if (id == NULL)
		assert_true(json_is_null(json_object_get(a, "id")));
	else
		assert_string_equal(jstr(a, "id"), id);
}

/* Asserts a is the EXEC_RESULT of id with this exit code. */
static void
expect_result(json_t *a, const char *id, int exit_code)
{
	static char	 shown[600];
	char		*text;

	assert_string_equal(jstr(a, "type"), "EXEC_RESULT");
	assert_string_equal(jstr(a, "id"), id);
	if (harness_jint(a, "exit_code") != exit_code) {
		text = json_dumps(a, JSON_COMPACT);
		snprintf(shown, sizeof shown, "%s", text != NULL ? text : "?");
		free(text);
		fail_msg("%s: exit code %lld, expected %d; answer: %s", id,
		    (long long)harness_jint(a, "exit_code"), exit_code, shown);
	}
}

/* Runs command as item id and waits for its EXEC_RESULT. */
static json_t *
run_item(struct harness *h, const char *id, const char *command,
    const char *args_extra, int timeout_ms)
{
	json_t	*a;

	harness_submit(h, "normal", id, command, args_extra);
	a = harness_wait_answer(h, NULL, id, timeout_ms);
	assert_string_equal(jstr(a, "type"), "EXEC_RESULT");
	return (a);
}

/* The allocated path <dir>/<name>. */
static char *
path_in(const char *dir, const char *name)
{
	char	*p;

	xasprintf(&p, "%s/%s", dir, name);
	return (p);
}

/* echo: the answer, the log file, the metadata and the ack. */
static void
test_worker_echo_answers_logs_and_acks(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "echo");
	json_t		*a, *m;
	char		*log, *text;
	pid_t		 pid;

	pid = harness_worker_start(h, NULL, NULL);
	a = run_item(h, id, "echo hello", NULL, HARNESS_WAIT_MS);
	expect_result(a, id, 0);
	assert_string_equal(jstr(a, "stdout"), "hello\n");
	assert_string_equal(jstr(a, "stderr"), "");
	assert_true(json_is_null(json_object_get(a, "signal")));
	assert_int_equal(harness_jbool(a, "truncated"), 0);
	assert_int_equal(harness_jbool(a, "timed_out"), 0);
	assert_true(harness_jint(a, "duration_ms") >= 0);
	assert_true(harness_jint(a, "rusage.max_rss_kb") > 0);
	assert_true(harness_jint(a, "rusage.user_ms") >= 0);
	assert_true(harness_jint(a, "rusage.sys_ms") >= 0);

	xasprintf(&log, "%s/%s.log", h->log_dir, id);
	assert_string_equal(jstr(a, "log_path"), log);
	text = harness_read_file(log, NULL);
	assert_non_null(text);
	assert_string_equal(text, "hello\n");
	m = harness_load_meta(h, id);
	assert_string_equal(jstr(m, "status"), "completed");
	assert_string_equal(jstr(m, "command"), "echo hello");
	assert_string_equal(jstr(m, "id"), id);
	assert_string_equal(jstr(m, "cwd"), h->ws);
	assert_int_equal(harness_jint(m, "exit_code"), 0);
	assert_int_equal(harness_jint(m, "output_bytes"), 6);

	assert_int_equal(harness_pending(h, "normal"), 0);
	harness_stop_clean(h, pid);
	json_decref(m);
	json_decref(a);
	free(text);
	free(log);
	harness_pass(h);
}

/* A failing command: its exit code, stdout and stderr kept apart. */
static void
test_worker_exit_code_and_separate_stderr(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "exit3");
	json_t		*a, *m;

	harness_worker_start(h, NULL, NULL);
	a = run_item(h, id, "echo out; echo oops >&2; exit 3", NULL,
	    HARNESS_WAIT_MS);
	expect_result(a, id, 3);
	assert_string_equal(jstr(a, "stdout"), "out\n");
	assert_string_equal(jstr(a, "stderr"), "oops\n");
	assert_true(json_is_null(json_object_get(a, "signal")));
	m = harness_load_meta(h, id);
	assert_string_equal(jstr(m, "status"), "failed");
	assert_int_equal(harness_jint(m, "exit_code"), 3);
	json_decref(m);
	json_decref(a);
	harness_pass(h);
}

/* Death by signal n answers 128 + n and names the signal. */
static void
test_worker_signal_is_128_plus_n(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "sig");
	json_t		*a;

	harness_worker_start(h, NULL, NULL);
	a = run_item(h, id, "kill -9 $$", NULL, HARNESS_WAIT_MS);
	expect_result(a, id, 137);
	assert_string_equal(jstr(a, "signal"), "SIGKILL");
	assert_int_equal(harness_jbool(a, "timed_out"), 0);
	json_decref(a);
	harness_pass(h);
}

/*
 * A timed-out command's whole tree dies: a background child, a setsid'd
 * one, a double-forked one and the foreground one. n is the first of four
 * unusual sleep lengths used to find survivors.
 */
static void
check_timeout_kills_tree(struct harness *h, const char *cgroup, int n,
    size_t env_bytes)
{
	const char	*id = harness_id(h, "tree");
	char		 cmd[256], name[32], survivors[64] = "", *args, *big;
	json_t		*a, *m;
	int		 i;

	harness_worker_start(h, NULL, "--kill-grace", "1", "--cgroup",
	    cgroup, NULL);
	snprintf(cmd, sizeof cmd, "sleep %d & setsid sleep %d & "
	    "(sleep %d &) ; sleep %d", n, n + 1, n + 2, n + 3);
	/*
	 * A big environment must not hide the tree from the sweep. dash
	 * passes its variables on in hash order, where B1..B3 come before
	 * EXECQ_SESSION_ID.
	 */
	big = xmalloc(env_bytes / 3 + 1);
	memset(big, 'x', env_bytes / 3);
	big[env_bytes / 3] = '\0';
	xasprintf(&args, "{\"timeout_s\": 1, \"env\": {\"B1\": \"%s\", "
	    "\"B2\": \"%s\", \"B3\": \"%s\"}}", big, big, big);
	harness_submit(h, "normal", id, cmd, args);
	free(args);
	free(big);
	snprintf(name, sizeof name, "sleep %d", n + 3);
	harness_wait_running(h, name);
	a = harness_wait_answer(h, NULL, id, HARNESS_WAIT_MS);
	expect_result(a, id, 143);
	assert_string_equal(jstr(a, "signal"), "SIGTERM");
	assert_int_equal(harness_jbool(a, "timed_out"), 1);
	assert_true(harness_jint(a, "duration_ms") >= 900);
	m = harness_load_meta(h, id);
	assert_string_equal(jstr(m, "status"), "timed_out");
	json_decref(m);
	json_decref(a);
	for (i = 0; i < 4; i++) {
		snprintf(name, sizeof name, "sleep %d", n + i);
		if (harness_wait_procs_gone(name, 30000) != 0) {
			harness_kill_procs(name, SIGKILL);
			strcat(survivors, " '");
			strcat(survivors, name);
			strcat(survivors, "'");
		}
	}
	if (*survivors != '\0')
		harness_fail(h, "survived the timeout (cgroup %s):%s", cgroup,
		    survivors);
}

/* Timeout with cgroups: the whole tree dies. */
static void
test_worker_timeout_kills_tree_cgroup(void **state)
{
	struct harness	*h = harness_fixture(state);

	check_timeout_kills_tree(h, "auto", 7771, 0);
	harness_pass(h);
}

/* Timeout without cgroups: process group plus the environ sweep. */
static void
test_worker_timeout_kills_tree_fallback(void **state)
{
	struct harness	*h = harness_fixture(state);

	check_timeout_kills_tree(h, "off", 7781, 0);
	harness_pass(h);
}

/* The same with a 24 KB environment (EXECQ_SESSION_ID far in). */
static void
test_worker_timeout_kills_tree_fallback_big_env(void **state)
{
	struct harness	*h = harness_fixture(state);

	check_timeout_kills_tree(h, "off", 7785, 24000);
	harness_pass(h);
}

/*
 * After a normal exit, what the command left running dies too: a setsid'd
 * child and a double-forked one, both with their output redirected so
 * they do not hold the pipes open, and a background one holding them.
 */
static void
check_leftovers_die(struct harness *h, const char *cgroup, int n)
{
	const char	*id = harness_id(h, "left");
	char		 cmd[256], name[32], survivors[64] = "";
	json_t		*a;
	int		 i;

	/*
	 * A drain longer than the answer's deadline: the answer may not wait
	 * for the background child that holds the pipes.
	 */
	harness_worker_start(h, NULL, "--cgroup", cgroup, "--drain", "60",
	    NULL);
	snprintf(cmd, sizeof cmd, "setsid sleep %d >/dev/null 2>&1 & "
	    "(sleep %d >/dev/null 2>&1 &); sleep %d & sleep 0.2; echo bye",
	    n, n + 1, n + 2);
	a = run_item(h, id, cmd, NULL, HARNESS_WAIT_MS);
	expect_result(a, id, 0);
	assert_string_equal(jstr(a, "stdout"), "bye\n");
	for (i = 0; i < 3; i++) {
		snprintf(name, sizeof name, "sleep %d", n + i);
		if (harness_wait_procs_gone(name, 30000) != 0) {
			harness_kill_procs(name, SIGKILL);
			strcat(survivors, " '");
			strcat(survivors, name);
			strcat(survivors, "'");
		}
	}
	if (*survivors != '\0')
		harness_fail(h, "outlived their command (cgroup %s):%s",
		    cgroup, survivors);
	json_decref(a);
}

/* Leftovers of a finished command die, with cgroups. */
static void
test_worker_leftovers_die_at_exit_cgroup(void **state)
{
	struct harness	*h = harness_fixture(state);

	check_leftovers_die(h, "auto", 7791);
	harness_pass(h);
}

/* Leftovers of a finished command die, without cgroups. */
static void
test_worker_leftovers_die_at_exit_fallback(void **state)
{
	struct harness	*h = harness_fixture(state);

	check_leftovers_die(h, "off", 7795);
	harness_pass(h);
}

/* A tree that ignores SIGTERM is killed after the grace period. */
static void
test_worker_sigterm_ignored_gets_sigkill(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "trap");
	json_t		*a;

	harness_worker_start(h, NULL, "--kill-grace", "1", NULL);
	harness_submit(h, "normal", id, "trap '' TERM; sleep 7775",
	    "{\"timeout_s\": 1}");
	a = harness_wait_answer(h, NULL, id, HARNESS_WAIT_MS);
	expect_result(a, id, 137);
	assert_string_equal(jstr(a, "signal"), "SIGKILL");
	assert_int_equal(harness_jbool(a, "timed_out"), 1);
	assert_true(harness_jint(a, "duration_ms") >= 1900);
	assert_int_equal(harness_wait_procs_gone("sleep 7775", 30000), 0);
	json_decref(a);
	harness_pass(h);
}

/* Without ENABLE_EXECUTE nothing runs: execution_disabled. */
static void
test_worker_gate_refuses_when_disabled(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "gate");
	char		*ran, *log;
	json_t		*a;
	pid_t		 pid;

	h->execute = 0;
	pid = harness_worker_start(h, NULL, NULL);
	harness_submit(h, "normal", id, "touch gate-ran", NULL);
	a = harness_wait_answer(h, NULL, id, HARNESS_WAIT_MS);
	expect_error(a, id, "execution_disabled");
	ran = path_in(h->ws, "gate-ran");
	xasprintf(&log, "%s/%s.log", h->log_dir, id);
	assert_int_equal(harness_pending(h, "normal"), 0);
	harness_stop_clean(h, pid);	/* the barrier: nothing runs after */
	assert_int_equal(access(ran, F_OK), -1);
	assert_int_equal(access(log, F_OK), -1);
	free(log);
	free(ran);
	json_decref(a);
	harness_pass(h);
}

/* One refused item: its text, the code, and where the ERROR goes. */
struct bad_case {
	const char	*name;
	const char	*json;		/* @ID: the item id, @R: reply_to */
	const char	*code;
	int		 to_default;	/* no usable reply_to: q:replies */
	int		 id_known;	/* the ERROR carries the id */
};

static const struct bad_case bad_cases[] = {
	{ "notjson", "not json", "bad_json", 1, 0 },
	{ "empty", "", "bad_json", 1, 0 },
	{ "array", "[1, 2]", "bad_item", 1, 0 },
	{ "dupkey", "{\"id\":\"@ID\",\"id\":\"@ID\",\"type\":\"EXEC\","
	    "\"reply_to\":\"@R\",\"args\":{\"command\":\"true\"}}",
	    "bad_json", 1, 0 },
	{ "noargs", "{\"id\":\"@ID\",\"type\":\"EXEC\",\"reply_to\":\"@R\"}",
	    "bad_item", 0, 1 },
	{ "argsstr", "{\"id\":\"@ID\",\"type\":\"EXEC\",\"reply_to\":\"@R\","
	    "\"args\":\"true\"}", "bad_item", 0, 1 },
	{ "nocmd", "{\"id\":\"@ID\",\"type\":\"EXEC\",\"reply_to\":\"@R\","
	    "\"args\":{}}", "missing_command", 0, 1 },
	{ "blankcmd", "{\"id\":\"@ID\",\"type\":\"EXEC\",\"reply_to\":\"@R\","
	    "\"args\":{\"command\":\" \\t \"}}", "missing_command", 0, 1 },
	{ "type", "{\"id\":\"@ID\",\"type\":\"FROB\",\"reply_to\":\"@R\","
	    "\"args\":{\"command\":\"true\"}}", "unknown_type", 0, 1 },
	{ "notype", "{\"id\":\"@ID\",\"reply_to\":\"@R\","
	    "\"args\":{\"command\":\"true\"}}", "bad_item", 0, 1 },
	{ "noid", "{\"type\":\"EXEC\",\"reply_to\":\"@R\","
	    "\"args\":{\"command\":\"true\"}}", "bad_item", 0, 0 },
	{ "badid", "{\"id\":\"../x\",\"type\":\"EXEC\",\"reply_to\":\"@R\","
	    "\"args\":{\"command\":\"true\"}}", "bad_id", 0, 0 },
	{ "badreply", "{\"id\":\"@ID\",\"type\":\"EXEC\",\"reply_to\":\"a/b\","
	    "\"args\":{\"command\":\"true\"}}", "bad_reply_to", 1, 1 },
	{ "nul", "{\"id\":\"@ID\",\"type\":\"EXEC\",\"reply_to\":\"@R\","
	    "\"args\":{\"command\":\"echo a\\u0000b\"}}", "nul_byte", 0, 1 },
	{ "nulcwd", "{\"id\":\"@ID\",\"type\":\"EXEC\",\"reply_to\":\"@R\","
	    "\"args\":{\"command\":\"true\",\"cwd\":\"a\\u0000\"}}",
	    "nul_byte", 0, 1 },
	{ "tneg", "{\"id\":\"@ID\",\"type\":\"EXEC\",\"reply_to\":\"@R\","
	    "\"args\":{\"command\":\"true\",\"timeout_s\":-1}}",
	    "bad_timeout", 0, 1 },
	{ "tzero", "{\"id\":\"@ID\",\"type\":\"EXEC\",\"reply_to\":\"@R\","
	    "\"args\":{\"command\":\"true\",\"timeout_s\":0}}",
	    "bad_timeout", 0, 1 },
	{ "tstr", "{\"id\":\"@ID\",\"type\":\"EXEC\",\"reply_to\":\"@R\","
	    "\"args\":{\"command\":\"true\",\"timeout_s\":\"5\"}}",
	    "bad_timeout", 0, 1 },
	{ "tmax", "{\"id\":\"@ID\",\"type\":\"EXEC\",\"reply_to\":\"@R\","
	    "\"args\":{\"command\":\"true\",\"timeout_s\":100}}",
	    "bad_timeout", 0, 1 },
	{ "preload", "{\"id\":\"@ID\",\"type\":\"EXEC\",\"reply_to\":\"@R\","
	    "\"args\":{\"command\":\"true\",\"env\":{\"LD_PRELOAD\":"
	    "\"/tmp/x.so\"}}}", "env_forbidden", 0, 1 },
	{ "bashenv", "{\"id\":\"@ID\",\"type\":\"EXEC\",\"reply_to\":\"@R\","
	    "\"args\":{\"command\":\"true\",\"env\":{\"BASH_ENV\":\"/x\"}}}",
	    "env_forbidden", 0, 1 },
	{ "envname", "{\"id\":\"@ID\",\"type\":\"EXEC\",\"reply_to\":\"@R\","
	    "\"args\":{\"command\":\"true\",\"env\":{\"1X\":\"v\"}}}",
	    "bad_env", 0, 1 },
	{ "envval", "{\"id\":\"@ID\",\"type\":\"EXEC\",\"reply_to\":\"@R\","
	    "\"args\":{\"command\":\"true\",\"env\":{\"K\":1}}}",
	    "bad_env", 0, 1 },
	{ "envarr", "{\"id\":\"@ID\",\"type\":\"EXEC\",\"reply_to\":\"@R\","
	    "\"args\":{\"command\":\"true\",\"env\":[\"K=V\"]}}",
	    "bad_env", 0, 1 },
	{ "updot", "{\"id\":\"@ID\",\"type\":\"EXEC\",\"reply_to\":\"@R\","
	    "\"args\":{\"command\":\"true\",\"cwd\":\"../..\"}}",
	    "cwd_outside_workspace", 0, 1 },
	{ "symlink", "{\"id\":\"@ID\",\"type\":\"EXEC\",\"reply_to\":\"@R\","
	    "\"args\":{\"command\":\"true\",\"cwd\":\"escape/logs\"}}",
	    "cwd_outside_workspace", 0, 1 },
	{ "root", "{\"id\":\"@ID\",\"type\":\"EXEC\",\"reply_to\":\"@R\","
	    "\"args\":{\"command\":\"true\",\"cwd\":\"/\"}}",
	    "cwd_outside_workspace", 0, 1 },
	{ "nodir", "{\"id\":\"@ID\",\"type\":\"EXEC\",\"reply_to\":\"@R\","
	    "\"args\":{\"command\":\"true\",\"cwd\":\"nope\"}}",
	    "cwd_not_found", 0, 1 },
	{ "retries", "{\"id\":\"@ID\",\"type\":\"EXEC\",\"reply_to\":\"@R\","
	    "\"args\":{\"command\":\"true\",\"retries\":99}}",
	    "bad_item", 0, 1 },
	{ "bgtype", "{\"id\":\"@ID\",\"type\":\"EXEC\",\"reply_to\":\"@R\","
	    "\"args\":{\"command\":\"true\",\"background\":\"yes\"}}",
	    "bad_item", 0, 1 },
};

/* tmpl with @ID and @R replaced. Allocated. */
static char *
expand(const char *tmpl, const char *id, const char *reply)
{
	char		*out, *p;
	const char	*s;

	out = xmalloc(strlen(tmpl) * 4 + strlen(id) * 8 + strlen(reply) * 8 +
	    1);
	for (p = out, s = tmpl; *s != '\0';) {
		if (strncmp(s, "@ID", 3) == 0) {
			p = stpcpy(p, id);
			s += 3;
		} else if (strncmp(s, "@R", 2) == 0) {
			p = stpcpy(p, reply);
			s += 2;
		} else
			*p++ = *s++;
	}
	*p = '\0';
	return (out);
}

/* Submits one bad item and checks its ERROR. */
static void
check_bad_item(struct harness *h, const char *name, const char *body,
    size_t len, const char *code, int to_default, const char *id)
{
	json_t	*a;

	harness_xadd(h, "normal", "item", body, len);
	a = harness_wait_answer(h, to_default ? "replies" : NULL,
	    to_default ? NULL : id, 3000);
	if (strcmp(jstr(a, "error.code"), code) != 0)
		harness_fail(h, "bad item '%s': expected %s, got %s", name,
		    code, jstr(a, "error.code"));
	expect_error(a, id, code);
	json_decref(a);
}

/* Every bad item gets its ERROR where it belongs; the worker lives on. */
static void
test_worker_bad_items_refused_worker_survives(void **state)
{
	struct harness		*h = harness_fixture(state);
	const struct bad_case	*c;
	const char		*id;
	char			*body, *link, *big;
	json_t			*a;
	pid_t			 pid;
	size_t			 i, n = 0;

	link = path_in(h->ws, "escape");
	assert_int_equal(symlink(h->dir, link), 0);
	pid = harness_worker_start(h, NULL, "--max-item-bytes", "2048",
	    "--max-timeout", "10", "--timeout", "5", NULL);
	for (i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
		c = &bad_cases[i];
		id = harness_id(h, c->name);
		body = expand(c->json, id, h->reply);
		check_bad_item(h, c->name, body, strlen(body), c->code,
		    c->to_default, c->id_known ? id : NULL);
		free(body);
		n++;
	}

	/* Too large: refused unparsed, but its head tells where to. */
	big = xmalloc(3001);
	memset(big, 'x', 3000);
	big[3000] = '\0';
	id = harness_id(h, "big");
	xasprintf(&body, "{\"id\":\"%s\",\"type\":\"EXEC\",\"reply_to\":"
	    "\"%s\",\"args\":{\"command\":\"echo %s\"}}", id, h->reply, big);
	check_bad_item(h, "big", body, strlen(body), "item_too_large", 0, id);
	free(body);
	/* A raw NUL byte in the entry. */
	xasprintf(&body, "{\"id\":\"%s\",\"type\":\"EXEC\",\"reply_to\":"
	    "\"%s\",\"args\":{\"command\":\"true\"}}#", id, h->reply);
	body[strlen(body) - 1] = '\0';
	check_bad_item(h, "rawnul", body, strlen(body) + 1, "nul_byte", 1,
	    NULL);
	free(body);
	/* An entry without an "item" field. */
	harness_xadd(h, "normal", "other", "x", 1);
	a = harness_wait_answer(h, "replies", NULL, 3000);
	expect_error(a, NULL, "bad_item");
	json_decref(a);
	n += 3;
	assert_true(n >= 25);

	/* The worker is alive and still runs good items. */
	id = harness_id(h, "good");
	a = run_item(h, id, "echo fine", NULL, HARNESS_WAIT_MS);
	expect_result(a, id, 0);
	assert_string_equal(jstr(a, "stdout"), "fine\n");
	assert_true(harness_worker_alive(h, pid));
	assert_int_equal(harness_pending(h, "normal"), 0);
	harness_stop_clean(h, pid);
	json_decref(a);
	free(big);
	free(link);
	harness_pass(h);
}

/* cwd inside the workspace, the item env, the allowlisted worker env. */
static void
test_worker_cwd_and_env_policy(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "cwdenv");
	const char	*env[] = { "SECRET_TOKEN=x", "TERM=xterm",
			    "LC_EXECQTEST=lc", NULL };
	char		*sub, *dir, *real, *want;
	json_t		*a;

	sub = path_in(h->ws, "sub");
	dir = path_in(sub, "dir");
	assert_int_equal(mkdir(sub, 0755), 0);
	assert_int_equal(mkdir(dir, 0755), 0);
	real = realpath(dir, NULL);
	assert_non_null(real);
	harness_worker_start(h, env, NULL);
	a = run_item(h, id, "pwd; echo $K; "
	    "echo \"secret=${SECRET_TOKEN-unset}\"; "
	    "echo \"term=$TERM color=$NO_COLOR pager=$PAGER\"; "
	    "echo \"lc=$LC_EXECQTEST sid=$EXECQ_SESSION_ID\"",
	    "{\"cwd\": \"sub/dir\", \"env\": {\"K\": \"V\"}}",
	    HARNESS_WAIT_MS);
	expect_result(a, id, 0);
	xasprintf(&want, "%s\nV\nsecret=unset\nterm=dumb color=1 pager=cat\n"
	    "lc=lc sid=%s\n", real, id);
	assert_string_equal(jstr(a, "stdout"), want);
	assert_string_equal(jstr(a, "stderr"), "");
	json_decref(a);
	free(want);
	free(real);
	free(dir);
	free(sub);
	harness_pass(h);
}

/* Capped output: head, marker, tail; the log keeps every byte. */
static void
test_worker_output_cap_keeps_head_and_tail(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "cap");
	const size_t	 cap = 4096, lines = 8400, total = lines * 12;
	char		*full, *want, *marker, *log, *text, *p;
	size_t		 i, len;
	json_t		*a;
	int		 mlen;

	full = xmalloc(total + 1);
	for (i = 0, p = full; i < lines; i++)
		p += sprintf(p, "line %06zu\n", i + 1);
	assert_int_equal(p - full, total);
	mlen = xasprintf(&marker, "\n[... %zu bytes omitted ...]\n",
	    total - cap);
	want = xmalloc(cap + mlen + 1);
	memcpy(want, full, cap / 2);
	memcpy(want + cap / 2, marker, mlen);
	memcpy(want + cap / 2 + mlen, full + total - cap / 2, cap / 2);
	want[cap + mlen] = '\0';

	harness_worker_start(h, NULL, "--output-cap", "4096", NULL);
	a = run_item(h, id, "seq -f 'line %06g' 1 8400", NULL,
	    HARNESS_WAIT_MS);
	expect_result(a, id, 0);
	assert_int_equal(harness_jbool(a, "truncated"), 1);
	assert_non_null(strstr(jstr(a, "stdout"), "bytes omitted"));
	assert_string_equal(jstr(a, "stdout"), want);
	assert_string_equal(jstr(a, "stderr"), "");
	xasprintf(&log, "%s/%s.log", h->log_dir, id);
	text = harness_read_file(log, &len);
	assert_non_null(text);
	assert_int_equal(len, total);
	assert_memory_equal(text, full, total);
	json_decref(a);
	free(text);
	free(log);
	free(want);
	free(marker);
	free(full);
	harness_pass(h);
}

/*
 * The command's stdout and stderr are ordinary blocking pipes: a writer
 * faster than the worker must wait, not fail with EAGAIN. The shell's
 * fdinfo flags are octal; O_NONBLOCK is 04000.
 */
static void
test_worker_child_pipes_are_blocking(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "block");
	json_t		*a;

	harness_worker_start(h, NULL, NULL);
	a = run_item(h, id, "for fd in 1 2; do "
	    "f=$(awk '/^flags/ { print $2 }' /proc/$$/fdinfo/$fd); "
	    "echo \"fd $fd nonblock $(( 0$f & 04000 ))\"; done",
	    NULL, HARNESS_WAIT_MS);
	expect_result(a, id, 0);
	assert_string_equal(jstr(a, "stdout"),
	    "fd 1 nonblock 0\nfd 2 nonblock 0\n");
	json_decref(a);
	harness_pass(h);
}

/* Item A waits (up to about limit/20 s) for a file that item B creates. */
static void
submit_waiter_and_toucher(struct harness *h, const char *ida,
    const char *idb, int limit)
{
	char	cmd[256];

	snprintf(cmd, sizeof cmd, "i=0; while [ ! -e flag ]; do sleep 0.05; "
	    "i=$((i+1)); [ $i -gt %d ] && exit 9; done; echo saw", limit);
	harness_submit(h, "normal", ida, cmd, NULL);
	harness_submit(h, "normal", idb, "touch flag", NULL);
}

/* With two slots, A can wait for something B does. */
static void
test_worker_runs_two_items_at_once(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*ida = harness_id(h, "A"), *idb = harness_id(h, "B");
	json_t		*a, *b;

	harness_worker_start(h, NULL, "--max-procs", "2", NULL);
	submit_waiter_and_toucher(h, ida, idb, 100);
	b = harness_wait_answer(h, NULL, idb, HARNESS_WAIT_MS);
	a = harness_wait_answer(h, NULL, ida, HARNESS_WAIT_MS);
	expect_result(b, idb, 0);
	expect_result(a, ida, 0);
	assert_string_equal(jstr(a, "stdout"), "saw\n");
	json_decref(a);
	json_decref(b);
	harness_pass(h);
}

/* With one slot, B waits for A: A gives up (exit 9), then B runs. */
static void
test_worker_max_procs_1_runs_one_at_a_time(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*ida = harness_id(h, "A"), *idb = harness_id(h, "B");
	json_t		*a, *b, *all;

	harness_worker_start(h, NULL, "--max-procs", "1", NULL);
	submit_waiter_and_toucher(h, ida, idb, 16);
	a = harness_wait_answer(h, NULL, ida, HARNESS_WAIT_MS);
	b = harness_wait_answer(h, NULL, idb, HARNESS_WAIT_MS);
	expect_result(a, ida, 9);	/* B could not run meanwhile */
	expect_result(b, idb, 0);
	all = harness_all_answers(h, NULL);
	assert_int_equal(json_array_size(all), 2);
	assert_string_equal(jstr(json_array_get(all, 0), "id"), ida);
	json_decref(all);
	json_decref(a);
	json_decref(b);
	harness_pass(h);
}

/* Items waiting on high all go before any waiting on low. */
static void
test_worker_high_lane_served_before_low(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*blocker = harness_id(h, "blocker");
	char		 name[16], *log;
	json_t		*all, *a;
	size_t		 i;
	int		 last_high = -1, first_low = -1;

	harness_worker_start(h, NULL, "--max-procs", "1", NULL);
	harness_submit(h, "normal", blocker, "sleep 0.5", NULL);
	xasprintf(&log, "%s/%s.log", h->log_dir, blocker);
	if (harness_wait_file(log, 30000) == -1)
		harness_fail(h, "the blocker did not start");
	for (i = 0; i < 3; i++) {
		snprintf(name, sizeof name, "low%zu", i);
		harness_submit(h, "low", harness_id(h, name), "true", NULL);
	}
	for (i = 0; i < 3; i++) {
		snprintf(name, sizeof name, "high%zu", i);
		harness_submit(h, "high", harness_id(h, name), "true", NULL);
	}
	for (i = 0; i < 7; i++)
		json_decref(harness_wait_answer(h, NULL, NULL,
		    HARNESS_WAIT_MS));
	all = harness_all_answers(h, NULL);
	assert_int_equal(json_array_size(all), 7);
	assert_string_equal(jstr(json_array_get(all, 0), "id"), blocker);
	json_array_foreach(all, i, a) {
		assert_int_equal(harness_jint(a, "exit_code"), 0);
		if (strstr(jstr(a, "id"), "-high") != NULL)
			last_high = (int)i;
		else if (strstr(jstr(a, "id"), "-low") != NULL &&
		    first_low == -1)
			first_low = (int)i;
	}
	if (last_high == -1 || first_low == -1 || last_high > first_low)
		harness_fail(h, "a low item was answered before a high one "
		    "(last high at %d, first low at %d)", last_high,
		    first_low);
	assert_int_equal(harness_pending(h, "high"), 0);
	assert_int_equal(harness_pending(h, "low"), 0);
	json_decref(all);
	free(log);
	harness_pass(h);
}

/* An answered id gets its stored answer again; a running one an ERROR. */
static void
test_worker_same_id_gets_stored_answer(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "idem");
	const char	*id2 = harness_id(h, "dup");
	json_t		*a1, *a2, *d;
	char		*runs, *text;

	harness_worker_start(h, NULL, "--max-procs", "2", NULL);
	a1 = run_item(h, id, "echo run >> runs; wc -l < runs", NULL,
	    HARNESS_WAIT_MS);
	expect_result(a1, id, 0);
	assert_string_equal(jstr(a1, "stdout"), "1\n");
	a2 = run_item(h, id, "echo run >> runs; wc -l < runs", NULL,
	    HARNESS_WAIT_MS);
	/* The same answer, less the token that is sent once. */
	assert_int_equal(strlen(jstr(a1, "session_token")), 32);
	assert_null(json_object_get(a2, "session_token"));
	json_object_del(a1, "session_token");
	assert_true(json_equal(a1, a2));
	runs = path_in(h->ws, "runs");
	text = harness_read_file(runs, NULL);
	assert_non_null(text);
	assert_string_equal(text, "run\n");

	/* The same id twice at once: the second is refused, not run. */
	harness_submit(h, "normal", id2, "sleep 0.3; echo once", NULL);
	harness_submit(h, "normal", id2, "sleep 0.3; echo once", NULL);
	d = harness_wait_answer(h, NULL, id2, HARNESS_WAIT_MS);
	expect_error(d, id2, "duplicate_id");
	json_decref(d);
	d = harness_wait_answer(h, NULL, id2, HARNESS_WAIT_MS);
	expect_result(d, id2, 0);
	assert_string_equal(jstr(d, "stdout"), "once\n");
	assert_int_equal(harness_pending(h, "normal"), 0);
	json_decref(d);
	free(text);
	free(runs);
	json_decref(a1);
	json_decref(a2);
	harness_pass(h);
}

/*
 * Items waiting when the worker reads are claimed as they are read (the
 * fetch script). One refused, or not even parsed, lets go of its claim:
 * the same id sent again, fixed, runs. Three cases, all queued before
 * the worker starts, so each comes through the fetch; one slot, so they
 * are read in order.
 */
static void
test_worker_refused_claim_released(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*ids[3] = { harness_id(h, "rcwd"), harness_id(h, "rcmd"),
			    harness_id(h, "rlone") };
	const char	*codes[3] = { "cwd_not_found", "missing_command",
			    "cwd_not_found" };
	char		 body[512], key[256];
	redisReply	*r;
	json_t		*a;
	int		 i;

	harness_submit(h, "normal", ids[0], "echo fixed0", "{\"cwd\":\"nope\"}");
	harness_submit(h, "normal", ids[0], "echo fixed0", NULL);
	snprintf(body, sizeof body, "{\"id\":\"%s\",\"type\":\"EXEC\","
	    "\"reply_to\":\"%s\",\"args\":{}}", ids[1], h->reply);
	harness_submit_json(h, "normal", body);
	harness_submit(h, "normal", ids[1], "echo fixed1", NULL);
	harness_submit(h, "normal", ids[2], "true", "{\"cwd\":\"nope\"}");
	harness_worker_start(h, NULL, "--max-procs", "1", NULL);
	for (i = 0; i < 3; i++) {
		a = harness_wait_answer(h, NULL, ids[i], HARNESS_WAIT_MS);
		expect_error(a, ids[i], codes[i]);
		json_decref(a);
		if (i == 2)
			break;
		a = harness_wait_answer(h, NULL, ids[i], HARNESS_WAIT_MS);
		expect_result(a, ids[i], 0);
		snprintf(body, sizeof body, "fixed%d\n", i);
		assert_string_equal(jstr(a, "stdout"), body);
		json_decref(a);
	}
	/* The lone refusal was claimed as it was read, then let go. */
	snprintf(key, sizeof key, "execq:claim:%s", ids[2]);
	r = harness_cmd(h, "GET %s", key);
	assert_int_equal(r->type, REDIS_REPLY_STRING);
	assert_string_equal(r->str, "-");
	freeReplyObject(r);
	assert_int_equal(harness_pending(h, "normal"), 0);
	harness_pass(h);
}

/* Every entry, answered or refused, on every lane, is acknowledged. */
static void
test_worker_acks_every_entry(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*lanes[] = { "high", "normal", "low" };
	char		 name[16];
	json_t		*a;
	int		 i;

	harness_worker_start(h, NULL, NULL);
	for (i = 0; i < 3; i++) {
		snprintf(name, sizeof name, "ack%d", i);
		harness_submit(h, lanes[i], harness_id(h, name), "true", NULL);
	}
	harness_submit_json(h, "normal", "{bad");
	harness_xadd(h, "low", "other", "x", 1);
	for (i = 0; i < 3; i++) {
		snprintf(name, sizeof name, "ack%d", i);
		a = harness_wait_answer(h, NULL, harness_id(h, name),
		    HARNESS_WAIT_MS);
		expect_result(a, jstr(a, "id"), 0);
		json_decref(a);
	}
	for (i = 0; i < 2; i++) {
		a = harness_wait_answer(h, "replies", NULL, HARNESS_WAIT_MS);
		assert_string_equal(jstr(a, "type"), "ERROR");
		json_decref(a);
	}
	for (i = 0; i < 3; i++)
		assert_int_equal(harness_pending(h, lanes[i]), 0);
	harness_pass(h);
}

/* Redis restarts mid-command: the answer still arrives. */
static void
test_worker_survives_redis_restart(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "restart");
	const char	*conf = getenv("EXECQ_TEST_REDIS_CONF");
	const char	*shut[] = { "redis-cli", "-s", h->redis_path,
			    "shutdown", "save", NULL };
	const char	*start[] = { "redis-server", conf, NULL };
	char		*log;
	json_t		*a;
	pid_t		 pid;
	int		 status;

	if (conf == NULL)
		skip();
	pid = harness_worker_start(h, NULL, NULL);
	harness_submit(h, "normal", id, "sleep 2; echo done", NULL);
	xasprintf(&log, "%s/%s.log", h->log_dir, id);
	if (harness_wait_file(log, 30000) == -1)
		harness_fail(h, "the command did not start");
	harness_sleep_ms(500);
	harness_run(h, shut, 10000);
	harness_sleep_ms(200);
	status = harness_run(h, start, 10000);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	harness_reconnect(h);
	a = harness_wait_answer(h, NULL, id, HARNESS_WAIT_MS);
	expect_result(a, id, 0);
	assert_string_equal(jstr(a, "stdout"), "done\n");
	assert_true(harness_worker_alive(h, pid));
	assert_int_equal(harness_pending(h, "normal"), 0);
	json_decref(a);

	/* And it keeps serving. */
	id = harness_id(h, "after");
	a = run_item(h, id, "echo again", NULL, HARNESS_WAIT_MS);
	expect_result(a, id, 0);
	harness_stop_clean(h, pid);
	json_decref(a);
	free(log);
	harness_pass(h);
}

/*
 * Worker A takes command and is SIGKILLed while it runs (n names its
 * sleep); worker B on the same queue takes the item over. Returns B's
 * answer.
 */
static json_t *
take_over_from_dead_worker(struct harness *h, const char *id,
    const char *command, const char *args_extra, const char *sleep_name)
{
	pid_t	a, b;
	json_t	*ans;

	a = harness_worker_start(h, NULL, "--claim-idle", "1", NULL);
	harness_submit(h, "normal", id, command, args_extra);
	harness_wait_running(h, sleep_name);
	harness_worker_kill(h, a);
	/* B kills what A left in its cgroup before it takes anything over. */
	b = harness_worker_start(h, NULL, "--claim-idle", "1", NULL);
	ans = harness_wait_answer(h, NULL, id, HARNESS_WAIT_MS);
	if (harness_wait_procs_gone(sleep_name, HARNESS_WAIT_MS) != 0)
		harness_fail(h, "'%s' outlived its dead worker", sleep_name);
	assert_true(harness_worker_alive(h, b));
	assert_int_equal(harness_pending(h, "normal"), 0);
	harness_stop_clean(h, b);
	return (ans);
}

/* A dead worker's item is taken over and answered worker_lost. */
static void
test_worker_lost_item_is_reported(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "lost");
	json_t		*a;

	a = take_over_from_dead_worker(h, id, "sleep 7776", NULL,
	    "sleep 7776");
	expect_error(a, id, "worker_lost");
	json_decref(a);
	harness_pass(h);
}

/*
 * With retries, the item taken over runs again. 777''7: only the sleep,
 * not the shell, shows "sleep 7777", so the worker is killed after the
 * marker is made, not while the shell may still be on its way to it.
 */
static void
test_worker_lost_item_is_retried(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "retry");
	json_t		*a;

	a = take_over_from_dead_worker(h, id, "[ -e marker ] && echo again || "
	    "{ touch marker; sleep 777''7; }", "{\"retries\": 1}", "sleep 7777");
	expect_result(a, id, 0);
	assert_string_equal(jstr(a, "stdout"), "again\n");
	json_decref(a);
	harness_pass(h);
}

/*
 * Restarts with a fixed --consumer: lives workers of one name in turn,
 * each SIGKILLed once its start of the command appended a line to the
 * marker "runs" (then it sleeps, n naming the sleep), but the last,
 * whose answer is returned. *runs: the lines in the marker then, each a
 * start of the command.
 */
static json_t *
restart_same_name(struct harness *h, const char *id, const char *args_extra,
    int lives, int n, int *runs)
{
	char	 cmd[128], sleep_name[64], consumer[256];
	pid_t	 pid;
	json_t	*ans;
	int	 i;

	/* Only the sleep, not the shell, shows "sleep <n>.<pid>". */
	snprintf(cmd, sizeof cmd, "echo run >> runs; sleep %d''%d.%07ld",
	    n / 10, n % 10, (long)getpid());
	snprintf(sleep_name, sizeof sleep_name, "sleep %d.%07ld", n,
	    (long)getpid());
	pid = harness_worker_start(h, NULL, "--claim-idle", "1", NULL);
	snprintf(consumer, sizeof consumer, "%s", h->w[h->nw - 1].consumer);
	harness_submit(h, "normal", id, cmd, args_extra);
	for (i = 1; i < lives; i++) {
		harness_wait_ws_lines(h, "runs", i, HARNESS_WAIT_MS);
		harness_worker_kill(h, pid);
		/* The same name: it kills what its last life left first. */
		pid = harness_worker_start(h, NULL, "--claim-idle", "1",
		    "--consumer", consumer, NULL);
	}
	ans = harness_wait_answer(h, NULL, id, HARNESS_WAIT_MS);
	if (harness_wait_procs_gone(sleep_name, HARNESS_WAIT_MS) != 0)
		harness_fail(h, "'%s' outlived its dead worker", sleep_name);
	*runs = harness_ws_lines(h, "runs");
	assert_int_equal(harness_pending(h, "normal"), 0);
	harness_stop_clean(h, pid);
	return (ans);
}

/*
 * A worker restarted under the name of the one that died while its item
 * ran takes the item over as a dead worker's: worker_lost, and the
 * command did not run again (it did before: the claim named the same
 * consumer and entry, and read as its own).
 */
static void
test_worker_lost_item_same_name_not_rerun(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "lost-same-name");
	json_t		*a;
	int		 runs;

	a = restart_same_name(h, id, NULL, 2, 7786, &runs);
	expect_error(a, id, "worker_lost");
	assert_int_equal(runs, 1);
	json_decref(a);
	harness_pass(h);
}

/*
 * The same with retries 1: the second life runs it once more, the third
 * answers worker_lost; two runs in all, whatever the name.
 */
static void
test_worker_lost_item_same_name_retried_once(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "retry-same-name");
	json_t		*a;
	int		 runs;

	a = restart_same_name(h, id, "{\"retries\": 1}", 3, 7787, &runs);
	expect_error(a, id, "worker_lost");
	assert_int_equal(runs, 2);
	json_decref(a);
	harness_pass(h);
}

/*
 * SIGTERM: every command gets SIGTERM at once; one that cleans up on it
 * finishes its cleanup and is answered before the worker exits 0.
 */
static void
test_worker_sigterm_lets_command_finish(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "finish");
	json_t		*a;
	pid_t		 pid;

	pid = harness_worker_start(h, NULL, "--kill-grace", "30", NULL);
	/* 777''9: only the sleep, not the shell, shows "sleep 7779". */
	harness_submit(h, "normal", id, "trap 'echo cleaned up; exit 3' TERM; "
	    "sleep 777''9 & wait", NULL);
	harness_wait_running(h, "sleep 7779");
	harness_stop_clean(h, pid);
	/* Sent before the worker exited: it is there already. */
	a = harness_wait_answer(h, NULL, id, 100);
	expect_result(a, id, 3);
	assert_string_equal(jstr(a, "stdout"), "cleaned up\n");
	assert_int_equal(harness_jbool(a, "timed_out"), 0);
	assert_int_equal(harness_pending(h, "normal"), 0);
	json_decref(a);
	harness_pass(h);
}

/* SIGTERM: a long command gets SIGTERM from the stop, then is answered. */
static void
test_worker_sigterm_kills_command_after_grace(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "graced");
	json_t		*a, *m;
	pid_t		 pid;

	pid = harness_worker_start(h, NULL, "--kill-grace", "1", NULL);
	harness_submit(h, "normal", id, "sleep 7778", NULL);
	harness_wait_running(h, "sleep 7778");
	harness_stop_clean(h, pid);
	a = harness_wait_answer(h, NULL, id, 100);
	expect_result(a, id, 143);
	assert_string_equal(jstr(a, "signal"), "SIGTERM");
	assert_int_equal(harness_jbool(a, "timed_out"), 0);
	m = harness_load_meta(h, id);
	assert_string_equal(jstr(m, "status"), "killed");
	assert_int_equal(harness_count_procs("sleep 7778"), 0);
	assert_int_equal(harness_pending(h, "normal"), 0);
	json_decref(m);
	json_decref(a);
	harness_pass(h);
}

#define T(f)	cmocka_unit_test_setup_teardown(f, harness_setup, \
		    harness_teardown)

int
main(void)
{
	const struct CMUnitTest	tests[] = {
		T(test_worker_echo_answers_logs_and_acks),
		T(test_worker_exit_code_and_separate_stderr),
		T(test_worker_signal_is_128_plus_n),
		T(test_worker_timeout_kills_tree_cgroup),
		T(test_worker_timeout_kills_tree_fallback),
		T(test_worker_timeout_kills_tree_fallback_big_env),
		T(test_worker_leftovers_die_at_exit_cgroup),
		T(test_worker_leftovers_die_at_exit_fallback),
		T(test_worker_sigterm_ignored_gets_sigkill),
		T(test_worker_gate_refuses_when_disabled),
		T(test_worker_bad_items_refused_worker_survives),
		T(test_worker_cwd_and_env_policy),
		T(test_worker_output_cap_keeps_head_and_tail),
		T(test_worker_child_pipes_are_blocking),
		T(test_worker_runs_two_items_at_once),
		T(test_worker_max_procs_1_runs_one_at_a_time),
		T(test_worker_high_lane_served_before_low),
		T(test_worker_same_id_gets_stored_answer),
		T(test_worker_refused_claim_released),
		T(test_worker_acks_every_entry),
		T(test_worker_survives_redis_restart),
		T(test_worker_lost_item_is_reported),
		T(test_worker_lost_item_same_name_not_rerun),
		T(test_worker_lost_item_same_name_retried_once),
		T(test_worker_lost_item_is_retried),
		T(test_worker_sigterm_lets_command_finish),
		T(test_worker_sigterm_kills_command_after_grace),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
