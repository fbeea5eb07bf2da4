/*
 * Where the client finds its Redis (and its default queue) when no flag
 * says: the environment, then a client config file, then the socket of
 * 'make run' in the checkout the client runs in (found like git finds
 * .git: here or in a parent directory), then the default. Each lookup
 * says where its answer came from, so "cannot reach Redis" can say what
 * was tried.
 *
 * The config file is lines of "key = value"; '#' starts a comment. Keys:
 * redis_url, redis_user, redis_password_file, queue, and redis_tls_ca,
 * redis_tls_cert, redis_tls_key ($EXECQ_REDIS_TLS_CA, _CERT, _KEY first,
 * as for the worker). The first of $XDG_CONFIG_HOME/execq/config (else
 * ~/.config/execq/config) and /etc/execq/client.conf that exists is read.
 *
 * Who the client is on Redis: the URL's user and password, unless
 * $EXECQ_REDIS_USER (or redis_user) names the user and
 * $EXECQ_REDIS_PASSWORD, $EXECQ_REDIS_PASSWORD_FILE (or
 * redis_password_file) give the password, in that order. On the socket of
 * 'make run' it is the subcommand's role (main.c: agent, or operator for
 * what reads everything or decides), with the password make run wrote
 * beside the socket, .tmp/run/redis-<role>.pass.
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

static const char *execq_role = EXECQ_ROLE_AGENT;

static int	 execq_redis_where(const char *, struct rurl *, char **,
		    char **);

void
execq_set_role(const char *role)
{
	execq_role = role;
}

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

/* path's first line (a password), allocated; NULL with *cause. */
static char *
execq_password_read(const char *what, const char *path, char **cause)
{
	FILE	*f;
	char	*line = NULL;
	size_t	 cap = 0;
	ssize_t	 len;

	if ((f = fopen(path, "re")) == NULL) {
		xasprintf(cause, "%s '%s': %s", what, path, strerror(errno));
		return (NULL);
	}
	len = getline(&line, &cap, f);
	fclose(f);
	while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
		line[--len] = '\0';
	if (len > 0)
		return (line);
	xasprintf(cause, "%s '%s' holds no password on its first line", what,
	    path);
	free(line);
	return (NULL);
}

/* Replaces u's password with pw (taken). */
static void
execq_password_set(struct rurl *u, char *pw)
{
	if (u->password != NULL)
		explicit_bzero(u->password, strlen(u->password));
	free(u->password);
	u->password = pw;
}

/*
 * The user and password that beat the URL's: the environment, then the
 * config file. 0, or -1 with *cause.
 */
static int
execq_redis_login(struct rurl *u, char **cause)
{
	const char	*user = getenv("EXECQ_REDIS_USER");
	const char	*pw = getenv("EXECQ_REDIS_PASSWORD");
	const char	*pwfile = getenv("EXECQ_REDIS_PASSWORD_FILE");
	char		*v, *file, *what, *p;

	if (user != NULL && *user != '\0') {
		free(u->user);
		u->user = xstrdup(user);
	} else if ((v = execq_conf_get("redis_user", &file)) != NULL) {
		free(u->user);
		u->user = v;
		free(file);
	}
	if (pw != NULL && *pw != '\0') {
		execq_password_set(u, xstrdup(pw));
		return (0);
	}
	if (pwfile != NULL && *pwfile != '\0') {
		if ((p = execq_password_read("$EXECQ_REDIS_PASSWORD_FILE",
		    pwfile, cause)) == NULL)
			return (-1);
		execq_password_set(u, p);
		return (0);
	}
	if ((v = execq_conf_get("redis_password_file", &file)) == NULL)
		return (0);
	xasprintf(&what, "redis_password_file in %s:", file);
	p = execq_password_read(what, v, cause);
	free(what);
	free(file);
	free(v);
	if (p == NULL)
		return (-1);
	execq_password_set(u, p);
	return (0);
}

/*
 * make run's login for our role: user <role>, the password in
 * redis-<role>.pass beside the socket (none there: a make run of before
 * the ACL users, with no password).
 */
static void
execq_run_login(struct rurl *u)
{
	const char	*slash = strrchr(u->path, '/');
	char		*path, *cause = NULL, *pw;

	xasprintf(&path, "%.*sredis-%s.pass", slash != NULL ?
	    (int)(slash + 1 - u->path) : 0, u->path, execq_role);
	if (access(path, F_OK) == 0 &&
	    (pw = execq_password_read("make run's", path, &cause)) != NULL) {
		u->user = xstrdup(execq_role);
		u->password = pw;
	}
	free(cause);
	free(path);
}

/* The URL, and who we are there; 0, or -1 with *cause. */
int
execq_redis_url(const char *flag, struct rurl *u, char **from,
    char **cause)
{
	if (execq_redis_where(flag, u, from, cause) == -1)
		return (-1);
	if (execq_redis_login(u, cause) == -1) {
		rurl_release(u);
		return (-1);
	}
	return (0);
}

/* The reply queue of sessions: execq.<login>, <redis user>.execq.<login>. */
char *
execq_user_reply(const char *flag)
{
	struct rurl	 u;
	char		*from = NULL, *cause = NULL, *q, *p;

	q = execq_user_queue();
	if (execq_redis_url(flag, &u, &from, &cause) == 0) {
		if (u.user != NULL && strcmp(u.user, "default") != 0) {
			xasprintf(&p, "%s.%s", u.user, q);
			if (execq_name_valid(p)) {
				free(q);
				q = p;
			} else
				free(p);
		}
		rurl_release(&u);
	}
	free(from);
	free(cause);
	return (q);
}

/* Where Redis is: flag, environment, config file, make run, default. */
static int
execq_redis_where(const char *flag, struct rurl *u, char **from,
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
		execq_run_login(u);
		return (0);
	}
	file = execq_user_conf();
	xasprintf(from, "the default: no --redis, no $EXECQ_REDIS_URL, no "
	    "redis_url in %s or " EXECQ_SYSTEM_CONF ", no " EXECQ_RUN_SOCKET
	    " here or above", file != NULL ? file : "~/.config/execq/config");
	free(file);
	return (rurl_parse(EXECQ_DEFAULT_URL, u, cause));
}
