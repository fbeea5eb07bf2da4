/*
 * The policy keys of the config file. A rule reads
 *
 *	{ "name": "make-test", "match": "make test*", "risk": "write",
 *	  "reason": "builds and runs the tests",
 *	  "examples": ["make test", "make test-unit"],
 *	  "counter_examples": ["make install"] }
 *
 * name is optional (default "#<n>", n from 1); examples must not be empty,
 * so every rule shows what it is for and a typo shows at start-up.
 */

#include <sys/stat.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "policy/classify.h"
#include "policy/policyconf.h"
#include "logs/xmalloc.h"

#define POLICYCONF_RULES_MAX	1000
#define POLICYCONF_ALLOW_MAX	100

struct policyconf {
	struct cls_rule		*rules;
	size_t			 nrules;
	char			**allow;
	size_t			 nallow;
	char			**read;		/* read_paths, or NULL: default */
	char			**env_allow;	/* fnmatch patterns of names */
	size_t			  nenv_allow;
	size_t			 nread;
	json_t			*queue_tiers;	/* {queue: tier}, checked */
	json_t			*queue_network;	/* {queue: bool}, checked */
	struct cls_policy	 policy;
};

struct policyconf *
policyconf_create(void)
{
	return (xcalloc(1, sizeof (struct policyconf)));
}

/* Frees a NULL-terminated string list. */
static void
policyconf_strv_free(char **v)
{
	size_t	i;

	for (i = 0; v != NULL && v[i] != NULL; i++)
		free(v[i]);
	free(v);
}

/* Frees the rules. */
static void
policyconf_rules_free(struct policyconf *pc)
{
	struct cls_rule	*r;
	size_t		 i;

	for (i = 0; i < pc->nrules; i++) {
		r = &pc->rules[i];
		free(r->name);
		free(r->glob);
		free(r->reason);
		policyconf_strv_free(r->match);
		policyconf_strv_free(r->no_match);
	}
	free(pc->rules);
	pc->rules = NULL;
	pc->nrules = 0;
}

/* Frees a path list (allow_paths or read_paths). */
static void
policyconf_paths_free(char ***v, size_t *n)
{
	size_t	i;

	for (i = 0; i < *n; i++)
		free((*v)[i]);
	free(*v);
	*v = NULL;
	*n = 0;
}

void
policyconf_free(struct policyconf *pc)
{
	if (pc == NULL)
		return;
	policyconf_rules_free(pc);
	policyconf_paths_free(&pc->allow, &pc->nallow);
	policyconf_paths_free(&pc->read, &pc->nread);
	policyconf_paths_free(&pc->env_allow, &pc->nenv_allow);
	json_decref(pc->queue_tiers);
	json_decref(pc->queue_network);
	free(pc);
}

int
policyconf_owns(const char *key)
{
	return (strcmp(key, "rules") == 0 || strcmp(key, "queue_tiers") == 0 ||
	    strcmp(key, "allow_paths") == 0 || strcmp(key, "read_paths") == 0 ||
	    strcmp(key, "queue_network") == 0 || strcmp(key, "env_allow") == 0);
}

/* A non-empty string member, or NULL and *cause. */
static const char *
policyconf_string(const json_t *o, const char *key, int required,
    const char *where, char **cause)
{
	const json_t	*v = json_object_get(o, key);

	if (v == NULL || json_is_null(v)) {
		if (required)
			xasprintf(cause, "%s: \"%s\" is missing", where, key);
		return (NULL);
	}
	if (!json_is_string(v) || json_string_length(v) == 0 ||
	    strlen(json_string_value(v)) != json_string_length(v)) {
		xasprintf(cause, "%s: \"%s\" must be a non-empty string", where,
		    key);
		return (NULL);
	}
	return (json_string_value(v));
}

