/*
 * Redis URL parsing. The sub-parsers return a static reason or NULL;
 * rurl_parse() alone builds the message, from a copy of the URL whose
 * password is masked, so a typo never copies a secret into a log.
 */

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "logs/xmalloc.h"
#include "queue/rurl.h"

#define RURL_DEFAULT_PORT	6379
#define RURL_SENTINEL_PORT	26379
#define RURL_SENTINEL_PWD	"sentinel_password="
#define RURL_MAX_DB		15

/* Length of the userinfo before '@' at the start of s, or -1 if none. */
static int
rurl_userinfo_len(const char *s, int unix_socket)
{
	const char	*at;
	size_t		 len;

	if (unix_socket) {
		/* The path starts at the first "@/"; a bare path has none. */
		if (*s == '/' || (at = strstr(s, "@/")) == NULL)
			return (-1);
		return (at - s);
	}
	len = strcspn(s, "/");
	if ((at = memrchr(s, '@', len)) == NULL)
		return (-1);
	return (at - s);
}

/* s (allocated) with the value of a sentinel_password= as "***". */
static char *
rurl_redact_query(char *s)
{
	char	*p, *out;
	size_t	 len;

	if ((p = strstr(s, RURL_SENTINEL_PWD)) == NULL)
		return (s);
	p += strlen(RURL_SENTINEL_PWD);
	len = strcspn(p, "&");
	xasprintf(&out, "%.*s***%s", (int)(p - s), s, p + len);
	free(s);
	return (out);
}

/*
 * The URL with its password (or a lone secret before '@') as "***". A URL
 * that failed to parse may hold a password with an unencoded '/', '?' or
 * '@': everything up to the last '@' of the whole URL is taken as the
 * userinfo, so no tail of a secret is shown (a path with an '@' in it is
 * masked too: in an error, too much hidden is better than too little).
 */
static char *
rurl_redact(const char *url)
{
	const char	*rest, *colon, *scheme_end, *at;
	char		*out;

	if ((scheme_end = strstr(url, "://")) != NULL)
		rest = scheme_end + 3;
	else
		rest = url;
	if ((at = strrchr(rest, '@')) == NULL)
		return (rurl_redact_query(xstrdup(url)));
	if ((colon = memchr(rest, ':', at - rest)) == NULL ||
	    memchr(rest, '/', colon - rest) != NULL)
		colon = rest - 1;	/* no user name: mask it all */
	xasprintf(&out, "%.*s***%s", (int)(colon + 1 - url), url, at);
	return (rurl_redact_query(out));
}

/* Returns -1 with *cause "bad redis URL '<url>': <why>". */
static int
rurl_fail(char **cause, const char *url, const char *why)
{
	char	*shown;

	shown = rurl_redact(url);
	xasprintf(cause, "bad redis URL '%s': %s", shown, why);
	free(shown);
	return (-1);
}

/* Value of one hex digit, or -1. */
static int
rurl_hex(int ch)
{
	if (ch >= '0' && ch <= '9')
		return (ch - '0');
	if (ch >= 'a' && ch <= 'f')
		return (ch - 'a' + 10);
	if (ch >= 'A' && ch <= 'F')
		return (ch - 'A' + 10);
	return (-1);
}

/* Percent-decodes len bytes; NULL on a bad escape or an escaped NUL. */
static char *
rurl_decode(const char *s, size_t len)
{
	char	*out, *o;
	size_t	 i;
	int	 hi, lo;

	o = out = xmalloc(len + 1);
	for (i = 0; i < len; i++) {
		if (s[i] != '%') {
			*o++ = s[i];
			continue;
		}
		if (len - i < 3)
			goto fail;
		hi = rurl_hex((unsigned char)s[i + 1]);
		lo = rurl_hex((unsigned char)s[i + 2]);
		if (hi == -1 || lo == -1 || (hi == 0 && lo == 0))
			goto fail;
		*o++ = (char)(hi << 4 | lo);
		i += 2;
	}
	*o = '\0';
	return (out);

fail:
	free(out);
	return (NULL);
}

/* Parses len decimal digits in [min, max]; -1 if not. */
static int
rurl_number(const char *s, size_t len, int min, int max, int *out)
{
	size_t	i;
	long	v = 0;

	if (len == 0 || len > 9)
		return (-1);
	for (i = 0; i < len; i++) {
		if (!isdigit((unsigned char)s[i]))
			return (-1);
		v = v * 10 + (s[i] - '0');
	}
	if (v < min || v > max)
		return (-1);
	*out = (int)v;
	return (0);
}

