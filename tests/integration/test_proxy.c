/*
 * The egress proxy on its own (worker/proxy.c), with real sockets: a
 * child process runs it and, beside it, an HTTP server on 127.0.0.1 that
 * stands in for the internet; curl, a client others wrote that honours
 * a proxy URL, asks through it. The test host is reached by its name
 * only because the proxy is told that this name may be private; every
 * other way to loopback, to the stand-in Redis address, to a host not
 * granted or without the credential is refused, and said in the audit.
 * Nothing here talks to anything outside 127.0.0.0/8.
 */

#include <sys/socket.h>

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
#include <event2/bufferevent.h>
#include <event2/http.h>
#include <event2/listener.h>

#include "logs/xmalloc.h"
#include "tests/integration/harness.h"
#include "tests/integration/proxy_world.h"
#include "worker/proxy.h"

#define WAIT_MS		20000

/* What the proxy child tells the test. */
struct world {
	pid_t	 pid;
	int	 http_port;	/* the stand-in for the internet */
	int	 count_port;	/* a sink that counts to its EOF, then says */
	int	 redis_port;	/* the stand-in for the worker's Redis */
	char	*url_local;	/* granted "localhost" */
	char	*url_other;	/* granted "example.invalid" only */
	char	*url_ip;	/* granted "127.0.0.1" (a literal) */
	char	*audit;		/* the audit file */
};

static FILE	*audit_out;

static void
audit_cb(const struct proxy_event *ev, void *arg)
{
	(void)arg;
	fprintf(audit_out, "%s %s %s %d %s %s%s%s sent=%llu received=%llu\n",
	    ev->id != NULL ? ev->id : "-", ev->method, ev->host, ev->port,
	    ev->addr != NULL ? ev->addr : "-", ev->verdict,
	    ev->reason != NULL ? " " : "", ev->reason != NULL ? ev->reason : "",
	    ev->sent, ev->received);
	fflush(audit_out);
}

/* The sink: counts what comes until the peer shuts its side, then says. */
static void
count_read_cb(struct bufferevent *bev, void *arg)
{
	struct evbuffer	*in = bufferevent_get_input(bev);
	size_t		*n = arg;

	*n += evbuffer_get_length(in);
	evbuffer_drain(in, evbuffer_get_length(in));
}

static void
count_write_cb(struct bufferevent *bev, void *arg)
{
	if (evbuffer_get_length(bufferevent_get_output(bev)) == 0) {
		free(arg);
		bufferevent_free(bev);
	}
}

static void
count_event_cb(struct bufferevent *bev, short what, void *arg)
{
	size_t	*n = arg;

	if (what & BEV_EVENT_EOF) {
		count_read_cb(bev, arg);
		bufferevent_setcb(bev, NULL, count_write_cb, NULL, arg);
		evbuffer_add_printf(bufferevent_get_output(bev), "got %zu\n",
		    *n);
		return;
	}
	free(arg);
	bufferevent_free(bev);
}

static void
count_accept_cb(struct evconnlistener *lev, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct bufferevent	*bev;

	(void)sa;
	(void)salen;
	(void)arg;
	bev = bufferevent_socket_new(evconnlistener_get_base(lev), fd,
	    BEV_OPT_CLOSE_ON_FREE);
	bufferevent_setcb(bev, count_read_cb, NULL, count_event_cb,
	    xcalloc(1, sizeof (size_t)));
	bufferevent_enable(bev, EV_READ);
}

