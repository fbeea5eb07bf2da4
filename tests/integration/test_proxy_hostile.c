/*
 * The egress proxy (worker/proxy.c) against a hostile client, byte by
 * byte: requests that try to reach another host than the granted one
 * (userinfo, fragments, percent-encoding, IPv6 forms of loopback, a
 * Host header of another site, smuggled or pipelined second requests),
 * heads a lenient server would read another way (NUL, bare CR or LF,
 * folded lines, bad versions), a client that takes every connection or
 * every descriptor, a name that leads to the host's own address, and a
 * credential after its revocation. A child runs the proxy and the test
 * hosts: 127.0.0.1 (granted as "localhost", told it may be private),
 * 127.0.0.2 (never granted: a response from it is a hole) and, in a
 * network namespace of the test's own, 1.2.3.4 on its loopback. Nothing
 * here talks to anything outside 127.0.0.0/8 or that namespace.
 */

#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
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
#include <event2/keyvalq_struct.h>

#include "logs/xmalloc.h"
#include "queue/item.h"
#include "tests/integration/harness.h"
#include "tests/integration/proxy_world.h"
#include "worker/proxy.h"

#define WAIT_MS		20000
#define PUBLIC_ADDR	"1.2.3.4"	/* on the namespace's loopback */

enum world_mode {
	WORLD_PLAIN = 0,
	WORLD_FEW_FDS,		/* a soft descriptor limit of 256 */
	WORLD_NETNS,		/* its own namespace, PUBLIC_ADDR local */
};

struct world {
	pid_t	 pid;
	int	 port1, port2, port3;	/* 127.0.0.1, .2, PUBLIC_ADDR */
	char	*url_local;	/* granted "localhost" */
	char	*url_other;	/* granted "example.invalid" */
	char	*url_pub;	/* granted PUBLIC_ADDR */
};

static struct proxy	*world_proxy;

static void
echo_cb(struct evhttp_request *req, void *arg)
{
	struct evbuffer	*b = evbuffer_new();
	const char	*host;

	host = evhttp_find_header(evhttp_request_get_input_headers(req),
	    "Host");
	evbuffer_add_printf(b, "%s uri=%s host=%s\n", (const char *)arg,
	    evhttp_request_get_uri(req), host != NULL ? host : "-");
	evhttp_send_reply(req, 200, "OK", b);
	evbuffer_free(b);
}

static void
revoke_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	proxy_revoke(world_proxy, "item-local");
}

/* An HTTP server at addr answering with who; its port, or 0. */
static int
world_http(struct event_base *base, const char *addr, const char *who)
{
	struct evhttp			*http = evhttp_new(base);
	struct evhttp_bound_socket	*bs;
	struct sockaddr_in		 sin;
	socklen_t			 len = sizeof sin;

	evhttp_set_gencb(http, echo_cb, (void *)who);
	bs = evhttp_bind_socket_with_handle(http, addr, 0);
	if (bs == NULL || getsockname(evhttp_bound_socket_get_fd(bs),
	    (struct sockaddr *)&sin, &len) == -1)
		return (0);
	return (ntohs(sin.sin_port));
}

/* A namespace of our own, its loopback up with PUBLIC_ADDR on it. */
static int
world_netns(void)
{
	struct ifreq		 ifr;
	struct sockaddr_in	*sin = (struct sockaddr_in *)&ifr.ifr_addr;
	int			 fd, rc = -1;

	if (unshare(CLONE_NEWNET) == -1 ||
	    (fd = socket(AF_INET, SOCK_DGRAM, 0)) == -1)
		return (-1);
	memset(&ifr, 0, sizeof ifr);
	strcpy(ifr.ifr_name, "lo");
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) == 0) {
		ifr.ifr_flags |= IFF_UP|IFF_RUNNING;
		if (ioctl(fd, SIOCSIFFLAGS, &ifr) == 0) {
			memset(&ifr, 0, sizeof ifr);
			strcpy(ifr.ifr_name, "lo:1");
			sin->sin_family = AF_INET;
			inet_pton(AF_INET, PUBLIC_ADDR, &sin->sin_addr);
			rc = ioctl(fd, SIOCSIFADDR, &ifr);
		}
	}
	close(fd);
	return (rc);
}

