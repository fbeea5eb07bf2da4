/*
 * The worker's settings: the config file layer. A JSON object whose keys
 * are the table's (or the policy's, policy/policyconf.c), each of its
 * row's type.
 */

#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "logs/xmalloc.h"
#include "policy/policyconf.h"
#include "worker/config_int.h"

/* How a JSON type reads in a message. */
static const char *
config_json_type(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return ("an object");
	case JSON_ARRAY:
		return ("an array");
	case JSON_STRING:
		return ("a string");
	case JSON_INTEGER:
		return ("a whole number");
	case JSON_REAL:
		return ("a number with a decimal point");
	case JSON_TRUE:
	case JSON_FALSE:
		return ("a boolean");
	default:
		return ("null");
	}
}

/* The file's value as the text a flag would carry, or NULL and *msg. */
static char *
config_json_text(const struct config_opt *opt, const json_t *v, char **msg)
{
	static const char	*want[] = {
		[CONFIG_STRING] = "a string", [CONFIG_BOOL] = "true or false",
		[CONFIG_UINT] = "a whole number",
		[CONFIG_MS] = "a number of seconds",
		[CONFIG_SIZE] = "a number of bytes or a string such as \"64k\"",
	};
	enum config_type	 t = opt->type;
	char			*s;

	if (json_is_string(v) && (t == CONFIG_STRING || t == CONFIG_SIZE))
		return (xstrdup(json_string_value(v)));
	/* A setting whose value is JSON (retry) takes an object as is. */
	if (json_is_object(v) && (opt->check == config_check_retry ||
	    opt->check == config_check_limits))
		return (json_dumps(v, JSON_COMPACT));
	if (json_is_boolean(v) && t == CONFIG_BOOL)
		return (xstrdup(json_is_true(v) ? "1" : "0"));
	if (json_is_integer(v) && t != CONFIG_STRING && t != CONFIG_BOOL) {
		xasprintf(&s, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		return (s);
	}
	if (json_is_real(v) && t == CONFIG_MS) {
		xasprintf(&s, "%.6f", json_real_value(v));
		return (s);
	}
	xasprintf(msg, "expected %s, got %s", want[t], config_json_type(v));
	return (NULL);
}

/* One key of the config file. */
static int
config_file_key(struct config_state *st, const char *path, const char *key,
    const json_t *v, char **cause)
{
	char	*where, *text, *msg = NULL;
	int	 i, r = -1;

	if (policyconf_owns(key)) {
		xasprintf(&where, "config file %s", path);
		r = policyconf_key(st->c->policy, where, key, v, cause);
		free(where);
		return (r);
	}
	if ((i = config_find(key)) == -1) {
		xasprintf(cause, "config file %s: unknown key '%s' (see "
		    "docs/CONFIG.md)", path, key);
		return (-1);
	}
	xasprintf(&where, "config file %s: %s", path, key);
	if ((text = config_json_text(&config_opts[i], v, &msg)) != NULL)
		r = config_set(st, i, text, where, cause);
	else
		xasprintf(cause, "%s: %s", where, msg);
	free(text);
	free(msg);
	free(where);
	return (r);
}

/* Reads the JSON file; NULL and *cause if it cannot be read or parsed. */
static json_t *
config_read_file(const char *path, char **cause)
{
	FILE		*f;
	struct stat	 sb;
	json_t		*root = NULL;
	json_error_t	 jerr;

	if ((f = fopen(path, "re")) == NULL) {
		xasprintf(cause, "config file %s: %s", path, strerror(errno));
		return (NULL);
	}
	if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode))
		xasprintf(cause, "config file %s: %s", path, strerror(EISDIR));
	else if ((root = json_loadf(f, JSON_REJECT_DUPLICATES, &jerr)) == NULL)
		xasprintf(cause, "config file %s: line %d column %d: %s", path,
		    jerr.line, jerr.column, jerr.text);
	fclose(f);
	return (root);
}

/* The config file layer: every key must be known and of the right type. */
int
config_apply_file(struct config_state *st, const char *path, char **cause)
{
	json_t		*root, *v;
	const char	*key;
	int		 r = -1;

	if ((root = config_read_file(path, cause)) == NULL)
		return (-1);
	if (!json_is_object(root)) {
		xasprintf(cause, "config file %s: expected a JSON object, got "
		    "%s", path, config_json_type(root));
		goto out;
	}
	json_object_foreach(root, key, v) {
		if (config_file_key(st, path, key, v, cause) != 0)
			goto out;
	}
	st->c->config_file = xstrdup(path);
	r = 0;
out:
	json_decref(root);
	return (r);
}
