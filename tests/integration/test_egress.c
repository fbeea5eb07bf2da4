/*
 * Network by domain, end to end: the real worker runs confined commands
 * in its empty network namespace, whose one way out is its egress proxy;
 * a granted name is reached through it (curl, which honours the
 * HTTP_PROXY the worker sets), nothing is reached around it, a name not
 * granted is refused by it, and a domain the queue does not grant waits
 * for a person, then works once approved. An HTTP server on 127.0.0.1
 * stands in for the internet: the worker is told that its name,
 * "localhost", may be private. Nothing here leaves 127.0.0.0/8.
 */

#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <hiredis/hiredis.h>

#include "logs/xmalloc.h"
#include "tests/integration/harness.h"

#define WAIT_MS		20000

/* An HTTP server on 127.0.0.1 in a child (gone with us): its port. */
static int
http_start(struct harness *h, pid_t *pid)
{
	struct event_base	*base;
	int			 fds[2], port = 0;

	if (pipe(fds) == -1)
		harness_fail(h, "pipe: %s", strerror(errno));
	if ((*pid = fork()) == 0) {
		close(fds[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		base = event_base_new();
		if (base == NULL || harness_http_bind(base, &port) == NULL)
			_exit(2);
		if (write(fds[1], &port, sizeof port) != sizeof port)
			_exit(3);
		close(fds[1]);
		event_base_dispatch(base);
		_exit(0);
	}
	close(fds[1]);
	if (read(fds[0], &port, sizeof port) != sizeof port)
		harness_fail(h, "the test host did not start");
	close(fds[0]);
	return (port);
}

static void
http_stop(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* Runs command as an EXEC item (args_extra merged into args). */
static json_t *
run(struct harness *h, const char *name, const char *command,
    const char *args_extra)
{
	const char	*id = harness_id(h, name);

	harness_submit(h, "normal", id, command, args_extra);
	return (harness_wait_answer(h, NULL, id, WAIT_MS));
}

/* The queue grants localhost: reached through the proxy, and only so. */
static void
test_egress_queue_domains(void **state)
{
	struct harness	*h = harness_fixture(state);
	json_t		*a;
	char		*cmd, *audit;
	pid_t		 srv;
	int		 port;

	if (access("/usr/bin/curl", X_OK) != 0)
		skip();
	port = http_start(h, &srv);
	harness_worker_start(h, NULL, "--network-domains", "localhost",
	    "--network-private-hosts", "localhost", NULL);

	xasprintf(&cmd, "curl -sS --max-time 10 http://localhost:%d/a", port);
	a = run(h, "granted", cmd, NULL);
	free(cmd);
	if (strcmp(harness_jstr(a, "type"), "EXEC_RESULT") != 0 ||
	    strstr(harness_jstr(a, "stdout"), "hello from the test host /a") ==
	    NULL)
		harness_fail(h, "granted: %s", json_dumps(a, 0));
	json_decref(a);

	/* Through a CONNECT tunnel, as HTTPS goes. */
	xasprintf(&cmd, "curl -sS -p --max-time 10 http://localhost:%d/t",
	    port);
	a = run(h, "tunnel", cmd, NULL);
	free(cmd);
	if (strstr(harness_jstr(a, "stdout"), "hello from the test host /t") ==
	    NULL)
		harness_fail(h, "tunnel: %s", json_dumps(a, 0));
	json_decref(a);

	/* Around the proxy: no route at all. */
	xasprintf(&cmd, "curl -sS --noproxy '*' --max-time 5 "
	    "http://127.0.0.1:%d/b; echo rc=$?", port);
	a = run(h, "around", cmd, NULL);
	free(cmd);
	if (strstr(harness_jstr(a, "stdout"), "hello") != NULL ||
	    strstr(harness_jstr(a, "stdout"), "rc=0") != NULL)
		harness_fail(h, "around the proxy: %s", json_dumps(a, 0));
	json_decref(a);

	/* Through it to what is not granted: its 403 says why. */
	xasprintf(&cmd, "curl -sS --max-time 10 http://127.0.0.1:%d/c", port);
	a = run(h, "literal", cmd, NULL);
	free(cmd);
	if (strstr(harness_jstr(a, "stdout"), "not granted") == NULL ||
	    strstr(harness_jstr(a, "stdout"), "hello") != NULL)
		harness_fail(h, "not granted: %s", json_dumps(a, 0));
	json_decref(a);

	xasprintf(&audit, "%s/audit.log", h->state_dir);
	cmd = harness_read_file(audit, NULL);
	if (cmd == NULL || strstr(cmd, "\"connect\"") == NULL ||
	    strstr(cmd, "\"connect-refused\"") == NULL ||
	    strstr(cmd, harness_id(h, "granted")) == NULL)
		harness_fail(h, "audit: %s", cmd != NULL ? cmd : "none");
	free(cmd);
	free(audit);
	http_stop(srv);
	harness_pass(h);
}

/*
 * A domain the queue does not grant: held, shown in the request, reached
 * once a person approves it; a domain that is not one is refused.
 */
static void
test_egress_domain_held(void **state)
{
	struct harness	*h = harness_fixture(state);
	json_t		*a, *doms;
	redisReply	*r;
	char		*cmd, *key, *req;
	const char	*id = harness_id(h, "asks");
	pid_t		 srv;
	int		 port;

	if (access("/usr/bin/curl", X_OK) != 0)
		skip();
	port = http_start(h, &srv);
	harness_worker_start(h, NULL, "--network-private-hosts", "localhost",
	    NULL);
	xasprintf(&cmd, "curl -sS --max-time 10 http://localhost:%d/held",
	    port);
	harness_submit(h, "normal", id, cmd, "{\"network\": [\"localhost\"]}");
	free(cmd);
	xasprintf(&key, "q:%s:high", h->reply);
	a = harness_wait_entry(h, key, id, WAIT_MS);
	free(key);
	assert_string_equal(harness_jstr(a, "type"), "APPROVAL_REQUEST");
	assert_string_equal(harness_jstr(a, "rule"), "network");
	doms = harness_jget(a, "network_domains");
	if (!json_is_array(doms) || json_array_size(doms) != 1 ||
	    strcmp(json_string_value(json_array_get(doms, 0)), "localhost") !=
	    0)
		harness_fail(h, "request: %s", json_dumps(a, 0));
	req = xstrdup(harness_jstr(a, "request"));
	json_decref(a);
	r = harness_cmd(h, "XADD execq:decisions * item {\"type\":\"APPROVE\","
	    "\"request\":\"%s\",\"by\":\"me\"}", req);
	freeReplyObject(r);
	free(req);
	a = harness_wait_answer(h, NULL, id, WAIT_MS);
	if (strstr(harness_jstr(a, "stdout"), "hello from the test host /held")
	    == NULL)
		harness_fail(h, "approved: %s", json_dumps(a, 0));
	json_decref(a);

	a = run(h, "bad", "true", "{\"network\": [\"not a domain\"]}");
	assert_string_equal(harness_jstr(a, "error.code"), "bad_args");
	json_decref(a);
	http_stop(srv);
	harness_pass(h);
}

/* curl through the proxy URL in the workspace's file: its status code. */
static char *
stale(struct harness *h, const char *name, const char *file, int port)
{
	json_t	*a;
	char	*cmd, *out;

	xasprintf(&cmd, "curl -sS --max-time 10 -o /dev/null -w 'code=%%{"
	    "http_code}' -x \"$(cat %s)\" http://localhost:%d/stale", file,
	    port);
	a = run(h, name, cmd, NULL);
	free(cmd);
	out = xstrdup(harness_jstr(a, "stdout"));
	json_decref(a);
	return (out);
}

/*
 * A hostile command against the boundary around its proxy: it reads no
 * other command's credential, binds and connects nowhere but the proxy,
 * and a credential dies with its command: a session's as it ends (even
 * when an item with its id was refused meanwhile), a foreground one's
 * as its timeout kills it.
 */
static void
test_egress_hostile(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*sess = harness_id(h, "sess");
	json_t		*a;
	char		*cmd, *path, *out;
	pid_t		 srv;
	int		 port;

	if (access("/usr/bin/curl", X_OK) != 0 ||
	    access("/usr/bin/python3", X_OK) != 0)
		skip();
	port = http_start(h, &srv);
	harness_worker_start(h, NULL, "--network-domains", "localhost",
	    "--network-private-hosts", "localhost", NULL);
	harness_submit(h, "normal", sess, "printf %s \"$HTTPS_PROXY\" > "
	    "sess.url; while [ ! -e sess.stop ]; do sleep 0.05; done",
	    "{\"background\": true}");
	a = harness_wait_answer(h, NULL, sess, WAIT_MS);
	assert_string_equal(harness_jstr(a, "type"), "EXEC_STARTED");
	json_decref(a);
	xasprintf(&path, "%s/sess.url", h->ws);
	if (harness_wait_file(path, WAIT_MS) == -1)
		harness_fail(h, "the session wrote no URL");
	free(path);

	/* Another command sees no credential but its own. */
	a = run(h, "peek", "for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' "
	    "< $f 2>/dev/null | grep '^HTTPS_PROXY='; done | sort -u | "
	    "grep -v \"^HTTPS_PROXY=$HTTPS_PROXY\\$\"; echo peeked", NULL);
	if (strcmp(harness_jstr(a, "stdout"), "peeked\n") != 0)
		harness_fail(h, "peek: %s", json_dumps(a, 0));
	json_decref(a);

	/* Sockets: the proxy's port only. */
	xasprintf(&cmd, "python3 -c '\n"
	    "import socket, os\n"
	    "def t(name, f):\n"
	    "    try:\n"
	    "        f(); print(name, \"ok\")\n"
	    "    except OSError as e:\n"
	    "        print(name, \"denied\", e.errno)\n"
	    "port = int(os.environ[\"HTTPS_PROXY\"].rsplit(\":\", 1)[1])\n"
	    "t(\"bind\", lambda: socket.socket().bind((\"127.0.0.1\", 0)))\n"
	    "t(\"connect\", lambda: socket.create_connection(("
	    "\"127.0.0.1\", port + 1 if port < 65535 else 1)))\n"
	    "t(\"proxy\", lambda: socket.create_connection((\"127.0.0.1\", "
	    "port)))\n"
	    "t(\"raw\", lambda: socket.socket(socket.AF_INET, "
	    "socket.SOCK_RAW, socket.IPPROTO_TCP))\n"
	    "t(\"packet\", lambda: socket.socket(socket.AF_PACKET, "
	    "socket.SOCK_RAW))\n"
	    "t(\"udp\", lambda: socket.socket(socket.AF_INET, "
	    "socket.SOCK_DGRAM).sendto(b\"x\", (\"127.0.0.1\", 9)))\n"
	    "'");
	a = run(h, "sockets", cmd, NULL);
	free(cmd);
	out = (char *)harness_jstr(a, "stdout");
	if (strstr(out, "bind denied") == NULL ||
	    strstr(out, "connect denied 13") == NULL ||
	    strstr(out, "proxy ok") == NULL ||
	    strstr(out, "raw denied") == NULL ||
	    strstr(out, "packet denied") == NULL ||
	    strstr(out, "udp denied 1") == NULL)
		harness_fail(h, "sockets: %s", json_dumps(a, 0));
	json_decref(a);

	/* An item with the session's id (answered as before); it ends. */
	harness_submit(h, "normal", sess, "true", "{\"background\": true}");
	json_decref(harness_wait_answer(h, NULL, sess, WAIT_MS));
	xasprintf(&path, "%s/sess.stop", h->ws);
	harness_write_file(path, "");
	free(path);
	json_decref(harness_wait_callback(h, sess, WAIT_MS));
	out = stale(h, "after-session", "sess.url", port);
	if (strstr(out, "code=407") == NULL)
		harness_fail(h, "an ended session's credential: %s", out);
	free(out);

	/* A foreground command killed by its timeout. */
	a = run(h, "slow", "printf %s \"$HTTPS_PROXY\" > slow.url; sleep 60",
	    "{\"timeout_s\": 1}");
	json_decref(a);
	out = stale(h, "after-timeout", "slow.url", port);
	if (strstr(out, "code=407") == NULL)
		harness_fail(h, "a timed-out command's credential: %s", out);
	free(out);
	http_stop(srv);
	harness_pass(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_egress_queue_domains,
		    harness_setup, harness_teardown),
		cmocka_unit_test_setup_teardown(test_egress_domain_held,
		    harness_setup, harness_teardown),
		cmocka_unit_test_setup_teardown(test_egress_hostile,
		    harness_setup, harness_teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	return (cmocka_run_group_tests(tests, NULL, NULL));
}