/* The child: the proxy and the test host, until SIGTERM. */
static void __attribute__((noreturn))
world_child(int fd, void *arg)
{
	const struct world		*w = arg;
	struct event_base		*base = event_base_new();
	struct evhttp			*http;
	struct proxy_config		 pc;
	struct proxy			*p;
	struct sockaddr_in		 sin;
	struct evconnlistener		*count;
	FILE				*f = fdopen(fd, "w");
	socklen_t			 len;
	char				*u[PROXY_WORLD_NURLS];
	int				 port, i;

	audit_out = fopen(w->audit, "w");
	if ((http = harness_http_bind(base, &port)) == NULL)
		_exit(2);
	fprintf(f, "%d\n", port);
	memset(&pc, 0, sizeof pc);
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)w->redis_port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	pc.refused = (struct sockaddr *)&sin;
	pc.refused_len = sizeof sin;
	pc.audit = audit_cb;
	p = proxy_world_proxy(base, &pc, "item-ip", "127.0.0.1", u);
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	count = evconnlistener_new_bind(base, count_accept_cb, NULL,
	    LEV_OPT_CLOSE_ON_FREE, 16, (struct sockaddr *)&sin, sizeof sin);
	len = sizeof sin;
	if (count == NULL || getsockname(evconnlistener_get_fd(count),
	    (struct sockaddr *)&sin, &len) == -1)
		_exit(4);
	fprintf(f, "%s\n%s\n%s\n%d\n", u[PROXY_WORLD_LOCAL],
	    u[PROXY_WORLD_OTHER], u[PROXY_WORLD_THIRD], ntohs(sin.sin_port));
	fclose(f);
	proxy_world_run(base);
	proxy_free(p);
	evconnlistener_free(count);
	evhttp_free(http);
	event_base_free(base);
	for (i = 0; i < PROXY_WORLD_NURLS; i++)
		free(u[i]);
	fclose(audit_out);
	_exit(0);
}

static void
world_start(struct harness *h, struct world *w)
{
	FILE	*f;
	char	*line;

	memset(w, 0, sizeof *w);
	w->redis_port = harness_free_port();
	xasprintf(&w->audit, "%s/proxy-audit", h->dir);
	w->pid = proxy_world_fork(h, world_child, w, &f);
	if ((line = proxy_world_line(f)) == NULL)
		harness_fail(h, "the proxy child said nothing");
	w->http_port = atoi(line);
	free(line);
	w->url_local = proxy_world_line(f);
	w->url_other = proxy_world_line(f);
	w->url_ip = proxy_world_line(f);
	if ((line = proxy_world_line(f)) != NULL)
		w->count_port = atoi(line);
	free(line);
	fclose(f);
	if (w->count_port == 0)
		harness_fail(h, "the proxy child did not start its proxy");
}

static void
world_stop(struct world *w)
{
	proxy_world_stop(w->pid);
	free(w->url_local);
	free(w->url_other);
	free(w->url_ip);
	free(w->audit);
}

/* curl through proxy (tunnel: CONNECT) to url; fills *p. */
static void
curl(struct harness *h, struct harness_proc *p, const char *proxy,
    int tunnel, const char *url)
{
	const char *const envp[] = { "PATH=/usr/bin:/bin", NULL };
	const char	*argv[12];
	int		 n = 0;

	argv[n++] = "curl";
	argv[n++] = "-sS";
	argv[n++] = "--max-time";
	argv[n++] = "20";
	argv[n++] = "-w";
	argv[n++] = " code=%{http_code}";
	if (proxy != NULL) {
		argv[n++] = "-x";
		argv[n++] = proxy;
	}
	if (tunnel)
		argv[n++] = "-p";
	argv[n++] = url;
	argv[n] = NULL;
	harness_capture(h, argv, envp, WAIT_MS, p);
}

/* A line of the audit file that holds every one of the words. */
static int
audit_has(const struct world *w, const char *a, const char *b,
    const char *c)
{
	char	*text = harness_read_file(w->audit, NULL), *line, *save;
	int	 found = 0;

	for (line = text != NULL ? strtok_r(text, "\n", &save) : NULL;
	    line != NULL && !found; line = strtok_r(NULL, "\n", &save))
		found = strstr(line, a) != NULL && strstr(line, b) != NULL &&
		    (c == NULL || strstr(line, c) != NULL);
	free(text);
	return (found);
}

/* Waits for the audit line (the proxy writes it as the connection ends). */
static void
audit_wait(struct harness *h, const struct world *w, const char *a,
    const char *b, const char *c)
{
	int64_t	deadline = harness_now_ms() + WAIT_MS;

	while (!audit_has(w, a, b, c)) {
		if (harness_now_ms() > deadline)
			harness_fail(h, "no audit line with '%s' '%s' '%s'", a,
			    b, c != NULL ? c : "");
		harness_sleep_ms(20);
	}
}

static int
have_curl(void)
{
	return (access("/usr/bin/curl", X_OK) == 0);
}

