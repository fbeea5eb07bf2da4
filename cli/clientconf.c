/*
 * Where the client finds its Redis (and its default queue) when no flag
 * says: the environment, then a client config file, then the socket of
 * 'make run' in the checkout the client runs in (found like git finds
 * .git: here or in a parent directory), then the default. Each lookup
 * says where its answer came from, so "cannot reach Redis" can say what
 * was tried.
 *
 * The config file is lines of "key = value"; '#' starts a comment. Keys:
 * redis_url, queue, and redis_tls_ca, redis_tls_cert, redis_tls_key
 * ($EXECQ_REDIS_TLS_CA, _CERT, _KEY first, as for the worker). The
 * first of $XDG_CONFIG_HOME/execq/config (else
 * ~/.config/execq/config) and /etc/execq/client.conf that exists is read.
 */

#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "logs/xmalloc.h"
#include "queue/rurl.h"

#define EXECQ_SYSTEM_CONF	"/etc/execq/client.conf"
#define EXECQ_SOCKET_DEPTH	16	/* parents looked at for the socket */

/* The user's config file path; allocated, NULL without a home. */
static char *
execq_user_conf(void)
{
	const char	*xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	char		*p;

	if (xdg != NULL && *xdg == '/')
		xasprintf(&p, "%s/execq/config", xdg);
	else if (home != NULL && *home != '\0')
		xasprintf(&p, "%s/.config/execq/config", home);
	else
		return (NULL);
	return (p);
}

/* key's value in the config file at path; allocated, or NULL. */
static char *
execq_conf_read(const char *path, const char *key)
{
	FILE	*f;
	char	*line = NULL, *p, *v, *e, *found = NULL;
	size_t	 cap = 0, n = strlen(key);

	if ((f = fopen(path, "re")) == NULL)
		return (NULL);
	while (found == NULL && getline(&line, &cap, f) != -1) {
		if ((p = strchr(line, '#')) != NULL)
			*p = '\0';
		for (p = line; isspace((unsigned char)*p); p++)
			;
		if (strncmp(p, key, n) != 0)
			continue;
		for (v = p + n; isspace((unsigned char)*v); v++)
			;
		if (*v++ != '=')
			continue;
		while (isspace((unsigned char)*v))
			v++;
		for (e = v + strlen(v); e > v && isspace((unsigned char)e[-1]);
		    e--)
			;
		if (e > v)
			found = xstrndup(v, e - v);
	}
	free(line);
	fclose(f);
	return (found);
}

char *
execq_conf_get(const char *key, char **from)
{
	char	*user, *v = NULL;

	*from = NULL;
	if ((user = execq_user_conf()) != NULL &&
	    access(user, F_OK) == 0) {
		if ((v = execq_conf_read(user, key)) != NULL)
			*from = user;
		else
			free(user);
		return (v);		/* the first file that exists */
	}
	free(user);
	if ((v = execq_conf_read(EXECQ_SYSTEM_CONF, key)) != NULL)
		*from = xstrdup(EXECQ_SYSTEM_CONF);
	return (v);
}

char *
execq_conf_setting(const char *env, const char *key)
{
	const char	*v = getenv(env);
	char		*file, *found;

	if (v != NULL && *v != '\0')
		return (xstrdup(v));
	found = execq_conf_get(key, &file);
	free(file);
	return (found);
}

/*
 * The socket of 'make run' here or in a parent directory, as a relative
 * path (a deep checkout stays under sun_path's limit); allocated or NULL.
 */
static char *
execq_run_socket(void)
{
	struct stat	 sb, here, above;
	char		*p, *up = xstrdup(""), *t;
	int		 i, root;

	for (i = 0; i < EXECQ_SOCKET_DEPTH; i++) {
		xasprintf(&p, "%s%s", up, EXECQ_RUN_SOCKET);
		if (stat(p, &sb) == 0 && S_ISSOCK(sb.st_mode)) {
			free(up);
			return (p);
		}
		free(p);
		/* "." and ".." are one directory only at the root. */
		xasprintf(&p, "%s.", up);
		xasprintf(&t, "%s..", up);
		root = stat(p, &here) != 0 || stat(t, &above) != 0 ||
		    (here.st_dev == above.st_dev && here.st_ino == above.st_ino);
		free(p);
		free(t);
		if (root)
			break;
		xasprintf(&t, "%s../", up);
		free(up);
		up = t;
	}
	free(up);
	return (NULL);
}

int
execq_redis_url(const char *flag, struct rurl *u, char **from,
    char **cause)
{
	const char	*env = getenv("EXECQ_REDIS_URL");
	char		*url, *file;
	int		 rc;

	if (flag != NULL && *flag != '\0') {
		*from = xstrdup("--redis");
		return (rurl_parse(flag, u, cause));
	}
	if (env != NULL && *env != '\0') {
		*from = xstrdup("$EXECQ_REDIS_URL");
		return (rurl_parse(env, u, cause));
	}
	if ((url = execq_conf_get("redis_url", &file)) != NULL) {
		xasprintf(from, "redis_url in %s", file);
		rc = rurl_parse(url, u, cause);
		free(url);
		free(file);
		return (rc);
	}
	if ((url = execq_run_socket()) != NULL) {
		xasprintf(from, "the socket of 'make run', %s", url);
		memset(u, 0, sizeof *u);
		u->port = 6379;
		u->path = url;
		return (0);
	}
	file = execq_user_conf();
	xasprintf(from, "the default: no --redis, no $EXECQ_REDIS_URL, no "
	    "redis_url in %s or " EXECQ_SYSTEM_CONF ", no " EXECQ_RUN_SOCKET
	    " here or above", file != NULL ? file : "~/.config/execq/config");
	free(file);
	return (rurl_parse(EXECQ_DEFAULT_URL, u, cause));
}
