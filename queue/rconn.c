/*
 * One Redis connection of execq's own, plain or TLS, over a libevent
 * bufferevent; hiredis only formats the commands and parses the replies.
 *
 * Why not hiredis' connection: Debian 12's hiredis is 0.14.1. It has no
 * TLS, and its async API cannot adopt a socket made by someone else (no
 * connect from an fd; its redisContext reads and writes c->fd itself), so
 * no TLS layer can be slid under it. A local TLS relay (hiredis to a unix
 * socket, a relay to Redis over TLS) was rejected: the relay's socket
 * exists after the boundary of a command is built, a confined command
 * could reach it and talk to Redis as the worker. So the socket is ours:
 * a bufferevent over a plain socket (unix://, redis://) or an OpenSSL
 * bufferevent (libevent_openssl) for rediss://, and hiredis does what it
 * is good at: redisFormatCommandArgv and redisvFormatCommand build the
 * bytes, redisReader parses what comes back into redisReply objects
 * (freeReplyObject), so callers keep reading replies as they do today.
 *
 * The life of a connection (enum rconn_state, moved by rconn_move only):
 * CONNECTING (our own non-blocking connect) -> HANDSHAKE (TLS) -> UP ->
 * DOWN, and DOWN is for good. Commands queued before UP wait in a buffer
 * of their own and go out, in order, once UP. Replies are matched to
 * commands first in, first out. rconn_close is the only place a
 * connection ends: every pending callback gets NULL once, then the state
 * callback says down.
 *
 * Callbacks run on our stack and may free the rconn: as hiredis does,
 * free later when on the stack. Every entry from libevent holds a depth
 * count; rconn_free inside marks the rconn, ends the connection, and the
 * memory goes when the outermost entry returns (rconn_leave).
 */

#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <hiredis/hiredis.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "logs/clock.h"
#include "logs/xmalloc.h"
#include "queue/rconn.h"

/* One command waiting for its reply. */
struct rconn_cmd {
	TAILQ_ENTRY(rconn_cmd)	 entry;
	rconn_reply_cb		 cb;		/* NULL: reply dropped */
	void			*arg;
	int			 keep;		/* sync: the reply is kept */
	int			 stay;		/* SUBSCRIBE: every reply */
	redisReply		*reply;		/* ... here, once it came */
};
TAILQ_HEAD(rconn_cmds, rconn_cmd);

struct rconn {
	struct event_base	*base;		/* ours or the caller's */
	struct event_base	*own_base;	/* sync mode: ours to free */
	enum rconn_state	 state;
	int			 fd;		/* until the bufferevent has it */
	int			 connect_err;	/* connect() failed at once */
	struct event		*ev_conn;	/* our connect: writable */
	struct event		*ev_timer;	/* connect_ms, reply_ms */
	struct bufferevent	*bev;		/* from CONNECTING's end */
	SSL_CTX			*ctx;		/* NULL: plain */
	char			*server_name;
	int			 cert_asked;	/* server asked, we had none */
	struct evbuffer		*early;		/* commands before UP */
	redisReader		*reader;
	struct rconn_cmds	 pending;	/* sent or queued, in order */
	struct rconn_cmds	 kept;		/* sync: replies not taken */
	unsigned		 npending;
	long long		 read_ms;	/* Redis last sent anything */
	int			 connect_ms;
	int			 reply_ms;
	rconn_state_cb		 statecb;
	void			*arg;
	unsigned		 depth;		/* our frames on the stack */
	int			 freeing;	/* rconn_free was called */
	int			 subscribed;	/* rconn_subscribe: no more */
	char			 errstr[256];
};

static void	rconn_read_cb(struct bufferevent *, void *);
static void	rconn_event_cb(struct bufferevent *, short, void *);
static void	rconn_timer_cb(evutil_socket_t, short, void *);

/* SSL ex_data slot holding the rconn, for the client certificate hook. */
static int	rconn_ssl_index = -1;