/* A granted name: plain HTTP and a CONNECT tunnel both reach it. */
static void
test_proxy_granted(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct harness_proc	 p;
	struct world		 w;
	char			*url;

	if (!have_curl())
		skip();
	world_start(h, &w);
	xasprintf(&url, "http://localhost:%d/plain", w.http_port);
	curl(h, &p, w.url_local, 0, url);
	if (strstr(p.out, "hello from the test host /plain") == NULL ||
	    strstr(p.out, "code=200") == NULL)
		harness_fail(h, "plain: %s / %s", p.out, p.err);
	harness_proc_release(&p);
	free(url);
	xasprintf(&url, "http://localhost:%d/tunnel", w.http_port);
	curl(h, &p, w.url_local, 1, url);
	if (strstr(p.out, "hello from the test host /tunnel") == NULL)
		harness_fail(h, "tunnel: %s / %s", p.out, p.err);
	harness_proc_release(&p);
	free(url);
	audit_wait(h, &w, "item-local GET localhost", "allowed", NULL);
	audit_wait(h, &w, "item-local CONNECT localhost", "allowed", NULL);
	world_stop(&w);
	harness_pass(h);
}

/* What is not granted, or not asked for right, is refused, and said. */
static void
test_proxy_refused(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct harness_proc	 p;
	struct world		 w;
	char			*url, *bare;

	if (!have_curl())
		skip();
	world_start(h, &w);
	/* Another command's grant does not name localhost. */
	xasprintf(&url, "http://localhost:%d/x", w.http_port);
	curl(h, &p, w.url_other, 0, url);
	if (strstr(p.out, "code=403") == NULL ||
	    strstr(p.out, "not granted") == NULL)
		harness_fail(h, "not granted: %s / %s", p.out, p.err);
	harness_proc_release(&p);
	curl(h, &p, w.url_other, 1, url);
	if (harness_proc_exit(&p) == 0 || strstr(p.err, "403") == NULL)
		harness_fail(h, "not granted, tunnel: %s / %s", p.out, p.err);
	harness_proc_release(&p);
	free(url);
	/* No credential, or a made-up one. */
	xasprintf(&bare, "http://127.0.0.1:%s", strrchr(w.url_local, ':') +
	    1);
	xasprintf(&url, "http://localhost:%d/x", w.http_port);
	curl(h, &p, bare, 0, url);
	if (strstr(p.out, "code=407") == NULL)
		harness_fail(h, "no credential: %s / %s", p.out, p.err);
	harness_proc_release(&p);
	free(bare);
	xasprintf(&bare, "http://execq:00000000000000000000000000000000@"
	    "127.0.0.1:%s", strrchr(w.url_local, ':') + 1);
	curl(h, &p, bare, 0, url);
	if (strstr(p.out, "code=407") == NULL)
		harness_fail(h, "made-up credential: %s / %s", p.out, p.err);
	harness_proc_release(&p);
	free(bare);
	free(url);
	/* Granted as a literal, but loopback: the address decides. */
	xasprintf(&url, "http://127.0.0.1:%d/x", w.http_port);
	curl(h, &p, w.url_ip, 0, url);
	if (strstr(p.out, "code=403") == NULL ||
	    strstr(p.out, "loopback") == NULL)
		harness_fail(h, "loopback literal: %s / %s", p.out, p.err);
	harness_proc_release(&p);
	/* A literal is not a granted name. */
	curl(h, &p, w.url_local, 0, url);
	if (strstr(p.out, "code=403") == NULL)
		harness_fail(h, "literal for a name: %s / %s", p.out, p.err);
	harness_proc_release(&p);
	free(url);
	/* The worker's Redis, whatever name is used to reach it. */
	xasprintf(&url, "http://localhost:%d/x", w.redis_port);
	curl(h, &p, w.url_local, 1, url);
	if (harness_proc_exit(&p) == 0 || strstr(p.err, "403") == NULL)
		harness_fail(h, "redis: %s / %s", p.out, p.err);
	harness_proc_release(&p);
	free(url);
	audit_wait(h, &w, "item-other GET localhost", "refused",
	    "not granted");
	audit_wait(h, &w, "item-ip GET 127.0.0.1", "refused", "loopback");
	audit_wait(h, &w, "item-local CONNECT localhost", "refused",
	    "Redis");
	audit_wait(h, &w, "- GET localhost", "refused", "credential");
	world_stop(&w);
	harness_pass(h);
}

