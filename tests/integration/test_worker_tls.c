/*
 * The real worker over TLS (rediss://): a redis-server of this test's own
 * with TLS on 127.0.0.1 (client certificates required) and a plain unix
 * socket for the harness's client, which submits items and reads answers
 * as in every other integration test; no plain TCP port at all, so a
 * worker that answers talked TLS. The CA and the certificates are made
 * here with the openssl command, in a temp dir. Checked: an item
 * answered with the settings as flags and as environment, by address
 * and by name (SNI, the name checked in the certificate); a wrong CA
 * refused with a clear line in the log and nothing answered; a bad file
 * or TLS settings on a plain URL stop the worker at start-up.
 */

#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <hiredis/hiredis.h>
#include <jansson.h>

#include "tests/integration/harness.h"

extern char **environ;

#define WAIT_MS		20000		/* a wait's deadline */

/* The TLS server and its files. */
static struct {
	char	 dir[64];
	char	 sock[256];
	char	 url[272];		/* unix://<sock>, for the harness */
	int	 port;
	pid_t	 pid;
} env;

/* A file of the temp dir (static: eight at a time, for one call). */
static const char *
file(const char *name)
{
	static char	path[8][256];
	static unsigned	next;
	char		*p = path[next++ % 8];

	snprintf(p, sizeof path[0], "%s/%s", env.dir, name);
	return (p);
}

/* A free TCP port on 127.0.0.1 (nobody listens on it once we return). */
/* Shows a file of the temp dir on stderr (what went wrong). */
static void
show(const char *name)
{
	char	cmd[300];

	snprintf(cmd, sizeof cmd, "cat %s >&2", file(name));
	if (system(cmd) != 0) {
		/* nothing more to show */
	}
}

/*
 * The group: certificates (a CA, the server's for localhost and
 * 127.0.0.1, a client's, and another CA that signed nothing here), then
 * redis-server with TLS and a unix socket, waited for with a deadline.
 * The harness of every test then talks to that socket.
 */
static int
group_setup(void **state)
{
	char		 port[16], crt[256], key[256], ca[256];
	char		 log[256];
	const char	*argv[40];
	redisContext	*c;
	redisReply	*r;
	int		 i, argc = 0;

	(void)state;
	signal(SIGPIPE, SIG_IGN);
	snprintf(env.dir, sizeof env.dir, "/tmp/test_worker_tls.XXXXXX");
	assert_non_null(mkdtemp(env.dir));
	if (harness_tls_certs(env.dir) != 0)
		fail_msg("openssl could not make the certificates");

	env.port = harness_free_port();
	snprintf(port, sizeof port, "%d", env.port);
	snprintf(env.sock, sizeof env.sock, "%s", file("redis.sock"));
	snprintf(env.url, sizeof env.url, "unix://%s", env.sock);
	argv[argc++] = "redis-server";
	argv[argc++] = "--port";
	argv[argc++] = "0";		/* no plain TCP: TLS or nothing */
	argv[argc++] = "--unixsocket";
	argv[argc++] = env.sock;
	argv[argc++] = "--unixsocketperm";
	argv[argc++] = "700";
	argv[argc++] = "--tls-port";
	argv[argc++] = port;
	argv[argc++] = "--bind";
	argv[argc++] = "127.0.0.1";
	argv[argc++] = "--tls-cert-file";
	argv[argc++] = strcpy(crt, file("srv.crt"));
	argv[argc++] = "--tls-key-file";
	argv[argc++] = strcpy(key, file("srv.key"));
	argv[argc++] = "--tls-ca-cert-file";
	argv[argc++] = strcpy(ca, file("ca.crt"));
	argv[argc++] = "--tls-auth-clients";
	argv[argc++] = "yes";
	argv[argc++] = "--save";
	argv[argc++] = "";
	argv[argc++] = "--appendonly";
	argv[argc++] = "no";
	argv[argc++] = "--dir";
	argv[argc++] = env.dir;
	argv[argc++] = "--logfile";
	argv[argc++] = strcpy(log, file("redis.log"));
	argv[argc] = NULL;
	if (posix_spawnp(&env.pid, "redis-server", NULL, NULL,
	    (char *const *)argv, environ) != 0)
		fail_msg("cannot start redis-server: %s", strerror(errno));

	for (i = 0; i < WAIT_MS / 20; i++) {
		if ((c = redisConnectUnix(env.sock)) != NULL && !c->err &&
		    (r = redisCommand(c, "PING")) != NULL) {
			freeReplyObject(r);
			redisFree(c);
			/* Every test's harness talks to this server. */
			setenv("EXECQ_TEST_REDIS_URL", env.url, 1);
			return (0);
		}
		if (c != NULL)
			redisFree(c);
		if (waitpid(env.pid, NULL, WNOHANG) == env.pid) {
			env.pid = -1;
			show("redis.log");
			fail_msg("redis-server with TLS exited");
		}
		harness_sleep_ms(20);
	}
	fail_msg("redis-server with TLS did not answer within %d ms",
	    WAIT_MS);
	return (-1);
}

