/*
 * Redis users, as docs/acl/execq.acl ships them, on a real redis-server
 * of the test's own (started with that file as its aclfile, its socket
 * where 'make run' keeps one: <dir>/.tmp/run/redis.sock): an agent adds
 * items and reads its own replies and nothing else; an operator decides;
 * the worker's user runs an item end to end; what comes from an agent's
 * lane stays that agent's (ids, reply_to, through another worker's
 * inbox, which no agent's flood thins); a command with the network
 * grant gets NOAUTH; a refused login backs off with one line per change;
 * a Redis that lets anyone in is said at start-up; the client finds make
 * run's passwords by itself, by subcommand.
 */

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <netinet/in.h>

#include <errno.h>
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
#include "queue/scripts.h"
#include "tests/integration/harness.h"

#define WAIT_MS		15000
#define ACL_FILE	"docs/acl/execq.acl"

/* The test's own redis-server and its users' passwords. */
struct authsrv {
	char	*run;		/* <dir>/.tmp/run */
	char	*sock;
	char	*pidfile;
	int	 port;		/* TCP, 127.0.0.1 */
};

static struct authsrv	 srv;

/* A free TCP port on the loopback. */
/* The password of user (made up here, written where make run puts it). */
static const char *
auth_pw(const char *user)
{
	static char	pw[128];

	snprintf(pw, sizeof pw, "pw-%s-0f3a9c", user);
	return (pw);
}

/* <run>/redis-<user>.pass. Allocated. */
static char *
auth_pass_path(const char *user)
{
	char	*p;

	xasprintf(&p, "%s/redis-%s.pass", srv.run, user);
	return (p);
}

/*
 * docs/acl/execq.acl as an aclfile: comments dropped, passwords in, and
 * two lines of the test's own: a second agent "other" (the agent's line
 * under another name, as the file says to make one) and "admin", the
 * test's view of everything.
 */
static void
auth_aclfile(struct harness *h, const char *path)
{
	static const char *const users[] = { "WORKER", "AGENT", "OPERATOR" };
	FILE		*in, *out;
	char		*line = NULL, *p, *q, *rest, ph[64];
	size_t		 cap = 0, i;
	int		 agents = 0;

	if ((in = fopen(ACL_FILE, "re")) == NULL)
		harness_fail(h, "%s: %s", ACL_FILE, strerror(errno));
	if ((out = fopen(path, "we")) == NULL)
		harness_fail(h, "%s: %s", path, strerror(errno));
	while (getline(&line, &cap, in) != -1) {
		if (line[0] == '#' || line[0] == '\n')
			continue;
		for (i = 0; i < 3; i++) {
			snprintf(ph, sizeof ph, ">%s_PASSWORD", users[i]);
			if ((p = strstr(line, ph)) == NULL)
				continue;
			*p = '\0';
			rest = p + strlen(ph);
			xasprintf(&q, "%s>%s%s", line, auth_pw(users[i][0] ==
			    'W' ? "worker" : users[i][0] == 'A' ? "agent" :
			    "operator"), rest);
			free(line);
			line = q;
			cap = strlen(q) + 1;
		}
		fputs(line, out);
		if (strncmp(line, "user agent ", 11) != 0)
			continue;
		agents++;
		/* The same line for agent "other": its name in the
		   agent's three places (lanes, queues). */
		xasprintf(&q, "user agent on >%s ", auth_pw("agent"));
		if (strncmp(line, q, strlen(q)) != 0 ||
		    strstr(line, "~q:agent.*") == NULL ||
		    strstr(line, "~q:exec:agent.*") == NULL)
			harness_fail(h, "%s: the agent's line: %s", ACL_FILE,
			    line);
		fprintf(out, "user other on >%s ", auth_pw("other"));
		for (p = line + strlen(q); *p != '\0'; p++) {
			if (strncmp(p, ":agent.*", 8) == 0) {
				fputs(":other.*", out);
				p += 7;
			} else
				fputc(*p, out);
		}
		free(q);
	}
	free(line);
	fclose(in);
	fprintf(out, "user admin on >%s ~* &* +@all\n", auth_pw("admin"));
	fclose(out);
	if (agents != 1)
		harness_fail(h, "%s: %d agent lines", ACL_FILE, agents);
}

/* Writes a password file, mode 0600. */
static void
auth_write_pass(struct harness *h, const char *user)
{
	char	*path, *text;

	path = auth_pass_path(user);
	xasprintf(&text, "%s\n", auth_pw(user));
	if (harness_write_file(path, text) == -1 || chmod(path, 0600) == -1)
		harness_fail(h, "%s: %s", path, strerror(errno));
	free(text);
	free(path);
}

/* Connects on the socket as user (NULL: no AUTH); fails on a refusal. */
static redisContext *
auth_connect(struct harness *h, const char *user)
{
	redisContext	*c;
	redisReply	*r;

	if ((c = redisConnectUnix(srv.sock)) == NULL || c->err)
		harness_fail(h, "connect %s: %s", srv.sock, c != NULL ?
		    c->errstr : "out of memory");
	if (user == NULL)
		return (c);
	r = redisCommand(c, "AUTH %s %s", user, auth_pw(user));
	if (r == NULL || r->type == REDIS_REPLY_ERROR)
		harness_fail(h, "AUTH %s: %s", user, r != NULL ? r->str :
		    c->errstr);
	freeReplyObject(r);
	return (c);
}

/*
 * Starts redis-server with the aclfile, on <dir>/.tmp/run/redis.sock and
 * a free TCP port, and waits (with a deadline) until it answers.
 */
