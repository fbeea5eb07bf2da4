/*
 * The client, execq, over TLS end to end: a redis-server of this test's
 * own with a TLS port (client certificates required) and a unix socket,
 * its CA and certificates made here with the openssl command in a temp
 * dir (as test_tls.c makes them); the harness (its client, a real
 * worker) on the unix socket instead of with-redis.sh's server; the
 * real client on rediss://, its TLS settings from the environment
 * (EXECQ_REDIS_TLS_CA, _CERT, _KEY) or its config file. Checked: the
 * answer comes back, by address and by name; a CA that did not sign the
 * server's certificate is refused with a clear message and exit 125.
 */

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>
#include <jansson.h>

#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "logs/xmalloc.h"
#include "tests/integration/harness.h"

#define CLI_MS		10000	/* deadline of one client run */
#define WAIT_S		10	/* the TLS server's start-up */

extern char **environ;

/* The TLS server and its files, for the whole group. */
static struct {
	char	 dir[64];
	char	 sock[128];
	int	 port;
	pid_t	 pid;
} tls;

/* A free TCP port on 127.0.0.1 (nobody listens on it once we return). */
/* Shows a file of the temp dir on stderr (a failed start-up). */
static void
show(const char *name)
{
	char	cmd[256];

	snprintf(cmd, sizeof cmd, "cat %s/%s >&2", tls.dir, name);
	if (system(cmd) != 0) {
		/* nothing more to show */
	}
}

/* 1 once the server answers PING on its unix socket. */
static int
tls_server_up(void)
{
	redisContext	*c;
	redisReply	*r;
	int		 up;

	if ((c = redisConnectUnix(tls.sock)) == NULL)
		return (0);
	r = c->err ? NULL : redisCommand(c, "PING");
	up = r != NULL && r->type == REDIS_REPLY_STATUS;
	if (r != NULL)
		freeReplyObject(r);
	redisFree(c);
	return (up);
}

/*
 * Certificates, then redis-server (TLS port and unix socket), waited
 * for; the harness then works on its unix socket instead of the server
 * of scripts/with-redis.sh.
 */
static int
group_setup(void **state)
{
	char		 port[16], crt[256], key[256], ca[256], log[256];
	char		 url[160];
	const char	*argv[40];
	struct timespec	 ts = { 0, 20 * 1000 * 1000 };
	int		 i, argc = 0;

	(void)state;
	if (getenv("EXECQ_TEST_REDIS_URL") == NULL)
		return (0);	/* the tests skip */
	snprintf(tls.dir, sizeof tls.dir, "/tmp/test_cli_tls.XXXXXX");
	assert_non_null(mkdtemp(tls.dir));
	if (harness_tls_certs(tls.dir) != 0)
		fail_msg("openssl could not make the certificates");
	snprintf(tls.sock, sizeof tls.sock, "%s/redis.sock", tls.dir);
	snprintf(crt, sizeof crt, "%s/srv.crt", tls.dir);
	snprintf(key, sizeof key, "%s/srv.key", tls.dir);
	snprintf(ca, sizeof ca, "%s/ca.crt", tls.dir);
	snprintf(log, sizeof log, "%s/redis.log", tls.dir);
	tls.port = harness_free_port();
	snprintf(port, sizeof port, "%d", tls.port);
	argv[argc++] = "redis-server";
	argv[argc++] = "--port";
	argv[argc++] = "0";
	argv[argc++] = "--tls-port";
	argv[argc++] = port;
	argv[argc++] = "--bind";
	argv[argc++] = "127.0.0.1";
	argv[argc++] = "--unixsocket";
	argv[argc++] = tls.sock;
	argv[argc++] = "--unixsocketperm";
	argv[argc++] = "700";
	argv[argc++] = "--tls-cert-file";
	argv[argc++] = crt;
	argv[argc++] = "--tls-key-file";
	argv[argc++] = key;
	argv[argc++] = "--tls-ca-cert-file";
	argv[argc++] = ca;
	argv[argc++] = "--tls-auth-clients";
	argv[argc++] = "yes";
	argv[argc++] = "--save";
	argv[argc++] = "";
	argv[argc++] = "--appendonly";
	argv[argc++] = "no";
	argv[argc++] = "--dir";
	argv[argc++] = tls.dir;
	argv[argc++] = "--logfile";
	argv[argc++] = log;
	argv[argc] = NULL;
	if (posix_spawnp(&tls.pid, "redis-server", NULL, NULL,
	    (char *const *)argv, environ) != 0)
		fail_msg("cannot start redis-server: %s", strerror(errno));
	for (i = 0; i < WAIT_S * 50; i++) {	/* 20 ms apart */
		if (tls_server_up()) {
			/* The harness's world (its client, worker): here. */
			snprintf(url, sizeof url, "unix://%s", tls.sock);
			setenv("EXECQ_TEST_REDIS_URL", url, 1);
			return (0);
		}
		if (waitpid(tls.pid, NULL, WNOHANG) == tls.pid) {
			tls.pid = -1;
			show("redis.log");
			fail_msg("redis-server with TLS exited");
		}
		nanosleep(&ts, NULL);
	}
	fail_msg("redis-server with TLS did not answer within %d s", WAIT_S);
	return (-1);
}