/* Called by OpenSSL when the server asks for a certificate we lack. */
static int
rconn_client_cert_cb(SSL *ssl, X509 **x509, EVP_PKEY **pkey)
{
	struct rconn	*c;

	(void)x509;
	(void)pkey;
	if (rconn_ssl_index != -1 &&
	    (c = SSL_get_ex_data(ssl, rconn_ssl_index)) != NULL)
		c->cert_asked = 1;
	return (0);			/* go on without one */
}

/* The reason of the oldest OpenSSL error queued, or NULL. */
static const char *
rconn_ssl_reason(void)
{
	unsigned long	 e;
	const char	*s;

	if ((e = ERR_peek_error()) == 0)
		return (NULL);
	s = ERR_reason_error_string(e);
	return (s != NULL ? s : ERR_error_string(e, NULL));
}

/* Loads one settings file into ctx; -1 with *cause. */
static int
rconn_tls_file(const char *what, const char *path, char **cause)
{
	FILE	*f;

	if ((f = fopen(path, "r")) == NULL) {
		xasprintf(cause, "TLS %s %s: %s", what, path, strerror(errno));
		return (-1);
	}
	fclose(f);
	return (0);
}

SSL_CTX *
rconn_tls_ctx(const struct rconn_tls *t, char **cause)
{
	SSL_CTX		*ctx;
	const char	*key;

	*cause = NULL;
	ERR_clear_error();
	if (rconn_ssl_index == -1)
		rconn_ssl_index = SSL_get_ex_new_index(0, NULL, NULL, NULL,
		    NULL);
	if ((ctx = SSL_CTX_new(TLS_client_method())) == NULL) {
		xasprintf(cause, "TLS: %s", rconn_ssl_reason());
		return (NULL);
	}
	SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
	SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE |
	    SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	SSL_CTX_set_verify(ctx, t->insecure ? SSL_VERIFY_NONE :
	    SSL_VERIFY_PEER, NULL);
	if (t->ca_file != NULL) {
		if (rconn_tls_file("CA file", t->ca_file, cause) == -1)
			goto fail;
		if (SSL_CTX_load_verify_locations(ctx, t->ca_file, NULL) !=
		    1) {
			xasprintf(cause, "TLS CA file %s: %s", t->ca_file,
			    rconn_ssl_reason());
			goto fail;
		}
	} else if (SSL_CTX_set_default_verify_paths(ctx) != 1) {
		xasprintf(cause, "TLS: the system's CAs: %s",
		    rconn_ssl_reason());
		goto fail;
	}
	if (t->cert_file == NULL) {
		if (t->key_file != NULL) {
			xasprintf(cause, "TLS key file %s without a "
			    "certificate", t->key_file);
			goto fail;
		}
		SSL_CTX_set_client_cert_cb(ctx, rconn_client_cert_cb);
		return (ctx);
	}
	key = t->key_file != NULL ? t->key_file : t->cert_file;
	if (rconn_tls_file("certificate file", t->cert_file, cause) == -1 ||
	    rconn_tls_file("key file", key, cause) == -1)
		goto fail;
	if (SSL_CTX_use_certificate_chain_file(ctx, t->cert_file) != 1) {
		xasprintf(cause, "TLS certificate file %s: %s", t->cert_file,
		    rconn_ssl_reason());
		goto fail;
	}
	if (SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1) {
		xasprintf(cause, "TLS key file %s: %s", key,
		    rconn_ssl_reason());
		goto fail;
	}
	if (SSL_CTX_check_private_key(ctx) != 1) {
		xasprintf(cause, "TLS key file %s does not match the "
		    "certificate %s", key, t->cert_file);
		goto fail;
	}
	return (ctx);

fail:
	ERR_clear_error();
	SSL_CTX_free(ctx);
	return (NULL);
}

void
rconn_tls_ctx_free(SSL_CTX *ctx)
{
	SSL_CTX_free(ctx);
}

/* Records why, for rconn_errstr. */
static void __attribute__((format(printf, 2, 3)))
rconn_seterr(struct rconn *c, const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(c->errstr, sizeof c->errstr, fmt, ap);
	va_end(ap);
}

