/*
 * The egress proxy: the grants (a credential and the domains of each
 * command), the listener in the commands' network namespace, and one
 * connection's life: its request head read, judged, the name looked up
 * off the loop, the address judged, dialled, then bytes piped both ways.
 */

#include <sys/ioctl.h>
#include <sys/queue.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>

#include <errno.h>
#include <ifaddrs.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "logs/clock.h"
#include "logs/log.h"
#include "logs/syncer.h"
#include "logs/token.h"
#include "logs/xmalloc.h"
#include "policy/netaddr.h"
#include "queue/item.h"
#include "worker/proxy.h"

#define PROXY_HEAD_MAX		16384	/* a request head, at most */
#define PROXY_HIGH_WATER	(256 * 1024)	/* queued toward one side */
#define PROXY_USER		"execq"
#define PROXY_HEAD_TIMEOUT_S	10	/* to send the request head */
#define PROXY_FIN_TIMEOUT_S	30	/* upstream's to close after ours */
#define PROXY_MAX_CONNS		1024	/* open at once, every command's */
#define PROXY_MAX_PER_GRANT	64	/* ... one command's */
#define PROXY_LOCAL_TTL_MS	3000	/* the host's addresses kept */

/* What one command may reach. */
struct pgrant {
	LIST_ENTRY(pgrant)	 entry;
	char			*id;
	char			 token[TOKEN_LEN + 1];
	char			**domains;	/* NULL-terminated */
	unsigned		 nconns;	/* its connections open now */
};

enum pstate {
	PROXY_HEAD = 0,		/* reading the request head */
	PROXY_LOOKUP,		/* the name is being looked up */
	PROXY_DIAL,		/* connecting upstream */
	PROXY_PIPE,		/* bytes both ways */
	PROXY_CLOSING,		/* the last bytes to the client, then gone */
};

struct pconn;

/* One address of the worker's host: 4 or 16 bytes. */
struct plocaddr {
	int			 family;	/* AF_INET, AF_INET6 */
	unsigned char		 addr[16];
};

/*
 * The host's addresses as the DNS thread last read them (getifaddrs, a
 * netlink round trip that cost more than the rest of a connect). Only
 * proxy_lookup_work reads or writes it, on the DNS thread, one lookup
 * after the other; each lookup takes a copy for the loop to judge with.
 *
 * Kept PROXY_LOCAL_TTL_MS at most, so an address the host gains is known
 * that late: it comes from the administrator's hand or DHCP, not from a
 * command, and a command reaches it only through a name a person granted
 * that resolves to it in that window. An address the host loses stays
 * refused that long (the safe side). The worker's Redis is refused by
 * its address and port whatever this says (proxy_is_refused).
 */
struct plocal {
	struct plocaddr		*a;
	size_t			 n;
	int64_t			 read_ms;	/* 0: not read */
};

/* A lookup on the DNS thread; outlives its connection if need be. */
struct plookup {
	struct pconn		*pc;		/* NULL: the connection went */
	char			*host;
	char			 port[8];
	struct addrinfo		*res;
	int			 err;		/* getaddrinfo's */
	struct plocal		*cache;		/* the proxy's, thread only */
	struct plocaddr		*local;		/* the host's addresses */
	size_t			 nlocal;
	int			 local_err;	/* getifaddrs's errno */
};

/* One client connection. */
struct pconn {
	TAILQ_ENTRY(pconn)	 entry;
	struct proxy		*p;
	enum pstate		 state;
	struct bufferevent	*cl, *up;
	struct pgrant		*grant;		/* NULL until it is known */
	char			 method[16];
	char			*host;
	int			 port;
	char			*head;		/* plain HTTP: what goes up */
	char			 addr[INET6_ADDRSTRLEN];
	struct plookup		*lookup;
	char			*reason;	/* refused: why */
	int			 allowed;
	int			 cl_done;	/* the client sends no more:
						   upstream gets its FIN once
						   the rest is out */
	int			 fin_sent;
	unsigned long long	 sent, received;
};

struct proxy {
	struct event_base	*base;
	struct evconnlistener	*lev;
	int			 port;
	struct syncer		*dns;
	struct plocal		 local;		/* the DNS thread's */
	char			**private_hosts;
	struct sockaddr_storage	 refused;
	socklen_t		 refused_len;
	proxy_audit_cb		 audit;
	void			*arg;
	LIST_HEAD(, pgrant)	 grants;
	TAILQ_HEAD(, pconn)	 conns;	/* the oldest first */
	unsigned		 nconns;
	unsigned		 max_conns;	/* as the fd limit allows */
};

#define PROXY_STR2(x)	#x
#define PROXY_STR(x)	PROXY_STR2(x)

static void	proxy_client_read_cb(struct bufferevent *, void *);
static void	proxy_drained_cb(struct bufferevent *, void *);
static void	proxy_up_fin(struct pconn *);
static void	proxy_event_cb(struct bufferevent *, short, void *);