/* The child: the proxy and the test hosts, until SIGTERM. */
static void __attribute__((noreturn))
world_child(int fd, void *arg)
{
	enum world_mode		 mode = *(const enum world_mode *)arg;
	struct event_base	*base;
	struct event		*revoke;
	struct rlimit		 rl;
	FILE			*f;
	char			*u[PROXY_WORLD_NURLS];
	int			 p1, p2, p3 = 0;

	/* Only what this child opens counts against its limit. */
	if (dup2(fd, 3) == -1 || close_range(4, ~0U, 0) == -1)
		_exit(6);
	f = fdopen(3, "w");
	if (mode == WORLD_NETNS && world_netns() == -1)
		_exit(4);
	if (mode == WORLD_FEW_FDS && getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = 256;
		if (setrlimit(RLIMIT_NOFILE, &rl) == -1)
			_exit(5);
	}
	base = event_base_new();
	p1 = world_http(base, "127.0.0.1", "hello");
	p2 = world_http(base, "127.0.0.2", "SECOND");
	if (mode == WORLD_NETNS)
		p3 = world_http(base, PUBLIC_ADDR, "HOST-ITSELF");
	if (p1 == 0 || p2 == 0 || (mode == WORLD_NETNS && p3 == 0))
		_exit(2);
	world_proxy = proxy_world_proxy(base, NULL, "item-pub", PUBLIC_ADDR,
	    u);
	fprintf(f, "%d %d %d\n%s\n%s\n%s\n", p1, p2, p3,
	    u[PROXY_WORLD_LOCAL], u[PROXY_WORLD_OTHER], u[PROXY_WORLD_THIRD]);
	fclose(f);
	revoke = evsignal_new(base, SIGUSR1, revoke_cb, NULL);
	event_add(revoke, NULL);
	proxy_world_run(base);
	proxy_free(world_proxy);
	_exit(0);
}

static void
world_start(struct harness *h, struct world *w, enum world_mode mode)
{
	FILE	*f;
	char	*line;

	memset(w, 0, sizeof *w);
	w->pid = proxy_world_fork(h, world_child, &mode, &f);
	if ((line = proxy_world_line(f)) == NULL ||
	    sscanf(line, "%d %d %d", &w->port1, &w->port2, &w->port3) != 3)
		harness_fail(h, "the proxy child said nothing");
	free(line);
	w->url_local = proxy_world_line(f);
	w->url_other = proxy_world_line(f);
	w->url_pub = proxy_world_line(f);
	fclose(f);
	if (w->url_pub == NULL)
		harness_fail(h, "the proxy child did not start its proxy");
}

static void
world_stop(struct world *w)
{
	proxy_world_stop(w->pid);
	free(w->url_local);
	free(w->url_other);
	free(w->url_pub);
}

/* "Proxy-Authorization: Basic ...\r\n" for url's credential. */
static char *
auth_line(const char *url)
{
	char	*b64 = proxy_world_cred(url), *line;

	xasprintf(&line, "Proxy-Authorization: Basic %s\r\n", b64);
	free(b64);
	return (line);
}

/*
 * tmpl with {A} the credential line of url, {P} {Q} {R} the ports of
 * the three hosts, {0} a NUL; its length in *len.
 */
static char *
subst(const struct world *w, const char *url, const char *tmpl,
    size_t *len)
{
	struct evbuffer	*b = evbuffer_new();
	char		*a = auth_line(url), *out;
	const char	*s;

	for (s = tmpl; *s != '\0'; s++) {
		if (strncmp(s, "{A}", 3) == 0)
			evbuffer_add(b, a, strlen(a));
		else if (strncmp(s, "{P}", 3) == 0)
			evbuffer_add_printf(b, "%d", w->port1);
		else if (strncmp(s, "{Q}", 3) == 0)
			evbuffer_add_printf(b, "%d", w->port2);
		else if (strncmp(s, "{R}", 3) == 0)
			evbuffer_add_printf(b, "%d", w->port3);
		else if (strncmp(s, "{0}", 3) == 0)
			evbuffer_add(b, "", 1);
		else {
			evbuffer_add(b, s, 1);
			continue;
		}
		s += 2;
	}
	*len = evbuffer_get_length(b);
	out = xmalloc(*len + 1);
	evbuffer_remove(b, out, *len);
	out[*len] = '\0';
	evbuffer_free(b);
	free(a);
	return (out);
}

