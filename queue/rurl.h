#ifndef EXECQ_RURL_H
#define EXECQ_RURL_H

/*
 * Redis addresses:
 *   redis://[[user]:password@]host[:port][/db]
 *   unix://[[user]:password@]/path/to/socket[?db=N]
 * Pure parsing; the worker and the client share it.
 */

struct rurl {
	char	*host;		/* NULL for unix */
	int	 port;		/* default 6379 */
	char	*path;		/* unix socket, else NULL */
	int	 db;		/* default 0 */
	char	*user;		/* NULL: default user */
	char	*password;	/* NULL: no AUTH */
};

/* 0, or -1 with an allocated *cause. Percent-escapes in user/password ok. */
int	 rurl_parse(const char *url, struct rurl *, char **cause);
void	 rurl_release(struct rurl *);
/* For messages: the URL without the password. Allocated. */
char	*rurl_display(const struct rurl *);

#endif