static void
auth_redis_start(struct harness *h)
{
	const char	*argv[32];
	char		*acl, *log, port[16];
	redisContext	*c;
	redisReply	*r;
	int64_t		 deadline;
	int		 n = 0, up = 0;

	xasprintf(&srv.run, "%s/.tmp/run", h->dir);
	xasprintf(&srv.sock, "%s/redis.sock", srv.run);
	xasprintf(&srv.pidfile, "%s/redis.pid", srv.run);
	xasprintf(&acl, "%s/users.acl", srv.run);
	xasprintf(&log, "%s/redis.log", srv.run);
	if (mkdir(h->dir, 0700) == -1 && errno != EEXIST)
		harness_fail(h, "mkdir: %s", strerror(errno));
	{
		char	*t;

		xasprintf(&t, "%s/.tmp", h->dir);
		mkdir(t, 0700);
		free(t);
	}
	if (mkdir(srv.run, 0700) == -1 && errno != EEXIST)
		harness_fail(h, "mkdir %s: %s", srv.run, strerror(errno));
	auth_aclfile(h, acl);
	auth_write_pass(h, "worker");
	auth_write_pass(h, "agent");
	auth_write_pass(h, "operator");
	srv.port = harness_free_port();
	snprintf(port, sizeof port, "%d", srv.port);
	argv[n++] = "redis-server";
	argv[n++] = "--bind";
	argv[n++] = "127.0.0.1";
	argv[n++] = "--port";
	argv[n++] = port;
	argv[n++] = "--unixsocket";
	argv[n++] = srv.sock;
	argv[n++] = "--unixsocketperm";
	argv[n++] = "700";
	argv[n++] = "--aclfile";
	argv[n++] = acl;
	argv[n++] = "--dir";
	argv[n++] = srv.run;
	argv[n++] = "--save";
	argv[n++] = "";
	argv[n++] = "--appendonly";
	argv[n++] = "no";
	argv[n++] = "--daemonize";
	argv[n++] = "yes";
	argv[n++] = "--pidfile";
	argv[n++] = srv.pidfile;
	argv[n++] = "--logfile";
	argv[n++] = log;
	argv[n] = NULL;
	if (harness_run(h, argv, WAIT_MS) != 0)
		harness_fail(h, "redis-server with %s did not start", acl);
	deadline = harness_now_ms() + WAIT_MS;
	while (!up) {
		if (harness_now_ms() > deadline)
			harness_fail(h, "redis-server: no answer on %s "
			    "(see %s)", srv.sock, log);
		c = redisConnectUnix(srv.sock);
		if (c != NULL && !c->err &&
		    (r = redisCommand(c, "PING")) != NULL) {
			up = r->type == REDIS_REPLY_ERROR &&
			    strncmp(r->str, "NOAUTH", 6) == 0;
			if (!up)
				harness_fail(h, "PING without a password: "
				    "%s", r->str);
			freeReplyObject(r);
		}
		if (c != NULL)
			redisFree(c);
		if (!up)
			harness_sleep_ms(20);
	}
	free(acl);
	free(log);
}

/*
 * The harness's own view moves to our server (as admin), and its workers
 * serve the queue "exec" there, as make run's does.
 */
static void
auth_harness_here(struct harness *h)
{
	redisFree(h->rc);
	h->rc = auth_connect(h, "admin");
	free(h->redis_path);
	h->redis_path = xstrdup(srv.sock);
	free(h->queue);
	h->queue = xstrdup("exec");
}

/* Stops our redis-server (its pid file), then the harness's teardown. */
static int
auth_teardown(void **state)
{
	char	*pid = NULL;
	long	 n = 0;
	int64_t	 deadline;
	int	 rc;

	/* The pid now: its file goes with the test's dir. */
	if (srv.pidfile != NULL &&
	    (pid = harness_read_file(srv.pidfile, NULL)) != NULL)
		n = strtol(pid, NULL, 10);
	free(pid);
	/* The workers first, while their Redis takes what they still send. */
	rc = harness_teardown(state);
	if (n > 1 && kill((pid_t)n, SIGTERM) == 0)
		for (deadline = harness_now_ms() + 10000;
		    kill((pid_t)n, 0) == 0 && harness_now_ms() < deadline;)
			harness_sleep_ms(10);
	free(srv.run);
	free(srv.sock);
	free(srv.pidfile);
	memset(&srv, 0, sizeof srv);
	return (rc);
}

/* The reply to a command, which must not be an error. */
static void
auth_ok(struct harness *h, redisContext *c, const char *user,
    const char *fmt, ...)
{
	va_list		 ap;
	redisReply	*r;

	va_start(ap, fmt);
	r = redisvCommand(c, fmt, ap);
	va_end(ap);
	if (r == NULL)
		harness_fail(h, "%s: %s: %s", user, fmt, c->errstr);
	if (r->type == REDIS_REPLY_ERROR)
		harness_fail(h, "%s: %s: refused: %s", user, fmt, r->str);
	freeReplyObject(r);
}

/* The reply to a command, which must be NOPERM. */
static void
auth_noperm(struct harness *h, redisContext *c, const char *user,
    const char *fmt, ...)
{
	va_list		 ap;
	redisReply	*r;

	va_start(ap, fmt);
	r = redisvCommand(c, fmt, ap);
	va_end(ap);
	if (r == NULL)
		harness_fail(h, "%s: %s: %s", user, fmt, c->errstr);
	if (r->type != REDIS_REPLY_ERROR || strncmp(r->str, "NOPERM", 6) != 0)
		harness_fail(h, "%s: %s: allowed (%s), NOPERM expected", user,
		    fmt, r->type == REDIS_REPLY_ERROR ? r->str : "no error");
	freeReplyObject(r);
}