/* Sends a CONNECT with url's credential; the status line's code. */
static int
proxy_tunnel(struct harness *h, const char *url, int port, int fd)
{
	char	*b64 = proxy_world_cred(url), req[512], buf[512];
	ssize_t	 n;
	size_t	 len = 0;

	snprintf(req, sizeof req, "CONNECT localhost:%d HTTP/1.1\r\n"
	    "Proxy-Authorization: Basic %s\r\n\r\n", port, b64);
	free(b64);
	buf[0] = '\0';
	if (write(fd, req, strlen(req)) != (ssize_t)strlen(req))
		harness_fail(h, "write: %s", strerror(errno));
	while (len < sizeof buf - 1 && strstr(buf, "\r\n\r\n") == NULL) {
		if ((n = read(fd, buf + len, sizeof buf - 1 - len)) <= 0)
			break;
		len += (size_t)n;
		buf[len] = '\0';
	}
	buf[len] = '\0';
	return (strncmp(buf, "HTTP/1.1 ", 9) == 0 ? atoi(buf + 9) : -1);
}

/*
 * A client that sends, then shuts its side (or closes), as nc < file
 * does: every byte reaches upstream, and upstream's answer comes back.
 */
static void
test_proxy_half_close(void **state)
{
	struct harness	*h = harness_fixture(state);
	struct world	 w;
	char		*buf, ans[64];
	size_t		 len = 300000, got = 0;
	ssize_t		 n;
	int		 fd, code;

	world_start(h, &w);
	fd = proxy_world_dial(h, w.url_local, WAIT_MS);
	if ((code = proxy_tunnel(h, w.url_local, w.count_port, fd)) != 200)
		harness_fail(h, "tunnel: %d", code);
	buf = xcalloc(1, len);
	while (got < len && (n = write(fd, buf + got, len - got)) > 0)
		got += (size_t)n;
	free(buf);
	shutdown(fd, SHUT_WR);
	got = 0;
	while (got < sizeof ans - 1 &&
	    (n = read(fd, ans + got, sizeof ans - 1 - got)) > 0)
		got += (size_t)n;
	ans[got] = '\0';
	close(fd);
	if (strcmp(ans, "got 300000\n") != 0)
		harness_fail(h, "upstream said '%s', not 'got 300000'", ans);
	world_stop(&w);
	harness_pass(h);
}

/*
 * One command holds at most 64 connections at once, and a client that
 * never finishes its request head is let go: no command can take all of
 * the worker's descriptors.
 */
static void
test_proxy_limits(void **state)
{
	struct harness	*h = harness_fixture(state);
	struct world	 w;
	int		 fds[65], i, fd, code;
	char		 c;

	world_start(h, &w);
	for (i = 0; i < 64; i++) {
		fds[i] = proxy_world_dial(h, w.url_local, WAIT_MS);
		if ((code = proxy_tunnel(h, w.url_local, w.http_port,
		    fds[i])) != 200)
			harness_fail(h, "tunnel %d: %d", i, code);
	}
	fds[64] = proxy_world_dial(h, w.url_local, WAIT_MS);
	if ((code = proxy_tunnel(h, w.url_local, w.http_port, fds[64])) !=
	    429)
		harness_fail(h, "the 65th tunnel: %d, not 429", code);
	/* Another command is not held up by the first's. */
	fd = proxy_world_dial(h, w.url_other, WAIT_MS);
	if ((code = proxy_tunnel(h, w.url_other, w.http_port, fd)) != 403)
		harness_fail(h, "another command: %d, not 403", code);
	close(fd);
	for (i = 0; i < 65; i++)
		close(fds[i]);
	/* A head that never comes: closed by the proxy (in 10 s). */
	fd = proxy_world_dial(h, w.url_local, WAIT_MS);
	if (write(fd, "CONNECT", 7) != 7 || read(fd, &c, 1) != 0)
		harness_fail(h, "an idle client was not let go");
	close(fd);
	world_stop(&w);
	harness_pass(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_proxy_granted,
		    harness_setup, harness_teardown),
		cmocka_unit_test_setup_teardown(test_proxy_refused,
		    harness_setup, harness_teardown),
		cmocka_unit_test_setup_teardown(test_proxy_limits,
		    harness_setup, harness_teardown),
		cmocka_unit_test_setup_teardown(test_proxy_half_close,
		    harness_setup, harness_teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	return (cmocka_run_group_tests(tests, NULL, NULL));
}