/* An array of strings as a NULL-terminated list; NULL and *cause. */
static char **
policyconf_strv(const json_t *o, const char *key, int required,
    const char *where, char **cause)
{
	const json_t	*a = json_object_get(o, key), *v;
	char		**out;
	size_t		 i;

	if ((a == NULL || json_is_null(a)) && !required)
		return (xcalloc(1, sizeof *out));
	if (!json_is_array(a) || (required && json_array_size(a) == 0)) {
		xasprintf(cause, "%s: \"%s\" must be %sarray of commands",
		    where, key, required ? "a non-empty " : "an ");
		return (NULL);
	}
	out = xcalloc(json_array_size(a) + 1, sizeof *out);
	json_array_foreach(a, i, v) {
		if (!json_is_string(v) || json_string_length(v) == 0) {
			xasprintf(cause, "%s: \"%s\"[%zu] must be a non-empty "
			    "string", where, key, i);
			policyconf_strv_free(out);
			return (NULL);
		}
		out[i] = xstrdup(json_string_value(v));
	}
	return (out);
}

/* 1 if every key of rule o is one we know. */
static int
policyconf_rule_keys(const json_t *o, const char *where, char **cause)
{
	static const char	*known[] = { "name", "match", "risk", "reason",
				    "examples", "counter_examples" };
	const char		*key;
	const json_t		*v;
	size_t			 i;

	json_object_foreach((json_t *)o, key, v) {
		for (i = 0; i < sizeof known / sizeof known[0]; i++)
			if (strcmp(key, known[i]) == 0)
				break;
		if (i == sizeof known / sizeof known[0]) {
			xasprintf(cause, "%s: unknown key \"%s\"", where, key);
			return (0);
		}
	}
	return (1);
}

/* One rule object into r; -1 and *cause. */
static int
policyconf_rule(const json_t *o, size_t n, const char *file,
    struct cls_rule *r, char **cause)
{
	const char	*name, *glob, *risk, *reason;
	char		*where;
	int		 rc = -1;

	xasprintf(&where, "%s: rules[%zu]", file, n);
	if (!json_is_object(o)) {
		xasprintf(cause, "%s: must be an object", where);
		goto out;
	}
	if (!policyconf_rule_keys(o, where, cause) ||
	    ((name = policyconf_string(o, "name", 0, where, cause)) == NULL &&
	    *cause != NULL) ||
	    (glob = policyconf_string(o, "match", 1, where, cause)) == NULL ||
	    (risk = policyconf_string(o, "risk", 1, where, cause)) == NULL ||
	    (reason = policyconf_string(o, "reason", 1, where, cause)) == NULL)
		goto out;
	if (cls_risk_parse(risk, &r->risk) != 0) {
		xasprintf(cause, "%s: risk \"%s\" must be read_only, write, "
		    "unknown, destructive or blocked", where, risk);
		goto out;
	}
	if ((r->match = policyconf_strv(o, "examples", 1, where,
	    cause)) == NULL || (r->no_match = policyconf_strv(o,
	    "counter_examples", 0, where, cause)) == NULL)
		goto out;
	if (name != NULL)
		r->name = xstrdup(name);
	else
		xasprintf(&r->name, "#%zu", n + 1);
	r->glob = xstrdup(glob);
	r->reason = xstrdup(reason);
	rc = 0;
out:
	free(where);
	return (rc);
}

/* "rules": replaces any earlier list. */
static int
policyconf_rules(struct policyconf *pc, const char *file, const json_t *a,
    char **cause)
{
	const json_t	*o;
	size_t		 i;

	if (!json_is_array(a) || json_array_size(a) > POLICYCONF_RULES_MAX) {
		xasprintf(cause, "%s: rules must be an array of at most %d "
		    "rules", file, POLICYCONF_RULES_MAX);
		return (-1);
	}
	policyconf_rules_free(pc);
	pc->rules = xcalloc(json_array_size(a) + 1, sizeof *pc->rules);
	json_array_foreach(a, i, o) {
		pc->nrules++;
		if (policyconf_rule(o, i, file, &pc->rules[i], cause) != 0)
			return (-1);
	}
	return (0);
}

/*
 * "allow_paths" or "read_paths": absolute paths (allow_paths are
 * resolved at the end), into *out (NULL-terminated) and *n.
 */