/* The loopback interface up, in the namespace the caller is in. */
static int
proxy_lo_up(void)
{
	struct ifreq	ifr;
	int		fd, rc = -1;

	if ((fd = socket(AF_INET, SOCK_DGRAM|SOCK_CLOEXEC, 0)) == -1)
		return (-1);
	memset(&ifr, 0, sizeof ifr);
	strcpy(ifr.ifr_name, "lo");
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) == 0) {
		ifr.ifr_flags |= IFF_UP|IFF_RUNNING;
		rc = ioctl(fd, SIOCSIFFLAGS, &ifr);
	}
	close(fd);
	return (rc);
}

/* Where the listening socket is made: a thread of its own enters netns. */
struct plisten {
	int	netns_fd;
	int	fd;
	int	err;
};

static void *
proxy_listen_thread(void *arg)
{
	struct plisten		*l = arg;
	struct sockaddr_in	 sin;

	if (l->netns_fd != -1 && (setns(l->netns_fd, CLONE_NEWNET) == -1 ||
	    proxy_lo_up() == -1)) {
		l->err = errno;
		return (NULL);
	}
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((l->fd = socket(AF_INET, SOCK_STREAM|SOCK_NONBLOCK|SOCK_CLOEXEC,
	    0)) == -1 || bind(l->fd, (struct sockaddr *)&sin, sizeof sin) ==
	    -1 || listen(l->fd, 128) == -1) {
		l->err = errno;
		if (l->fd != -1)
			close(l->fd);
		l->fd = -1;
	}
	return (NULL);
}

/* The listening socket, inside netns_fd's namespace (-1: this one). */
static int
proxy_listen(int netns_fd)
{
	struct plisten	l = { netns_fd, -1, 0 };
	pthread_t	t;
	int		rc;

	if ((rc = pthread_create(&t, NULL, proxy_listen_thread, &l)) != 0) {
		errno = rc;
		return (-1);
	}
	pthread_join(t, NULL);
	if (l.fd == -1)
		errno = l.err;
	return (l.fd);
}

/* Ends a connection: audited once, both sides closed, memory freed. */
static void
proxy_conn_free(struct pconn *pc)
{
	struct proxy		*p = pc->p;
	struct proxy_event	 ev;

	if (p->audit != NULL && (pc->allowed || pc->reason != NULL)) {
		memset(&ev, 0, sizeof ev);
		ev.id = pc->grant != NULL ? pc->grant->id : NULL;
		ev.method = pc->method;
		ev.host = pc->host != NULL ? pc->host : "";
		ev.port = pc->port;
		ev.addr = pc->addr[0] != '\0' ? pc->addr : NULL;
		ev.verdict = pc->allowed ? "allowed" : "refused";
		ev.reason = pc->reason;
		ev.sent = pc->sent;
		ev.received = pc->received;
		p->audit(&ev, p->arg);
	}
	if (pc->lookup != NULL)
		pc->lookup->pc = NULL;	/* freed when it comes back */
	if (pc->grant != NULL && !pc->cl_done)
		pc->grant->nconns--;
	p->nconns--;
	TAILQ_REMOVE(&p->conns, pc, entry);
	if (pc->cl != NULL)
		bufferevent_free(pc->cl);
	if (pc->up != NULL)
		bufferevent_free(pc->up);
	free(pc->host);
	free(pc->head);
	free(pc->reason);
	free(pc);
}

/* The client got everything queued for it: gone. */
static void
proxy_closing_write_cb(struct bufferevent *bev, void *arg)
{
	(void)bev;
	proxy_conn_free(arg);
}

/* Sends the last bytes to the client, then closes. */
static void
proxy_close_after_flush(struct pconn *pc)
{
	pc->state = PROXY_CLOSING;
	if (pc->up != NULL) {
		bufferevent_free(pc->up);
		pc->up = NULL;
	}
	if (evbuffer_get_length(bufferevent_get_output(pc->cl)) == 0) {
		proxy_conn_free(pc);
		return;
	}
	bufferevent_disable(pc->cl, EV_READ);
	bufferevent_setwatermark(pc->cl, EV_WRITE, 0, 0);
	bufferevent_setcb(pc->cl, NULL, proxy_closing_write_cb,
	    proxy_event_cb, pc);
}

/*
 * Refuses the request with status (403, 407, 400, 502...) and a body
 * saying why (reason, and detail when not NULL), as the audit says it.
 */
static void
proxy_refuse(struct pconn *pc, int status, const char *reason,
    const char *detail)
{
	struct evbuffer	*out = bufferevent_get_output(pc->cl);
	const char	*text;

	free(pc->reason);
	xasprintf(&pc->reason, "%s%s%s", reason, detail != NULL ? ": " : "",
	    detail != NULL ? detail : "");
	switch (status) {
	case 400:
		text = "Bad Request";
		break;
	case 407:
		text = "Proxy Authentication Required";
		break;
	case 429:
		text = "Too Many Requests";
		break;
	case 431:
		text = "Request Header Fields Too Large";
		break;
	case 502:
		text = "Bad Gateway";
		break;
	default:
		text = "Forbidden";
		break;
	}
	evbuffer_add_printf(out, "HTTP/1.1 %d %s\r\n%s"
	    "Content-Type: text/plain\r\nContent-Length: %zu\r\n"
	    "Connection: close\r\n\r\nexecq proxy: %s\n", status, text,
	    status == 407 ? "Proxy-Authenticate: Basic realm=\"execq\"\r\n" :
	    "", strlen(pc->reason) + 14, pc->reason);
	proxy_close_after_flush(pc);
}

