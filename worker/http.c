/*
 * The HTTP side door. evhttp parses the requests and bounds what a
 * client may send (headers, body, idle time); this file routes the two
 * paths and renders their bodies into memory (open_memstream) before
 * anything is sent, so a slow client never holds the loop.
 */

#include <sys/queue.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "logs/log.h"
#include "logs/netutil.h"
#include "logs/xmalloc.h"
#include "worker/http.h"
#include "worker/metrics.h"

#define HTTP_MAX_HEADERS	8192	/* bytes of request headers */
#define HTTP_MAX_BODY		1024	/* GET needs none */
#define HTTP_TIMEOUT_S		10	/* idle connections are closed */

/*
 * A /metrics request waiting for the owner's read. evhttp keeps a
 * request whose client went away until it is answered (evhttp_send_*
 * then frees it), so each one here is answered once, by
 * http_metrics_wake or http_free.
 */
struct http_waiter {
	TAILQ_ENTRY(http_waiter)	 entry;
	struct evhttp_request		*req;
};
TAILQ_HEAD(http_waiters, http_waiter);

struct http {
	struct evhttp			*ev;
	struct http_waiters		 waiters;
	struct http_handlers		 h;
	struct metrics			*m;
	unsigned			 port;
};

int
http_parse_addr(const char *addr, char **host, unsigned *port, char **cause)
{
	const char	*colon, *end;
	char		*p;
	unsigned long	 v;

	if (addr[0] == '[') {
		if ((end = strchr(addr, ']')) == NULL || end[1] != ':')
			goto bad;
		*host = xstrndup(addr + 1, end - addr - 1);
		colon = end + 1;
	} else {
		if ((colon = strrchr(addr, ':')) == NULL || colon == addr ||
		    memchr(addr, ':', colon - addr) != NULL)
			goto bad;
		*host = xstrndup(addr, colon - addr);
	}
	errno = 0;
	v = strtoul(colon + 1, &p, 10);
	if (colon[1] == '\0' || *p != '\0' || errno != 0 || v > 65535 ||
	    colon[1] == '-' || colon[1] == '+') {
		free(*host);
		*host = NULL;
		goto bad;
	}
	*port = (unsigned)v;
	return (0);
bad:
	xasprintf(cause, "bad HTTP address '%s': want HOST:PORT, e.g. "
	    "127.0.0.1:9464 or [::1]:9464", addr);
	return (-1);
}

/* Sends the body rendered in buf with this status. */
static void
http_send(struct http *hs, struct evhttp_request *req, const char *path,
    int code, const char *reason, const char *type, const char *buf,
    size_t len)
{
	struct evkeyvalq	*out = evhttp_request_get_output_headers(req);
	struct evbuffer		*body;
	char			 status[8];

	evhttp_add_header(out, "Content-Type", type);
	evhttp_add_header(out, "Cache-Control", "no-store");
	if (code == HTTP_BADMETHOD)
		evhttp_add_header(out, "Allow", "GET, HEAD");
	if ((body = evbuffer_new()) == NULL) {
		evhttp_send_error(req, HTTP_INTERNAL, NULL);
		return;
	}
	evbuffer_add(body, buf, len);
	evhttp_send_reply(req, code, reason, body);
	evbuffer_free(body);
	if (hs->m != NULL) {
		snprintf(status, sizeof status, "%d", code);
		metrics_add(hs->m, METRICS_HTTP, 1, path, status);
	}
}

/* A short text answer: errors and the index. */
static void
http_text(struct http *hs, struct evhttp_request *req, const char *path,
    int code, const char *reason, const char *text)
{
	http_send(hs, req, path, code, reason, "text/plain; charset=utf-8",
	    text, strlen(text));
}

/* Renders and sends /metrics or /healthz (route). */
static void
http_render(struct http *hs, struct evhttp_request *req, const char *route)
{
	char	*buf = NULL;
	size_t	 len = 0;
	FILE	*f;
	int	 ok = 1;

	if ((f = open_memstream(&buf, &len)) == NULL) {
		evhttp_send_error(req, HTTP_INTERNAL, NULL);
		return;
	}
	if (strcmp(route, "/metrics") == 0)
		hs->h.metrics(f, hs->h.arg);
	else
		ok = hs->h.health(f, hs->h.arg);
	if (fclose(f) != 0) {
		free(buf);
		evhttp_send_error(req, HTTP_INTERNAL, NULL);
		return;
	}
	if (strcmp(route, "/metrics") == 0)
		http_send(hs, req, route, HTTP_OK, "OK",
		    "text/plain; version=0.0.4; charset=utf-8", buf, len);
	else
		http_send(hs, req, route, ok ? HTTP_OK : 503, ok ? "OK" :
		    "Service Unavailable", "application/json", buf, len);
	free(buf);
}

