#ifndef EXECQ_RCONN_H
#define EXECQ_RCONN_H

/*
 * One Redis connection of execq's own: a plain socket (unix://, redis://)
 * or TLS (rediss://) under a libevent bufferevent, with hiredis used only
 * to format commands and to parse replies. queue/rconn.c says why.
 *
 * Asynchronous (a base given): commands are queued in order and their
 * replies matched first in, first out. Synchronous (base NULL): the
 * connection runs a private event_base of its own inside rconn_call and
 * rconn_next, for the client.
 *
 * Ownership: the rconn owns its socket, its SSL and every command not yet
 * answered; the SSL_CTX is the caller's (one for all connections), and
 * must outlive them. A reply handed to a callback is borrowed for the
 * callback; a reply returned by rconn_call and rconn_next is the caller's
 * (freeReplyObject).
 *
 * Failure: every command's callback is called exactly once: with its
 * reply, or with NULL when the connection goes down or is freed first.
 * A connection that goes down stays down (its owner frees it and makes a
 * new one): the pending callbacks get NULL, in order, then the state
 * callback says down, and rconn_errstr why. Callbacks may send commands
 * (refused, -1, once the connection is down) and may free the rconn.
 */

#include <sys/socket.h>

#include <stdarg.h>
#include <stddef.h>

#include <hiredis/hiredis.h>

struct event_base;
struct rconn;
typedef struct ssl_ctx_st SSL_CTX;

/* TLS settings; zeroed, it verifies the server against the system CAs. */
struct rconn_tls {
	const char	*ca_file;	/* PEM CAs to trust; NULL: the system's */
	const char	*cert_file;	/* client certificate (PEM chain), or
					   NULL: none */
	const char	*key_file;	/* its key; NULL: in cert_file */
	const char	*server_name;	/* SNI and the name the certificate
					   must carry; NULL: the URL's host
					   (the caller passes it on) */
	int		 insecure;	/* 1: no verification at all */
};

enum rconn_state {
	RCONN_CONNECTING = 1,		/* TCP (or unix) connect under way */
	RCONN_HANDSHAKE,		/* TLS handshake under way */
	RCONN_UP,			/* commands flow */
	RCONN_DOWN,			/* for good: rconn_errstr says why */
};

/* The connection came up (up 1) or went down (0). Not called on free. */
typedef void (*rconn_state_cb)(struct rconn *, int up, void *arg);
/* A command's reply (borrowed), or NULL: down or freed before it came. */
typedef void (*rconn_reply_cb)(struct rconn *, redisReply *reply,
    void *privdata);

/*
 * One SSL_CTX for every connection made with these settings: the CA, the
 * client certificate and its key loaded and checked. NULL with *cause
 * (allocated) naming the file and what is wrong with it.
 */
SSL_CTX		*rconn_tls_ctx(const struct rconn_tls *, char **cause);
void		 rconn_tls_ctx_free(SSL_CTX *);		/* NULL ok */

/*
 * Starts connecting to sa (AF_INET, AF_INET6 or AF_UNIX): a CLOEXEC,
 * non-blocking socket, TCP_NODELAY on TCP; TLS with ctx (NULL: plain),
 * server_name its SNI and the name checked in the certificate (NULL: no
 * name checked). base NULL: synchronous, on a private base. The outcome
 * comes through statecb (NULL ok), never on the caller's stack: a
 * connect that fails at once is reported from the loop too. NULL only
 * when out of memory or sa is too long (errno).
 */
struct rconn	*rconn_connect(struct event_base *, const struct sockaddr *,
		    socklen_t, SSL_CTX *, const char *server_name,
		    rconn_state_cb, void *arg);
/*
 * The same on host (a name, looked up on the caller's thread, or an
 * address) and port: its first address. A name that does not resolve
 * is reported as a connect that failed (rconn_errstr says so).
 */
struct rconn	*rconn_connect_host(struct event_base *, const char *host,
		    int port, SSL_CTX *, const char *server_name,
		    rconn_state_cb, void *arg);
/* The same on a unix socket path, plain. */
struct rconn	*rconn_connect_unix(struct event_base *, const char *path,
		    rconn_state_cb, void *arg);
