/*
 * The worker's settings: the checks that need every layer in and the file
 * system (the Redis password file read, the workspace's realpath, the
 * dirs made absolute, run_as looked up, the shell executable, default <=
 * max), then the policy built.
 */

#include <sys/stat.h>

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "logs/xmalloc.h"
#include "policy/policyconf.h"
#include "queue/rurl.h"
#include "worker/config_int.h"

/* A dir is made absolute now, so a later chdir does not move it. */
static int
config_finish_dir(struct config_state *st, const char *key, char **field,
    char **cause)
{
	char		*cwd, *abs;
	const char	*dir = *field;

	if (*dir == '/')
		return (0);
	if ((cwd = getcwd(NULL, 0)) == NULL) {
		xasprintf(cause, "%s: getcwd: %s",
		    config_where(st, key), strerror(errno));
		return (-1);
	}
	while (dir[0] == '.' && dir[1] == '/')
		dir += strspn(dir + 1, "/") + 1;
	if (*dir == '\0' || strcmp(dir, ".") == 0)
		abs = xstrdup(cwd);
	else
		xasprintf(&abs, "%s/%s", strcmp(cwd, "/") == 0 ? "" : cwd, dir);
	free(cwd);
	free(*field);
	*field = abs;
	return (0);
}

/*
 * The workspace becomes its realpath; it must be a directory. The default,
 * a directory of its own beside .tmp, is made when missing, but not for
 * --check-confinement, which changes nothing on disk: a missing default
 * is only made absolute then, and the probe stands a temporary directory
 * in for it (worker/boundary.c).
 */
