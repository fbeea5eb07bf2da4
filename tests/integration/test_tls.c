/*
 * queue/rconn.c against real servers: a redis-server of its own with TLS
 * only (--port 0 --tls-port), its CA and certificates made here with the
 * openssl command in a temp dir, and the private plain server of
 * scripts/with-redis.sh over TCP and its unix socket. Everything on
 * 127.0.0.1. Checked: commands (XREADGROUP BLOCK included) async and
 * sync, and each refusal said plainly: a CA that did not sign the
 * server's certificate, a name the certificate does not carry, no client
 * certificate when the server requires one.
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
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>
#include <hiredis/hiredis.h>

#include "queue/rconn.h"
#include "tests/integration/harness.h"

extern char **environ;

#define WAIT_S		10		/* a test's deadline */

/* The TLS server, its files, and one SSL_CTX per kind of client. */
struct env {
	char		 dir[64];
	char		 path[256];
	int		 port;
	pid_t		 pid;
	SSL_CTX		*ctx;		/* our CA, our client certificate */
	SSL_CTX		*ctx_nocert;	/* our CA, no certificate */
	SSL_CTX		*ctx_otherca;	/* a CA that signed nothing here */
	const char	*plain_url;	/* with-redis.sh's unix:// URL */
	int		 plain_port;
};

static struct env	 env;

/* One async test's loop and what its callbacks saw. */
struct fx {
	struct event_base	*base;
	struct event		*failsafe;
	unsigned		 ups, downs;
	char			 why[256];
	unsigned		 n;
	char			 got[16][512];	/* each reply, flattened */
};

static const char *
file(const char *name)
{
	snprintf(env.path, sizeof env.path, "%s/%s", env.dir, name);
	return (env.path);
}

/* A free TCP port on 127.0.0.1 (nobody listens on it once we return). */
static struct sockaddr_in
loopback(int port)
{
	struct sockaddr_in	sin;

	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons(port);
	return (sin);
}

/* A synchronous connection to the TLS server (or plain if ctx NULL). */
static struct rconn *
sync_conn(int port, SSL_CTX *ctx, const char *name)
{
	struct sockaddr_in	 sin = loopback(port);
	struct rconn		*c;

	c = rconn_connect(NULL, (struct sockaddr *)&sin, sizeof sin, ctx, name,
	    NULL, NULL);
	assert_non_null(c);
	rconn_set_timeout(c, WAIT_S * 1000, WAIT_S * 1000);
	return (c);
}

static SSL_CTX *
make_ctx(const char *ca, const char *cert, const char *key)
{
	struct rconn_tls	 t;
	SSL_CTX			*ctx;
	char			*cause, cap[256], certp[256], keyp[256];

	memset(&t, 0, sizeof t);
	snprintf(cap, sizeof cap, "%s/%s", env.dir, ca);
	t.ca_file = cap;
	if (cert != NULL) {
		snprintf(certp, sizeof certp, "%s/%s", env.dir, cert);
		snprintf(keyp, sizeof keyp, "%s/%s", env.dir, key);
		t.cert_file = certp;
		t.key_file = keyp;
	}
	if ((ctx = rconn_tls_ctx(&t, &cause)) == NULL)
		fail_msg("rconn_tls_ctx: %s", cause);
	return (ctx);
}

/*
 * The group: certificates, then redis-server with TLS only, waited for
 * with a deadline (a PING over TLS answered).
 */