/* The same on fd, a stream socket connected or connecting; owned now. */
struct rconn	*rconn_open_fd(struct event_base *, int fd, SSL_CTX *,
		    const char *server_name, rconn_state_cb, void *arg);
/*
 * Pending callbacks get NULL; the state callback is not called. Safe
 * from any callback of this rconn (the memory goes when it returns).
 * NULL ok.
 */
void		 rconn_free(struct rconn *);

/*
 * Takes the connection down now, as if Redis had gone (redisAsyncDisconnect
 * without the wait): pending callbacks get NULL, then the state callback
 * says down, rconn_errstr reason. Safe from any callback. The owner
 * still frees the rconn.
 */
void		 rconn_disconnect(struct rconn *, const char *reason);

/*
 * Timeouts in milliseconds, 0 for none (the default). connect_ms counts
 * from this call to up (TLS handshake included); reply_ms is how long
 * commands may wait with nothing read from Redis. Either one passed
 * takes the connection down ("timed out"); so reply_ms must exceed any
 * BLOCK the connection carries.
 */
void		 rconn_set_timeout(struct rconn *, int connect_ms,
		    int reply_ms);

/*
 * Queues a command (hiredis' format: %s, %b with a length, %d...; or an
 * argv with lengths, NULL: strlen): 0, or -1 when down or freeing, or the
 * format is bad (rconn_errstr); then cb is never called. cb NULL: the
 * reply is dropped. Written in the loop; rconn_flush writes now.
 */
int		 rconn_command(struct rconn *, rconn_reply_cb, void *privdata,
		    const char *fmt, ...);
int		 rconn_vcommand(struct rconn *, rconn_reply_cb, void *privdata,
		    const char *fmt, va_list);
int		 rconn_command_argv(struct rconn *, rconn_reply_cb,
		    void *privdata, int argc, const char **argv,
		    const size_t *len);
/*
 * A subscription (SUBSCRIBE ...): like rconn_command, but cb gets every
 * reply from then on (the confirmation, then each message), and NULL
 * once when the connection ends. Nothing may be sent after it (-1), and
 * it counts as pending for good: no reply_ms on such a connection.
 */
int		 rconn_subscribe(struct rconn *, rconn_reply_cb,
		    void *privdata, const char *fmt, ...);
/*
 * Writes what is queued on a plain socket now rather than when the loop
 * next sees it writable (a TLS connection writes in the loop). Calls no
 * callback: safe anywhere.
 */
void		 rconn_flush(struct rconn *);

enum rconn_state rconn_state(const struct rconn *);
/* Why it went down (or the last refusal); "" if nothing went wrong. */
const char	*rconn_errstr(const struct rconn *);
/* Commands sent or queued, not answered yet. */
unsigned	 rconn_pending(const struct rconn *);
/* When Redis last sent anything (clock_mono_ms); 0: nothing yet. */
long long	 rconn_last_read_ms(const struct rconn *);
/* The state callback's argument. */
void		*rconn_arg(const struct rconn *);
/* The socket, for socket options only; -1 once down. */
int		 rconn_fd(const struct rconn *);

/*
 * Synchronous connections only (base NULL), and never from a callback.
 * rconn_wait_up: 0 once up, -1 once down (rconn_errstr).
 * rconn_call (rconn_vcall): the reply of a command (owned), after
 * those appended before it; NULL when the connection failed
 * (rconn_errstr). An error reply is a reply. rconn_append queues
 * without waiting (0, or -1 as rconn_command); rconn_next gives the
 * oldest reply not yet taken.
 */
int		 rconn_wait_up(struct rconn *);
redisReply	*rconn_call(struct rconn *, const char *fmt, ...);
redisReply	*rconn_vcall(struct rconn *, const char *fmt, va_list);
redisReply	*rconn_call_argv(struct rconn *, int argc, const char **argv,
		    const size_t *len);
int		 rconn_append(struct rconn *, const char *fmt, ...);
int		 rconn_append_argv(struct rconn *, int argc, const char **argv,
		    const size_t *len);
redisReply	*rconn_next(struct rconn *);

#endif