static int
group_teardown(void **state)
{
	char	cmd[256];

	(void)state;
	if (tls.pid > 0) {
		kill(tls.pid, SIGTERM);
		waitpid(tls.pid, NULL, 0);
	}
	if (tls.dir[0] != '\0' && getenv("EXECQ_TEST_KEEP") == NULL) {
		snprintf(cmd, sizeof cmd, "rm -rf %s", tls.dir);
		if (system(cmd) != 0) {
			/* left behind: harmless in /tmp */
		}
	}
	return (0);
}

/*
 * The client on rediss://HOST:<port> (HOST: 127.0.0.1 or localhost),
 * with env before it ("NAME=value ...": its TLS settings), running
 * "run -- ARGS".
 */
static void
cli_tls(struct harness *h, struct harness_proc *p, const char *env,
    const char *host, const char *args)
{
	char	*script;

	xasprintf(&script, "cd %s && %s \"$CLI\" --redis rediss://%s:%d run "
	    "-- %s", tls.dir, env, host, tls.port, args);
	harness_cli_sh(h, p, CLI_MS, script);
	free(script);
}

/* Fails showing what the client printed unless it ended as wanted. */
static void
expect(struct harness *h, const struct harness_proc *p, int code,
    const char *out, const char *err)
{
	if (harness_proc_exit(p) == code && strcmp(p->out, out) == 0 &&
	    (err == NULL || strcmp(p->err, err) == 0))
		return;
	harness_fail(h, "wanted exit %d, stdout \"%s\", stderr \"%s\"; the "
	    "client exited %d; stdout: \"%.300s\"; stderr: \"%.300s\"", code,
	    out, err != NULL ? err : "(any)", harness_proc_exit(p), p->out,
	    p->err);
}

#define TLS_ENV	"EXECQ_REDIS_TLS_CA=ca.crt EXECQ_REDIS_TLS_CERT=cli.crt " \
		"EXECQ_REDIS_TLS_KEY=cli.key"

/*
 * rediss:// with the CA and a client certificate from the environment:
 * the worker's answer comes back over TLS, by address (the IP checked
 * in the certificate) and by name (localhost: SNI and the name checked;
 * whichever of its addresses Redis listens on).
 */
static void
test_cli_tls_run_by_env(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct harness_proc	 p;

	harness_worker_start(h, NULL, NULL);
	cli_tls(h, &p, TLS_ENV, "127.0.0.1", "echo over tls");
	expect(h, &p, 0, "over tls\n", "");
	harness_proc_release(&p);
	cli_tls(h, &p, TLS_ENV, "localhost", "'echo by name; exit 3'");
	expect(h, &p, 3, "by name\n", "");
	harness_proc_release(&p);
	harness_pass(h);
}

/* The same settings from the client config file, next to redis_url. */
static void
test_cli_tls_run_by_config(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct harness_proc	 p;
	char			*conf, *text, *script;

	harness_worker_start(h, NULL, NULL);
	xasprintf(&conf, "%s/xdg/execq", h->dir);
	xasprintf(&script, "mkdir -p %s", conf);
	harness_cli_sh(h, &p, CLI_MS, script);
	harness_proc_release(&p);
	free(script);
	free(conf);
	xasprintf(&conf, "%s/xdg/execq/config", h->dir);
	xasprintf(&text, "redis_url = rediss://localhost:%d\n"
	    "redis_tls_ca = %s/ca.crt\nredis_tls_cert = %s/cli.crt\n"
	    "redis_tls_key = %s/cli.key\n", tls.port, tls.dir, tls.dir,
	    tls.dir);
	assert_int_equal(harness_write_file(conf, text), 0);
	free(text);
	xasprintf(&script, "unset EXECQ_REDIS_URL; XDG_CONFIG_HOME=%s/xdg "
	    "\"$CLI\" run -- echo via config", h->dir);
	harness_cli_sh(h, &p, CLI_MS, script);
	expect(h, &p, 0, "via config\n", "");
	harness_proc_release(&p);
	free(script);
	free(conf);
	harness_pass(h);
}