/* The first answer on q:<reply>:normal, read as user (XREAD BLOCK). */
static json_t *
auth_answer(struct harness *h, redisContext *c, const char *reply)
{
	redisReply	*r, *e, *f;
	json_t		*o;
	int64_t		 deadline = harness_now_ms() + WAIT_MS;
	char		 key[256];

	snprintf(key, sizeof key, "q:%s:normal", reply);
	for (;;) {
		if (harness_now_ms() > deadline)
			harness_fail(h, "no answer on %s", key);
		r = redisCommand(c, "XREAD COUNT 1 BLOCK 1000 STREAMS %s 0",
		    key);
		if (r == NULL || r->type == REDIS_REPLY_ERROR)
			harness_fail(h, "XREAD %s: %s", key, r != NULL ?
			    r->str : c->errstr);
		if (r->type == REDIS_REPLY_ARRAY)
			break;
		freeReplyObject(r);
	}
	e = r->element[0]->element[1]->element[0];
	f = e->element[1];
	o = json_loadb(f->element[1]->str, f->element[1]->len, 0, NULL);
	freeReplyObject(r);
	if (o == NULL)
		harness_fail(h, "answer on %s is not JSON", key);
	return (o);
}

/* The answer with this id on reply queue reply (waited for). */
static json_t *
auth_answer_for(struct harness *h, redisContext *c, const char *reply,
    const char *id)
{
	redisReply	*r, *f;
	json_t		*o = NULL;
	int64_t		 deadline = harness_now_ms() + WAIT_MS;
	size_t		 i;

	while (o == NULL) {
		if (harness_now_ms() > deadline)
			harness_fail(h, "no answer to %s on %s", id, reply);
		r = redisCommand(c, "XRANGE q:%s:normal - +", reply);
		if (r == NULL || r->type != REDIS_REPLY_ARRAY)
			harness_fail(h, "XRANGE q:%s:normal: %s", reply,
			    r != NULL ? r->str : c->errstr);
		for (i = 0; i < r->elements && o == NULL; i++) {
			f = r->element[i]->element[1];
			o = json_loadb(f->element[1]->str, f->element[1]->len,
			    0, NULL);
			if (o != NULL && (!json_is_string(json_object_get(o,
			    "id")) || strcmp(harness_jstr(o, "id"), id) != 0)) {
				json_decref(o);
				o = NULL;
			}
		}
		freeReplyObject(r);
		if (o == NULL)
			harness_sleep_ms(20);
	}
	return (o);
}

/* How many times s occurs in the file at path. */
static int
auth_count_in_file(const char *path, const char *s)
{
	char	*text, *p;
	int	 n = 0;

	if ((text = harness_read_file(path, NULL)) == NULL)
		return (0);
	for (p = text; (p = strstr(p, s)) != NULL; p += strlen(s))
		n++;
	free(text);
	return (n);
}

/* Waits until s occurs at least n times in path. */
static void
auth_wait_log(struct harness *h, const char *path, const char *s, int n,
    int timeout_ms)
{
	int64_t	deadline = harness_now_ms() + timeout_ms;

	while (auth_count_in_file(path, s) < n) {
		if (harness_now_ms() > deadline)
			harness_fail(h, "'%s' not %d times in %s after %d ms",
			    s, n, path, timeout_ms);
		harness_sleep_ms(20);
	}
}

/* GET /healthz on the loopback port: the body (allocated), or NULL. */
static char *
auth_healthz(int port)
{
	struct sockaddr_in	 sin;
	const char		*req = "GET /healthz HTTP/1.0\r\n\r\n";
	char			*buf, *body;
	size_t			 len = 0;
	ssize_t			 n;
	int			 fd;

	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return (NULL);
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons(port);
	buf = xcalloc(1, 65536);
	if (connect(fd, (struct sockaddr *)&sin, sizeof sin) == -1 ||
	    write(fd, req, strlen(req)) != (ssize_t)strlen(req)) {
		close(fd);
		free(buf);
		return (NULL);
	}
	while (len < 65535 && (n = read(fd, buf + len, 65535 - len)) > 0)
		len += n;
	close(fd);
	body = strstr(buf, "\r\n\r\n");
	body = body != NULL ? xstrdup(body + 4) : NULL;
	free(buf);
	return (body);
}

/* Waits until /healthz says "redis_auth":"<want>", and is 200's "ok". */
static void
auth_wait_healthz(struct harness *h, int port, const char *want)
{
	int64_t	 deadline = harness_now_ms() + WAIT_MS;
	char	*body = NULL, needle[64];

	snprintf(needle, sizeof needle, "\"redis_auth\":\"%s\"", want);
	for (;;) {
		free(body);
		body = auth_healthz(port);
		if (body != NULL && strstr(body, needle) != NULL &&
		    strstr(body, "\"status\":\"ok\"") != NULL)
			break;
		if (harness_now_ms() > deadline)
			harness_fail(h, "/healthz: %s, not %s", body != NULL ?
			    body : "no answer", needle);
		harness_sleep_ms(20);
	}
	free(body);
}

/*
 * The worker logged in as worker, with its password from the file;
 * consumer: its name (NULL: the harness's).
 */
static pid_t
auth_worker_as(struct harness *h, int http_port, const char *extra,
    const char *consumer)
{
	const char	*env[4];
	char		*pwfile, *e, http[32];
	pid_t		 pid;

	pwfile = auth_pass_path("worker");
	xasprintf(&e, "EXECQ_REDIS_PASSWORD_FILE=%s", pwfile);
	env[0] = "EXECQ_REDIS_USER=worker";
	env[1] = e;
	env[2] = "EXECQ_AGENTS=agent,other operator";
	env[3] = NULL;
	snprintf(http, sizeof http, "127.0.0.1:%d", http_port);
	if (consumer != NULL)
		pid = harness_worker_start(h, env, "--consumer", consumer,
		    NULL);
	else if (http_port != 0)
		pid = harness_worker_start(h, env, "--http", http, extra,
		    NULL);
	else
		pid = harness_worker_start(h, env, extra, NULL);
	free(e);
	free(pwfile);
	return (pid);
}

/* The same, named by the harness. */
static pid_t
auth_worker(struct harness *h, int http_port, const char *extra)
{
	return (auth_worker_as(h, http_port, extra, NULL));
}