static int
group_teardown(void **state)
{
	char	cmd[256];

	(void)state;
	if (env.pid > 0) {
		kill(env.pid, SIGTERM);
		waitpid(env.pid, NULL, 0);
	}
	if (getenv("EXECQ_TEST_KEEP") == NULL) {
		snprintf(cmd, sizeof cmd, "rm -rf %s", env.dir);
		if (system(cmd) != 0) {
			/* left behind: harmless in /tmp */
		}
	}
	return (0);
}

/* The rediss:// URL of the test's server, by host (an address or name). */
static const char *
tls_url(const char *host)
{
	static char	url[128];

	snprintf(url, sizeof url, "rediss://%s:%d", host, env.port);
	return (url);
}

/* How often needle is in the file at path (0 if unreadable). */
static int
count_in_file(const char *path, const char *needle)
{
	char		*text;
	const char	*p;
	int		 n = 0;

	if ((text = harness_read_file(path, NULL)) == NULL)
		return (0);
	for (p = text; (p = strstr(p, needle)) != NULL; p += strlen(needle))
		n++;
	free(text);
	return (n);
}

/* Waits until needle is in path n times; fails the test at the deadline. */
static void
wait_in_file(struct harness *h, const char *path, const char *needle, int n)
{
	int64_t	end = harness_now_ms() + WAIT_MS;

	while (count_in_file(path, needle) < n) {
		if (harness_now_ms() > end)
			harness_fail(h, "%s never held '%s' %d times", path,
			    needle, n);
		harness_sleep_ms(50);
	}
}

/* An echo through the worker, answered. */
static void
echo_round(struct harness *h, const char *name)
{
	const char	*id = harness_id(h, name);
	json_t		*a;

	harness_submit(h, "normal", id, "echo over-tls", NULL);
	a = harness_wait_answer(h, NULL, id, HARNESS_WAIT_MS);
	assert_non_null(harness_jstr(a, "type"));
	assert_string_equal(harness_jstr(a, "type"), "EXEC_RESULT");
	assert_int_equal(harness_jint(a, "exit_code"), 0);
	assert_non_null(harness_jstr(a, "stdout"));
	assert_string_equal(harness_jstr(a, "stdout"), "over-tls\n");
	json_decref(a);
}

/*
 * The settings as flags, the server by address (its certificate's IP
 * name): the worker reads, runs and answers over TLS.
 */
static void
test_worker_tls_flags_by_address(void **state)
{
	struct harness	*h = harness_fixture(state);
	pid_t		 pid;

	pid = harness_worker_start(h, NULL, "--redis", tls_url("127.0.0.1"),
	    "--redis-tls-ca", file("ca.crt"), "--redis-tls-cert",
	    file("cli.crt"), "--redis-tls-key", file("cli.key"), NULL);
	echo_round(h, "flags");
	harness_stop_clean(h, pid);
	harness_pass(h);
}

/*
 * The settings from the environment, the server by name: the name goes
 * as SNI and is the one checked in the certificate; and a name given
 * in redis_tls_server_name wins over the URL's host.
 */
static void
test_worker_tls_env_by_name(void **state)
{
	struct harness	*h = harness_fixture(state);
	char		 ca[300], cert[300], key[300];
	const char	*envv[] = { ca, cert, key, NULL };
	pid_t		 pid;

	snprintf(ca, sizeof ca, "EXECQ_REDIS_TLS_CA=%s", file("ca.crt"));
	snprintf(cert, sizeof cert, "EXECQ_REDIS_TLS_CERT=%s",
	    file("cli.crt"));
	snprintf(key, sizeof key, "EXECQ_REDIS_TLS_KEY=%s", file("cli.key"));
	pid = harness_worker_start(h, envv, "--redis", tls_url("localhost"),
	    NULL);
	echo_round(h, "env");
	harness_stop_clean(h, pid);
	pid = harness_worker_start(h, envv, "--redis", tls_url("127.0.0.1"),
	    "--redis-tls-server-name", "localhost", NULL);
	echo_round(h, "server-name");
	harness_stop_clean(h, pid);
	harness_pass(h);
}