/* "[user]:password" (len bytes, no '@'), percent-decoded. */
static const char *
rurl_userinfo(struct rurl *u, const char *s, size_t len)
{
	const char	*colon;
	size_t		 plen;

	if ((colon = memchr(s, ':', len)) == NULL)
		return ("credentials must be [user]:password@ "
		    "(':password@' for a password alone)");
	if (colon > s && (u->user = rurl_decode(s, colon - s)) == NULL)
		return ("bad percent-escape in user name");
	plen = len - (colon + 1 - s);
	if (plen == 0)
		return ("empty password");
	if ((u->password = rurl_decode(colon + 1, plen)) == NULL)
		return ("bad percent-escape in password");
	return (NULL);
}

/* 1 if s[0..len) is a plausible host name, IPv4 or (v6) IPv6 address. */
static int
rurl_host_ok(const char *s, size_t len, int v6)
{
	size_t	i;
	int	ch;

	if (len == 0)
		return (0);
	for (i = 0; i < len; i++) {
		ch = (unsigned char)s[i];
		if (v6 && !isxdigit(ch) && ch != ':' && ch != '.')
			return (0);
		if (!v6 && !isalnum(ch) && strchr(".-_", ch) == NULL)
			return (0);
	}
	return (1);
}

/* Splits "host[:port]" or "[v6][:port]"; *rest gets what follows host. */
static const char *
rurl_host(struct rurl *u, const char *s, size_t len, const char **rest)
{
	const char	*end;

	if (*s == '[') {
		if ((end = memchr(s, ']', len)) == NULL)
			return ("missing ']' after IPv6 address");
		if (!rurl_host_ok(s + 1, end - s - 1, 1) ||
		    memchr(s + 1, ':', end - s - 1) == NULL)
			return ("bad IPv6 address");
		u->host = xstrndup(s + 1, end - s - 1);
		*rest = end + 1;
		return (NULL);
	}
	if ((end = memchr(s, ':', len)) == NULL)
		end = s + len;
	if (end != s + len && memchr(end + 1, ':', s + len - end - 1) != NULL)
		return ("IPv6 addresses must be in brackets, as [::1]");
	if (end == s)
		return ("missing host");
	if (!rurl_host_ok(s, end - s, 0))
		return ("bad host name");
	u->host = xstrndup(s, end - s);
	*rest = end;
	return (NULL);
}

/* "host[:port]" in len bytes. */
static const char *
rurl_hostport(struct rurl *u, const char *s, size_t len)
{
	const char	*rest, *err, *end = s + len;

	if ((err = rurl_host(u, s, len, &rest)) != NULL)
		return (err);
	if (rest == end)
		return (NULL);
	if (*rest != ':')
		return ("unexpected text after ']'");
	if (rurl_number(rest + 1, end - rest - 1, 1, 65535, &u->port) != 0)
		return ("port must be 1-65535");
	return (NULL);
}

/* After "redis://" or a bare "host:port": [userinfo@]host[:port][/db]. */
static const char *
rurl_parse_tcp(struct rurl *u, const char *s)
{
	const char	*err, *slash;
	int		 ulen;

	if ((ulen = rurl_userinfo_len(s, 0)) != -1) {
		if ((err = rurl_userinfo(u, s, ulen)) != NULL)
			return (err);
		s += ulen + 1;
	}
	if (strchr(s, '?') != NULL)
		return ("no query string here: the db goes in the path, /N");
	if ((slash = strchr(s, '/')) == NULL)
		slash = s + strlen(s);
	if ((err = rurl_hostport(u, s, slash - s)) != NULL)
		return (err);
	if (*slash == '\0' || slash[1] == '\0')
		return (NULL);
	if (rurl_number(slash + 1, strlen(slash + 1), 0, RURL_MAX_DB,
	    &u->db) != 0)
		return ("db must be 0-15");
	return (NULL);
}

/* After "unix://", or a bare path: [userinfo@]/path[?db=N]. */
static const char *
rurl_parse_unix(struct rurl *u, const char *s)
{
	const char	*err, *q;
	int		 ulen;

	if ((ulen = rurl_userinfo_len(s, 1)) != -1) {
		if ((err = rurl_userinfo(u, s, ulen)) != NULL)
			return (err);
		s += ulen + 1;
	}
	if (*s != '/')
		return ("socket path must be absolute");
	if ((q = strchr(s, '?')) == NULL)
		q = s + strlen(s);
	if (q - s < 2)
		return ("missing socket path");
	u->path = xstrndup(s, q - s);
	if (*q == '\0')
		return (NULL);
	if (strncmp(q, "?db=", 4) != 0)
		return ("the only query parameter is ?db=N");
	if (rurl_number(q + 4, strlen(q + 4), 0, RURL_MAX_DB, &u->db) != 0)
		return ("db must be 0-15");
	return (NULL);
}