/*
 * The shipped ACL: an agent adds items and reads its own replies, and
 * nothing else; the operator reads everything and decides; nobody gets
 * in without a password.
 */
static void
test_auth_acl_roles(void **state)
{
	struct harness	*h = harness_fixture(state);
	redisContext	*agent, *other, *op, *anon, *adm;

	auth_redis_start(h);
	adm = auth_connect(h, "admin");
	agent = auth_connect(h, "agent");
	other = auth_connect(h, "other");
	op = auth_connect(h, "operator");
	anon = auth_connect(h, NULL);

	/* What the worker would have written, to be read or not. */
	auth_ok(h, adm, "admin", "XADD q:other.x:normal * item {}");
	auth_ok(h, adm, "admin", "XADD q:agent.x:normal * item {}");

	/* The agent: items in its own lanes, its own answers out. */
	auth_ok(h, agent, "agent", "XADD q:exec:agent.normal * item {}");
	auth_ok(h, agent, "agent", "XADD q:exec:agent.high * item {}");
	auth_ok(h, agent, "agent", "XADD q:exec:agent.ctl * item {}");
	auth_ok(h, other, "other", "XADD q:exec:other.normal * item {}");
	/* What it can do to its lanes it can do to its own only. */
	auth_ok(h, agent, "agent", "XADD q:exec:agent.low MAXLEN 0 * item {}");
	auth_ok(h, agent, "agent", "XDEL q:exec:agent.low 1-1");
	auth_ok(h, agent, "agent", "XREAD STREAMS q:agent.x:normal "
	    "q:agent.x:high 0 0");
	auth_ok(h, agent, "agent", "XRANGE q:agent.x:normal - +");
	auth_ok(h, agent, "agent", "XREVRANGE q:agent.x:normal + - COUNT 1");
	auth_ok(h, agent, "agent", "DEL q:agent.y:normal q:agent.y:high");
	/* ... and nothing else. */
	auth_noperm(h, agent, "agent", "XADD execq:decisions * item "
	    "{\"type\":\"APPROVE\",\"request\":\"x\"}");
	auth_noperm(h, agent, "agent", "XREAD STREAMS q:other.x:normal 0");
	auth_noperm(h, agent, "agent", "XRANGE q:other.x:normal - +");
	auth_noperm(h, agent, "agent", "DEL q:other.x:normal");
	auth_noperm(h, agent, "agent", "HGETALL execq:session:s1");
	auth_noperm(h, agent, "agent", "GET execq:claim:j1");
	auth_noperm(h, agent, "agent", "GET execq:answer:j1");
	auth_noperm(h, agent, "agent", "XREAD STREAMS execq:out:j1 0");
	auth_noperm(h, agent, "agent", "EXISTS execq:out:j1");
	auth_noperm(h, agent, "agent", "GET execq:approval:r1");
	auth_noperm(h, agent, "agent", "HGETALL execq:workers");
	auth_noperm(h, agent, "agent", "XREAD STREAMS q:exec:normal 0");
	auth_noperm(h, agent, "agent", "DEL q:exec:normal");
	/* No shared lane, no other agent's: nobody trims, fills, deletes
	   from or blocks (an id at the top) a lane of another's. */
	auth_noperm(h, agent, "agent", "XADD q:exec:normal * item {}");
	auth_noperm(h, agent, "agent", "XADD q:exec:ctl * item {}");
	auth_noperm(h, agent, "agent", "XADD q:exec:other.normal * item {}");
	auth_noperm(h, agent, "agent", "XADD q:exec:normal MAXLEN 0 * x y");
	auth_noperm(h, agent, "agent", "XADD q:exec:other.high MINID "
	    "99999999999999 * x y");
	auth_noperm(h, agent, "agent", "XADD q:exec:other.normal "
	    "18446744073709551615-18446744073709551615 x y");
	auth_noperm(h, agent, "agent", "XDEL q:exec:other.normal 1-1");
	auth_noperm(h, agent, "agent", "XDEL q:exec:high 1-1");
	auth_noperm(h, agent, "agent", "XTRIM q:exec:other.normal MAXLEN 0");
	auth_noperm(h, agent, "agent", "XREAD STREAMS q:exec:agent.normal 0");
	auth_noperm(h, agent, "agent", "XADD q:other.x:normal * item {}");
	auth_noperm(h, agent, "agent", "KEYS *");
	auth_noperm(h, agent, "agent", "FLUSHALL");
	auth_noperm(h, agent, "agent", "EVAL %s 0", "return 1");
	/* The other agent is kept out of the first's answers alike. */
	auth_ok(h, other, "other", "XRANGE q:other.x:normal - +");
	auth_noperm(h, other, "other", "XRANGE q:agent.x:normal - +");

	/* The operator: reads everything, decides. */
	auth_ok(h, op, "operator", "XADD execq:decisions * item "
	    "{\"type\":\"APPROVE\",\"request\":\"x\"}");
	auth_ok(h, op, "operator", "HGETALL execq:session:s1");
	auth_ok(h, op, "operator", "XREAD STREAMS execq:out:j1 0");
	auth_ok(h, op, "operator", "XRANGE q:agent.x:normal - +");
	auth_ok(h, op, "operator", "HDEL execq:workers gone");
	auth_ok(h, op, "operator", "ACL WHOAMI");
	auth_noperm(h, op, "operator", "SET execq:claim:j1 forged");
	/* Requeues a dead letter (none here: 0), forges no claim by EVAL. */
	auth_ok(h, op, "operator", "EVAL %s 2 q:exec:dead q:exec:requeued 0-1",
	    queue_requeue_lua);
	auth_noperm(h, op, "operator", "EVAL %s 1 execq:claim:j1",
	    "return redis.call('SET', KEYS[1], 'forged')");
	auth_noperm(h, op, "operator", "XADD q:agent.x:high * item {}");

	/* Nobody without a password. */
	{
		redisReply	*r = redisCommand(anon, "PING");

		assert_non_null(r);
		assert_int_equal(r->type, REDIS_REPLY_ERROR);
		assert_string_equal(r->str, "NOAUTH Authentication required.");
		freeReplyObject(r);
	}
	redisFree(agent);
	redisFree(other);
	redisFree(op);
	redisFree(anon);
	redisFree(adm);
	harness_pass(h);
}