/*
 * A CA that did not sign the server's certificate: refused before any
 * command, said plainly, exit 125; and so is a missing CA file. No item
 * reached the queue.
 */
static void
test_cli_tls_wrong_ca_exits_125(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct harness_proc	 p;
	redisReply		*r;
	char			*want;

	cli_tls(h, &p, "EXECQ_REDIS_TLS_CA=other.crt "
	    "EXECQ_REDIS_TLS_CERT=cli.crt EXECQ_REDIS_TLS_KEY=cli.key",
	    "127.0.0.1", "echo never");
	xasprintf(&want, "execq: Redis at rediss://127.0.0.1:%d/0: TLS: "
	    "certificate verify failed: self-signed certificate in "
	    "certificate chain\n", tls.port);
	expect(h, &p, 125, "", want);
	harness_proc_release(&p);
	free(want);

	cli_tls(h, &p, "EXECQ_REDIS_TLS_CA=missing.crt", "127.0.0.1",
	    "echo never");
	xasprintf(&want, "execq: Redis at rediss://127.0.0.1:%d/0: TLS CA "
	    "file missing.crt: No such file or directory\n", tls.port);
	expect(h, &p, 125, "", want);
	harness_proc_release(&p);
	free(want);
	r = harness_cmd(h, "XLEN q:%s:normal", h->queue);
	assert_int_equal(r->type, REDIS_REPLY_INTEGER);
	assert_int_equal(r->integer, 0);
	freeReplyObject(r);
	harness_pass(h);
}

/*
 * $EXECQ_REDIS_TLS_SERVER_NAME names the certificate's name when the URL
 * gives an address: "localhost" (in the certificate) works over
 * 127.0.0.1; a name not in it is refused, and nothing is queued.
 */
static void
test_cli_tls_server_name(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct harness_proc	 p;
	char			*script;

	harness_worker_start(h, NULL, NULL);
	cli_tls(h, &p, TLS_ENV " EXECQ_REDIS_TLS_SERVER_NAME=localhost",
	    "127.0.0.1", "echo named");
	expect(h, &p, 0, "named\n", "");
	harness_proc_release(&p);
	cli_tls(h, &p, TLS_ENV " EXECQ_REDIS_TLS_SERVER_NAME=redis.example",
	    "127.0.0.1", "echo never");
	if (harness_proc_exit(&p) != 125 || strstr(p.err, "TLS") == NULL ||
	    strstr(p.err, "redis.example") == NULL)
		harness_fail(h, "a name not in the certificate: exit %d, "
		    "stderr \"%.300s\"", harness_proc_exit(&p), p.err);
	harness_proc_release(&p);
	/* TLS settings with a plain URL: refused, nothing sent in clear. */
	xasprintf(&script, "cd %s && " TLS_ENV " \"$CLI\" --redis "
	    "redis://127.0.0.1:%d run -- echo never", tls.dir, tls.port);
	harness_cli_sh(h, &p, CLI_MS, script);
	free(script);
	if (harness_proc_exit(&p) != 125 ||
	    strstr(p.err, "the URL is not rediss://") == NULL)
		harness_fail(h, "TLS settings with redis://: exit %d, stderr "
		    "\"%.300s\"", harness_proc_exit(&p), p.err);
	harness_proc_release(&p);
	harness_pass(h);
}

#define T(f)	cmocka_unit_test_setup_teardown(f, harness_setup, \
		    harness_teardown)

int
main(void)
{
	const struct CMUnitTest	tests[] = {
		T(test_cli_tls_run_by_env),
		T(test_cli_tls_run_by_config),
		T(test_cli_tls_wrong_ca_exits_125),
		T(test_cli_tls_server_name),
	};

	signal(SIGPIPE, SIG_IGN);
	return (cmocka_run_group_tests(tests, group_setup, group_teardown));
}