/* One "host[:port]" of a Sentinel URL's list, len bytes. */
static const char *
rurl_sentinel_node(struct rurl *u, const char *s, size_t len)
{
	struct rurl		 tmp;
	struct rurl_node	*n;
	const char		*err;

	if (u->nsentinels == RURL_MAX_SENTINELS)
		return ("too many sentinels (16 at most)");
	memset(&tmp, 0, sizeof tmp);
	tmp.port = RURL_SENTINEL_PORT;
	if (len == 0)
		return ("empty sentinel address (a stray ',')");
	if ((err = rurl_hostport(&tmp, s, len)) != NULL) {
		free(tmp.host);
		return (err);
	}
	u->sentinels = xreallocarray(u->sentinels, u->nsentinels + 1,
	    sizeof *u->sentinels);
	n = &u->sentinels[u->nsentinels++];
	n->host = tmp.host;
	n->port = tmp.port;
	return (NULL);
}

/* One "name=value" of a Sentinel URL's query, len bytes. */
static const char *
rurl_sentinel_param(struct rurl *u, const char *s, size_t len)
{
	const char	*eq;
	char		**to;
	size_t		 nlen;

	if ((eq = memchr(s, '=', len)) == NULL)
		return ("query parameters are name=value");
	nlen = eq - s;
	if (nlen == 2 && strncmp(s, "db", 2) == 0) {
		if (rurl_number(eq + 1, len - 3, 0, RURL_MAX_DB, &u->db) != 0)
			return ("db must be 0-15");
		return (NULL);
	}
	if (nlen == 13 && strncmp(s, "sentinel_user", 13) == 0)
		to = &u->sentinel_user;
	else if (nlen == 17 && strncmp(s, "sentinel_password", 17) == 0)
		to = &u->sentinel_password;
	else
		return ("the query parameters are db, sentinel_user and "
		    "sentinel_password");
	if (*to != NULL)
		return ("a query parameter given twice");
	if (len - nlen - 1 == 0)
		return ("empty sentinel_user or sentinel_password");
	if ((*to = rurl_decode(eq + 1, len - nlen - 1)) == NULL)
		return ("bad percent-escape in a query parameter");
	return (NULL);
}

/*
 * After "redis-sentinel://": [userinfo@]host[:port][,host[:port]...]
 * /master[?db=N&sentinel_user=U&sentinel_password=P].
 */
static const char *
rurl_parse_sentinel(struct rurl *u, const char *s)
{
	const char	*err, *slash, *comma, *q, *end;
	int		 ulen;
	size_t		 i, mlen;

	if ((ulen = rurl_userinfo_len(s, 0)) != -1) {
		if ((err = rurl_userinfo(u, s, ulen)) != NULL)
			return (err);
		s += ulen + 1;
	}
	if ((slash = strchr(s, '/')) == NULL)
		return ("missing /master after the sentinels");
	while (s < slash) {
		if ((comma = memchr(s, ',', slash - s)) == NULL)
			comma = slash;
		if ((err = rurl_sentinel_node(u, s, comma - s)) != NULL)
			return (err);
		s = comma == slash ? slash : comma + 1;
		if (comma != slash && s == slash)
			return ("empty sentinel address (a stray ',')");
	}
	if (u->nsentinels == 0)
		return ("no sentinel address");
	s = slash + 1;
	if ((q = strchr(s, '?')) == NULL)
		q = s + strlen(s);
	if ((mlen = q - s) == 0)
		return ("missing master name after '/'");
	for (i = 0; i < mlen; i++)
		if (!isalnum((unsigned char)s[i]) &&
		    strchr("._-", s[i]) == NULL)
			return ("bad master name (letters, digits, '.', '_', "
			    "'-')");
	u->master = xstrndup(s, mlen);
	if (*q == '\0')
		return (NULL);
	for (s = q + 1; *s != '\0'; s = *end == '\0' ? end : end + 1) {
		end = s + strcspn(s, "&");
		if ((err = rurl_sentinel_param(u, s, end - s)) != NULL)
			return (err);
	}
	if (u->sentinel_user != NULL && u->sentinel_password == NULL)
		return ("sentinel_user without sentinel_password");
	return (NULL);
}