/*
 * The worker's user runs an item an agent sent, end to end; a command
 * with the network grant that reaches Redis gets NOAUTH and nothing
 * else; the worker said nothing about an open door.
 */
static void
test_auth_worker_end_to_end(void **state)
{
	struct harness	*h = harness_fixture(state);
	redisContext	*agent;
	json_t		*a;
	char		*cmd, *item;
	int		 port;

	auth_redis_start(h);
	auth_harness_here(h);
	port = harness_free_port();
	auth_worker(h, port, "--network");
	auth_wait_healthz(h, port, "required");
	agent = auth_connect(h, "agent");
	auth_ok(h, agent, "agent", "XADD q:exec:agent.normal * item %s",
	    "{\"id\":\"agent.e2e-1\",\"type\":\"EXEC\",\"reply_to\":"
	    "\"agent.e2e\",\"args\":{\"command\":\"echo hello\"}}");
	a = auth_answer(h, agent, "agent.e2e");
	assert_string_equal(harness_jstr(a, "type"), "EXEC_RESULT");
	assert_string_equal(harness_jstr(a, "stdout"), "hello\n");
	assert_int_equal(harness_jint(a, "exit_code"), 0);
	json_decref(a);

	if (access("/usr/bin/redis-cli", X_OK) == 0) {
		xasprintf(&cmd, "redis-cli -h 127.0.0.1 -p %d PING; "
		    "redis-cli -h 127.0.0.1 -p %d XRANGE q:agent.e2e:normal "
		    "- +", srv.port, srv.port);
		a = json_pack("{s:s, s:s, s:s, s:{s:s}}", "id", "agent.net-1",
		    "type", "EXEC", "reply_to", "agent.net", "args",
		    "command", cmd);
		item = json_dumps(a, JSON_COMPACT);
		json_decref(a);
		auth_ok(h, agent, "agent", "XADD q:exec:agent.normal * item "
		    "%s", item);
		a = auth_answer(h, agent, "agent.net");
		assert_string_equal(harness_jstr(a, "type"), "EXEC_RESULT");
		assert_non_null(strstr(harness_jstr(a, "stdout"), "NOAUTH"));
		assert_null(strstr(harness_jstr(a, "stdout"), "PONG"));
		assert_null(strstr(harness_jstr(a, "stdout"), "hello"));
		json_decref(a);
		free(item);
		free(cmd);
	}
	assert_int_equal(auth_count_in_file(h->w[0].err_path,
	    "WITHOUT A PASSWORD"), 0);
	redisFree(agent);
	harness_pass(h);
}

/*
 * What comes from an agent's lane is that agent's: an id or a reply_to in
 * another agent's namespace is refused (answered on the sender's own
 * queues), another agent's stored answer is never handed out for its id,
 * and nothing reaches the other agent's queue.
 */
static void
test_auth_agent_namespace(void **state)
{
	struct harness	*h = harness_fixture(state);
	redisContext	*agent, *other;
	redisReply	*r;
	json_t		*a;
	char		*text;

	auth_redis_start(h);
	auth_harness_here(h);
	auth_worker(h, 0, NULL);
	agent = auth_connect(h, "agent");
	other = auth_connect(h, "other");
	auth_ok(h, other, "other", "XADD q:exec:other.normal * item %s",
	    "{\"id\":\"other.k1\",\"type\":\"EXEC\",\"reply_to\":"
	    "\"other.x\",\"args\":{\"command\":\"echo other-secret\"}}");
	a = auth_answer_for(h, other, "other.x", "other.k1");
	assert_string_equal(harness_jstr(a, "stdout"), "other-secret\n");
	json_decref(a);

	/* Another's id: refused, its answer not given. */
	auth_ok(h, agent, "agent", "XADD q:exec:agent.normal * item %s",
	    "{\"id\":\"other.k1\",\"type\":\"EXEC\",\"reply_to\":"
	    "\"agent.r\",\"args\":{\"command\":\"echo again\"}}");
	a = auth_answer_for(h, agent, "agent.r", "other.k1");
	assert_string_equal(harness_jstr(a, "type"), "ERROR");
	assert_string_equal(harness_jstr(a, "error.code"), "bad_id");
	text = json_dumps(a, 0);
	assert_null(strstr(text, "other-secret"));
	free(text);
	json_decref(a);
	/* An id outside any agent's namespace: refused. */
	auth_ok(h, agent, "agent", "XADD q:exec:agent.high * item %s",
	    "{\"id\":\"k3\",\"type\":\"EXEC\",\"reply_to\":"
	    "\"agent.r\",\"args\":{\"command\":\"echo k3\"}}");
	a = auth_answer_for(h, agent, "agent.r", "k3");
	assert_string_equal(harness_jstr(a, "error.code"), "bad_id");
	json_decref(a);
	/* Another's reply queue: refused, answered on agent.replies. */
	auth_ok(h, agent, "agent", "XADD q:exec:agent.normal * item %s",
	    "{\"id\":\"agent.k2\",\"type\":\"EXEC\",\"reply_to\":"
	    "\"other.x\",\"args\":{\"command\":\"echo forged\"}}");
	a = auth_answer_for(h, agent, "agent.replies", "agent.k2");
	assert_string_equal(harness_jstr(a, "error.code"), "bad_reply_to");
	json_decref(a);
	/* No reply_to: agent.replies too; and it runs. */
	auth_ok(h, agent, "agent", "XADD q:exec:agent.normal * item %s",
	    "{\"id\":\"agent.k4\",\"type\":\"EXEC\",\"args\":"
	    "{\"command\":\"echo fine\"}}");
	a = auth_answer_for(h, agent, "agent.replies", "agent.k4");
	assert_string_equal(harness_jstr(a, "stdout"), "fine\n");
	json_decref(a);
	/* Answered after the forged one: nothing came to other.x since. */
	r = redisCommand(other, "XLEN q:other.x:normal");
	assert_non_null(r);
	assert_int_equal(r->type, REDIS_REPLY_INTEGER);
	assert_int_equal(r->integer, 1);
	freeReplyObject(r);
	redisFree(agent);
	redisFree(other);
	harness_pass(h);
}