/*
 * A CA that did not sign the server's certificate: every connect is
 * refused with the reason in the log, nothing is read or answered (the
 * item waits, no consumer group was even made), and the worker stops
 * cleanly. The item is there before the worker starts, so the refusals
 * waited for come after it.
 */
static void
test_worker_tls_wrong_ca_refused(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "wrong-ca");
	const char	*err;
	char		 stream[256];
	redisReply	*r;
	pid_t		 pid;

	harness_submit(h, "normal", id, "echo never", NULL);
	/* Redis is never reached: the stop waits for nothing long. */
	pid = harness_worker_launch(h, NULL, "--redis", tls_url("127.0.0.1"),
	    "--redis-tls-ca", file("other.crt"), "--redis-tls-cert",
	    file("cli.crt"), "--redis-tls-key", file("cli.key"),
	    "--shutdown-flush", "1", NULL);
	err = h->w[h->nw - 1].err_path;
	/* Both connections, each tried twice at least. */
	wait_in_file(h, err, "connect: TLS: certificate verify failed: "
	    "self-signed certificate in certificate chain", 4);
	assert_int_equal(count_in_file(err, "connection up"), 0);
	snprintf(stream, sizeof stream, "q:%s:normal", h->reply);
	assert_null(harness_try_entry(h, stream, id, 0));
	r = harness_cmd(h, "XINFO GROUPS q:%s:normal", h->queue);
	assert_int_equal(r->type, REDIS_REPLY_ARRAY);
	assert_int_equal(r->elements, 0);
	freeReplyObject(r);
	r = harness_cmd(h, "XLEN q:%s:normal", h->queue);
	assert_int_equal(r->integer, 1);
	freeReplyObject(r);
	harness_stop_clean(h, pid);
	harness_pass(h);
}

/* Waits until the worker pid has exited (it must, at start-up). */
static void
wait_exited(struct harness *h, pid_t pid)
{
	int64_t	end = harness_now_ms() + WAIT_MS;

	while (harness_worker_alive(h, pid)) {
		if (harness_now_ms() > end)
			harness_fail(h, "the worker did not stop at start-up");
		harness_sleep_ms(20);
	}
}

/*
 * Refused at start-up, with the reason: a CA file that is not there, a
 * key that is not the certificate's, TLS settings on a URL that is not
 * rediss:// (they would be ignored, and the worker talk in the clear).
 */
static void
test_worker_tls_bad_settings_stop_startup(void **state)
{
	struct harness	*h = harness_fixture(state);
	char		 missing[300];
	pid_t		 pid;

	snprintf(missing, sizeof missing, "%s", file("missing.crt"));
	pid = harness_worker_launch(h, NULL, "--redis", tls_url("127.0.0.1"),
	    "--redis-tls-ca", missing, NULL);
	wait_exited(h, pid);
	assert_int_equal(count_in_file(h->w[h->nw - 1].err_path,
	    "TLS CA file"), 1);
	assert_int_equal(count_in_file(h->w[h->nw - 1].err_path,
	    "missing.crt: No such file or directory"), 1);

	pid = harness_worker_launch(h, NULL, "--redis", tls_url("127.0.0.1"),
	    "--redis-tls-ca", file("ca.crt"), "--redis-tls-cert",
	    file("cli.crt"), "--redis-tls-key", file("srv.key"), NULL);
	wait_exited(h, pid);
	assert_int_equal(count_in_file(h->w[h->nw - 1].err_path,
	    "TLS key file"), 1);

	pid = harness_worker_launch(h, NULL, "--redis-tls-ca", file("ca.crt"),
	    NULL);		/* the harness's unix:// URL */
	wait_exited(h, pid);
	assert_int_equal(count_in_file(h->w[h->nw - 1].err_path,
	    "the Redis URL is not rediss://"), 1);
	harness_pass(h);
}

int
main(void)
{
	const struct CMUnitTest	tests[] = {
#define T(f)	cmocka_unit_test_setup_teardown(f, harness_setup, \
		    harness_teardown)
		T(test_worker_tls_flags_by_address),
		T(test_worker_tls_env_by_name),
		T(test_worker_tls_wrong_ca_refused),
		T(test_worker_tls_bad_settings_stop_startup),
#undef T
	};

	return (cmocka_run_group_tests(tests, group_setup, group_teardown));
}
