#ifndef EXECQ_PROXY_H
#define EXECQ_PROXY_H

/*
 * The egress proxy: the one way out of the commands' network namespace
 * for a command granted domains. It listens on 127.0.0.1 inside that
 * namespace (or, without one, on the host's loopback: tests), speaks
 * HTTP/1.1 CONNECT and plain HTTP in absolute form, knows the command by
 * the credential in its HTTP_PROXY (Proxy-Authorization: Basic), and
 * dials only a domain granted to that command, only at an address that
 * netaddr_public() calls public (whatever DNS says) and that is not the
 * worker's Redis. Every request is told to the audit callback; a refusal
 * is a 403 (407 without a known credential) whose body says why.
 */

#include <sys/socket.h>

struct event_base;
struct proxy;

/* One connection's fate, for the audit log. */
struct proxy_event {
	const char	*id;		/* the command's item id; NULL: unknown */
	const char	*method;	/* "CONNECT", "GET", ... */
	const char	*host;
	int		 port;
	const char	*addr;		/* the address dialled; NULL: none */
	const char	*verdict;	/* "allowed", "refused" */
	const char	*reason;	/* why refused; NULL */
	unsigned long long sent, received;	/* bytes, once it ended */
};

typedef void (*proxy_audit_cb)(const struct proxy_event *, void *arg);

struct proxy_config {
	int			 netns_fd;	/* listen in it; -1: here */
	const char *const	*private_hosts;	/* names that may resolve to
						   private addresses (a
						   test's stand-in for the
						   internet); NULL */
	const struct sockaddr	*refused;	/* the worker's Redis; NULL */
	socklen_t		 refused_len;
	proxy_audit_cb		 audit;
	void			*arg;
};

/* Listening, or NULL with errno. */
struct proxy	*proxy_create(struct event_base *, const struct proxy_config *);
/* Closes every connection. NULL ok. */
void		 proxy_free(struct proxy *);
/* The port it listens on, at 127.0.0.1. */
int		 proxy_port(const struct proxy *);
/*
 * Grants command id the domains (patterns as netaddr_domain_match takes
 * them; copied) until proxy_revoke: the proxy URL the command gets in its
 * environment, http://execq:<token>@127.0.0.1:<port>, allocated.
 */
char		*proxy_grant(struct proxy *, const char *id,
		    const char *const *domains);
/* Ends id's grant: its open connections are closed. */
void		 proxy_revoke(struct proxy *, const char *id);

#endif