/* Waits until the stream key holds n entries whose item has needle. */
static void
auth_wait_entries(struct harness *h, const char *key, const char *needle,
    int n)
{
	int64_t	deadline = harness_now_ms() + WAIT_MS;

	while (harness_count_entries(h, key, needle) != n) {
		if (harness_now_ms() > deadline)
			harness_fail(h, "%s: not %d entries with %s", key, n,
			    needle);
		harness_sleep_ms(20);
	}
}

/* Waits until the stream key is empty (read and deleted by a worker). */
static void
auth_wait_empty(struct harness *h, const char *key)
{
	int64_t		 deadline = harness_now_ms() + 4 * WAIT_MS;
	redisReply	*r;
	long long	 n;

	for (;;) {
		r = harness_cmd(h, "XLEN %s", key);
		n = r->integer;
		freeReplyObject(r);
		if (n == 0)
			return;
		if (harness_now_ms() > deadline)
			harness_fail(h, "%s: %lld entries left", key, n);
		harness_sleep_ms(20);
	}
}

/*
 * n PROCESS items (kill, no token) for session sid, ids <prefix><n>,
 * added to the stream key as user c, pipelined.
 */
static void
auth_flood(struct harness *h, redisContext *c, const char *key,
    const char *prefix, const char *sid, int n)
{
	redisReply	*r;
	char		 item[512];
	int		 i;

	for (i = 0; i < n; i++) {
		snprintf(item, sizeof item, "{\"id\":\"%s%d\",\"type\":"
		    "\"PROCESS\",\"args\":{\"action\":\"kill\","
		    "\"session_id\":\"%s\"}}", prefix, i, sid);
		if (redisAppendCommand(c, "XADD %s * item %s", key, item) !=
		    REDIS_OK)
			harness_fail(h, "XADD %s: %s", key, c->errstr);
	}
	for (i = 0; i < n; i++) {
		if (redisGetReply(c, (void **)&r) != REDIS_OK)
			harness_fail(h, "XADD %s: %s", key, c->errstr);
		if (r->type == REDIS_REPLY_ERROR)
			harness_fail(h, "XADD %s: %s", key, r->str);
		freeReplyObject(r);
	}
}

/*
 * A worker's inbox holds what other workers forward to it, from every
 * agent: no agent thins it. One agent's flood of PROCESS items for a
 * session on a worker that is slow to read (here: gone, its lease still
 * held) does not push out another's item forwarded there before, which
 * the worker answers when it reads its inbox again.
 */
static void
test_auth_inbox_not_thinned(void **state)
{
	struct harness	*h = harness_fixture(state);
	redisContext	*agent, *other;
	redisReply	*r;
	pid_t		 a, b;
	json_t		*o;
	char		*consumer, *inbox, *item;

	auth_redis_start(h);
	auth_harness_here(h);
	a = auth_worker(h, 0, NULL);
	consumer = xstrdup(h->w[0].consumer);
	xasprintf(&inbox, "q:exec:ctl:%s", consumer);
	agent = auth_connect(h, "agent");
	other = auth_connect(h, "other");
	auth_ok(h, other, "other", "XADD q:exec:other.normal * item %s",
	    "{\"id\":\"other.t1\",\"type\":\"EXEC\",\"reply_to\":"
	    "\"other.t\",\"args\":{\"command\":\"echo other; sleep 60\","
	    "\"background\":true}}");
	o = auth_answer_for(h, other, "other.t", "other.t1");
	assert_string_equal(harness_jstr(o, "type"), "EXEC_STARTED");
	assert_string_equal(harness_jstr(o, "worker"), consumer);
	xasprintf(&item, "{\"id\":\"other.t2\",\"type\":\"PROCESS\","
	    "\"reply_to\":\"other.t\",\"args\":{\"action\":\"wait\","
	    "\"session_id\":\"other.t1\",\"timeout_ms\":1,"
	    "\"token\":\"%s\"}}", harness_jstr(o, "session_token"));
	json_decref(o);

	/* The session's worker stops reading; the fleet thinks it lives. */
	b = auth_worker(h, 0, NULL);
	harness_worker_kill(h, a);
	freeReplyObject(harness_cmd(h, "PERSIST execq:worker:%s", consumer));
	auth_ok(h, other, "other", "XADD q:exec:other.ctl * item %s", item);
	auth_wait_entries(h, inbox, "\"other.t2\"", 1);
	auth_flood(h, agent, "q:exec:agent.ctl", "agent.f", "other.t1", 10300);
	auth_wait_empty(h, "q:exec:agent.ctl");
	assert_int_equal(harness_count_entries(h, inbox, "\"other.t2\""), 1);

	/* Back under its name, it answers the other agent's item, and
	   all the rest (the answers are out before Redis stops). */
	a = auth_worker_as(h, 0, NULL, consumer);
	o = auth_answer_for(h, other, "other.t", "other.t2");
	assert_string_equal(harness_jstr(o, "type"), "PROCESS_RESULT");
	json_decref(o);
	auth_wait_empty(h, inbox);
	harness_stop_clean(h, a);
	harness_stop_clean(h, b);
	/* The flood had no reply_to: still the agent's after the forward,
	   answered on agent.replies, none on the shared default. */
	r = harness_cmd(h, "XLEN q:replies:normal");
	assert_int_equal(r->integer, 0);
	freeReplyObject(r);
	o = auth_answer_for(h, agent, "agent.replies", "agent.f10299");
	assert_string_equal(harness_jstr(o, "error.code"), "unknown_session");
	json_decref(o);
	free(item);
	free(inbox);
	free(consumer);
	redisFree(agent);
	redisFree(other);
	harness_pass(h);
}