/* The grant whose credential is "execq:<token>" in base64, or NULL. */
static struct pgrant *
proxy_find_grant(struct proxy *p, const char *b64)
{
	struct pgrant	*g;
	char		*cred = NULL, *pw;
	size_t		 len, i;
	unsigned char	 diff;

	if (item_base64_decode(b64, strlen(b64), &cred, &len) == -1)
		return (NULL);
	if (len != sizeof PROXY_USER + TOKEN_LEN ||
	    memcmp(cred, PROXY_USER ":", sizeof PROXY_USER) != 0) {
		free(cred);
		return (NULL);
	}
	pw = cred + sizeof PROXY_USER;
	LIST_FOREACH(g, &p->grants, entry) {
		for (diff = 0, i = 0; i < TOKEN_LEN; i++)
			diff |= (unsigned char)(g->token[i] ^ pw[i]);
		if (diff == 0)
			break;
	}
	free(cred);
	return (g);
}

/*
 * Splits an authority "host:port" or "[v6]:port" (port def when
 * absent, as in a plain HTTP URL); host allocated. 0 or -1.
 */
static int
proxy_authority(const char *s, size_t len, int def, char **host, int *port)
{
	const char	*colon = NULL, *end = s + len, *h = s, *he;
	char		*ep, num[8];
	long		 n;

	if (len > 0 && *s == '[') {
		if ((he = memchr(s, ']', len)) == NULL)
			return (-1);
		h = s + 1;
		if (he + 1 < end && he[1] != ':')
			return (-1);
		colon = he + 1 < end ? he + 1 : NULL;
	} else {
		colon = memrchr(s, ':', len);
		he = colon != NULL ? colon : end;
	}
	if (he == h)
		return (-1);
	if (colon == NULL) {
		if (def == 0)
			return (-1);
		n = def;
	} else {
		if ((size_t)(end - colon - 1) >= sizeof num ||
		    end - colon - 1 == 0)
			return (-1);
		memcpy(num, colon + 1, (size_t)(end - colon - 1));
		num[end - colon - 1] = '\0';
		n = strtol(num, &ep, 10);
		if (*ep != '\0' || n < 1 || n > 65535 || num[0] == '+' ||
		    num[0] == '-')
			return (-1);
	}
	*host = xstrndup(h, (size_t)(he - h));
	*port = (int)n;
	return (0);
}

/* The value of header name in head's header lines, or NULL; borrowed. */
static char *
proxy_header(char *lines, const char *name, char **next)
{
	char	*line = lines, *eol, *v;
	size_t	 n = strlen(name);

	for (; *line != '\0'; line = eol + 2) {
		if ((eol = strstr(line, "\r\n")) == NULL || eol == line)
			return (NULL);
		if (strncasecmp(line, name, n) == 0 && line[n] == ':') {
			*eol = '\0';
			for (v = line + n + 1; *v == ' ' || *v == '\t'; v++)
				;
			*next = eol + 2;
			return (v);
		}
	}
	return (NULL);
}

/* 1 if c may be in a token: a method, a header's name (RFC 9110 5.6.2). */
static int
proxy_tchar(unsigned char c)
{
	return (c > 0x20 && c < 0x7f && strchr("\"(),/:;<=>?@[\\]{}", c) ==
	    NULL);
}

/*
 * 1 if head (len bytes, its blank line included) reads one way only:
 * "METHOD target HTTP/1.x", then "name: value" lines, no NUL, no control
 * byte but tabs in values and the "\r\n" that ends a line, no line folded
 * onto the one before. What upstream reads is then what the proxy judged:
 * no bare "\n" a lenient server would take for a line of its own.
 */
static int
proxy_head_clean(const char *head, size_t len)
{
	const unsigned char	*end = (const unsigned char *)head + len - 2;
	const unsigned char	*line, *eol, *c;

	for (line = (const unsigned char *)head; line < end; line = eol + 2) {
		if ((eol = memmem(line, (size_t)(end - line), "\r\n", 2)) ==
		    NULL)
			return (0);
		for (c = line; c < eol && proxy_tchar(*c); c++)
			;
		if (c == line)
			return (0);	/* folded, or no name */
		if (line == (const unsigned char *)head) {
			/* The request line: the target is visible ASCII. */
			if (*c != ' ')
				return (0);
			for (c++; c < eol && *c > 0x20 && *c < 0x7f; c++)
				;
			if ((size_t)(eol - c) != 9 || (memcmp(c,
			    " HTTP/1.1", 9) != 0 && memcmp(c, " HTTP/1.0", 9) !=
			    0))
				return (0);
			continue;
		}
		if (c == eol || *c != ':')
			return (0);
		for (c++; c < eol; c++)
			if ((*c < 0x20 && *c != '\t') || *c == 0x7f)
				return (0);
	}
	return (1);
}