void
http_metrics_wake(struct http *hs)
{
	struct http_waiter	*wt;

	if (hs == NULL)
		return;
	while ((wt = TAILQ_FIRST(&hs->waiters)) != NULL) {
		TAILQ_REMOVE(&hs->waiters, wt, entry);
		http_render(hs, wt->req, "/metrics");
		free(wt);
	}
}

/* Every request: route by path, GET and HEAD only. */
static void
http_request_cb(struct evhttp_request *req, void *arg)
{
	struct http		*hs = arg;
	const struct evhttp_uri	*uri = evhttp_request_get_evhttp_uri(req);
	enum evhttp_cmd_type	 cmd = evhttp_request_get_command(req);
	const char		*path, *route;
	struct http_waiter	*wt;

	path = uri != NULL ? evhttp_uri_get_path(uri) : NULL;
	if (path == NULL || path[0] != '/') {
		http_text(hs, req, "other", HTTP_BADREQUEST, "Bad Request",
		    "bad request\n");
		return;
	}
	if (strcmp(path, "/metrics") == 0 || strcmp(path, "/healthz") == 0)
		route = path;
	else if (strcmp(path, "/") == 0)
		route = "/";
	else
		route = "other";
	if (cmd != EVHTTP_REQ_GET && cmd != EVHTTP_REQ_HEAD) {
		http_text(hs, req, route, HTTP_BADMETHOD, "Method Not Allowed",
		    "only GET and HEAD\n");
		return;
	}
	if (strcmp(route, "/") == 0) {
		http_text(hs, req, route, HTTP_OK, "OK", "execq-worker: "
		    "/metrics (Prometheus), /healthz\n");
		return;
	}
	if (strcmp(route, "other") == 0) {
		http_text(hs, req, route, HTTP_NOTFOUND, "Not Found",
		    "not found: try /metrics or /healthz\n");
		return;
	}
	if (strcmp(route, "/metrics") == 0 && hs->h.metrics_ready != NULL &&
	    hs->h.metrics_ready(hs->h.arg) == 0) {
		wt = xcalloc(1, sizeof *wt);
		wt->req = req;
		TAILQ_INSERT_TAIL(&hs->waiters, wt, entry);
		return;
	}
	http_render(hs, req, route);
}

struct http *
http_create(struct event_base *base, const char *addr,
    const struct http_handlers *h, struct metrics *m, char **cause)
{
	struct http			*hs;
	struct evhttp_bound_socket	*bs;
	char				*host;
	unsigned			 port;

	if (http_parse_addr(addr, &host, &port, cause) != 0)
		return (NULL);
	hs = xcalloc(1, sizeof *hs);
	hs->h = *h;
	hs->m = m;
	TAILQ_INIT(&hs->waiters);
	if ((hs->ev = evhttp_new(base)) == NULL)
		fatal("out of memory (evhttp)");
	evhttp_set_max_headers_size(hs->ev, HTTP_MAX_HEADERS);
	evhttp_set_max_body_size(hs->ev, HTTP_MAX_BODY);
	evhttp_set_timeout(hs->ev, HTTP_TIMEOUT_S);
	/* Every method reaches us, so the others get 405, not 501. */
	evhttp_set_allowed_methods(hs->ev, EVHTTP_REQ_GET | EVHTTP_REQ_POST |
	    EVHTTP_REQ_HEAD | EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE |
	    EVHTTP_REQ_OPTIONS | EVHTTP_REQ_TRACE | EVHTTP_REQ_CONNECT |
	    EVHTTP_REQ_PATCH);
	evhttp_set_gencb(hs->ev, http_request_cb, hs);
	if ((bs = evhttp_bind_socket_with_handle(hs->ev, host, port)) == NULL) {
		xasprintf(cause, "cannot listen for HTTP on %s: %s", addr,
		    strerror(errno != 0 ? errno : EADDRINUSE));
		free(host);
		http_free(hs);
		return (NULL);
	}
	hs->port = netutil_port(evhttp_bound_socket_get_fd(bs));
	log_info("http: serving /metrics and /healthz on %s%s%s:%u",
	    strchr(host, ':') != NULL ? "[" : "", host,
	    strchr(host, ':') != NULL ? "]" : "", hs->port);
	free(host);
	return (hs);
}

unsigned
http_port(const struct http *hs)
{
	return (hs->port);
}

void
http_free(struct http *hs)
{
	struct http_waiter	*wt;

	if (hs == NULL)
		return;
	while ((wt = TAILQ_FIRST(&hs->waiters)) != NULL) {
		TAILQ_REMOVE(&hs->waiters, wt, entry);
		evhttp_send_error(wt->req, 503, "Service Unavailable");
		free(wt);
	}
	if (hs->ev != NULL)
		evhttp_free(hs->ev);
	free(hs);
}
