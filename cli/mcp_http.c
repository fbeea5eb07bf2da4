/*
 * execq mcp --http: MCP's streamable HTTP transport on POST /mcp, one
 * JSON-RPC message a request answered as application/json, sessions by
 * Mcp-Session-Id, the Host and Origin checks against DNS rebinding and
 * the bearer token; the answers are mcp.c's, as on stdio.
 */

#include <sys/types.h>
#include <sys/random.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <jansson.h>

#include "cli/cli.h"
#include "cli/mcp.h"
#include "logs/log.h"
#include "logs/netutil.h"
#include "logs/xmalloc.h"

#define EXECQ_HTTP_PATH		"/mcp"
#define EXECQ_HTTP_BODY_MAX	(16 * 1024 * 1024)
#define EXECQ_HTTP_HEADERS_MAX	(64 * 1024)
#define EXECQ_HTTP_TIMEOUT_S	60	/* a client silent this long */
#define EXECQ_HTTP_SESSIONS_MAX	64	/* the oldest goes first */
#define EXECQ_HTTP_SID_BYTES	16
#define EXECQ_HTTP_STREAMS_MAX	16	/* GET streams open at once */
#define EXECQ_HTTP_TICK_MS	250	/* Redis looked at, while watching */
#define EXECQ_HTTP_KEEPALIVE	40	/* ticks between a stream's comment:
					   the 60 s timeout never ends it */

/* A GET /mcp stream: where notifications go. */
struct execq_mcp_stream {
	struct evhttp_request		*req;
	struct evhttp_connection	*conn;
};

/* The server: one agent (m), its listener, its sessions. */
struct execq_mcp_http {
	struct execq_mcp	*m;
	struct event_base	*base;
	struct evhttp		*ev;
	const char		*token;		/* NULL: none asked */
	json_t			*hosts;		/* Host values allowed */
	json_t			*sessions;	/* Mcp-Session-Id -> true */
	struct execq_mcp_stream	 streams[EXECQ_HTTP_STREAMS_MAX];
	unsigned		 nstreams;
	struct event		*ev_tick;
	unsigned		 ticks;
};

/* The one server of this process, for mcp.c's callback hook. */
static struct execq_mcp_http	*execq_mcp_http_self;

/*
 * addr "HOST:PORT" or "[V6]:PORT" split: *host allocated, without the
 * brackets. 0, or -1 if it is not one.
 */
static int
execq_mcp_http_addr(const char *addr, char **host, unsigned *port)
{
	const char	*colon, *h = addr;
	char		*end;
	size_t		 hlen;
	unsigned long	 p;

	if ((colon = strrchr(addr, ':')) == NULL || colon == addr)
		return (-1);
	hlen = colon - addr;
	if (*addr == '[') {
		if (hlen < 3 || addr[hlen - 1] != ']')
			return (-1);
		h = addr + 1;
		hlen -= 2;
	} else if (memchr(addr, ':', hlen) != NULL)
		return (-1);		/* a bare v6 address needs [] */
	errno = 0;
	p = strtoul(colon + 1, &end, 10);
	if (colon[1] < '0' || colon[1] > '9' || *end != '\0' || errno != 0 ||
	    p > 65535)
		return (-1);
	*host = xstrndup(h, hlen);
	*port = (unsigned)p;
	return (0);
}

/* 1 if host (no brackets) is a loopback address or localhost. */
static int
execq_mcp_http_loopback(const char *host)
{
	struct in6_addr	a6;
	struct in_addr	a4;

	if (strcasecmp(host, "localhost") == 0)
		return (1);
	if (inet_pton(AF_INET, host, &a4) == 1)
		return ((ntohl(a4.s_addr) >> 24) == 127);
	if (inet_pton(AF_INET6, host, &a6) == 1)
		return (IN6_IS_ADDR_LOOPBACK(&a6));
	return (0);
}

/*
 * 1 if origin is http(s)://localhost, 127.0.0.1 or [::1], any port or
 * none, nothing after.
 */
static int
execq_mcp_http_origin_ok(const char *origin)
{
	static const char *const hosts[] = { "localhost", "127.0.0.1",
	    "[::1]", NULL };
	const char	*p;
	size_t		 i, n;

	if (strncasecmp(origin, "http://", 7) == 0)
		p = origin + 7;
	else if (strncasecmp(origin, "https://", 8) == 0)
		p = origin + 8;
	else
		return (0);
	for (i = 0; hosts[i] != NULL; i++) {
		n = strlen(hosts[i]);
		if (strncasecmp(p, hosts[i], n) == 0)
			break;
	}
	if (hosts[i] == NULL)
		return (0);
	p += n;
	if (*p == ':') {
		if (*++p == '\0')
			return (0);
		while (*p >= '0' && *p <= '9')
			p++;
	}
	return (*p == '\0');
}