/*
 * A plain HTTP request as it goes upstream: origin form, Host the URL's
 * authority (a client's own Host would name another site at the address
 * the proxy judged for this one), the proxy's own headers and the
 * hop-by-hop ones dropped, one request per connection.
 */
static char *
proxy_rewrite(const char *method, const char *path, const char *authority,
    size_t authority_len, const char *lines)
{
	static const char *const drop[] = {
		"Proxy-Authorization", "Proxy-Connection", "Connection",
		"Keep-Alive", "Host", NULL
	};
	struct evbuffer	*b = evbuffer_new();
	const char	*line, *eol;
	char		*out;
	size_t		 i, len;
	int		 skip;

	if (b == NULL)
		fatal("out of memory (libevent)");
	evbuffer_add_printf(b, "%s %s HTTP/1.1\r\nHost: %.*s\r\n", method, path,
	    (int)authority_len, authority);
	for (line = lines; (eol = strstr(line, "\r\n")) != NULL &&
	    eol != line; line = eol + 2) {
		for (skip = 0, i = 0; drop[i] != NULL && !skip; i++)
			skip = strncasecmp(line, drop[i], strlen(drop[i])) ==
			    0 && line[strlen(drop[i])] == ':';
		if (!skip)
			evbuffer_add(b, line, (size_t)(eol - line) + 2);
	}
	evbuffer_add_printf(b, "Connection: close\r\n\r\n");
	len = evbuffer_get_length(b);
	out = xmalloc(len + 1);
	evbuffer_remove(b, out, len);
	out[len] = '\0';
	evbuffer_free(b);
	return (out);
}

/* The host's addresses read anew into c; 0, or -1 with errno. */
static int
proxy_local_read(struct plocal *c)
{
	struct ifaddrs		*ifa, *i;
	const void		*src;
	size_t			 n = 0, len;

	if (getifaddrs(&ifa) == -1)
		return (-1);
	for (i = ifa; i != NULL; i = i->ifa_next)
		n++;
	free(c->a);
	c->a = xcalloc(n + 1, sizeof *c->a);
	c->n = 0;
	for (i = ifa; i != NULL; i = i->ifa_next) {
		if (i->ifa_addr == NULL)
			continue;
		if (i->ifa_addr->sa_family == AF_INET) {
			src = &((const struct sockaddr_in *)
			    i->ifa_addr)->sin_addr;
			len = 4;
		} else if (i->ifa_addr->sa_family == AF_INET6) {
			src = &((const struct sockaddr_in6 *)
			    i->ifa_addr)->sin6_addr;
			len = 16;
		} else
			continue;
		c->a[c->n].family = i->ifa_addr->sa_family;
		memcpy(c->a[c->n].addr, src, len);
		c->n++;
	}
	freeifaddrs(ifa);
	c->read_ms = clock_mono_ms();
	return (0);
}

/* getaddrinfo, and the host's addresses (kept a while), on the DNS thread. */
static int
proxy_lookup_work(void *arg)
{
	struct plookup		*lk = arg;
	struct plocal		*c = lk->cache;
	struct addrinfo		 hints;

	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	lk->err = getaddrinfo(lk->host, lk->port, &hints, &lk->res);
	if ((c->read_ms == 0 || clock_mono_ms() - c->read_ms >=
	    PROXY_LOCAL_TTL_MS) && proxy_local_read(c) == -1) {
		lk->local_err = errno;
		c->read_ms = 0;		/* read again next time */
		return (0);
	}
	lk->local = xcalloc(c->n + 1, sizeof *lk->local);
	memcpy(lk->local, c->a, c->n * sizeof *c->a);
	lk->nlocal = c->n;
	return (0);
}

/*
 * 1 if sa is an address of the worker's host (any interface, an IPv4 one
 * in its IPv6-mapped form too): a public name may be made to resolve to
 * the host's own public address, where its services listen on 0.0.0.0.
 */
static int
proxy_is_local(const struct plookup *lk, const struct sockaddr *sa)
{
	const struct sockaddr_in6	*s6;
	const void			*a;
	size_t				 i, n;
	int				 fam = sa->sa_family;

	s6 = (const struct sockaddr_in6 *)sa;
	if (fam == AF_INET) {
		a = &((const struct sockaddr_in *)sa)->sin_addr;
		n = 4;
	} else if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) {
		a = s6->sin6_addr.s6_addr + 12;
		n = 4;
		fam = AF_INET;
	} else {
		a = &s6->sin6_addr;
		n = 16;
	}
	for (i = 0; i < lk->nlocal; i++)
		if (lk->local[i].family == fam &&
		    memcmp(a, lk->local[i].addr, n) == 0)
			return (1);
	return (0);
}

