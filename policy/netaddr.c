/* What a command's egress proxy may dial: public addresses, names, grants. */

#include <sys/socket.h>

#include <netinet/in.h>
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "policy/netaddr.h"

/* Why an IPv4 address is not public; NETADDR_V4_PUBLIC when it is. */
enum netaddr_v4why {
	NETADDR_V4_UNSPECIFIED,
	NETADDR_V4_PRIVATE,
	NETADDR_V4_CGNAT,
	NETADDR_V4_LOOPBACK,
	NETADDR_V4_LINK_LOCAL,
	NETADDR_V4_METADATA,
	NETADDR_V4_RESERVED,
	NETADDR_V4_DOCUMENTATION,
	NETADDR_V4_BENCHMARKING,
	NETADDR_V4_MULTICAST,
	NETADDR_V4_BROADCAST,
	NETADDR_V4_PUBLIC
};

/*
 * The reasons, with prefix p, by enum netaddr_v4why: one table for a bare
 * IPv4 address and one for each IPv6 form that carries one, so that every
 * reason stays a static string ("NAT64 of loopback").
 */
#define NETADDR_V4_WHYS(p) {						\
	[NETADDR_V4_UNSPECIFIED] = p "unspecified",			\
	[NETADDR_V4_PRIVATE] = p "private",				\
	[NETADDR_V4_CGNAT] = p "carrier-grade NAT",			\
	[NETADDR_V4_LOOPBACK] = p "loopback",				\
	[NETADDR_V4_LINK_LOCAL] = p "link-local",			\
	[NETADDR_V4_METADATA] = p "cloud metadata",			\
	[NETADDR_V4_RESERVED] = p "reserved",				\
	[NETADDR_V4_DOCUMENTATION] = p "documentation",			\
	[NETADDR_V4_BENCHMARKING] = p "benchmarking",			\
	[NETADDR_V4_MULTICAST] = p "multicast",				\
	[NETADDR_V4_BROADCAST] = p "broadcast",				\
}
static const char *const netaddr_why_v4[] = NETADDR_V4_WHYS("");
static const char *const netaddr_why_mapped[] =
    NETADDR_V4_WHYS("IPv4-mapped ");
static const char *const netaddr_why_compat[] =
    NETADDR_V4_WHYS("IPv4-compatible ");
static const char *const netaddr_why_nat64[] = NETADDR_V4_WHYS("NAT64 of ");
static const char *const netaddr_why_6to4[] = NETADDR_V4_WHYS("6to4 of ");

#define NETADDR_V4(a, b, c, d)						\
	((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))

/* IPv4 ranges that are not public; the first that holds an address wins. */
static const struct netaddr_v4row {
	uint32_t		net;
	int			bits;
	enum netaddr_v4why	why;
} netaddr_v4rows[] = {
	{ NETADDR_V4(0, 0, 0, 0), 8, NETADDR_V4_UNSPECIFIED },
	{ NETADDR_V4(10, 0, 0, 0), 8, NETADDR_V4_PRIVATE },
	{ NETADDR_V4(100, 64, 0, 0), 10, NETADDR_V4_CGNAT },
	{ NETADDR_V4(127, 0, 0, 0), 8, NETADDR_V4_LOOPBACK },
	{ NETADDR_V4(169, 254, 169, 254), 32, NETADDR_V4_METADATA },
	{ NETADDR_V4(169, 254, 0, 0), 16, NETADDR_V4_LINK_LOCAL },
	{ NETADDR_V4(172, 16, 0, 0), 12, NETADDR_V4_PRIVATE },
	{ NETADDR_V4(192, 0, 0, 0), 24, NETADDR_V4_RESERVED },
	{ NETADDR_V4(192, 0, 2, 0), 24, NETADDR_V4_DOCUMENTATION },
	{ NETADDR_V4(192, 88, 99, 0), 24, NETADDR_V4_RESERVED },
	{ NETADDR_V4(192, 168, 0, 0), 16, NETADDR_V4_PRIVATE },
	{ NETADDR_V4(198, 18, 0, 0), 15, NETADDR_V4_BENCHMARKING },
	{ NETADDR_V4(198, 51, 100, 0), 24, NETADDR_V4_DOCUMENTATION },
	{ NETADDR_V4(203, 0, 113, 0), 24, NETADDR_V4_DOCUMENTATION },
	{ NETADDR_V4(224, 0, 0, 0), 4, NETADDR_V4_MULTICAST },
	{ NETADDR_V4(255, 255, 255, 255), 32, NETADDR_V4_BROADCAST },
	{ NETADDR_V4(240, 0, 0, 0), 4, NETADDR_V4_RESERVED },
};