static int
policyconf_paths(const char *file, const char *key, const json_t *a,
    char ***out, size_t *n, char **cause)
{
	const json_t	*v;
	size_t		 i;

	if (!json_is_array(a) || json_array_size(a) > POLICYCONF_ALLOW_MAX) {
		xasprintf(cause, "%s: %s must be an array of at most "
		    "%d absolute paths", file, key, POLICYCONF_ALLOW_MAX);
		return (-1);
	}
	policyconf_paths_free(out, n);
	*out = xcalloc(json_array_size(a) + 1, sizeof **out);
	json_array_foreach(a, i, v) {
		if (!json_is_string(v) || json_string_value(v)[0] != '/') {
			xasprintf(cause, "%s: %s[%zu] must be an absolute "
			    "path", file, key, i);
			return (-1);
		}
		(*out)[(*n)++] = xstrdup(json_string_value(v));
	}
	return (0);
}

/*
 * "env_allow": fnmatch(3) patterns of variable names ("MYAPP_*") an item
 * or a command may export besides the safe list. Only name characters
 * and * ? [ ]: a pattern cannot reach "PATH" by accident unless it says
 * so, and "*" alone is refused (it would end the allowlist).
 */
static int
policyconf_env_allow(struct policyconf *pc, const char *file,
    const json_t *a, char **cause)
{
	const json_t	*v;
	const char	*s;
	size_t		 i;

	if (!json_is_array(a) || json_array_size(a) > POLICYCONF_ALLOW_MAX) {
		xasprintf(cause, "%s: env_allow must be an array of at most "
		    "%d name patterns", file, POLICYCONF_ALLOW_MAX);
		return (-1);
	}
	policyconf_paths_free(&pc->env_allow, &pc->nenv_allow);
	pc->env_allow = xcalloc(json_array_size(a) + 1, sizeof *pc->env_allow);
	json_array_foreach(a, i, v) {
		s = json_is_string(v) ? json_string_value(v) : "";
		if (*s == '\0' || strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
		    "abcdefghijklmnopqrstuvwxyz0123456789_*?[]") != strlen(s) ||
		    strspn(s, "*?") == strlen(s)) {
			xasprintf(cause, "%s: env_allow[%zu] must be a variable "
			    "name or a pattern of one (letters, digits, _, * ? "
			    "[ ]), not only wildcards", file, i);
			return (-1);
		}
		pc->env_allow[pc->nenv_allow++] = xstrdup(s);
	}
	return (0);
}

/* "queue_network": {queue: true|false}. */
static int
policyconf_network(struct policyconf *pc, const char *file, const json_t *o,
    char **cause)
{
	const char	*queue;
	const json_t	*v;

	if (!json_is_object(o)) {
		xasprintf(cause, "%s: queue_network must be an object of queue "
		    "names and true/false", file);
		return (-1);
	}
	json_object_foreach((json_t *)o, queue, v) {
		if (!json_is_boolean(v)) {
			xasprintf(cause, "%s: queue_network.%s must be true or "
			    "false", file, queue);
			return (-1);
		}
	}
	json_decref(pc->queue_network);
	pc->queue_network = json_deep_copy(o);
	return (0);
}

/* "queue_tiers": {queue: tier}. */
static int
policyconf_tiers(struct policyconf *pc, const char *file, const json_t *o,
    char **cause)
{
	enum cls_tier	 t;
	const char	*queue;
	const json_t	*v;

	if (!json_is_object(o)) {
		xasprintf(cause, "%s: queue_tiers must be an object of queue "
		    "names and tiers", file);
		return (-1);
	}
	json_object_foreach((json_t *)o, queue, v) {
		if (!json_is_string(v) ||
		    cls_tier_parse(json_string_value(v), &t) != 0) {
			xasprintf(cause, "%s: queue_tiers.%s must be read_only, "
			    "read_write, confined or admin", file, queue);
			return (-1);
		}
	}
	json_decref(pc->queue_tiers);
	pc->queue_tiers = json_deep_copy(o);
	return (0);
}

int
policyconf_key(struct policyconf *pc, const char *where, const char *key,
    const struct json_t *v, char **cause)
{
	if (strcmp(key, "rules") == 0)
		return (policyconf_rules(pc, where, v, cause));
	if (strcmp(key, "allow_paths") == 0)
		return (policyconf_paths(where, key, v, &pc->allow, &pc->nallow,
		    cause));
	if (strcmp(key, "read_paths") == 0)
		return (policyconf_paths(where, key, v, &pc->read, &pc->nread,
		    cause));
	if (strcmp(key, "queue_network") == 0)
		return (policyconf_network(pc, where, v, cause));
	if (strcmp(key, "env_allow") == 0)
		return (policyconf_env_allow(pc, where, v, cause));
	return (policyconf_tiers(pc, where, v, cause));
}

