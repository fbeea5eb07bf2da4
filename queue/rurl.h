#ifndef EXECQ_RURL_H
#define EXECQ_RURL_H

/*
 * Redis addresses:
 *   redis://[[user]:password@]host[:port][/db]
 *   rediss://... the same over TLS (the certificates are settings:
 *       redis_tls_ca, redis_tls_cert, redis_tls_key)
 *   unix://[[user]:password@]/path/to/socket[?db=N]
 *   redis-sentinel://[[user]:password@]host[:port][,host[:port]...]/master
 *       [?db=N&sentinel_user=U&sentinel_password=P]
 * A Sentinel URL names the sentinels (port 26379 by default) and the
 * master they watch; the primary's address is asked of them at every
 * connect (queue/sentinel.c, cli/conn.c). Its userinfo is the data
 * nodes' login, as for redis://; the sentinels' own, when they have one
 * (Sentinel's requirepass), is sentinel_user/sentinel_password.
 * Pure parsing; the worker and the client share it.
 */

#define RURL_MAX_SENTINELS	16

/* One sentinel's address. */
struct rurl_node {
	char	*host;
	int	 port;
};

struct rurl {
	char	*host;		/* NULL for unix */
	int	 port;		/* default 6379 */
	char	*path;		/* unix socket, else NULL */
	int	 db;		/* default 0 */
	char	*user;		/* NULL: default user */
	char	*password;	/* NULL: no AUTH */
	int	 tls;		/* rediss:// */
	/* redis-sentinel:// only (host and path are NULL then): */
	char		 *master;	/* the master's name; NULL: none */
	struct rurl_node *sentinels;
	int		  nsentinels;
	char		 *sentinel_user;	/* NULL: default user */
	char		 *sentinel_password;	/* NULL: no AUTH */
};

/* 0, or -1 with an allocated *cause. Percent-escapes in user/password ok. */
int	 rurl_parse(const char *url, struct rurl *, char **cause);
void	 rurl_release(struct rurl *);
/* A deep copy of src into dst. */
void	 rurl_copy(struct rurl *dst, const struct rurl *src);
/* For messages: the URL without the password. Allocated. */
char	*rurl_display(const struct rurl *);

#endif
