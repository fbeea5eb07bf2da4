/*
 * The worker's settings: the driver. config_load reads the layers in
 * their order (flags collected, then defaults, the config file, the
 * environment, the flags applied, the checks that need them all); the
 * parts are below it (worker/config_int.h says which does what).
 */

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "logs/xmalloc.h"
#include "policy/policyconf.h"
#include "worker/config_int.h"

static const char *
config_getenv(char **envp, const char *name)
{
	size_t		 len = strlen(name);
	const char	*v;

	for (; envp != NULL && *envp != NULL; envp++) {
		if (strncmp(*envp, name, len) != 0 || (*envp)[len] != '=')
			continue;
		v = *envp + len + 1;
		return (*v != '\0' ? v : NULL);
	}
	return (NULL);
}

/*
 * "<hostname>-<pid>", squeezed into the name rules. Under a holder
 * (worker/holder.h) the holder's pid: every worker it starts is the
 * same consumer, whose sessions and lease go on.
 */
static char *
config_default_consumer(void)
{
	char	 host[65], *s, *p;
	const char *hold = getenv("EXECQ_HOLDER");	/* "<fd>:<pid>" */
	long	 pid = (long)getpid();

	if (gethostname(host, sizeof host) != 0 || *host == '\0')
		snprintf(host, sizeof host, "worker");
	host[sizeof host - 1] = '\0';
	if (hold != NULL && (p = strchr(hold, ':')) != NULL &&
	    strtol(p + 1, NULL, 10) == (long)getppid())
		pid = strtol(p + 1, NULL, 10);
	xasprintf(&s, "%s-%ld", host, pid);
	for (p = s; *p != '\0'; p++) {
		if (!isalnum((unsigned char)*p) && strchr("_.:-", *p) == NULL)
			*p = '_';
	}
	if (*s == '.')
		*s = '_';
	return (s);
}

/* The bottom layer. */
static int
config_apply_defaults(struct config_state *st, char **cause)
{
	const struct config_opt	*opt;
	char			*where, *computed;
	size_t			 i;
	int			 r = 0;

	for (i = 0; r == 0 && i < config_nopts; i++) {
		opt = &config_opts[i];
		computed = opt->def == NULL ? config_default_consumer() : NULL;
		xasprintf(&where, "default %s", opt->key);
		r = config_set(st, i, computed != NULL ? computed : opt->def,
		    where, cause);
		free(where);
		free(computed);
	}
	return (r);
}

/* The environment layer. */
static int
config_apply_env(struct config_state *st, char **envp, char **cause)
{
	const char	*v;
	size_t		 i;

	for (i = 0; i < config_nopts; i++) {
		v = config_getenv(envp, config_opts[i].env);
		if (v != NULL && config_set(st, i, v, config_opts[i].env,
		    cause) != 0)
			return (-1);
	}
	return (0);
}

/* Layers, lowest first: defaults, file, environment, flags. */
int
config_load(struct config *c, int argc, char **argv, char **envp,
    char **cause)
{
	struct config_state	 st;
	const char		*file;
	size_t			 i;
	int			 r;

	*cause = NULL;
	memset(c, 0, sizeof *c);
	memset(&st, 0, sizeof st);
	st.c = c;
	st.seen = xcalloc(config_nopts, sizeof *st.seen);
	c->policy = policyconf_create();
	if ((r = config_parse_flags(&st, argc, argv, cause)) != 0)
		goto out;
	file = st.config_file;
	if (file == NULL)
		file = config_getenv(envp, "EXECQ_CONFIG");
	r = -1;
	if (config_apply_defaults(&st, cause) != 0 ||
	    (file != NULL && config_apply_file(&st, file, cause) != 0) ||
	    config_apply_env(&st, envp, cause) != 0 ||
	    config_apply_flags(&st, cause) != 0 ||
	    config_finish(&st, cause) != 0)
		goto out;
	r = 0;
out:
	if (r != 0)
		config_release(c);
	for (i = 0; i < config_nopts; i++)
		free(st.seen[i].where);
	free(st.seen);
	return (r);
}

/* Frees every string; c is zeroed, so releasing twice is harmless. */
void
config_release(struct config *c)
{
	if (c == NULL)
		return;
	free(c->redis_url);
	free(c->redis_user);
	free(c->redis_password_file);
	if (c->redis_password != NULL)
		explicit_bzero(c->redis_password, strlen(c->redis_password));
	free(c->redis_password);
	free(c->redis_tls_ca);
	free(c->redis_tls_cert);
	free(c->redis_tls_key);
	free(c->redis_tls_server_name);
	free(c->redis_wait_replicas);
	free(c->queue);
	free(c->reply_default);
	free(c->agents);
	free(c->network_domains);
	free(c->network_private_hosts);
	free(c->retry);
	free(c->queue_limits);
	free(c->workspace);
	free(c->log_dir);
	free(c->operator_token);
	free(c->state_dir);
	free(c->shell);
	free(c->consumer);
	free(c->cgroup);
	free(c->config_file);
	free(c->tier);
	free(c->sandbox);
	free(c->confine);
	free(c->tmp_dir);
	free(c->run_as);
	free(c->http);
	free(c->log_file);
	policyconf_free(c->policy);
	memset(c, 0, sizeof *c);
}