/* allow_paths become their realpaths; each must be a directory. */
static int
policyconf_resolve_allow(struct policyconf *pc, char **cause)
{
	struct stat	 sb;
	char		*rp;
	size_t		 i;

	for (i = 0; i < pc->nallow; i++) {
		if ((rp = realpath(pc->allow[i], NULL)) == NULL ||
		    stat(rp, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
			xasprintf(cause, "allow_paths: '%s': %s", pc->allow[i],
			    rp == NULL ? strerror(errno) : "not a directory");
			free(rp);
			return (-1);
		}
		free(pc->allow[i]);
		pc->allow[i] = rp;
	}
	return (0);
}

int
policyconf_finish(struct policyconf *pc, const char *workspace,
    const char *shell, char **cause)
{
	char	*why;

	if (policyconf_resolve_allow(pc, cause) != 0)
		return (-1);
	pc->policy.rules = pc->rules;
	pc->policy.nrules = pc->nrules;
	pc->policy.workspace = workspace;
	pc->policy.allow_paths = (const char *const *)pc->allow;
	pc->policy.nallow = pc->nallow;
	pc->policy.shell = cls_shell_of(shell);
	pc->policy.env_allow = (const char *const *)pc->env_allow;
	pc->policy.nenv_allow = pc->nenv_allow;
	if (cls_rules_check(&pc->policy, &why) != 0) {
		xasprintf(cause, "rules: %s", why);
		free(why);
		return (-1);
	}
	return (0);
}

const char *
policyconf_queue_tier(const struct policyconf *pc, const char *queue)
{
	const json_t	*v;

	if (pc->queue_tiers == NULL ||
	    (v = json_object_get(pc->queue_tiers, queue)) == NULL)
		return (NULL);
	return (json_string_value(v));
}

const struct cls_policy *
policyconf_policy(const struct policyconf *pc)
{
	return (&pc->policy);
}

size_t
policyconf_nrules(const struct policyconf *pc)
{
	return (pc->nrules);
}

const char *const *
policyconf_read_paths(const struct policyconf *pc)
{
	return ((const char *const *)pc->read);
}

int
policyconf_queue_network(const struct policyconf *pc, const char *queue)
{
	const json_t	*v;

	if (pc->queue_network == NULL ||
	    (v = json_object_get(pc->queue_network, queue)) == NULL)
		return (-1);
	return (json_is_true(v));
}

/* One layer's string for a settings member: copied over the old one. */
static void
policyconf_settings_set(char **field, const char *v)
{
	if (v == NULL)
		return;
	free(*field);
	*field = xstrdup(v);
}

/*
 * The file's layer: its policy keys, and the few plain keys the policy
 * needs. Keys of the worker's own (timeouts, Redis...) are its business.
 */
static int
policyconf_settings_file(struct policy_settings *ps, const char *path,
    char **cause)
{
	static const char *const keys[] = { "workspace", "shell", "tier",
	    "sandbox", "queue" };
	char		**fields[] = { &ps->workspace, &ps->shell, &ps->tier,
			    &ps->sandbox, &ps->queue };
	json_error_t	 jerr;
	json_t		*root, *v;
	const char	*key;
	char		*where;
	size_t		 i;
	int		 rc = 0;

	if ((root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr)) ==
	    NULL || !json_is_object(root)) {
		xasprintf(cause, "config file %s: %s", path, root == NULL ?
		    jerr.text : "not a JSON object");
		json_decref(root);
		return (-1);
	}
	xasprintf(&where, "config file %s", path);
	json_object_foreach(root, key, v) {
		if (policyconf_owns(key)) {
			if ((rc = policyconf_key(ps->pc, where, key, v,
			    cause)) != 0)
				break;
			continue;
		}
		for (i = 0; i < sizeof keys / sizeof keys[0]; i++) {
			if (strcmp(key, keys[i]) != 0)
				continue;
			if (!json_is_string(v)) {
				xasprintf(cause, "%s: \"%s\" must be a string",
				    where, key);
				rc = -1;
				break;
			}
			policyconf_settings_set(fields[i], json_string_value(v));
		}
		if (rc != 0)
			break;
	}
	free(where);
	json_decref(root);
	return (rc);
}