/* Arms the timer for the state the connection is in, or stops it. */
static void
rconn_timer_set(struct rconn *c)
{
	struct timeval	tv;
	int		ms = 0;

	if (c->state == RCONN_CONNECTING || c->state == RCONN_HANDSHAKE)
		ms = c->connect_ms;
	else if (c->state == RCONN_UP && c->npending > 0)
		ms = c->reply_ms;
	if (ms <= 0) {
		evtimer_del(c->ev_timer);
		return;
	}
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	evtimer_add(c->ev_timer, &tv);
}

/* A libevent callback of ours starts: the rconn stays until it ends. */
static void
rconn_enter(struct rconn *c)
{
	c->depth++;
}

/* The memory goes, at last. */
static void
rconn_destroy(struct rconn *c)
{
	struct rconn_cmd	*cmd;

	while ((cmd = TAILQ_FIRST(&c->kept)) != NULL) {
		TAILQ_REMOVE(&c->kept, cmd, entry);
		freeReplyObject(cmd->reply);
		free(cmd);
	}
	if (c->bev != NULL)
		bufferevent_free(c->bev);	/* the fd and SSL with it */
	if (c->fd != -1)
		close(c->fd);
	if (c->ev_conn != NULL)
		event_free(c->ev_conn);
	if (c->ev_timer != NULL)
		event_free(c->ev_timer);
	if (c->early != NULL)
		evbuffer_free(c->early);
	if (c->reader != NULL)
		redisReaderFree(c->reader);
	if (c->own_base != NULL)
		event_base_free(c->own_base);	/* runs the finalizers */
	free(c->server_name);
	free(c);
}

/* 1 if the rconn was freed as this frame ended: touch nothing then. */
static int
rconn_leave(struct rconn *c)
{
	if (--c->depth == 0 && c->freeing) {
		rconn_destroy(c);
		return (1);
	}
	return (0);
}

/*
 * The only place the state changes. Down is rconn_close's: the rest of
 * the transitions only arm the timer and say up.
 */
static void
rconn_move(struct rconn *c, enum rconn_state to)
{
	c->state = to;
	rconn_timer_set(c);
	if (to == RCONN_UP && c->statecb != NULL && !c->freeing)
		c->statecb(c, 1, c->arg);
}

/*
 * The only place a connection ends (reason in c->errstr): the socket goes,
 * every pending command gets NULL, in order and once, then the owner is
 * told (unless it is freeing us). Called inside a frame (depth > 0).
 */
static void
rconn_close(struct rconn *c)
{
	struct rconn_cmd	*cmd;

	if (c->state == RCONN_DOWN)
		return;
	c->state = RCONN_DOWN;
	evtimer_del(c->ev_timer);
	event_del(c->ev_conn);
	if (c->bev != NULL) {
		bufferevent_free(c->bev);
		c->bev = NULL;
	}
	if (c->fd != -1) {
		close(c->fd);
		c->fd = -1;
	}
	while ((cmd = TAILQ_FIRST(&c->pending)) != NULL) {
		TAILQ_REMOVE(&c->pending, cmd, entry);
		c->npending--;
		if (cmd->cb != NULL)
			cmd->cb(c, NULL, cmd->arg);
		free(cmd);
	}
	if (c->statecb != NULL && !c->freeing)
		c->statecb(c, 0, c->arg);
}

void
rconn_free(struct rconn *c)
{
	if (c == NULL)
		return;
	rconn_enter(c);
	c->freeing = 1;
	if (c->state != RCONN_DOWN)
		rconn_seterr(c, "connection freed");
	rconn_close(c);
	rconn_leave(c);
}

void
rconn_disconnect(struct rconn *c, const char *reason)
{
	rconn_enter(c);
	if (c->state != RCONN_DOWN)
		rconn_seterr(c, "%s", reason);
	rconn_close(c);
	rconn_leave(c);
}