/* a and b equal, in time that depends on b's length only. */
static int
execq_mcp_http_same(const char *a, const char *b)
{
	size_t			la = strlen(a), lb = strlen(b), i;
	volatile unsigned char	diff;

	diff = la != lb;
	for (i = 0; i < lb; i++)
		diff |= (unsigned char)(i < la ? a[i] : 0) ^
		    (unsigned char)b[i];
	return (diff == 0);
}

/*
 * Sends code with body (consumed; NULL: empty) as application/json, and
 * sid as Mcp-Session-Id if set.
 */
static void
execq_mcp_http_send(struct evhttp_request *req, int code, json_t *body,
    const char *sid)
{
	struct evkeyvalq	*out = evhttp_request_get_output_headers(req);
	struct evbuffer		*buf;
	char			*s = NULL;

	if ((buf = evbuffer_new()) == NULL)
		fatal("out of memory (evbuffer)");
	if (body != NULL) {
		if ((s = json_dumps(body, JSON_COMPACT)) == NULL) {
			json_decref(body);
			body = execq_mcp_error(NULL, EXECQ_RPC_INTERNAL,
			    "an answer cannot be written as JSON");
			s = json_dumps(body, JSON_COMPACT);
		}
		json_decref(body);
		evhttp_add_header(out, "Content-Type", "application/json");
		evbuffer_add(buf, s, strlen(s));
		free(s);
	}
	evhttp_add_header(out, "Cache-Control", "no-store");
	if (sid != NULL)
		evhttp_add_header(out, "Mcp-Session-Id", sid);
	if (code == 405)
		evhttp_add_header(out, "Allow", "POST, DELETE");
	if (code == 401)
		evhttp_add_header(out, "WWW-Authenticate", "Bearer");
	evhttp_send_reply(req, code, NULL, buf);
	evbuffer_free(buf);
}

/* An HTTP error code with a JSON-RPC error (id null) saying why. */
static void
execq_mcp_http_refuse(struct evhttp_request *req, int code, int rpc,
    const char *why)
{
	execq_mcp_http_send(req, code, execq_mcp_error(NULL, rpc, why), NULL);
}

/* A new session's id: 32 hex digits, random. Allocated. */
static char *
execq_mcp_http_new_sid(struct execq_mcp_http *h)
{
	unsigned char	 rnd[EXECQ_HTTP_SID_BYTES];
	char		*sid;
	size_t		 i;
	void		*it;

	if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
		fatal("getrandom: %s", strerror(errno));
	sid = xmalloc(2 * sizeof rnd + 1);
	for (i = 0; i < sizeof rnd; i++)
		snprintf(sid + 2 * i, 3, "%02x", rnd[i]);
	if (json_object_size(h->sessions) >= EXECQ_HTTP_SESSIONS_MAX &&
	    (it = json_object_iter(h->sessions)) != NULL)
		json_object_del(h->sessions, json_object_iter_key(it));
	json_object_set_new(h->sessions, sid, json_true());
	return (sid);
}

/*
 * The request's session: 1 if known, else refused (400 without one, 404
 * for one this server does not know) and 0.
 */
static int
execq_mcp_http_session(struct execq_mcp_http *h, struct evhttp_request *req,
    const char **sid)
{
	*sid = evhttp_find_header(evhttp_request_get_input_headers(req),
	    "Mcp-Session-Id");
	if (*sid == NULL) {
		execq_mcp_http_refuse(req, 400, EXECQ_RPC_INVALID, "bad "
		    "request: no Mcp-Session-Id header (initialize first)");
		return (0);
	}
	if (json_object_get(h->sessions, *sid) == NULL) {
		execq_mcp_http_refuse(req, 404, EXECQ_RPC_INVALID, "session "
		    "not found: initialize again");
		return (0);
	}
	return (1);
}