/*
 * What an agent may put in its own lanes stays its own: an "owner" field
 * of its own making is ignored (only a worker's, in an inbox it cannot
 * write, counts), a name that only looks like its own is refused, a JSON
 * with a key twice is refused whole, a background item does not call
 * back elsewhere, and an id at the top of its own lane blocks that lane
 * only.
 */
static void
test_auth_lane_edges(void **state)
{
	static const char *const names[][3] = {
		/* id, reply_to, the error */
		{ "agent.", "agent.e", "bad_id" },
		{ "agentx.y", "agent.e", "bad_id" },
		{ "AGENT.x", "agent.e", "bad_id" },
		{ "agent.e1", "agentx.y", "bad_reply_to" },
		{ "agent.e2", "AGENT.x", "bad_reply_to" },
		{ "agent.e3", "agent", "bad_reply_to" },
	};
	struct harness	*h = harness_fixture(state);
	redisContext	*agent, *other;
	redisReply	*r;
	json_t		*o;
	char		 item[256];
	size_t		 i;

	auth_redis_start(h);
	auth_harness_here(h);
	auth_worker(h, 0, NULL);
	agent = auth_connect(h, "agent");
	other = auth_connect(h, "other");
	auth_noperm(h, agent, "agent", "XADD q:exec:ctl:%s * item {} owner "
	    "other", h->w[0].consumer);
	auth_ok(h, agent, "agent", "XADD q:exec:agent.normal * owner other "
	    "item %s", "{\"id\":\"other.o1\",\"type\":\"EXEC\",\"reply_to\":"
	    "\"other.o\",\"args\":{\"command\":\"echo o1\"}}");
	o = auth_answer_for(h, agent, "agent.replies", "other.o1");
	assert_string_equal(harness_jstr(o, "error.code"), "bad_id");
	json_decref(o);
	auth_ok(h, agent, "agent", "XADD q:exec:agent.normal * item %s",
	    "{\"id\":\"agent.b1\",\"type\":\"EXEC\",\"reply_to\":\"other.o\","
	    "\"args\":{\"command\":\"echo b1\",\"background\":true}}");
	o = auth_answer_for(h, agent, "agent.replies", "agent.b1");
	assert_string_equal(harness_jstr(o, "error.code"), "bad_reply_to");
	json_decref(o);
	for (i = 0; i < sizeof names / sizeof names[0]; i++) {
		snprintf(item, sizeof item, "{\"id\":\"%s\",\"type\":"
		    "\"EXEC\",\"reply_to\":\"%s\",\"args\":{\"command\":"
		    "\"echo e\"}}", names[i][0], names[i][1]);
		auth_ok(h, agent, "agent", "XADD q:exec:agent.high * item %s",
		    item);
		o = auth_answer_for(h, agent, strcmp(names[i][2], "bad_id") ==
		    0 ? "agent.e" : "agent.replies", names[i][0]);
		assert_string_equal(harness_jstr(o, "error.code"),
		    names[i][2]);
		json_decref(o);
	}
	auth_ok(h, agent, "agent", "XADD q:exec:agent.normal * item %s",
	    "{\"id\":\"agent.d1\",\"id\":\"other.o2\",\"type\":\"EXEC\","
	    "\"reply_to\":\"agent.d\",\"reply_to\":\"other.o\",\"args\":"
	    "{\"command\":\"echo d1\"}}");
	auth_wait_entries(h, "q:agent.replies:normal", "duplicate object key",
	    1);

	/* Its own lane at the top: that lane is blocked, nobody else's. */
	auth_ok(h, agent, "agent", "XADD q:exec:agent.low "
	    "18446744073709551615-18446744073709551615 item %s",
	    "{\"id\":\"agent.m1\",\"type\":\"EXEC\",\"reply_to\":\"agent.m\","
	    "\"args\":{\"command\":\"echo top\"}}");
	o = auth_answer_for(h, agent, "agent.m", "agent.m1");
	assert_string_equal(harness_jstr(o, "stdout"), "top\n");
	json_decref(o);
	r = redisCommand(agent, "XADD q:exec:agent.low * item {}");
	assert_non_null(r);
	assert_int_equal(r->type, REDIS_REPLY_ERROR);
	freeReplyObject(r);
	auth_ok(h, other, "other", "XADD q:exec:other.low * item %s",
	    "{\"id\":\"other.m2\",\"type\":\"EXEC\",\"reply_to\":\"other.m\","
	    "\"args\":{\"command\":\"echo below\"}}");
	o = auth_answer_for(h, other, "other.m", "other.m2");
	assert_string_equal(harness_jstr(o, "stdout"), "below\n");
	json_decref(o);
	r = harness_cmd(h, "EXISTS q:other.o:normal q:other.o:high");
	assert_int_equal(r->integer, 0);
	freeReplyObject(r);
	redisFree(agent);
	redisFree(other);
	harness_pass(h);
}

/* A Redis whose default user needs no password is said, loudly. */
static void
test_auth_open_door_said(void **state)
{
	struct harness	*h = harness_fixture(state);
	int		 port;

	auth_redis_start(h);
	auth_harness_here(h);
	freeReplyObject(harness_cmd(h, "ACL SETUSER default on nopass ~* "
	    "&* +@all"));
	port = harness_free_port();
	auth_worker(h, port, NULL);
	auth_wait_log(h, h->w[0].err_path, "lets ANYONE in WITHOUT A "
	    "PASSWORD", 1, WAIT_MS);
	auth_wait_healthz(h, port, "none");
	harness_pass(h);
}