/* NAME's value in envp, or NULL (an empty one counts as unset). */
static const char *
policyconf_getenv(char *const *envp, const char *name)
{
	size_t	n = strlen(name);

	for (; envp != NULL && *envp != NULL; envp++)
		if (strncmp(*envp, name, n) == 0 && (*envp)[n] == '=' &&
		    (*envp)[n + 1] != '\0')
			return (*envp + n + 1);
	return (NULL);
}

int
policyconf_settings_load(struct policy_settings *ps, const char *file,
    char *const *envp, const struct policy_settings *over, char **cause)
{
	const char	*qt, *env_tier;
	char		*rp;

	memset(ps, 0, sizeof *ps);
	ps->pc = policyconf_create();
	ps->workspace = xstrdup(POLICYCONF_DEFAULT_WORKSPACE);
	ps->shell = xstrdup(POLICYCONF_DEFAULT_SHELL);
	ps->tier = xstrdup(POLICYCONF_DEFAULT_TIER);
	ps->sandbox = xstrdup(POLICYCONF_DEFAULT_SANDBOX);
	ps->queue = xstrdup(POLICYCONF_DEFAULT_QUEUE);
	if (file == NULL)
		file = policyconf_getenv(envp, "EXECQ_CONFIG");
	if (file != NULL && policyconf_settings_file(ps, file, cause) != 0)
		return (-1);
	/* queue_tiers beats the file's tier; the environment and flags
	   beat both, as in the worker. */
	policyconf_settings_set(&ps->queue, policyconf_getenv(envp,
	    "EXECQ_QUEUE"));
	policyconf_settings_set(&ps->queue, over->queue);
	if ((qt = policyconf_queue_tier(ps->pc, ps->queue)) != NULL)
		policyconf_settings_set(&ps->tier, qt);
	env_tier = policyconf_getenv(envp, "EXECQ_TIER");
	policyconf_settings_set(&ps->tier, env_tier);
	policyconf_settings_set(&ps->tier, over->tier);
	policyconf_settings_set(&ps->workspace, policyconf_getenv(envp,
	    "EXECQ_WORKSPACE"));
	policyconf_settings_set(&ps->workspace, over->workspace);
	policyconf_settings_set(&ps->shell, policyconf_getenv(envp,
	    "EXECQ_SHELL"));
	policyconf_settings_set(&ps->sandbox, policyconf_getenv(envp,
	    "EXECQ_SANDBOX"));
	policyconf_settings_set(&ps->sandbox, over->sandbox);
	if (strcmp(ps->tier, "auto") == 0)
		ps->tier_level = CLS_TIER_READ_ONLY;	/* unconfined */
	else if (cls_tier_parse(ps->tier, &ps->tier_level) != 0) {
		xasprintf(cause, "tier '%s' must be auto, read_only, "
		    "read_write, confined or admin", ps->tier);
		return (-1);
	}
	if (cls_sandbox_parse(ps->sandbox, &ps->sandbox_mode) != 0) {
		xasprintf(cause, "sandbox '%s' must be hold, refuse or off",
		    ps->sandbox);
		return (-1);
	}
	if ((rp = realpath(ps->workspace, NULL)) == NULL) {
		xasprintf(cause, "workspace '%s': %s (give --workspace DIR)",
		    ps->workspace, strerror(errno));
		return (-1);
	}
	free(ps->workspace);
	ps->workspace = rp;
	return (policyconf_finish(ps->pc, ps->workspace, ps->shell, cause));
}

void
policyconf_settings_release(struct policy_settings *ps)
{
	free(ps->workspace);
	free(ps->shell);
	free(ps->tier);
	free(ps->sandbox);
	free(ps->queue);
	policyconf_free(ps->pc);
	memset(ps, 0, sizeof *ps);
}