/*
 * An IPv6 form that carries an IPv4 address: the reasons, and where the
 * IPv4 address's four bytes are, for each layout the form may use.
 */
struct netaddr_embed {
	const char *const	*why;
	int			 nlayouts;
	uint8_t			 at[4][4];
};

static const struct netaddr_embed netaddr_mapped = {
	netaddr_why_mapped, 1, { { 12, 13, 14, 15 } }
};
static const struct netaddr_embed netaddr_compat = {
	netaddr_why_compat, 1, { { 12, 13, 14, 15 } }
};
static const struct netaddr_embed netaddr_nat64 = {
	netaddr_why_nat64, 1, { { 12, 13, 14, 15 } }
};
/*
 * The local-use NAT64 prefix (RFC 8215) is cut by each site to a /48,
 * /56, /64 or /96 (RFC 6052 2.2: byte 8 is skipped), and which one is not
 * known here: an address is public only if it is read as a public IPv4
 * address whichever layout the site chose (the /96 first, the usual one,
 * whose reason is the likeliest true).
 */
static const struct netaddr_embed netaddr_nat64_local = {
	netaddr_why_nat64, 4, {
		{ 12, 13, 14, 15 }, { 9, 10, 11, 12 }, { 7, 9, 10, 11 },
		{ 6, 7, 9, 10 }
	}
};
static const struct netaddr_embed netaddr_6to4 = {
	netaddr_why_6to4, 1, { { 2, 3, 4, 5 } }
};

/*
 * IPv6 ranges that are not public, or that carry an IPv4 address judged
 * instead (embed); the first that holds an address wins. The prefix is
 * written in 16-bit groups, as in its text.
 */
static const struct netaddr_v6row {
	uint16_t			 net[8];
	int				 bits;
	const char			*why;
	const struct netaddr_embed	*embed;
} netaddr_v6rows[] = {
	{ { 0 }, 128, "unspecified", NULL },
	{ { 0, 0, 0, 0, 0, 0, 0, 1 }, 128, "loopback", NULL },
	{ { 0, 0, 0, 0, 0, 0xffff }, 96, NULL, &netaddr_mapped },
	{ { 0 }, 96, NULL, &netaddr_compat },
	{ { 0x64, 0xff9b }, 96, NULL, &netaddr_nat64 },
	{ { 0x64, 0xff9b, 1 }, 48, NULL, &netaddr_nat64_local },
	{ { 0x100 }, 64, "discard-only", NULL },
	{ { 0x2001, 0 }, 32, "Teredo", NULL },
	{ { 0x2001, 2, 0 }, 48, "benchmarking", NULL },
	{ { 0x2001, 0xdb8 }, 32, "documentation", NULL },
	{ { 0x3fff }, 20, "documentation", NULL },
	{ { 0x2002 }, 16, NULL, &netaddr_6to4 },
	{ { 0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254 }, 128, "cloud metadata",
	    NULL },
	{ { 0xfc00 }, 7, "unique local", NULL },
	{ { 0xfe80 }, 10, "link-local", NULL },
	{ { 0xfec0 }, 10, "site-local", NULL },
	{ { 0xff00 }, 8, "multicast", NULL },
};

#define NETADDR_NITEMS(a)	(sizeof (a) / sizeof (a)[0])

/* Why the IPv4 address a (host order) is not public, or NETADDR_V4_PUBLIC. */
static enum netaddr_v4why
netaddr_v4_judge(uint32_t a)
{
	const struct netaddr_v4row	*r;
	uint32_t			 mask;
	size_t				 i;

	for (i = 0; i < NETADDR_NITEMS(netaddr_v4rows); i++) {
		r = &netaddr_v4rows[i];
		mask = r->bits == 0 ? 0 : UINT32_MAX << (32 - r->bits);
		if ((a & mask) == r->net)
			return (r->why);
	}
	return (NETADDR_V4_PUBLIC);
}