/* 1 if sa is the refused address (the worker's Redis), port and all. */
static int
proxy_is_refused(const struct proxy *p, const struct sockaddr *sa)
{
	const struct sockaddr_in	*a, *b;
	const struct sockaddr_in6	*a6, *b6;

	if (p->refused_len == 0 || sa->sa_family != p->refused.ss_family)
		return (0);
	if (sa->sa_family == AF_INET) {
		a = (const struct sockaddr_in *)sa;
		b = (const struct sockaddr_in *)&p->refused;
		return (a->sin_port == b->sin_port &&
		    a->sin_addr.s_addr == b->sin_addr.s_addr);
	}
	a6 = (const struct sockaddr_in6 *)sa;
	b6 = (const struct sockaddr_in6 *)&p->refused;
	return (a6->sin6_port == b6->sin6_port &&
	    memcmp(&a6->sin6_addr, &b6->sin6_addr, sizeof a6->sin6_addr) ==
	    0);
}

/* 1 if host may resolve to private addresses (private_hosts). */
static int
proxy_private_ok(const struct proxy *p, const char *host)
{
	size_t	i;

	for (i = 0; p->private_hosts[i] != NULL; i++)
		if (strcasecmp(p->private_hosts[i], host) == 0)
			return (1);
	return (0);
}

/* The upstream side connected (or not). */
static void
proxy_up_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct pconn	*pc = arg;
	struct evbuffer	*out;

	(void)bev;
	if (pc->state == PROXY_DIAL && (what & BEV_EVENT_CONNECTED)) {
		pc->state = PROXY_PIPE;
		pc->allowed = 1;
		out = bufferevent_get_output(pc->cl);
		if (pc->head == NULL)
			evbuffer_add_printf(out, "HTTP/1.1 200 Connection "
			    "established\r\n\r\n");
		else {
			bufferevent_write(pc->up, pc->head, strlen(pc->head));
			pc->sent += strlen(pc->head);
		}
		bufferevent_enable(pc->cl, EV_READ);
		bufferevent_enable(pc->up, EV_READ);
		proxy_client_read_cb(pc->cl, pc);	/* what came early */
		return;
	}
	if (pc->state == PROXY_DIAL) {
		proxy_refuse(pc, 502, "cannot connect", strerror(
		    EVUTIL_SOCKET_ERROR() != 0 ? EVUTIL_SOCKET_ERROR() :
		    ECONNREFUSED));
		return;
	}
	proxy_event_cb(bev, what, arg);
}

/* The name's addresses came: judge them, dial the first one allowed. */
static void
proxy_lookup_done_cb(int err, void *arg)
{
	struct plookup		*lk = arg;
	struct pconn		*pc = lk->pc;
	struct addrinfo		*ai;
	const struct sockaddr	*sa = NULL;
	const char		*why = NULL;
	char			 first[INET6_ADDRSTRLEN + 32];
	socklen_t		 salen = 0;
	int			 any = 0;

	(void)err;
	first[0] = '\0';
	if (pc != NULL)
		pc->lookup = NULL;
	if (pc != NULL && lk->err != 0)
		proxy_refuse(pc, 502, "cannot resolve the name",
		    gai_strerror(lk->err));
	/* A name that leads to the worker's Redis is refused whole. */
	for (ai = lk->res; pc != NULL && lk->err == 0 && ai != NULL;
	    ai = ai->ai_next)
		if (proxy_is_refused(pc->p, ai->ai_addr)) {
			proxy_refuse(pc, 403, "the name leads to the worker's "
			    "Redis", NULL);
			pc = NULL;
		}
	for (ai = lk->res; pc != NULL && lk->err == 0 && ai != NULL;
	    ai = ai->ai_next) {
		if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
			continue;
		any = 1;
		if (proxy_private_ok(pc->p, pc->host) ||
		    (netaddr_public(ai->ai_addr, ai->ai_addrlen, &why) &&
		    lk->local_err == 0 && !proxy_is_local(lk,
		    ai->ai_addr))) {
			sa = ai->ai_addr;
			salen = ai->ai_addrlen;
			break;
		}
		if (why == NULL)
			why = lk->local_err != 0 ? "the host's addresses "
			    "unknown" : "an address of the worker's host";
		if (first[0] == '\0') {
			getnameinfo(ai->ai_addr, ai->ai_addrlen, first,
			    INET6_ADDRSTRLEN, NULL, 0, NI_NUMERICHOST);
			snprintf(first + strlen(first), sizeof first -
			    strlen(first), " (%s)", why);
		}
	}
	if (pc != NULL && lk->err == 0 && sa == NULL)
		proxy_refuse(pc, 403, any ? "the name resolves only to "
		    "addresses commands may not reach" : "the name has no "
		    "address", first[0] != '\0' ? first : NULL);
	else if (pc != NULL && sa != NULL) {
		getnameinfo(sa, salen, pc->addr, sizeof pc->addr, NULL, 0,
		    NI_NUMERICHOST);
		pc->state = PROXY_DIAL;
		pc->up = bufferevent_socket_new(pc->p->base, -1,
		    BEV_OPT_CLOSE_ON_FREE);
		if (pc->up == NULL)
			fatal("out of memory (libevent)");
		bufferevent_setcb(pc->up, proxy_client_read_cb,
		    proxy_drained_cb, proxy_up_event_cb, pc);
		if (bufferevent_socket_connect(pc->up, sa, (int)salen) == -1)
			proxy_refuse(pc, 502, "cannot connect", strerror(
			    errno));
	}
	if (lk->res != NULL)
		freeaddrinfo(lk->res);
	free(lk->local);
	free(lk->host);
	free(lk);
}