/* POST /mcp: one message, its answer (202 if it wants none). */
static void
execq_mcp_http_post(struct execq_mcp_http *h, struct evhttp_request *req)
{
	struct evbuffer	*in = evhttp_request_get_input_buffer(req);
	json_error_t	 jerr;
	json_t		*msg, *reply;
	const char	*sid = NULL, *method;
	char		*new_sid = NULL;
	size_t		 len = evbuffer_get_length(in);
	int		 init;

	msg = json_loadb((const char *)evbuffer_pullup(in, -1), len, 0, &jerr);
	if (msg == NULL) {
		execq_mcp_http_refuse(req, 400, EXECQ_RPC_PARSE,
		    EXECQ_MCP_PARSE_MSG);
		return;
	}
	method = json_string_value(json_object_get(msg, "method"));
	init = method != NULL && strcmp(method, "initialize") == 0 &&
	    json_object_get(msg, "id") != NULL;
	if (!init && !execq_mcp_http_session(h, req, &sid)) {
		json_decref(msg);
		return;
	}
	if (execq_mcp_watching(h->m))
		(void)execq_mcp_poll(h->m);
	reply = execq_mcp_handle(h->m, msg);
	json_decref(msg);
	if (reply == NULL) {
		execq_mcp_http_send(req, 202, NULL, NULL);
		return;
	}
	if (init && json_object_get(reply, "result") != NULL)
		new_sid = execq_mcp_http_new_sid(h);
	execq_mcp_http_send(req, 200, reply, new_sid);
	free(new_sid);
}

/* Sends text to every open stream. */
static void
execq_mcp_http_stream_all(struct execq_mcp_http *h, const char *text)
{
	struct evbuffer	*b;
	unsigned	 i;

	for (i = 0; i < h->nstreams; i++) {
		if ((b = evbuffer_new()) == NULL)
			fatal("out of memory (libevent)");
		evbuffer_add(b, text, strlen(text));
		evhttp_send_reply_chunk(h->streams[i].req, b);
		evbuffer_free(b);
	}
}

/*
 * A stream's connection is going. When its client went, libevent has
 * already taken the unfinished request off the connection and leaves it
 * to us: ending the reply of a request with no connection frees it. When
 * the connection goes with the request still on it (the server's own
 * end), libevent frees it with the connection.
 */
static void
execq_mcp_http_stream_gone(struct evhttp_connection *conn, void *arg)
{
	struct execq_mcp_http	*h = arg;
	struct evhttp_request	*req;
	unsigned		 i;

	for (i = 0; i < h->nstreams; i++) {
		if (h->streams[i].conn != conn)
			continue;
		req = h->streams[i].req;
		h->streams[i] = h->streams[--h->nstreams];
		if (evhttp_request_get_connection(req) == NULL)
			evhttp_send_reply_end(req);
		return;
	}
}

/* An ended session's callback: notifications/message on every stream. */
static void
execq_mcp_http_notify_cb(struct execq_mcp *m, json_t *callback)
{
	struct execq_mcp_http	*h = execq_mcp_http_self;
	json_t			*n;
	char			*text, *event;

	if (h == NULL || m->level > EXECQ_MCP_LEVEL_INFO || h->nstreams == 0)
		return;
	n = execq_mcp_notification(callback);
	text = json_dumps(n, JSON_COMPACT);
	json_decref(n);
	xasprintf(&event, "event: message\ndata: %s\n\n", text);
	execq_mcp_http_stream_all(h, event);
	free(event);
	free(text);
}

/*
 * GET /mcp: a stream of the server's own (text/event-stream), on which
 * ended sessions' callbacks come as notifications/message. The oldest
 * stream goes when there are too many.
 */
static void
execq_mcp_http_get(struct execq_mcp_http *h, struct evhttp_request *req)
{
	struct evkeyvalq	*out = evhttp_request_get_output_headers(req);
	const char		*sid, *accept;

	if (!execq_mcp_http_session(h, req, &sid))
		return;
	accept = evhttp_find_header(evhttp_request_get_input_headers(req),
	    "Accept");
	if (accept == NULL || strstr(accept, "text/event-stream") == NULL) {
		execq_mcp_http_refuse(req, 406, EXECQ_RPC_INVALID, "not "
		    "acceptable: GET opens a text/event-stream");
		return;
	}
	if (h->nstreams == EXECQ_HTTP_STREAMS_MAX) {
		evhttp_send_reply_end(h->streams[0].req);
		h->streams[0] = h->streams[--h->nstreams];
	}
	evhttp_add_header(out, "Content-Type", "text/event-stream");
	evhttp_add_header(out, "Cache-Control", "no-cache");
	evhttp_send_reply_start(req, 200, "OK");
	h->streams[h->nstreams].req = req;
	h->streams[h->nstreams].conn = evhttp_request_get_connection(req);
	evhttp_connection_set_closecb(h->streams[h->nstreams].conn,
	    execq_mcp_http_stream_gone, h);
	h->nstreams++;
}