/* 1 if the IPv6 address b (16 bytes) is in r's prefix. */
static int
netaddr_v6_in(const uint8_t *b, const struct netaddr_v6row *r)
{
	uint16_t	g, mask;
	int		i, left;

	for (i = 0, left = r->bits; left > 0; i++, left -= 16) {
		g = (uint16_t)(b[2 * i] << 8 | b[2 * i + 1]);
		mask = left >= 16 ? 0xffff : (uint16_t)(0xffff << (16 - left));
		if ((g & mask) != r->net[i])
			return (0);
	}
	return (1);
}

/* Why the IPv4 address(es) e carries in b are not public, or NULL. */
static const char *
netaddr_embed_judge(const uint8_t *b, const struct netaddr_embed *e)
{
	const uint8_t		*at;
	enum netaddr_v4why	 w;
	int			 i;

	for (i = 0; i < e->nlayouts; i++) {
		at = e->at[i];
		w = netaddr_v4_judge(NETADDR_V4(b[at[0]], b[at[1]], b[at[2]],
		    b[at[3]]));
		if (w != NETADDR_V4_PUBLIC)
			return (e->why[w]);
	}
	return (NULL);
}

/* Why the IPv6 address b (16 bytes) is not public, or NULL. */
static const char *
netaddr_v6_judge(const uint8_t *b)
{
	const struct netaddr_v6row	*r;
	size_t				 i;

	for (i = 0; i < NETADDR_NITEMS(netaddr_v6rows); i++) {
		r = &netaddr_v6rows[i];
		if (!netaddr_v6_in(b, r))
			continue;
		if (r->embed != NULL)
			return (netaddr_embed_judge(b, r->embed));
		return (r->why);
	}
	/* Only 2000::/3 is handed out for global unicast (RFC 4291 2.4). */
	if ((b[0] & 0xe0) != 0x20)
		return ("reserved");
	return (NULL);
}

int
netaddr_public(const struct sockaddr *sa, socklen_t len, const char **why)
{
	const struct sockaddr_in	*sin;
	const struct sockaddr_in6	*sin6;
	const char			*w;
	enum netaddr_v4why		 v4;

	if (sa != NULL && sa->sa_family == AF_INET && len >= sizeof *sin) {
		sin = (const struct sockaddr_in *)sa;
		v4 = netaddr_v4_judge(ntohl(sin->sin_addr.s_addr));
		w = v4 == NETADDR_V4_PUBLIC ? NULL : netaddr_why_v4[v4];
	} else if (sa != NULL && sa->sa_family == AF_INET6 &&
	    len >= sizeof *sin6) {
		sin6 = (const struct sockaddr_in6 *)sa;
		w = netaddr_v6_judge(sin6->sin6_addr.s6_addr);
	} else
		w = "not an IP address";
	if (why != NULL)
		*why = w;
	return (w == NULL);
}

int
netaddr_parse(const char *text, struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in	sin;
	struct sockaddr_in6	sin6;
	char			buf[INET6_ADDRSTRLEN];
	size_t			n;

	memset(&sin, 0, sizeof sin);
	memset(&sin6, 0, sizeof sin6);
	sin.sin_family = AF_INET;
	sin6.sin6_family = AF_INET6;
	n = text == NULL ? 0 : strlen(text);
	if (n > 2 && text[0] == '[' && text[n - 1] == ']') {
		/* Brackets hold only IPv6 (RFC 3986 3.2.2). */
		if (n - 2 >= sizeof buf)
			goto fail;
		memcpy(buf, text + 1, n - 2);
		buf[n - 2] = '\0';
		if (inet_pton(AF_INET6, buf, &sin6.sin6_addr) != 1)
			goto fail;
	} else if (n > 0 && inet_pton(AF_INET, text, &sin.sin_addr) == 1) {
		memset(ss, 0, sizeof *ss);
		memcpy(ss, &sin, sizeof sin);
		*len = sizeof sin;
		return (0);
	} else if (n == 0 || inet_pton(AF_INET6, text, &sin6.sin6_addr) != 1)
		goto fail;
	memset(ss, 0, sizeof *ss);
	memcpy(ss, &sin6, sizeof sin6);
	*len = sizeof sin6;
	return (0);

fail:
	errno = EINVAL;
	return (-1);
}