/*
 * The request head is in (len bytes of in, "\r\n\r\n" included): who
 * asks, for what, and may it. 0: on its way up; -1: refused (answered).
 */
static int
proxy_judge(struct pconn *pc, char *head, size_t len)
{
	struct proxy	*p = pc->p;
	struct plookup		*lk;
	struct sockaddr_storage	 ss;
	socklen_t		 sslen;
	char			*sp1, *sp2, *eol, *lines, *auth, *next;
	char			*target, *path = NULL, *origin = NULL;
	int			 connect;

	if (!proxy_head_clean(head, len) ||
	    (eol = strstr(head, "\r\n")) == NULL) {
		proxy_refuse(pc, 400, "not an HTTP/1 request head", "control "
		    "bytes, folded lines or a bad request line");
		return (-1);
	}
	*eol = '\0';
	lines = eol + 2;
	if ((sp1 = strchr(head, ' ')) == NULL ||
	    (sp2 = strchr(sp1 + 1, ' ')) == NULL ||
	    strncmp(sp2 + 1, "HTTP/1.", 7) != 0 ||
	    (size_t)(sp1 - head) >= sizeof pc->method) {
		proxy_refuse(pc, 400, "not an HTTP/1 request", NULL);
		return (-1);
	}
	memcpy(pc->method, head, (size_t)(sp1 - head));
	pc->method[sp1 - head] = '\0';
	*sp2 = '\0';
	target = sp1 + 1;
	connect = strcmp(pc->method, "CONNECT") == 0;
	if (connect) {
		if (proxy_authority(target, strlen(target), 0, &pc->host,
		    &pc->port) == -1) {
			proxy_refuse(pc, 400, "CONNECT wants host:port", NULL);
			return (-1);
		}
	} else {
		if (strncasecmp(target, "http://", 7) != 0) {
			proxy_refuse(pc, 400, "only http:// URLs and CONNECT "
			    "(https goes through CONNECT)", NULL);
			return (-1);
		}
		target += 7;
		path = target + strcspn(target, "/?");
		if (proxy_authority(target, (size_t)(path - target), 80,
		    &pc->host, &pc->port) == -1) {
			proxy_refuse(pc, 400, "bad URL", NULL);
			return (-1);
		}
		xasprintf(&origin, "%s%s", *path == '/' ? "" : "/", path);
	}
	auth = proxy_header(lines, "Proxy-Authorization", &next);
	if (auth == NULL || strncasecmp(auth, "Basic ", 6) != 0 ||
	    (pc->grant = proxy_find_grant(p, auth + 6)) == NULL) {
		free(origin);
		proxy_refuse(pc, 407, "no credential of a running command",
		    "use the proxy URL in HTTPS_PROXY as it is");
		return (-1);
	}
	next[-2] = '\r';	/* the line is whole again */
	if (++pc->grant->nconns > PROXY_MAX_PER_GRANT) {
		free(origin);
		proxy_refuse(pc, 429, "too many connections at once", "a "
		    "command may have " PROXY_STR(PROXY_MAX_PER_GRANT));
		return (-1);
	}
	sslen = sizeof ss;
	if (!netaddr_host_valid(pc->host) &&
	    netaddr_parse(pc->host, &ss, &sslen) == -1) {
		free(origin);
		proxy_refuse(pc, 400, "not a host name", NULL);
		return (-1);
	}
	if (netaddr_host_match_list((const char *const *)pc->grant->domains,
	    pc->host) == NULL) {
		free(origin);
		proxy_refuse(pc, 403, "this host is not granted to the "
		    "command", "ask for it in the item's args.network "
		    "(a person approves it)");
		return (-1);
	}
	if (!connect)
		pc->head = proxy_rewrite(pc->method, origin, target,
		    (size_t)(path - target), lines);
	free(origin);
	pc->state = PROXY_LOOKUP;
	bufferevent_set_timeouts(pc->cl, NULL, NULL);
	bufferevent_disable(pc->cl, EV_READ);	/* until it is connected */
	lk = xcalloc(1, sizeof *lk);
	lk->pc = pc;
	lk->host = xstrdup(pc->host);
	lk->cache = &p->local;
	snprintf(lk->port, sizeof lk->port, "%d", pc->port);
	pc->lookup = lk;
	syncer_call(p->dns, proxy_lookup_work, proxy_lookup_done_cb, lk);
	return (0);
}