/* Writes req (chunk bytes at a time; 0: at once); all read till EOF. */
static char *
exchange(struct harness *h, const char *url, const char *req, size_t len,
    size_t chunk)
{
	char	 buf[65536];
	size_t	 off, n, got = 0;
	ssize_t	 r;
	int	 fd = proxy_world_dial(h, url, WAIT_MS);

	for (off = 0; off < len; off += n) {
		n = chunk == 0 || len - off < chunk ? len - off : chunk;
		if (write(fd, req + off, n) != (ssize_t)n)
			harness_fail(h, "write: %s", strerror(errno));
	}
	while (got < sizeof buf - 1 &&
	    (r = read(fd, buf + got, sizeof buf - 1 - got)) > 0)
		got += (size_t)r;
	close(fd);
	buf[got] = '\0';
	return (xstrdup(buf));
}

static int
status_of(const char *resp)
{
	return (strncmp(resp, "HTTP/1.1 ", 9) == 0 ? atoi(resp + 9) : -1);
}

struct hcase {
	const char	*req;
	int		 status;	/* 0: any; -1: a refusal */
	const char	*want;		/* in the answer, or NULL */
};

/* Runs each case with url's credential: never the second host. */
static void
run_cases(struct harness *h, const struct world *w, const char *url,
    const struct hcase *c, size_t n)
{
	size_t		 i, len, wlen;
	char		*req, *resp, *want;
	unsigned	 failed = 0;

	for (i = 0; i < n; i++) {
		req = subst(w, url, c[i].req, &len);
		resp = exchange(h, url, req, len, 0);
		want = c[i].want != NULL ? subst(w, url, c[i].want, &wlen) :
		    NULL;
		if ((c[i].status > 0 && status_of(resp) != c[i].status) ||
		    (c[i].status == -1 && status_of(resp) < 400) ||
		    strstr(resp, "SECOND") != NULL ||
		    strstr(resp, "HOST-ITSELF") != NULL ||
		    (c[i].status != 200 && c[i].status != 0 &&
		    strstr(resp, "hello") != NULL) ||
		    (want != NULL && strstr(resp, want) == NULL)) {
			fprintf(stderr, "case %zu (%s): wanted %d %s, got: %s\n",
			    i, c[i].req, c[i].status, want != NULL ? want : "",
			    resp);
			failed++;
		}
		free(want);
		free(req);
		free(resp);
	}
	if (failed > 0)
		harness_fail(h, "%u of %zu cases failed", failed, n);
}