static int
group_setup(void **state)
{
	char		 cmd[2048], port[16], crt[256], key[256], ca[256];
	char		 log[256];
	const char	*argv[32];
	struct rconn	*c;
	redisReply	*r;
	int		 i, argc = 0;
	struct timespec	 ts = { 0, 20 * 1000 * 1000 };

	(void)state;
	signal(SIGPIPE, SIG_IGN);
	env.plain_url = getenv("EXECQ_TEST_REDIS_URL");
	if (getenv("EXECQ_TEST_REDIS_PORT") != NULL)
		env.plain_port = atoi(getenv("EXECQ_TEST_REDIS_PORT"));
	snprintf(env.dir, sizeof env.dir, "/tmp/test_tls.XXXXXX");
	assert_non_null(mkdtemp(env.dir));
	if (harness_tls_certs(env.dir) != 0)
		fail_msg("openssl could not make the certificates");
	env.ctx = make_ctx("ca.crt", "cli.crt", "cli.key");
	env.ctx_nocert = make_ctx("ca.crt", NULL, NULL);
	env.ctx_otherca = make_ctx("other.crt", "cli.crt", "cli.key");

	env.port = harness_free_port();
	snprintf(port, sizeof port, "%d", env.port);
	argv[argc++] = "redis-server";
	argv[argc++] = "--port";
	argv[argc++] = "0";
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

	for (i = 0; i < WAIT_S * 50; i++) {	/* 20 ms apart */
		c = sync_conn(env.port, env.ctx, "localhost");
		r = rconn_call(c, "PING");
		rconn_free(c);
		if (r != NULL) {
			freeReplyObject(r);
			return (0);
		}
		if (waitpid(env.pid, NULL, WNOHANG) == env.pid) {
			env.pid = -1;
			snprintf(cmd, sizeof cmd, "cat %s/redis.log >&2",
			    env.dir);
			if (system(cmd) != 0) {
				/* no log: nothing more to show */
			}
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
	if (env.pid > 0) {
		kill(env.pid, SIGTERM);
		waitpid(env.pid, NULL, 0);
	}
	rconn_tls_ctx_free(env.ctx);
	rconn_tls_ctx_free(env.ctx_nocert);
	rconn_tls_ctx_free(env.ctx_otherca);
	if (getenv("EXECQ_TEST_KEEP") == NULL) {
		snprintf(cmd, sizeof cmd, "rm -rf %s", env.dir);
		if (system(cmd) != 0) {
			/* left behind: harmless in /tmp */
		}
	}
	return (0);
}

static void
failsafe_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	fail_msg("test_tls: no progress within %d s", WAIT_S);
}

static int
setup(void **state)
{
	struct fx	*fx;
	struct timeval	 tv = { WAIT_S, 0 };

	fx = calloc(1, sizeof *fx);
	assert_non_null(fx);
	assert_non_null(fx->base = event_base_new());
	assert_non_null(fx->failsafe = evtimer_new(fx->base, failsafe_cb,
	    NULL));
	evtimer_add(fx->failsafe, &tv);
	*state = fx;
	return (0);
}

static int
teardown(void **state)
{
	struct fx	*fx = *state;

	event_free(fx->failsafe);
	event_base_free(fx->base);
	free(fx);
	return (0);
}

static void
state_cb(struct rconn *c, int up, void *arg)
{
	struct fx	*fx = arg;

	if (up)
		fx->ups++;
	else {
		fx->downs++;
		snprintf(fx->why, sizeof fx->why, "%s", rconn_errstr(c));
	}
}

/* A reply as text: leaves joined by spaces, NULL as "(null)". */
static void
flatten(const redisReply *r, char *buf, size_t size)
{
	size_t	i, len;

	len = strlen(buf);
	if (r == NULL) {
		snprintf(buf + len, size - len, "(null)");
		return;
	}
	switch (r->type) {
	case REDIS_REPLY_ARRAY:
		for (i = 0; i < r->elements; i++) {
			if (i > 0 && strlen(buf) + 1 < size)
				strcat(buf, " ");
			flatten(r->element[i], buf, size);
		}
		break;
	case REDIS_REPLY_INTEGER:
		snprintf(buf + len, size - len, "%lld", r->integer);
		break;
	case REDIS_REPLY_NIL:
		snprintf(buf + len, size - len, "(nil)");
		break;
	default:		/* binary safe: the bytes as they are */
		if (r->type == REDIS_REPLY_ERROR && len + 1 < size)
			buf[len++] = '-';
		if (r->len < size - len) {
			memcpy(buf + len, r->str, r->len);
			buf[len + r->len] = '\0';
		}
	}
}

static void
rec_cb(struct rconn *c, redisReply *r, void *privdata)
{
	struct fx	*fx = privdata;

	(void)c;
	assert_true(fx->n < 16);
	fx->got[fx->n][0] = '\0';
	flatten(r, fx->got[fx->n], sizeof fx->got[0]);
	fx->n++;
}

static void
run_until(struct fx *fx, const unsigned *p, unsigned n)
{
	while (*p < n)
		assert_int_equal(event_base_loop(fx->base, EVLOOP_ONCE), 0);
}

/* An async connection to 127.0.0.1:port. */
static struct rconn *
async_conn(struct fx *fx, int port, SSL_CTX *ctx, const char *name)
{
	struct sockaddr_in	 sin = loopback(port);
	struct rconn		*c;

	c = rconn_connect(fx->base, (struct sockaddr *)&sin, sizeof sin, ctx,
	    name, state_cb, fx);
	assert_non_null(c);
	return (c);
}

/*
 * The stream commands the queue lives on, on two async connections: a
 * reader blocked in XREADGROUP (seen blocked by the other, CLIENT LIST)
 * gets the entry the other adds.
 */
static void
stream_round(struct fx *fx, struct rconn *a, struct rconn *b,
    const char *tag)
{
	char		 stream[64], line[80];
	unsigned	 base = fx->n;
	int		 blocked = 0;
	const char	*id;

	snprintf(stream, sizeof stream, "test_tls:%s:s", tag);
	assert_int_equal(rconn_command(a, rec_cb, fx, "PING"), 0);
	assert_int_equal(rconn_command(a, rec_cb, fx, "SET test_tls:%s:k %b",
	    tag, "v\0w", (size_t)3), 0);
	assert_int_equal(rconn_command(a, rec_cb, fx, "GET test_tls:%s:k",
	    tag), 0);
	assert_int_equal(rconn_command(a, rec_cb, fx, "DEL %s", stream), 0);
	assert_int_equal(rconn_command(a, rec_cb, fx,
	    "XGROUP CREATE %s g $ MKSTREAM", stream), 0);
	assert_int_equal(rconn_command(a, rec_cb, fx, "CLIENT ID"), 0);
	rconn_flush(a);
	run_until(fx, &fx->n, base + 6);
	assert_string_equal(fx->got[base], "PONG");
	assert_string_equal(fx->got[base + 1], "OK");
	assert_memory_equal(fx->got[base + 2], "v\0w", 3);
	assert_string_equal(fx->got[base + 4], "OK");
	id = fx->got[base + 5];
	assert_int_equal(rconn_command(a, rec_cb, fx,
	    "XREADGROUP GROUP g c1 COUNT 1 BLOCK %d STREAMS %s >",
	    WAIT_S * 1000, stream), 0);
	/* Until Redis shows a as blocked: then the XADD must wake it. */
	while (!blocked) {
		assert_int_equal(rconn_command(b, rec_cb, fx,
		    "CLIENT LIST ID %s", id), 0);
		run_until(fx, &fx->n, base + 7);
		blocked = strstr(fx->got[base + 6], "cmd=xreadgroup") != NULL &&
		    strstr(fx->got[base + 6], "flags=b") != NULL;
		fx->n = base + 6;
	}
	assert_int_equal(rconn_command(b, NULL, NULL, "XADD %s * f hello",
	    stream), 0);
	run_until(fx, &fx->n, base + 7);
	snprintf(line, sizeof line, "%s ", stream);
	assert_memory_equal(fx->got[base + 6], line, strlen(line));
	assert_non_null(strstr(fx->got[base + 6], " f hello"));
	assert_int_equal(rconn_pending(a), 0);
}

static void
test_tls_async_commands(void **state)
{
	struct fx	*fx = *state;
	struct rconn	*a, *b;

	a = async_conn(fx, env.port, env.ctx, "localhost");
	b = async_conn(fx, env.port, env.ctx, "127.0.0.1");	/* IP SAN */
	assert_int_equal(rconn_state(a), RCONN_CONNECTING);
	stream_round(fx, a, b, "async");
	assert_int_equal(fx->ups, 2);
	assert_int_equal(fx->downs, 0);
	rconn_free(a);
	rconn_free(b);
}

/* The synchronous side over TLS: calls, a pipeline, a blocking read. */
static void
sync_round(struct rconn *c, const char *tag)
{
	redisReply	*r;
	const char	*argv[] = { "GET", NULL };
	char		 key[64], stream[64];

	snprintf(key, sizeof key, "test_tls:%s:k", tag);
	snprintf(stream, sizeof stream, "test_tls:%s:s", tag);
	argv[1] = key;
	assert_int_equal(rconn_wait_up(c), 0);
	assert_non_null(r = rconn_call(c, "PING"));
	assert_string_equal(r->str, "PONG");
	freeReplyObject(r);
	assert_non_null(r = rconn_call(c, "SET %s %b", key, "x\0y",
	    (size_t)3));
	freeReplyObject(r);
	assert_int_equal(rconn_append_argv(c, 2, argv, NULL), 0);
	assert_int_equal(rconn_append(c, "EXISTS %s", key), 0);
	assert_int_equal(rconn_append(c, "HGETALL test_tls:none"), 0);
	assert_non_null(r = rconn_next(c));
	assert_int_equal(r->len, 3);
	assert_memory_equal(r->str, "x\0y", 3);
	freeReplyObject(r);
	assert_non_null(r = rconn_next(c));
	assert_int_equal(r->integer, 1);
	freeReplyObject(r);
	assert_non_null(r = rconn_next(c));
	assert_int_equal(r->type, REDIS_REPLY_ARRAY);
	assert_int_equal(r->elements, 0);
	freeReplyObject(r);
	freeReplyObject(rconn_call(c, "DEL %s", stream));
	assert_non_null(r = rconn_call(c, "XGROUP CREATE %s g $ MKSTREAM",
	    stream));
	assert_string_equal(r->str, "OK");
	freeReplyObject(r);
	assert_non_null(r = rconn_call(c, "XADD %s * f v", stream));
	assert_int_equal(r->type, REDIS_REPLY_STRING);
	freeReplyObject(r);
	assert_non_null(r = rconn_call(c,
	    "XREADGROUP GROUP g c1 BLOCK 1000 STREAMS %s >", stream));
	assert_int_equal(r->type, REDIS_REPLY_ARRAY);
	assert_string_equal(r->element[0]->element[1]->element[0]->
	    element[1]->element[1]->str, "v");
	freeReplyObject(r);
	/* Nothing new: BLOCK ends in a NIL, the connection lives on. */
	assert_non_null(r = rconn_call(c,
	    "XREADGROUP GROUP g c1 BLOCK 50 STREAMS %s >", stream));
	assert_int_equal(r->type, REDIS_REPLY_NIL);
	freeReplyObject(r);
	assert_string_equal(rconn_errstr(c), "");
}

static void
test_tls_sync_commands(void **state)
{
	struct rconn	*c;

	(void)state;
	c = sync_conn(env.port, env.ctx, "localhost");
	sync_round(c, "sync");
	rconn_free(c);
}

/*
 * A CA that did not sign the server's certificate: refused, said so.
 * Redis sends its CA along with its certificate (OpenSSL builds the
 * chain from the server's trust store), so what our CA cannot vouch for
 * is that self-signed root: "unable to get local issuer certificate"
 * is what a server sending the leaf alone gets.
 */
static void
test_tls_wrong_ca_refused(void **state)
{
	struct fx	*fx = *state;
	struct rconn	*c;

	c = async_conn(fx, env.port, env.ctx_otherca, "localhost");
	assert_int_equal(rconn_command(c, rec_cb, fx, "PING"), 0);
	run_until(fx, &fx->downs, 1);
	assert_int_equal(fx->ups, 0);
	assert_string_equal(fx->got[0], "(null)");
	assert_string_equal(fx->why, "TLS: certificate verify failed: "
	    "self-signed certificate in certificate chain");
	rconn_free(c);

	c = sync_conn(env.port, env.ctx_otherca, "localhost");
	assert_int_equal(rconn_wait_up(c), -1);
	assert_null(rconn_call(c, "PING"));
	assert_string_equal(rconn_errstr(c), "TLS: certificate verify "
	    "failed: self-signed certificate in certificate chain");
	rconn_free(c);
}

/* A name the certificate does not carry, and an address. */
static void
test_tls_wrong_server_name_refused(void **state)
{
	struct rconn	*c;

	(void)state;
	c = sync_conn(env.port, env.ctx, "redis.example.org");
	assert_int_equal(rconn_wait_up(c), -1);
	assert_string_equal(rconn_errstr(c), "TLS: certificate verify "
	    "failed: hostname mismatch (wanted redis.example.org)");
	rconn_free(c);

	c = sync_conn(env.port, env.ctx, "127.0.0.2");
	assert_int_equal(rconn_wait_up(c), -1);
	assert_string_equal(rconn_errstr(c), "TLS: certificate verify "
	    "failed: IP address mismatch (wanted 127.0.0.2)");
	rconn_free(c);
}

/*
 * --tls-auth-clients yes: without a client certificate the server ends
 * the connection (after the handshake, in TLS 1.3) and we say why; with
 * one (the other tests) it works. What comes first, the server's alert
 * ("tlsv13 alert certificate required") or the end of the connection,
 * is a race; the hint is there either way.
 */
static void
test_tls_client_cert_required(void **state)
{
	struct fx	*fx = *state;
	struct rconn	*c;

	c = sync_conn(env.port, env.ctx_nocert, "localhost");
	assert_null(rconn_call(c, "PING"));
	assert_int_equal(rconn_state(c), RCONN_DOWN);
	print_message("no client certificate: %s\n", rconn_errstr(c));
	assert_non_null(strstr(rconn_errstr(c), "(the server asks for a "
	    "client certificate; none is configured)"));
	rconn_free(c);

	c = async_conn(fx, env.port, env.ctx_nocert, "localhost");
	assert_int_equal(rconn_command(c, rec_cb, fx, "PING"), 0);
	run_until(fx, &fx->downs, 1);
	assert_string_equal(fx->got[0], "(null)");
	assert_non_null(strstr(fx->why, "none is configured"));
	rconn_free(c);

	c = sync_conn(env.port, env.ctx, "localhost");
	freeReplyObject(rconn_call(c, "PING"));
	assert_string_equal(rconn_errstr(c), "");
	rconn_free(c);
}

/* A plain client on the TLS port, a port nobody listens on: said. */
static void
test_tls_plain_client_and_refused_port(void **state)
{
	struct rconn	*c;

	(void)state;
	c = sync_conn(env.port, NULL, NULL);
	assert_null(rconn_call(c, "PING"));
	assert_int_equal(rconn_state(c), RCONN_DOWN);
	print_message("plain on the TLS port: %s\n", rconn_errstr(c));
	assert_true(strcmp(rconn_errstr(c), "connection closed by the server")
	    == 0 || strstr(rconn_errstr(c), "Connection reset") != NULL);
	rconn_free(c);

	c = sync_conn(harness_free_port(), env.ctx, "localhost");
	assert_int_equal(rconn_wait_up(c), -1);
	assert_string_equal(rconn_errstr(c), "connect: Connection refused");
	rconn_free(c);
}

/* redis:// and unix:// against with-redis.sh's server. */
static void
test_tls_plain_tcp_and_unix(void **state)
{
	struct fx	*fx = *state;
	struct rconn	*a, *b, *c;
	const char	*path;

	if (env.plain_url == NULL || env.plain_port == 0 ||
	    strncmp(env.plain_url, "unix://", 7) != 0)
		skip();		/* run via scripts/with-redis.sh */
	path = env.plain_url + 7;
	a = async_conn(fx, env.plain_port, NULL, NULL);
	b = rconn_connect_unix(fx->base, path, state_cb, fx);
	assert_non_null(b);
	stream_round(fx, a, b, "tcp");
	rconn_free(a);
	rconn_free(b);
	a = rconn_connect_unix(fx->base, path, state_cb, fx);
	b = async_conn(fx, env.plain_port, NULL, NULL);
	stream_round(fx, a, b, "unix");
	rconn_free(a);
	rconn_free(b);
	assert_int_equal(fx->downs, 0);

	c = sync_conn(env.plain_port, NULL, NULL);
	sync_round(c, "sync-tcp");
	rconn_free(c);
	c = rconn_connect_unix(NULL, path, NULL, NULL);
	sync_round(c, "sync-unix");
	rconn_free(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(name)	cmocka_unit_test_setup_teardown(name, setup, teardown)
		T(test_tls_async_commands),
		T(test_tls_sync_commands),
		T(test_tls_wrong_ca_refused),
		T(test_tls_wrong_server_name_refused),
		T(test_tls_client_cert_required),
		T(test_tls_plain_client_and_refused_port),
		T(test_tls_plain_tcp_and_unix),
#undef T
	};

	return (cmocka_run_group_tests(tests, group_setup, group_teardown));
}