/* Bytes from one side go to the other, as fast as it takes them. */
static void
proxy_client_read_cb(struct bufferevent *bev, void *arg)
{
	struct pconn		*pc = arg;
	struct bufferevent	*to;
	struct evbuffer		*in = bufferevent_get_input(bev);
	struct evbuffer_ptr	 end;
	size_t			 len, n;
	char			*head;

	if (pc->state == PROXY_HEAD) {
		end = evbuffer_search(in, "\r\n\r\n", 4, NULL);
		if (end.pos == -1) {
			if (evbuffer_get_length(in) > PROXY_HEAD_MAX)
				proxy_refuse(pc, 431, "request head too "
				    "large", NULL);
			return;
		}
		len = (size_t)end.pos + 4;
		if (len > PROXY_HEAD_MAX) {
			proxy_refuse(pc, 431, "request head too large", NULL);
			return;
		}
		head = xmalloc(len + 1);
		evbuffer_remove(in, head, len);
		head[len] = '\0';
		proxy_judge(pc, head, len);
		free(head);
		return;
	}
	if (pc->state != PROXY_PIPE)
		return;
	to = bev == pc->cl ? pc->up : pc->cl;
	n = evbuffer_get_length(in);
	if (n == 0)
		return;
	if (bev == pc->cl)
		pc->sent += n;
	else
		pc->received += n;
	evbuffer_add_buffer(bufferevent_get_output(to), in);
	if (evbuffer_get_length(bufferevent_get_output(to)) >=
	    PROXY_HIGH_WATER) {
		/* Wait until the other side drained half of it. */
		bufferevent_disable(bev, EV_READ);
		bufferevent_setwatermark(to, EV_WRITE, PROXY_HIGH_WATER / 2,
		    0);
	}
}

/*
 * The client sends no more: once upstream has taken everything it sent,
 * upstream's write side is shut, as the client's was.
 */
static void
proxy_up_fin(struct pconn *pc)
{
	if (pc->fin_sent || evbuffer_get_length(bufferevent_get_output(
	    pc->up)) > 0)
		return;		/* proxy_drained_cb calls again */
	pc->fin_sent = 1;
	shutdown(bufferevent_getfd(pc->up), SHUT_WR);
}

/* One side drained below the mark: read its peer again. */
static void
proxy_drained_cb(struct bufferevent *bev, void *arg)
{
	struct pconn	*pc = arg;

	if (pc->state != PROXY_PIPE)
		return;
	bufferevent_setwatermark(bev, EV_WRITE, 0, 0);
	if (bev == pc->up && pc->cl_done) {
		proxy_up_fin(pc);
		return;
	}
	bufferevent_enable(bev == pc->cl ? pc->up : pc->cl, EV_READ);
}

/*
 * End of file or an error: from the client, or before the pipe, the end;
 * from upstream, the client still gets what came, then it closes.
 */
static void
proxy_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct pconn	*pc = arg;
	struct timeval	 tv = { PROXY_FIN_TIMEOUT_S, 0 };

	if (!(what & (BEV_EVENT_EOF|BEV_EVENT_ERROR|BEV_EVENT_TIMEOUT)))
		return;
	if (pc->state != PROXY_PIPE ||
	    (bev == pc->cl && !(what & BEV_EVENT_EOF))) {
		proxy_conn_free(pc);
		return;
	}
	if (bev == pc->cl) {
		/* Done sending (shutdown or close): what it sent goes up,
		   then a FIN; the answer may still come back. */
		if (evbuffer_get_length(bufferevent_get_input(bev)) > 0)
			proxy_client_read_cb(bev, pc);
		pc->cl_done = 1;
		bufferevent_disable(pc->cl, EV_READ);
		/* No longer the command's to count; upstream has a while
		   to answer and close. */
		pc->grant->nconns--;
		bufferevent_set_timeouts(pc->up, &tv, NULL);
		proxy_up_fin(pc);
		return;
	}
	if (evbuffer_get_length(bufferevent_get_input(bev)) > 0)
		proxy_client_read_cb(bev, pc);
	proxy_close_after_flush(pc);
}