/* Only ever the granted host, named one way; anything odd is a 400. */
static void
test_proxy_hostile_requests(void **state)
{
	static const struct hcase cases[] = {
		/* Another host in the authority. */
		{ "GET http://localhost@127.0.0.2:{Q}/ HTTP/1.1\r\n{A}\r\n",
		    400, NULL },
		{ "GET http://localhost:{P}@127.0.0.2:{Q}/ HTTP/1.1\r\n{A}"
		    "\r\n", 400, NULL },
		{ "GET http://127.0.0.2:{Q}#@localhost:{P}/ HTTP/1.1\r\n{A}"
		    "\r\n", 400, NULL },
		{ "GET http://127.0.0.2:{Q}\\@localhost:{P}/ HTTP/1.1\r\n{A}"
		    "\r\n", 400, NULL },
		{ "GET http://%6cocalhost:{P}/ HTTP/1.1\r\n{A}\r\n", 400,
		    NULL },
		{ "GET http://[::1]:{P}/ HTTP/1.1\r\n{A}\r\n", 403, NULL },
		{ "GET http://[::ffff:127.0.0.1]:{P}/ HTTP/1.1\r\n{A}\r\n",
		    403, NULL },
		{ "GET http://127.0.0.2:{Q}/ HTTP/1.1\r\n{A}\r\n", 403, NULL },
		{ "GET http://2130706434:{Q}/ HTTP/1.1\r\n{A}\r\n", 400, NULL },
		/* Not its name as private_hosts says it: refused. */
		{ "GET http://localhost.:{P}/ HTTP/1.1\r\n{A}\r\n", -1, NULL },
		{ "GET HTTP://LOCALHOST:{P}/up HTTP/1.1\r\n{A}\r\n", 200,
		    "hello uri=/up host=LOCALHOST:{P}" },
		/* CONNECT's authority. */
		{ "CONNECT localhost:0 HTTP/1.1\r\n{A}\r\n", 400, NULL },
		{ "CONNECT localhost:65536 HTTP/1.1\r\n{A}\r\n", 400, NULL },
		{ "CONNECT localhost:{P}abc HTTP/1.1\r\n{A}\r\n", 400, NULL },
		{ "CONNECT localhost:-{P} HTTP/1.1\r\n{A}\r\n", 400, NULL },
		{ "CONNECT localhost HTTP/1.1\r\n{A}\r\n", 400, NULL },
		{ "CONNECT localhost:{P}@127.0.0.2:{Q} HTTP/1.1\r\n{A}\r\n",
		    400, NULL },
		{ "CONNECT [::1]:{P} HTTP/1.1\r\n{A}\r\n", 403, NULL },
		{ "CONNECT 127.0.0.2:{Q} HTTP/1.1\r\n{A}\r\n", 403, NULL },
		{ "connect localhost:{P} HTTP/1.1\r\n{A}\r\n", 400, NULL },
		/* Versions. */
		{ "GET http://localhost:{P}/ HTTP/2.0\r\n{A}\r\n", 400, NULL },
		{ "GET http://localhost:{P}/ HTTP/1.1x\r\n{A}\r\n", 400, NULL },
		{ "GET http://localhost:{P}/ HTTP/1.1 x\r\n{A}\r\n", 400,
		    NULL },
		/* Heads a lenient server would read another way. */
		{ "GET http://localhost:{P}/ HTTP/1.1{0}\r\n{A}\r\n", 400,
		    NULL },
		{ "GET http://localhost:{P}/ HTTP/1.1\r\n{A}X-A: b{0}c\r\n"
		    "\r\n", 400, NULL },
		{ "GET http://localhost:{P}/a\nHost:127.0.0.2 HTTP/1.1\r\n"
		    "{A}\r\n", 400, NULL },
		{ "GET http://localhost:{P}/ HTTP/1.1\r\n{A}X-A: b\rHost: "
		    "127.0.0.2\r\n\r\n", 400, NULL },
		{ "GET http://localhost:{P}/ HTTP/1.1\r\n{A}X-A: b\r\n "
		    "127.0.0.2\r\n\r\n", 400, NULL },
		{ "GET http://localhost:{P}/ HTTP/1.1\r\n{A}Host : 127.0.0.2"
		    "\r\n\r\n", 400, NULL },
		/* Host is the URL's, whatever the client says. */
		{ "GET http://localhost:{P}/h HTTP/1.1\r\nHost: 127.0.0.2:{Q}"
		    "\r\n{A}\r\n", 200, "hello uri=/h host=localhost:{P}\n" },
		{ "GET http://localhost:{P}/h2 HTTP/1.1\r\nHost: localhost:{P}"
		    "\r\nHost: 127.0.0.2:{Q}\r\n{A}\r\n", 200,
		    "hello uri=/h2 host=localhost:{P}\n" },
		/* A second request on the same connection: the same host. */
		{ "GET http://localhost:{P}/s HTTP/1.1\r\n{A}Content-Length: 0"
		    "\r\n\r\nGET http://127.0.0.2:{Q}/ HTTP/1.1\r\nHost: "
		    "127.0.0.2:{Q}\r\n\r\n", 200, "hello uri=/s" },
		{ "POST http://localhost:{P}/t HTTP/1.1\r\n{A}"
		    "Transfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n"
		    "0\r\n\r\nGET http://127.0.0.2:{Q}/ HTTP/1.1\r\nHost: "
		    "127.0.0.2:{Q}\r\n\r\n", 0, NULL },
		{ "CONNECT localhost:{P} HTTP/1.1\r\n{A}\r\nGET "
		    "http://127.0.0.2:{Q}/c HTTP/1.1\r\nHost: 127.0.0.2:{Q}\r\n"
		    "Connection: close\r\n\r\n", 200, "hello uri=" },
	};
	struct harness	*h = harness_fixture(state);
	struct world	 w;
	char		*req, *resp, *a, big[17000];
	size_t		 len;

	world_start(h, &w, WORLD_PLAIN);
	run_cases(h, &w, w.url_local, cases, sizeof cases / sizeof *cases);
	/* The first credential speaks: another's grant does not add. */
	a = auth_line(w.url_other);
	resp = auth_line(w.url_local);
	xasprintf(&req, "GET http://localhost:%d/ HTTP/1.1\r\n%s%s\r\n",
	    w.port1, a, resp);
	free(a);
	free(resp);
	resp = exchange(h, w.url_local, req, strlen(req), 0);
	if (status_of(resp) != 403)
		harness_fail(h, "two credentials: %s", resp);
	free(req);
	free(resp);
	/* A head in many small writes is one head. */
	req = subst(&w, w.url_local, "GET http://localhost:{P}/split "
	    "HTTP/1.1\r\n{A}\r\n", &len);
	resp = exchange(h, w.url_local, req, len, 1);
	if (status_of(resp) != 200 || strstr(resp, "uri=/split") == NULL)
		harness_fail(h, "split head: %s", resp);
	free(req);
	free(resp);
	/* A head too large. */
	memset(big, 'a', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	a = subst(&w, w.url_local, "{A}", &len);
	xasprintf(&req, "GET http://localhost:%d/ HTTP/1.1\r\n%sX-Big: %s"
	    "\r\n\r\n", w.port1, a, big);
	free(a);
	resp = exchange(h, w.url_local, req, strlen(req), 0);
	if (status_of(resp) != 431)
		harness_fail(h, "big head: %.200s", resp);
	free(req);
	free(resp);
	world_stop(&w);
	harness_pass(h);
}

/* A CONNECT on fd with url's credential; the status, or -1. */
static int
tunnel(struct harness *h, const struct world *w, const char *url, int fd,
    const char *host, int port)
{
	char	 buf[512], *a = auth_line(url), *req;
	size_t	 got = 0;
	ssize_t	 n;

	(void)w;
	xasprintf(&req, "CONNECT %s:%d HTTP/1.1\r\n%s\r\n", host, port, a);
	free(a);
	if (write(fd, req, strlen(req)) != (ssize_t)strlen(req))
		harness_fail(h, "write: %s", strerror(errno));
	free(req);
	buf[0] = '\0';
	while (got < sizeof buf - 1 && strstr(buf, "\r\n\r\n") == NULL &&
	    (n = read(fd, buf + got, sizeof buf - 1 - got)) > 0) {
		got += (size_t)n;
		buf[got] = '\0';
	}
	return (status_of(buf));
}

/*
 * Connections that never say who they are cannot take every slot: the
 * oldest of them makes room for a new one.
 */
static void
test_proxy_hostile_slots(void **state)
{
	struct harness	*h = harness_fixture(state);
	struct world	 w;
	int		 idle[1024], fd, i, code;

	world_start(h, &w, WORLD_PLAIN);
	for (i = 0; i < 1024; i++)
		idle[i] = proxy_world_dial(h, w.url_local, WAIT_MS);
	fd = proxy_world_dial(h, w.url_local, WAIT_MS);
	if ((code = tunnel(h, &w, w.url_local, fd, "localhost", w.port1)) !=
	    200)
		harness_fail(h, "after 1024 idle connections: %d", code);
	close(fd);
	for (i = 0; i < 1024; i++)
		close(idle[i]);
	world_stop(&w);
	harness_pass(h);
}

/*
 * A worker whose soft descriptor limit is low: one command's 64 tunnels
 * and 150 idle connections do not run it out of descriptors.
 */
static void
test_proxy_hostile_fds(void **state)
{
	struct harness	*h = harness_fixture(state);
	struct world	 w;
	int		 fds[214], fd, i, code;

	world_start(h, &w, WORLD_FEW_FDS);
	for (i = 0; i < 64; i++) {
		fds[i] = proxy_world_dial(h, w.url_local, WAIT_MS);
		if ((code = tunnel(h, &w, w.url_local, fds[i], "localhost",
		    w.port1)) != 200)
			harness_fail(h, "tunnel %d: %d", i, code);
	}
	for (; i < 214; i++)
		fds[i] = proxy_world_dial(h, w.url_local, WAIT_MS);
	fd = proxy_world_dial(h, w.url_other, WAIT_MS);
	if ((code = tunnel(h, &w, w.url_other, fd, "localhost", w.port1)) !=
	    403)
		harness_fail(h, "another command: %d, not 403", code);
	close(fd);
	for (i = 0; i < 214; i++)
		close(fds[i]);
	world_stop(&w);
	harness_pass(h);
}

/* A public name that leads to the worker's host itself is refused. */
static void
test_proxy_hostile_host_itself(void **state)
{
	struct harness	*h = harness_fixture(state);
	struct world	 w;
	char		 path[64];
	int		 mine, theirs, fd, code;

	if ((mine = open("/proc/self/ns/net", O_RDONLY|O_CLOEXEC)) == -1)
		harness_fail(h, "our namespace: %s", strerror(errno));
	world_start(h, &w, WORLD_NETNS);
	snprintf(path, sizeof path, "/proc/%d/ns/net", (int)w.pid);
	if ((theirs = open(path, O_RDONLY|O_CLOEXEC)) == -1 ||
	    setns(theirs, CLONE_NEWNET) == -1)
		harness_fail(h, "the test's namespace: %s", strerror(errno));
	close(theirs);
	fd = proxy_world_dial(h, w.url_pub, WAIT_MS);
	code = tunnel(h, &w, w.url_pub, fd, PUBLIC_ADDR, w.port3);
	close(fd);
	if (setns(mine, CLONE_NEWNET) == -1)
		harness_fail(h, "back home: %s", strerror(errno));
	close(mine);
	if (code != 403)
		harness_fail(h, "the host's own address: %d, not 403", code);
	world_stop(&w);
	harness_pass(h);
}

/* A revoked credential: its tunnels closed, the next request a 407. */
static void
test_proxy_hostile_revoked(void **state)
{
	struct harness	*h = harness_fixture(state);
	struct world	 w;
	char		 c;
	int		 fd, code;

	world_start(h, &w, WORLD_PLAIN);
	fd = proxy_world_dial(h, w.url_local, WAIT_MS);
	if ((code = tunnel(h, &w, w.url_local, fd, "localhost", w.port1)) !=
	    200)
		harness_fail(h, "tunnel: %d", code);
	kill(w.pid, SIGUSR1);
	if (read(fd, &c, 1) != 0)
		harness_fail(h, "the tunnel outlived its grant");
	close(fd);
	fd = proxy_world_dial(h, w.url_local, WAIT_MS);
	if ((code = tunnel(h, &w, w.url_local, fd, "localhost", w.port1)) !=
	    407)
		harness_fail(h, "a revoked credential: %d, not 407", code);
	close(fd);
	world_stop(&w);
	harness_pass(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_proxy_hostile_requests,
		    harness_setup, harness_teardown),
		cmocka_unit_test_setup_teardown(test_proxy_hostile_slots,
		    harness_setup, harness_teardown),
		cmocka_unit_test_setup_teardown(test_proxy_hostile_fds,
		    harness_setup, harness_teardown),
		cmocka_unit_test_setup_teardown(test_proxy_hostile_host_itself,
		    harness_setup, harness_teardown),
		cmocka_unit_test_setup_teardown(test_proxy_hostile_revoked,
		    harness_setup, harness_teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	return (cmocka_run_group_tests(tests, NULL, NULL));
}