/* The tick: Redis looked at while something is watched; streams kept. */
static void
execq_mcp_http_tick(evutil_socket_t fd, short what, void *arg)
{
	struct execq_mcp_http	*h = arg;

	(void)fd;
	(void)what;
	if (execq_mcp_watching(h->m))
		(void)execq_mcp_poll(h->m);
	if (++h->ticks % EXECQ_HTTP_KEEPALIVE == 0)
		execq_mcp_http_stream_all(h, ": keep-alive\n\n");
}

/*
 * Every request: Host and Origin (403), the token (401), the path (404),
 * the protocol version (400), then by method.
 */
static void
execq_mcp_http_request(struct evhttp_request *req, void *arg)
{
	struct execq_mcp_http	*h = arg;
	struct evkeyvalq	*hdr = evhttp_request_get_input_headers(req);
	const struct evhttp_uri	*uri = evhttp_request_get_evhttp_uri(req);
	const char		*host, *origin, *auth, *path, *v, *sid;
	json_t			*ok;
	size_t			 i;
	int			 found = 0;

	host = evhttp_find_header(hdr, "Host");
	json_array_foreach(h->hosts, i, ok) {
		if (host != NULL && strcasecmp(host, json_string_value(ok)) ==
		    0)
			found = 1;
	}
	origin = evhttp_find_header(hdr, "Origin");
	if (!found || (origin != NULL && !execq_mcp_http_origin_ok(origin))) {
		execq_mcp_http_refuse(req, 403, EXECQ_RPC_INVALID, "forbidden: "
		    "the Host or Origin header is not this server's");
		return;
	}
	auth = evhttp_find_header(hdr, "Authorization");
	if (h->token != NULL && (auth == NULL ||
	    strncasecmp(auth, "Bearer ", 7) != 0 ||
	    !execq_mcp_http_same(auth + 7, h->token))) {
		execq_mcp_http_refuse(req, 401, EXECQ_RPC_INVALID,
		    "unauthorized: a bearer token is required");
		return;
	}
	path = uri != NULL ? evhttp_uri_get_path(uri) : NULL;
	if (path == NULL || strcmp(path, EXECQ_HTTP_PATH) != 0) {
		execq_mcp_http_refuse(req, 404, EXECQ_RPC_INVALID, "not "
		    "found: the MCP endpoint is " EXECQ_HTTP_PATH);
		return;
	}
	v = evhttp_find_header(hdr, "MCP-Protocol-Version");
	if (v != NULL && !execq_mcp_version_known(v)) {
		execq_mcp_http_refuse(req, 400, EXECQ_RPC_INVALID, "bad "
		    "request: unsupported MCP-Protocol-Version");
		return;
	}
	switch (evhttp_request_get_command(req)) {
	case EVHTTP_REQ_POST:
		execq_mcp_http_post(h, req);
		break;
	case EVHTTP_REQ_DELETE:
		if (execq_mcp_http_session(h, req, &sid)) {
			json_object_del(h->sessions, sid);
			execq_mcp_http_send(req, 200, NULL, NULL);
		}
		break;
	case EVHTTP_REQ_GET:
		execq_mcp_http_get(h, req);
		break;
	default:
		execq_mcp_http_refuse(req, 405, EXECQ_RPC_INVALID, "method "
		    "not allowed: POST a message, GET a stream, DELETE a "
		    "session");
	}
}

/* SIGINT, SIGTERM: the loop ends, the server cleans up. */
static void
execq_mcp_http_signal(evutil_socket_t sig, short what, void *arg)
{
	struct execq_mcp_http	*h = arg;

	(void)what;
	execq_error("mcp: signal %d: stopping", (int)sig);
	event_base_loopbreak(h->base);
}