/* The failed logins of user so far, as Redis's ACL LOG counts them. */
static long long
auth_failures(struct harness *h, const char *user)
{
	redisReply	*r, *e;
	long long	 n = 0, count;
	size_t		 i, j;
	int		 auth, ours;

	r = harness_cmd(h, "ACL LOG");
	for (i = 0; i < r->elements; i++) {
		e = r->element[i];
		auth = ours = 0;
		count = 0;
		for (j = 0; j + 1 < e->elements; j += 2) {
			if (strcmp(e->element[j]->str, "reason") == 0)
				auth = strcmp(e->element[j + 1]->str,
				    "auth") == 0;
			if (strcmp(e->element[j]->str, "username") == 0)
				ours = strcmp(e->element[j + 1]->str,
				    user) == 0;
			if (strcmp(e->element[j]->str, "count") == 0)
				count = e->element[j + 1]->integer;
		}
		if (auth && ours)
			n += count;
	}
	freeReplyObject(r);
	return (n);
}

/*
 * A password that stops working: the worker tries again and again, and
 * says so once per connection, not once per try; when it works again it
 * says so once and serves.
 */
static void
test_auth_refused_backs_off(void **state)
{
	struct harness	*h = harness_fixture(state);
	redisContext	*agent;
	int64_t		 deadline;
	json_t		*a;
	const char	*log;

	auth_redis_start(h);
	auth_harness_here(h);
	auth_worker(h, 0, NULL);
	log = h->w[0].err_path;
	freeReplyObject(harness_cmd(h, "ACL SETUSER worker resetpass "
	    ">changed-secret-77"));
	freeReplyObject(harness_cmd(h, "CLIENT KILL USER worker"));
	/* Three refused tries on each connection: 1 s, then 2 s apart. */
	deadline = harness_now_ms() + 30000;
	while (auth_failures(h, "worker") < 6) {
		if (harness_now_ms() > deadline)
			harness_fail(h, "the worker did not try again: %lld "
			    "failed logins", auth_failures(h, "worker"));
		harness_sleep_ms(50);
	}
	assert_int_equal(auth_count_in_file(log, "login as user worker "
	    "refused: WRONGPASS"), 2);
	assert_int_equal(auth_count_in_file(log, "connection lost"), 2);
	assert_int_equal(auth_count_in_file(log, "changed-secret"), 0);
	assert_int_equal(auth_count_in_file(log, auth_pw("worker")), 0);

	freeReplyObject(harness_cmd(h, "ACL SETUSER worker >%s",
	    auth_pw("worker")));
	auth_wait_log(h, log, "login accepted", 2, 90000);
	agent = auth_connect(h, "agent");
	auth_ok(h, agent, "agent", "XADD q:exec:agent.normal * item %s",
	    "{\"id\":\"agent.back-1\",\"type\":\"EXEC\",\"reply_to\":"
	    "\"agent.back\",\"args\":{\"command\":\"echo back\"}}");
	a = auth_answer(h, agent, "agent.back");
	assert_string_equal(harness_jstr(a, "stdout"), "back\n");
	json_decref(a);
	redisFree(agent);
	assert_int_equal(auth_count_in_file(log, "refused"), 2);
	harness_pass(h);
}

/*
 * The client in a checkout where make run's Redis is: it logs in by
 * itself, as agent to run a command, as operator to list approvals;
 * its answers come on agent.* queues; a wrong password from the
 * environment is refused, and the error shows no password.
 */
static void
test_auth_client_finds_make_run(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct harness_proc	 p;
	char			*script;

	auth_redis_start(h);
	auth_harness_here(h);
	auth_worker(h, 0, NULL);
	xasprintf(&script, "cd '%s' && unset EXECQ_REDIS_URL && "
	    "export XDG_CONFIG_HOME='%s/cfg' && "
	    "$CLI run -- echo hi && "
	    "$CLI spawn --wait 10 -- 'echo bg' >/dev/null && "
	    "$CLI callbacks --count 1 --from-start --timeout 10 | "
	    "grep -c EXEC_CALLBACK && "
	    "$CLI approvals && echo approvals-ok && "
	    "EXECQ_REDIS_PASSWORD=wrong-5ecret $CLI run -- echo no; "
	    "echo rc=$?", h->dir, h->dir);
	harness_cli_sh(h, &p, WAIT_MS * 2, script);
	free(script);
	if (strstr(p.out, "hi\n1\n") == NULL ||
	    strstr(p.out, "approvals-ok\nrc=125\n") == NULL ||
	    strstr(p.err, "WRONGPASS") == NULL ||
	    strstr(p.err, "5ecret") != NULL)
		harness_fail(h, "client: stdout:\n%s\nstderr:\n%s", p.out,
		    p.err);
	harness_proc_release(&p);
	harness_pass(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_auth_acl_roles,
		    harness_setup, auth_teardown),
		cmocka_unit_test_setup_teardown(test_auth_worker_end_to_end,
		    harness_setup, auth_teardown),
		cmocka_unit_test_setup_teardown(test_auth_agent_namespace,
		    harness_setup, auth_teardown),
		cmocka_unit_test_setup_teardown(test_auth_inbox_not_thinned,
		    harness_setup, auth_teardown),
		cmocka_unit_test_setup_teardown(test_auth_lane_edges,
		    harness_setup, auth_teardown),
		cmocka_unit_test_setup_teardown(test_auth_open_door_said,
		    harness_setup, auth_teardown),
		cmocka_unit_test_setup_teardown(test_auth_refused_backs_off,
		    harness_setup, auth_teardown),
		cmocka_unit_test_setup_teardown(
		    test_auth_client_finds_make_run, harness_setup,
		    auth_teardown),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