/* Tries each URL form in turn; fills u, or -1 with *cause. */
int
rurl_parse(const char *url, struct rurl *u, char **cause)
{
	const char	*err;

	memset(u, 0, sizeof *u);
	u->port = RURL_DEFAULT_PORT;
	*cause = NULL;
	if (strncasecmp(url, "rediss://", 9) == 0) {
		u->tls = 1;
		err = rurl_parse_tcp(u, url + 9);
	} else if (strncasecmp(url, "redis://", 8) == 0)
		err = rurl_parse_tcp(u, url + 8);
	else if (strncasecmp(url, "redis-sentinel://", 17) == 0)
		err = rurl_parse_sentinel(u, url + 17);
	else if (strncasecmp(url, "unix://", 7) == 0)
		err = rurl_parse_unix(u, url + 7);
	else if (*url == '/')
		err = rurl_parse_unix(u, url);
	else if (strstr(url, "://") != NULL)
		err = "unknown scheme (use redis://, rediss://, unix:// or "
		    "redis-sentinel://)";
	else
		err = rurl_parse_tcp(u, url);	/* host:port shorthand */
	if (err == NULL)
		return (0);
	rurl_release(u);
	return (rurl_fail(cause, url, err));
}

/* Frees a secret, wiped first; NULL ok. */
static void
rurl_free_secret(char *s)
{
	if (s != NULL)
		explicit_bzero(s, strlen(s));
	free(s);
}

/* Frees the strings (wiping the passwords) and zeroes u. */
void
rurl_release(struct rurl *u)
{
	int	i;

	if (u == NULL)
		return;
	free(u->host);
	free(u->path);
	free(u->user);
	rurl_free_secret(u->password);
	free(u->master);
	for (i = 0; i < u->nsentinels; i++)
		free(u->sentinels[i].host);
	free(u->sentinels);
	free(u->sentinel_user);
	rurl_free_secret(u->sentinel_password);
	memset(u, 0, sizeof *u);
}

/* xstrdup that keeps NULL. */
static char *
rurl_dup(const char *s)
{
	return (s != NULL ? xstrdup(s) : NULL);
}

void
rurl_copy(struct rurl *dst, const struct rurl *src)
{
	int	i;

	*dst = *src;
	dst->host = rurl_dup(src->host);
	dst->path = rurl_dup(src->path);
	dst->user = rurl_dup(src->user);
	dst->password = rurl_dup(src->password);
	dst->master = rurl_dup(src->master);
	dst->sentinel_user = rurl_dup(src->sentinel_user);
	dst->sentinel_password = rurl_dup(src->sentinel_password);
	dst->sentinels = NULL;
	if (src->nsentinels > 0)
		dst->sentinels = xcalloc(src->nsentinels,
		    sizeof *dst->sentinels);
	for (i = 0; i < src->nsentinels; i++) {
		dst->sentinels[i].host = xstrdup(src->sentinels[i].host);
		dst->sentinels[i].port = src->sentinels[i].port;
	}
}

/* A Sentinel URL for messages, both passwords as "***". */
static char *
rurl_display_sentinel(const struct rurl *u, const char *cred)
{
	char	*list = xstrdup(""), *tmp, *out;
	int	 i;
	const char *h;

	for (i = 0; i < u->nsentinels; i++) {
		h = u->sentinels[i].host;
		xasprintf(&tmp, "%s%s%s%s%s:%d", list, i > 0 ? "," : "",
		    strchr(h, ':') != NULL ? "[" : "", h,
		    strchr(h, ':') != NULL ? "]" : "", u->sentinels[i].port);
		free(list);
		list = tmp;
	}
	xasprintf(&out, "redis-sentinel://%s%s/%s?db=%d%s%s%s", cred, list,
	    u->master, u->db, u->sentinel_user != NULL ? "&sentinel_user=" :
	    "", u->sentinel_user != NULL ? u->sentinel_user : "",
	    u->sentinel_password != NULL ? "&sentinel_password=***" : "");
	free(list);
	return (out);
}

/* The URL for messages, password as "***". */
char *
rurl_display(const struct rurl *u)
{
	char	*cred, *out;

	if (u->password != NULL)
		xasprintf(&cred, "%s:***@", u->user != NULL ? u->user : "");
	else
		cred = xstrdup("");
	if (u->master != NULL)
		out = rurl_display_sentinel(u, cred);
	else if (u->path != NULL && u->db != 0)
		xasprintf(&out, "unix://%s%s?db=%d", cred, u->path, u->db);
	else if (u->path != NULL)
		xasprintf(&out, "unix://%s%s", cred, u->path);
	else if (u->host == NULL)
		out = xstrdup("(no address)");
	else if (strchr(u->host, ':') != NULL)
		xasprintf(&out, "%s://%s[%s]:%d/%d", u->tls ? "rediss" : "redis",
		    cred, u->host, u->port, u->db);
	else
		xasprintf(&out, "%s://%s%s:%d/%d", u->tls ? "rediss" : "redis",
		    cred, u->host, u->port, u->db);
	free(cred);
	return (out);
}