/* The socket is connected: TLS starts, or the plain connection is up. */
static void
rconn_start(struct rconn *c)
{
	SSL		*ssl = NULL;
	struct in6_addr	 a;
	X509_VERIFY_PARAM *vp;
	int		 ip = 0;

	if (c->ctx == NULL) {
		c->bev = bufferevent_socket_new(c->base, c->fd,
		    BEV_OPT_CLOSE_ON_FREE);
	} else {
		if ((ssl = SSL_new(c->ctx)) == NULL)
			goto fail;
		SSL_set_ex_data(ssl, rconn_ssl_index, c);
		if (c->server_name != NULL) {
			ip = inet_pton(AF_INET, c->server_name, &a) == 1 ||
			    inet_pton(AF_INET6, c->server_name, &a) == 1;
			vp = SSL_get0_param(ssl);
			/* SNI carries names only (RFC 6066), never an IP. */
			if ((!ip && SSL_set_tlsext_host_name(ssl,
			    c->server_name) != 1) || (ip ?
			    X509_VERIFY_PARAM_set1_ip_asc(vp,
			    c->server_name) : X509_VERIFY_PARAM_set1_host(vp,
			    c->server_name, 0)) != 1)
				goto fail;
		}
		c->bev = bufferevent_openssl_socket_new(c->base, c->fd, ssl,
		    BUFFEREVENT_SSL_CONNECTING, BEV_OPT_CLOSE_ON_FREE);
		if (c->bev != NULL)
			bufferevent_openssl_set_allow_dirty_shutdown(c->bev, 1);
	}
	if (c->bev == NULL)
		goto fail;
	c->fd = -1;			/* the bufferevent's now */
	ssl = NULL;
	bufferevent_setcb(c->bev, rconn_read_cb, NULL, rconn_event_cb, c);
	if (bufferevent_enable(c->bev, EV_READ | EV_WRITE) == -1 ||
	    bufferevent_write_buffer(c->bev, c->early) == -1)
		goto fail;
	if (c->ctx != NULL)
		rconn_move(c, RCONN_HANDSHAKE);
	else
		rconn_move(c, RCONN_UP);
	return;

fail:
	if (ssl != NULL)
		SSL_free(ssl);
	rconn_seterr(c, "%s: %s", c->ctx != NULL ? "TLS" : "connection",
	    c->ctx != NULL && rconn_ssl_reason() != NULL ?
	    rconn_ssl_reason() : "out of memory");
	ERR_clear_error();
	rconn_close(c);
}

/* Our connect finished (or failed at once). */
static void
rconn_conn_cb(evutil_socket_t fd, short what, void *arg)
{
	struct rconn	*c = arg;
	int		 err = c->connect_err;
	socklen_t	 len = sizeof err;

	(void)what;
	rconn_enter(c);
	if (err == 0 &&
	    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == -1)
		err = errno;
	if (err != 0) {
		if (c->errstr[0] == '\0')	/* else rconn_connect_host's */
			rconn_seterr(c, "connect: %s", strerror(err));
		rconn_close(c);
	} else
		rconn_start(c);
	rconn_leave(c);
}

/* Connect timed out, or commands waited too long for a reply. */
static void
rconn_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct rconn	*c = arg;

	(void)fd;
	(void)what;
	rconn_enter(c);
	if (c->state == RCONN_UP)
		rconn_seterr(c, "no reply from Redis in %d ms", c->reply_ms);
	else
		rconn_seterr(c, "%s timed out after %d ms",
		    c->state == RCONN_HANDSHAKE ? "TLS handshake" : "connect",
		    c->connect_ms);
	rconn_close(c);
	rconn_leave(c);
}

/*
 * A new rconn on fd (-1 when err says why the connect failed at once):
 * the outcome comes from the loop either way, through ev_conn.
 */
static struct rconn *
rconn_new(struct event_base *base, int fd, int err, SSL_CTX *ctx,
    const char *server_name, rconn_state_cb statecb, void *arg)
{
	struct rconn	*c;

	c = xcalloc(1, sizeof *c);
	c->fd = fd;
	c->connect_err = err;
	c->state = RCONN_CONNECTING;
	c->ctx = ctx;
	c->statecb = statecb;
	c->arg = arg;
	TAILQ_INIT(&c->pending);
	TAILQ_INIT(&c->kept);
	if (server_name != NULL)
		c->server_name = xstrdup(server_name);
	if (base == NULL)
		base = c->own_base = event_base_new();
	c->base = base;
	if (base == NULL ||
	    (c->ev_conn = event_new(base, fd, EV_WRITE, rconn_conn_cb,
	    c)) == NULL ||
	    (c->ev_timer = evtimer_new(base, rconn_timer_cb, c)) == NULL ||
	    (c->early = evbuffer_new()) == NULL ||
	    (c->reader = redisReaderCreate()) == NULL ||
	    (err == 0 && event_add(c->ev_conn, NULL) == -1)) {
		rconn_destroy(c);	/* closes fd */
		errno = ENOMEM;
		return (NULL);
	}
	if (err != 0)
		event_active(c->ev_conn, EV_WRITE, 1);
	return (c);
}