static void
proxy_accept_cb(struct evconnlistener *lev, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct proxy	*p = arg;
	struct pconn	*pc;
	struct timeval	 tv = { PROXY_HEAD_TIMEOUT_S, 0 };

	(void)lev;
	(void)sa;
	(void)salen;
	/*
	 * Full: the oldest connection that has not said who it is makes
	 * room (a command opening connections that never send a head
	 * would otherwise shut out every other command), or, if all have,
	 * this one is closed, told nothing: it floods us.
	 */
	if (p->nconns >= p->max_conns) {
		TAILQ_FOREACH(pc, &p->conns, entry)
			if (pc->state == PROXY_HEAD)
				break;
		if (pc == NULL) {
			evutil_closesocket(fd);
			return;
		}
		proxy_conn_free(pc);
	}
	p->nconns++;
	pc = xcalloc(1, sizeof *pc);
	pc->p = p;
	pc->cl = bufferevent_socket_new(p->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (pc->cl == NULL)
		fatal("out of memory (libevent)");
	TAILQ_INSERT_TAIL(&p->conns, pc, entry);
	bufferevent_setcb(pc->cl, proxy_client_read_cb, proxy_drained_cb,
	    proxy_event_cb, pc);
	bufferevent_set_timeouts(pc->cl, &tv, NULL);	/* the head */
	bufferevent_enable(pc->cl, EV_READ);
}

/*
 * How many connections the worker's descriptors allow: two each (the
 * client's, upstream's) beside as many again for the worker's own work,
 * the soft limit raised toward the hard one if need be. A proxy that
 * ran the worker out of descriptors would stop every command, and its
 * listener would spin on EMFILE.
 */
static unsigned
proxy_max_conns(void)
{
	struct rlimit	rl;
	rlim_t		want = 3 * PROXY_MAX_CONNS;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1)
		return (PROXY_MAX_CONNS / 4);
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
		rl.rlim_cur = rl.rlim_max == RLIM_INFINITY ||
		    rl.rlim_max > want ? want : rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) == -1)
			getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= want)
		return (PROXY_MAX_CONNS);
	return ((unsigned)(rl.rlim_cur / 3));
}

struct proxy *
proxy_create(struct event_base *base, const struct proxy_config *cfg)
{
	struct proxy		*p;
	struct sockaddr_in	 sin;
	socklen_t		 len = sizeof sin;
	int			 fd, e;

	if ((fd = proxy_listen(cfg->netns_fd)) == -1)
		return (NULL);
	if (getsockname(fd, (struct sockaddr *)&sin, &len) == -1) {
		e = errno;
		close(fd);
		errno = e;
		return (NULL);
	}
	p = xcalloc(1, sizeof *p);
	p->base = base;
	p->port = ntohs(sin.sin_port);
	p->max_conns = proxy_max_conns();
	p->private_hosts = cfg->private_hosts != NULL ?
	    xstrvdup(cfg->private_hosts) : xcalloc(1, sizeof (char *));
	if (cfg->refused != NULL && cfg->refused_len <= sizeof p->refused) {
		memcpy(&p->refused, cfg->refused, cfg->refused_len);
		p->refused_len = cfg->refused_len;
	}
	p->audit = cfg->audit;
	p->arg = cfg->arg;
	LIST_INIT(&p->grants);
	TAILQ_INIT(&p->conns);
	if ((p->dns = syncer_create(base)) == NULL) {
		e = errno;
		close(fd);
		xstrvfree(p->private_hosts);
		free(p);
		errno = e;
		return (NULL);
	}
	p->lev = evconnlistener_new(base, proxy_accept_cb, p,
	    LEV_OPT_CLOSE_ON_FREE|LEV_OPT_CLOSE_ON_EXEC, -1, fd);
	if (p->lev == NULL)
		fatal("out of memory (libevent)");
	return (p);
}

void
proxy_free(struct proxy *p)
{
	struct pgrant	*g;
	struct pconn	*pc;

	if (p == NULL)
		return;
	while ((pc = TAILQ_FIRST(&p->conns)) != NULL)
		proxy_conn_free(pc);
	syncer_free(p->dns);	/* lookups under way: freed, ECANCELED */
	free(p->local.a);
	while ((g = LIST_FIRST(&p->grants)) != NULL) {
		LIST_REMOVE(g, entry);
		free(g->id);
		xstrvfree(g->domains);
		free(g);
	}
	evconnlistener_free(p->lev);
	xstrvfree(p->private_hosts);
	free(p);
}

int
proxy_port(const struct proxy *p)
{
	return (p->port);
}

char *
proxy_grant(struct proxy *p, const char *id, const char *const *domains)
{
	struct pgrant	*g;
	char		*url;

	g = xcalloc(1, sizeof *g);
	g->id = xstrdup(id);
	token_new(g->token);
	g->domains = domains != NULL ? xstrvdup(domains) :
	    xcalloc(1, sizeof (char *));
	LIST_INSERT_HEAD(&p->grants, g, entry);
	xasprintf(&url, "http://" PROXY_USER ":%s@127.0.0.1:%d", g->token,
	    p->port);
	return (url);
}

void
proxy_revoke(struct proxy *p, const char *id)
{
	struct pgrant	*g;
	struct pconn	*pc, *next;

	LIST_FOREACH(g, &p->grants, entry)
		if (strcmp(g->id, id) == 0)
			break;
	if (g == NULL)
		return;
	for (pc = TAILQ_FIRST(&p->conns); pc != NULL; pc = next) {
		next = TAILQ_NEXT(pc, entry);
		if (pc->grant == g)
			proxy_conn_free(pc);
	}
	LIST_REMOVE(g, entry);
	free(g->id);
	xstrvfree(g->domains);
	free(g);
}