/* 1 if c may be in a DNS label: a letter, a digit or '-' (ASCII). */
static int
netaddr_ldh(char c)
{
	return ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '-');
}

/* ASCII lowercase, whatever the locale. */
static char
netaddr_lower(char c)
{
	return (c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c);
}

/* 1 if a and b, n bytes each, are equal ignoring ASCII case. */
static int
netaddr_caseeq(const char *a, const char *b, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++)
		if (netaddr_lower(a[i]) != netaddr_lower(b[i]))
			return (0);
	return (1);
}

/* host's length without one trailing dot. */
static size_t
netaddr_name_len(const char *host)
{
	size_t	n;

	n = strlen(host);
	return (n > 0 && host[n - 1] == '.' ? n - 1 : n);
}

/*
 * 1 if name (n bytes, a valid DNS name's labels) is what the resolver
 * would read as an IPv4 address: getaddrinfo takes "127.1", "0x7f.1" or
 * "2130706433" as inet_aton does. A last label of digits alone is never
 * a top-level domain (RFC 3696 2) either.
 */
static int
netaddr_numeric_name(const char *name, size_t n)
{
	struct in_addr	 a;
	char		 buf[254];
	const char	*last;

	memcpy(buf, name, n);
	buf[n] = '\0';
	if (inet_aton(buf, &a) != 0)
		return (1);
	last = strrchr(buf, '.');
	last = last == NULL ? buf : last + 1;
	return (strspn(last, "0123456789") == strlen(last));
}

int
netaddr_host_valid(const char *host)
{
	size_t	n, i, label;

	if (host == NULL)
		return (0);
	n = netaddr_name_len(host);
	if (n == 0 || n > 253)
		return (0);
	label = 0;
	for (i = 0; i <= n; i++) {
		if (i == n || host[i] == '.') {
			if (label == 0 || label > 63 || host[i - 1] == '-')
				return (0);
			label = 0;
		} else if (!netaddr_ldh(host[i]) ||
		    (label++ == 0 && host[i] == '-'))
			return (0);
	}
	return (!netaddr_numeric_name(host, n));
}

int
netaddr_pattern_valid(const char *pattern)
{
	struct sockaddr_storage	ss;
	socklen_t		len;
	const char		*dot;

	if (pattern == NULL)
		return (0);
	if (netaddr_parse(pattern, &ss, &len) == 0)
		return (1);
	if (strncmp(pattern, "*.", 2) != 0)
		return (netaddr_host_valid(pattern));
	/* "*.com" would grant a whole top-level domain. */
	dot = strchr(pattern + 2, '.');
	return (netaddr_host_valid(pattern + 2) && dot != NULL &&
	    dot[1] != '\0');
}

int
netaddr_domain_match(const char *pattern, const char *host)
{
	struct sockaddr_storage	pss, hss;
	socklen_t		plen, hlen;
	size_t			pn, hn;

	if (host == NULL || !netaddr_pattern_valid(pattern))
		return (0);
	/* An address is granted as itself only, never by a name. */
	if (netaddr_parse(host, &hss, &hlen) == 0)
		return (netaddr_parse(pattern, &pss, &plen) == 0 &&
		    plen == hlen && memcmp(&pss, &hss, plen) == 0);
	if (netaddr_parse(pattern, &pss, &plen) == 0 ||
	    !netaddr_host_valid(host))
		return (0);
	pn = netaddr_name_len(pattern);
	hn = netaddr_name_len(host);
	if (pattern[0] == '*') {
		/* ".github.com": at least one whole label before it. */
		pattern++;
		pn--;
		return (hn > pn && netaddr_caseeq(host + hn - pn, pattern,
		    pn));
	}
	return (hn == pn && netaddr_caseeq(host, pattern, pn));
}

const char *
netaddr_host_match_list(const char *const *patterns, const char *host)
{
	size_t	i;

	for (i = 0; patterns != NULL && patterns[i] != NULL; i++)
		if (netaddr_domain_match(patterns[i], host))
			return (patterns[i]);
	return (NULL);
}