struct rconn *
rconn_open_fd(struct event_base *base, int fd, SSL_CTX *ctx,
    const char *server_name, rconn_state_cb statecb, void *arg)
{
	return (rconn_new(base, fd, 0, ctx, server_name, statecb, arg));
}

struct rconn *
rconn_connect(struct event_base *base, const struct sockaddr *sa,
    socklen_t salen, SSL_CTX *ctx, const char *server_name,
    rconn_state_cb statecb, void *arg)
{
	int	fd, one = 1, err = 0;

	fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0);
	if (fd == -1)
		err = errno;
	else {
		if (sa->sa_family != AF_UNIX)
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one,
			    sizeof one);
		/* A unix socket's EAGAIN is a refusal (backlog full). */
		if (connect(fd, sa, salen) == -1 && errno != EINPROGRESS) {
			err = errno;
			close(fd);
			fd = -1;
		}
	}
	return (rconn_new(base, fd, err, ctx, server_name, statecb, arg));
}

struct rconn *
rconn_connect_host(struct event_base *base, const char *host, int port,
    SSL_CTX *ctx, const char *server_name, rconn_state_cb statecb, void *arg)
{
	struct addrinfo	 hints, *res;
	struct rconn	*c;
	char		 serv[16];
	int		 rc;

	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	snprintf(serv, sizeof serv, "%d", port);
	if ((rc = getaddrinfo(host, serv, &hints, &res)) == 0) {
		c = rconn_connect(base, res->ai_addr, res->ai_addrlen, ctx,
		    server_name, statecb, arg);
		freeaddrinfo(res);
		return (c);
	}
	/* Said from the loop, as a connect that failed. */
	c = rconn_new(base, -1, EHOSTUNREACH, ctx, server_name, statecb, arg);
	if (c != NULL)
		rconn_seterr(c, "cannot resolve %s: %s", host,
		    rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
	return (c);
}

struct rconn *
rconn_connect_unix(struct event_base *base, const char *path,
    rconn_state_cb statecb, void *arg)
{
	struct sockaddr_un	sun;

	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof sun.sun_path) {
		errno = ENAMETOOLONG;
		return (NULL);
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
	return (rconn_connect(base, (struct sockaddr *)&sun, sizeof sun, NULL,
	    NULL, statecb, arg));
}

void
rconn_set_timeout(struct rconn *c, int connect_ms, int reply_ms)
{
	c->connect_ms = connect_ms;
	c->reply_ms = reply_ms;
	if (c->state != RCONN_DOWN)
		rconn_timer_set(c);
}

/* Queues formatted bytes and their callback; takes cmdbuf. */
static int
rconn_queue(struct rconn *c, rconn_reply_cb cb, void *arg, int keep,
    char *cmdbuf, int len)
{
	struct rconn_cmd	*cmd;
	int			 rc;

	if (len < 0) {
		rconn_seterr(c, "bad command format");
		return (-1);
	}
	if (c->state == RCONN_DOWN || c->freeing) {
		free(cmdbuf);
		if (c->errstr[0] == '\0')
			rconn_seterr(c, "connection down");
		return (-1);
	}
	if (c->subscribed) {
		free(cmdbuf);
		rconn_seterr(c, "no command after a subscription");
		return (-1);
	}
	if (c->bev != NULL)
		rc = bufferevent_write(c->bev, cmdbuf, len);
	else
		rc = evbuffer_add(c->early, cmdbuf, len);
	free(cmdbuf);
	if (rc == -1) {
		rconn_seterr(c, "out of memory");
		return (-1);
	}
	cmd = xcalloc(1, sizeof *cmd);
	cmd->cb = cb;
	cmd->arg = arg;
	cmd->keep = keep;
	TAILQ_INSERT_TAIL(&c->pending, cmd, entry);
	if (c->npending++ == 0 && c->state == RCONN_UP)
		rconn_timer_set(c);
	return (0);
}

int
rconn_vcommand(struct rconn *c, rconn_reply_cb cb, void *arg,
    const char *fmt, va_list ap)
{
	char	*cmdbuf = NULL;
	int	 len;

	len = redisvFormatCommand(&cmdbuf, fmt, ap);
	return (rconn_queue(c, cb, arg, 0, cmdbuf, len));
}

int
rconn_command(struct rconn *c, rconn_reply_cb cb, void *arg,
    const char *fmt, ...)
{
	va_list	ap;
	int	rc;

	va_start(ap, fmt);
	rc = rconn_vcommand(c, cb, arg, fmt, ap);
	va_end(ap);
	return (rc);
}

int
rconn_command_argv(struct rconn *c, rconn_reply_cb cb, void *arg, int argc,
    const char **argv, const size_t *len)
{
	char	*cmdbuf = NULL;
	int	 n;

	n = redisFormatCommandArgv(&cmdbuf, argc, argv, len);
	return (rconn_queue(c, cb, arg, 0, cmdbuf, n));
}

int
rconn_subscribe(struct rconn *c, rconn_reply_cb cb, void *arg,
    const char *fmt, ...)
{
	struct rconn_cmd	*cmd;
	va_list			 ap;
	int			 rc;

	va_start(ap, fmt);
	rc = rconn_vcommand(c, cb, arg, fmt, ap);
	va_end(ap);
	if (rc == 0) {
		cmd = TAILQ_LAST(&c->pending, rconn_cmds);
		cmd->stay = 1;
		c->subscribed = 1;
	}
	return (rc);
}

void
rconn_flush(struct rconn *c)
{
	struct evbuffer	*out;

	if (c->state != RCONN_UP || c->ctx != NULL || c->bev == NULL)
		return;
	out = bufferevent_get_output(c->bev);
	/* An error stays on the socket: the bufferevent meets it next. */
	if (evbuffer_get_length(out) > 0)
		(void)evbuffer_write(out, bufferevent_getfd(c->bev));
}

/* Hands one reply to the oldest command; 0, or -1 if none waits. */
static int
rconn_dispatch(struct rconn *c, redisReply *reply)
{
	struct rconn_cmd	*cmd;

	if ((cmd = TAILQ_FIRST(&c->pending)) == NULL) {
		freeReplyObject(reply);
		rconn_seterr(c, "protocol error: a reply to no command");
		return (-1);
	}
	if (cmd->stay) {		/* stays first: cmd may go in cb */
		if (cmd->cb != NULL)
			cmd->cb(c, reply, cmd->arg);
		freeReplyObject(reply);
		return (0);
	}
	TAILQ_REMOVE(&c->pending, cmd, entry);
	c->npending--;
	if (cmd->keep) {
		cmd->reply = reply;
		TAILQ_INSERT_TAIL(&c->kept, cmd, entry);
		return (0);
	}
	if (cmd->cb != NULL)
		cmd->cb(c, reply, cmd->arg);
	freeReplyObject(reply);
	free(cmd);
	return (0);
}

/* Bytes from Redis: parsed, and each whole reply dispatched. */
static void
rconn_read_cb(struct bufferevent *bev, void *arg)
{
	struct rconn		*c = arg;
	struct evbuffer		*in = bufferevent_get_input(bev);
	struct evbuffer_iovec	 v[16];
	void			*reply;
	int			 n, i;

	rconn_enter(c);
	c->read_ms = clock_mono_ms();
	while (evbuffer_get_length(in) > 0) {
		n = evbuffer_peek(in, -1, NULL, v, 16);
		if (n > 16)
			n = 16;
		for (i = 0; i < n; i++) {
			if (redisReaderFeed(c->reader, v[i].iov_base,
			    v[i].iov_len) != REDIS_OK)
				goto protocol;
			evbuffer_drain(in, v[i].iov_len);
		}
	}
	while (c->state == RCONN_UP && !c->freeing) {
		if (redisReaderGetReply(c->reader, &reply) != REDIS_OK)
			goto protocol;
		if (reply == NULL)
			break;
		if (rconn_dispatch(c, reply) == -1) {
			rconn_close(c);
			break;
		}
	}
	if (c->state == RCONN_UP && !c->freeing)
		rconn_timer_set(c);	/* Redis spoke: reply_ms again */
	rconn_leave(c);
	return;

protocol:
	rconn_seterr(c, "protocol error: %s", c->reader->errstr);
	rconn_close(c);
	rconn_leave(c);
}

/* What went wrong on a TLS connection, said plainly. */
static void
rconn_tls_error(struct rconn *c, short what)
{
	SSL		*ssl = bufferevent_openssl_get_ssl(c->bev);
	unsigned long	 e, first = 0;
	const char	*reason, *hint = "";
	long		 v;

	/*
	 * The bufferevent keeps SSL_get_error's code (SSL_ERROR_SSL,
	 * SSL_ERROR_SYSCALL: no library) then the library's errors, and
	 * hands them back newest first: the last with a library is the
	 * cause.
	 */
	while ((e = bufferevent_get_openssl_error(c->bev)) != 0)
		if (ERR_GET_LIB(e) != 0)
			first = e;
	if (c->cert_asked)
		hint = " (the server asks for a client certificate; none is "
		    "configured)";
	v = ssl != NULL ? SSL_get_verify_result(ssl) : X509_V_OK;
	if (c->state == RCONN_HANDSHAKE && v != X509_V_OK) {
		rconn_seterr(c, "TLS: certificate verify failed: %s%s%s%s",
		    X509_verify_cert_error_string(v),
		    (v == X509_V_ERR_HOSTNAME_MISMATCH ||
		    v == X509_V_ERR_IP_ADDRESS_MISMATCH) ? " (wanted " : "",
		    (v == X509_V_ERR_HOSTNAME_MISMATCH ||
		    v == X509_V_ERR_IP_ADDRESS_MISMATCH) ? c->server_name : "",
		    (v == X509_V_ERR_HOSTNAME_MISMATCH ||
		    v == X509_V_ERR_IP_ADDRESS_MISMATCH) ? ")" : "");
		return;
	}
	if (first != 0) {
		reason = ERR_reason_error_string(first);
		rconn_seterr(c, "TLS%s: %s%s", c->state == RCONN_HANDSHAKE ?
		    " handshake" : "", reason != NULL ? reason :
		    ERR_error_string(first, NULL), hint);
	} else if (what & BEV_EVENT_EOF)
		rconn_seterr(c, "connection closed by the server%s%s",
		    c->state == RCONN_HANDSHAKE ? " during the TLS handshake" :
		    "", hint);
	else
		rconn_seterr(c, "TLS%s: %s%s", c->state == RCONN_HANDSHAKE ?
		    " handshake" : "", errno != 0 ? strerror(errno) :
		    "connection lost", hint);
}

/* The bufferevent's news: handshake done, end of stream, an error. */
static void
rconn_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct rconn	*c = arg;
	int		 err = errno;

	(void)bev;
	rconn_enter(c);
	if (what & BEV_EVENT_CONNECTED) {
		if (c->state == RCONN_HANDSHAKE)
			rconn_move(c, RCONN_UP);
	} else if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) {
		errno = err;
		if (c->ctx != NULL)
			rconn_tls_error(c, what);
		else if (what & BEV_EVENT_EOF)
			rconn_seterr(c, "connection closed by the server");
		else
			rconn_seterr(c, "%s: %s", (what & BEV_EVENT_READING) ?
			    "read" : "write", err != 0 ? strerror(err) :
			    "connection lost");
		ERR_clear_error();
		rconn_close(c);
	}
	rconn_leave(c);
}