/* The Host values allowed: loopback names, and addr's host, on port. */
static json_t *
execq_mcp_http_hosts(const char *host, unsigned port)
{
	json_t	*all;
	char	*s;

	all = json_array();
	xasprintf(&s, "127.0.0.1:%u", port);
	json_array_append_new(all, json_string(s));
	free(s);
	xasprintf(&s, "localhost:%u", port);
	json_array_append_new(all, json_string(s));
	free(s);
	xasprintf(&s, "[::1]:%u", port);
	json_array_append_new(all, json_string(s));
	free(s);
	xasprintf(&s, strchr(host, ':') != NULL ? "[%s]:%u" : "%s:%u", host,
	    port);
	json_array_append_new(all, json_string(s));
	free(s);
	return (all);
}

int
execq_mcp_http(struct execq_mcp *m, const char *addr, const char *token)
{
	struct execq_mcp_http		 h;
	struct evhttp_bound_socket	*bs;
	struct event			*sigint, *sigterm;
	struct timeval			 tv;
	char				*host;
	unsigned			 port;

	memset(&h, 0, sizeof h);
	if (execq_mcp_http_addr(addr, &host, &port) == -1)
		return (execq_usage_error("mcp", "--http '%s': HOST:PORT or "
		    "[V6]:PORT expected", addr));
	if (token == NULL && !execq_mcp_http_loopback(host)) {
		free(host);
		return (execq_usage_error("mcp", "--http %s is not loopback: "
		    "a bearer token is required (--token-file FILE or "
		    "$EXECQ_MCP_TOKEN)", addr));
	}
	signal(SIGPIPE, SIG_IGN);	/* a client gone: EPIPE, not death */
	h.m = m;
	h.token = token;
	h.sessions = json_object();
	if ((h.base = event_base_new()) == NULL ||
	    (h.ev = evhttp_new(h.base)) == NULL)
		fatal("out of memory (libevent)");
	evhttp_set_max_headers_size(h.ev, EXECQ_HTTP_HEADERS_MAX);
	evhttp_set_max_body_size(h.ev, EXECQ_HTTP_BODY_MAX);
	evhttp_set_timeout(h.ev, EXECQ_HTTP_TIMEOUT_S);
	/* Every method reaches us, so the others get 405, not 501. */
	evhttp_set_allowed_methods(h.ev, EVHTTP_REQ_GET | EVHTTP_REQ_POST |
	    EVHTTP_REQ_HEAD | EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE |
	    EVHTTP_REQ_OPTIONS | EVHTTP_REQ_TRACE | EVHTTP_REQ_CONNECT |
	    EVHTTP_REQ_PATCH);
	evhttp_set_gencb(h.ev, execq_mcp_http_request, &h);
	if ((bs = evhttp_bind_socket_with_handle(h.ev, host, port)) == NULL) {
		execq_error("mcp: cannot listen on %s: %s", addr,
		    strerror(errno != 0 ? errno : EADDRINUSE));
		free(host);
		json_decref(h.sessions);
		evhttp_free(h.ev);
		event_base_free(h.base);
		return (1);
	}
	port = netutil_port(evhttp_bound_socket_get_fd(bs));
	h.hosts = execq_mcp_http_hosts(host, port);
	sigint = evsignal_new(h.base, SIGINT, execq_mcp_http_signal, &h);
	sigterm = evsignal_new(h.base, SIGTERM, execq_mcp_http_signal, &h);
	if (sigint == NULL || sigterm == NULL || evsignal_add(sigint, NULL) ||
	    evsignal_add(sigterm, NULL))
		fatal("out of memory (libevent)");
	execq_error("mcp: serving MCP on http://%s%s%s:%u" EXECQ_HTTP_PATH,
	    strchr(host, ':') != NULL ? "[" : "", host,
	    strchr(host, ':') != NULL ? "]" : "", port);
	free(host);
	execq_mcp_http_self = &h;
	m->callback_cb = execq_mcp_http_notify_cb;
	tv.tv_sec = 0;
	tv.tv_usec = EXECQ_HTTP_TICK_MS * 1000;
	if ((h.ev_tick = event_new(h.base, -1, EV_PERSIST,
	    execq_mcp_http_tick, &h)) == NULL || event_add(h.ev_tick, &tv))
		fatal("out of memory (libevent)");
	event_base_dispatch(h.base);
	while (h.nstreams > 0)
		evhttp_send_reply_end(h.streams[--h.nstreams].req);
	execq_mcp_http_self = NULL;
	event_free(h.ev_tick);
	event_free(sigint);
	event_free(sigterm);
	evhttp_free(h.ev);
	event_base_free(h.base);
	json_decref(h.hosts);
	json_decref(h.sessions);
	return (0);
}