static int
config_finish_workspace(struct config_state *st, char **cause)
{
	struct config	*c = st->c;
	const char	*where = config_where(st, "workspace");
	struct stat	 sb;
	char		*rp;
	int		 dflt = strncmp(where, "default", 7) == 0;

	if (dflt && st->check && lstat(c->workspace, &sb) == -1 &&
	    errno == ENOENT)
		return (config_finish_dir(st, "workspace", &c->workspace,
		    cause));
	if (dflt && !st->check && mkdir(c->workspace, 0755) == -1 &&
	    errno != EEXIST) {
		xasprintf(cause, "%s: cannot make '%s': %s", where,
		    c->workspace, strerror(errno));
		return (-1);
	}
	if ((rp = realpath(c->workspace, NULL)) == NULL) {
		xasprintf(cause, "%s: '%s': %s", where, c->workspace,
		    strerror(errno));
		return (-1);
	}
	if (stat(rp, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
		xasprintf(cause, "%s: '%s' is not a directory", where,
		    c->workspace);
		free(rp);
		return (-1);
	}
	free(c->workspace);
	c->workspace = rp;
	return (0);
}

/* run_as: a user name or uid:gid, looked up once. */
static int
config_finish_run_as(struct config_state *st, char **cause)
{
	struct config	*c = st->c;
	struct passwd	*pw;
	unsigned long	 uid, gid;
	char		 extra;

	if (c->run_as == NULL || *c->run_as == '\0')
		return (0);
	if (sscanf(c->run_as, "%lu:%lu%c", &uid, &gid, &extra) == 2) {
		c->run_uid = (uid_t)uid;
		c->run_gid = (gid_t)gid;
	} else if ((pw = getpwnam(c->run_as)) != NULL) {
		c->run_uid = pw->pw_uid;
		c->run_gid = pw->pw_gid;
	} else {
		xasprintf(cause, "%s: no user '%s' (a name or uid:gid)",
		    config_where(st, "run_as"), c->run_as);
		return (-1);
	}
	if (c->run_uid == 0) {
		xasprintf(cause, "%s: run_as must not be root",
		    config_where(st, "run_as"));
		return (-1);
	}
	if (c->run_uid == (uid_t)-1 || c->run_gid == (gid_t)-1) {
		xasprintf(cause, "%s: run_as: -1 is not a user or group",
		    config_where(st, "run_as"));
		return (-1);
	}
	c->run_as_set = 1;
	return (0);
}

/* The shell must be an executable file. */
static int
config_finish_shell(struct config_state *st, char **cause)
{
	const char	*shell = st->c->shell;
	struct stat	 sb;

	if (stat(shell, &sb) == 0 && !S_ISREG(sb.st_mode))
		errno = EACCES;
	else if (access(shell, X_OK) == 0)
		return (0);
	xasprintf(cause, "%s: '%s' is not executable: %s",
	    config_where(st, "shell"), shell, strerror(errno));
	return (-1);
}

/* An item without a timeout must not already be over the maximum. */
static int
config_finish_timeouts(struct config_state *st, char **cause)
{
	struct config	*c = st->c;
	char		 dflt[32], max[32];

	if (c->default_timeout_ms <= c->max_timeout_ms)
		return (0);
	config_format(CONFIG_MS, c->default_timeout_ms, dflt, sizeof dflt);
	config_format(CONFIG_MS, c->max_timeout_ms, max, sizeof max);
	xasprintf(cause, "%s: default timeout %s seconds is above the "
	    "maximum timeout %s seconds (from %s)",
	    config_where(st, "default_timeout_s"), dflt, max,
	    config_where(st, "max_timeout_s"));
	return (-1);
}

/*
 * The queue's tier: queue_tiers (file) beats the file's and the default
 * tier, the environment and flags beat both. Then the policy is built and
 * its rules checked.
 */
static int
config_finish_policy(struct config_state *st, char **cause)
{
	struct config	*c = st->c;
	const char	*where = config_where(st, "tier"), *qt;

	qt = policyconf_queue_tier(c->policy, c->queue);
	if (qt != NULL && (strncmp(where, "default", 7) == 0 ||
	    strncmp(where, "config file", 11) == 0)) {
		free(c->tier);
		c->tier = xstrdup(qt);
	}
	c->tier_auto = strcmp(c->tier, "auto") == 0;
	if (c->tier_auto)
		c->tier_level = CLS_TIER_READ_ONLY;	/* until confined */
	else
		cls_tier_parse(c->tier, &c->tier_level);
	cls_sandbox_parse(c->sandbox, &c->sandbox_mode);
	c->confine_mode = strcmp(c->confine, "required") == 0 ?
	    CONFINE_REQUIRED : strcmp(c->confine, "off") == 0 ? CONFINE_OFF :
	    CONFINE_AUTO;
	if (policyconf_queue_network(c->policy, c->queue) != -1 &&
	    (strncmp(config_where(st, "network"), "default", 7) == 0 ||
	    strncmp(config_where(st, "network"), "config file", 11) ==
	    0))
		c->network = policyconf_queue_network(c->policy, c->queue);
	if (policyconf_finish(c->policy, c->workspace, c->shell, cause) != 0) {
		if (c->config_file != NULL) {
			where = *cause;
			xasprintf(cause, "config file %s: %s", c->config_file,
			    where);
			free((char *)where);
		}
		return (-1);
	}
	return (0);
}

/*
 * The Redis password: from redis_password_file (its first line; a file
 * others may read is refused) or redis_password, not both; either beats
 * the URL's. A password in a --redis flag still works, but shows in ps:
 * the worker says so once (redis_url_secret_argv).
 */
static int
config_finish_redis(struct config_state *st, char **cause)
{
	struct config	*c = st->c;
	const char	*file = c->redis_password_file;
	struct rurl	 u;
	struct stat	 sb;
	char		*line = NULL, *err = NULL;
	size_t		 cap = 0;
	ssize_t		 len;
	FILE		*f;

	if (st->seen[config_find("redis_url")].flag_val != NULL &&
	    rurl_parse(c->redis_url, &u, &err) == 0) {
		c->redis_url_secret_argv = u.password != NULL;
		rurl_release(&u);
	}
	free(err);
	if (*file == '\0')
		return (0);
	if (*c->redis_password != '\0') {
		xasprintf(cause, "%s and %s: give the Redis password one way",
		    config_where(st, "redis_password_file"),
		    config_where(st, "redis_password"));
		return (-1);
	}
	if ((f = fopen(file, "re")) == NULL) {
		xasprintf(cause, "%s: '%s': %s", config_where(st,
		    "redis_password_file"), file, strerror(errno));
		return (-1);
	}
	if (fstat(fileno(f), &sb) == 0 && (sb.st_mode & S_IRWXO) != 0) {
		xasprintf(cause, "%s: '%s' may be read by anyone: chmod o-rwx "
		    "it (0600)", config_where(st, "redis_password_file"), file);
		fclose(f);
		return (-1);
	}
	len = getline(&line, &cap, f);
	fclose(f);
	while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
		line[--len] = '\0';
	if (len <= 0) {
		xasprintf(cause, "%s: '%s' holds no password on its first "
		    "line", config_where(st, "redis_password_file"), file);
		if (line != NULL)
			explicit_bzero(line, cap);
		free(line);
		return (-1);
	}
	free(c->redis_password);
	c->redis_password = xstrdup(line);
	explicit_bzero(line, cap);
	free(line);
	return (0);
}

/* The checks that need every layer, and the file system. */
int
config_finish(struct config_state *st, char **cause)
{
	if (config_finish_redis(st, cause) != 0 ||
	    config_finish_timeouts(st, cause) != 0 ||
	    config_finish_workspace(st, cause) != 0 ||
	    config_finish_dir(st, "log_dir", &st->c->log_dir, cause) != 0 ||
	    config_finish_dir(st, "state_dir", &st->c->state_dir, cause) != 0 ||
	    config_finish_dir(st, "tmp_dir", &st->c->tmp_dir, cause) != 0 ||
	    config_finish_run_as(st, cause) != 0 ||
	    config_finish_shell(st, cause) != 0 ||
	    config_finish_policy(st, cause) != 0)
		return (-1);
	st->c->verbose = st->verbose;
	st->c->check_confinement = st->check;
	return (0);
}