enum rconn_state
rconn_state(const struct rconn *c)
{
	return (c->state);
}

const char *
rconn_errstr(const struct rconn *c)
{
	return (c->errstr);
}

unsigned
rconn_pending(const struct rconn *c)
{
	return (c->npending);
}

long long
rconn_last_read_ms(const struct rconn *c)
{
	return (c->read_ms);
}

void *
rconn_arg(const struct rconn *c)
{
	return (c->arg);
}

int
rconn_fd(const struct rconn *c)
{
	if (c->state == RCONN_DOWN)
		return (-1);
	return (c->bev != NULL ? bufferevent_getfd(c->bev) : c->fd);
}

/* The synchronous side: the private loop runs until done says so. */
static int
rconn_sync_check(struct rconn *c)
{
	if (c->own_base == NULL) {
		rconn_seterr(c, "not a synchronous connection");
		return (-1);
	}
	return (0);
}

int
rconn_wait_up(struct rconn *c)
{
	if (rconn_sync_check(c) == -1)
		return (-1);
	while (c->state != RCONN_UP && c->state != RCONN_DOWN)
		if (event_base_loop(c->own_base, EVLOOP_ONCE) == -1)
			break;
	return (c->state == RCONN_UP ? 0 : -1);
}

int
rconn_append_argv(struct rconn *c, int argc, const char **argv,
    const size_t *len)
{
	char	*cmdbuf = NULL;
	int	 n;

	if (rconn_sync_check(c) == -1)
		return (-1);
	n = redisFormatCommandArgv(&cmdbuf, argc, argv, len);
	return (rconn_queue(c, NULL, NULL, 1, cmdbuf, n));
}

