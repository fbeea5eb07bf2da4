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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_egress_queue_domains,
		    harness_setup, harness_teardown),
		cmocka_unit_test_setup_teardown(test_egress_domain_held,
		    harness_setup, harness_teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	return (cmocka_run_group_tests(tests, NULL, NULL));
}