/* rconn_append, with a va_list. */
static int
rconn_vappend(struct rconn *c, const char *fmt, va_list ap)
{
	char	*cmdbuf = NULL;
	int	 n;

	if (rconn_sync_check(c) == -1)
		return (-1);
	n = redisvFormatCommand(&cmdbuf, fmt, ap);
	return (rconn_queue(c, NULL, NULL, 1, cmdbuf, n));
}

int
rconn_append(struct rconn *c, const char *fmt, ...)
{
	va_list	ap;
	int	rc;

	va_start(ap, fmt);
	rc = rconn_vappend(c, fmt, ap);
	va_end(ap);
	return (rc);
}

/* 1 if a command appended is still waiting for its reply. */
static int
rconn_keep_waiting(const struct rconn *c)
{
	const struct rconn_cmd	*cmd;

	TAILQ_FOREACH(cmd, &c->pending, entry)
		if (cmd->keep)
			return (1);
	return (0);
}

redisReply *
rconn_next(struct rconn *c)
{
	struct rconn_cmd	*cmd;
	redisReply		*reply;

	if (rconn_sync_check(c) == -1)
		return (NULL);
	while (TAILQ_EMPTY(&c->kept) && c->state != RCONN_DOWN &&
	    rconn_keep_waiting(c)) {
		rconn_flush(c);
		if (event_base_loop(c->own_base, EVLOOP_ONCE) == -1) {
			rconn_seterr(c, "event loop failed");
			return (NULL);
		}
	}
	if ((cmd = TAILQ_FIRST(&c->kept)) == NULL) {
		if (c->errstr[0] == '\0')
			rconn_seterr(c, "no command waits for a reply");
		return (NULL);
	}
	TAILQ_REMOVE(&c->kept, cmd, entry);
	reply = cmd->reply;
	free(cmd);
	return (reply);
}

redisReply *
rconn_vcall(struct rconn *c, const char *fmt, va_list ap)
{
	return (rconn_vappend(c, fmt, ap) == 0 ? rconn_next(c) : NULL);
}

redisReply *
rconn_call(struct rconn *c, const char *fmt, ...)
{
	va_list		 ap;
	redisReply	*r;

	va_start(ap, fmt);
	r = rconn_vcall(c, fmt, ap);
	va_end(ap);
	return (r);
}

redisReply *
rconn_call_argv(struct rconn *c, int argc, const char **argv,
    const size_t *len)
{
	if (rconn_append_argv(c, argc, argv, len) == -1)
		return (NULL);
	return (rconn_next(c));
}
