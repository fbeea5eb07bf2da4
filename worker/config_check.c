/* The worker's settings: the checks of string values (names, URLs, modes). */

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "logs/xmalloc.h"
#include "policy/classify.h"
#include "policy/netaddr.h"
#include "queue/item.h"
#include "queue/rurl.h"
#include "worker/config_int.h"
#include "worker/http.h"

#define CONFIG_NAME_MAX	128
#define CONFIG_AGENTS_MAX	256

char *
config_check_url(const char *s)
{
	struct rurl	 u;
	char		*cause;

	if (rurl_parse(s, &u, &cause) != 0)
		return (cause);
	rurl_release(&u);
	return (NULL);
}

/* The queue's default retry policy: "" or args.retry's JSON object. */
char *
config_check_retry(const char *s)
{
	struct item_retry	*r;
	struct item_error	 err;
	json_t			*v;
	json_error_t		 jerr;
	char			*msg;

	if (*s == '\0')
		return (NULL);
	if ((v = json_loads(s, JSON_REJECT_DUPLICATES, &jerr)) == NULL) {
		xasprintf(&msg, "not JSON: %s (an object such as "
		    "{\"max_attempts\": 5, \"on\": [\"exit\"]})", jerr.text);
		return (msg);
	}
	memset(&err, 0, sizeof err);
	r = item_retry_parse(v, &err);
	json_decref(v);
	if (r != NULL) {
		free(r);
		return (NULL);
	}
	msg = xstrdup(err.message);
	item_error_release(&err);
	return (msg);
}

/*
 * queue_limits: "" or {"<queue>": {"max_running": N, "max_per_s": R}},
 * N a whole number from 0 (no limit) to 100000, R a number from 0 (no
 * limit) to 1000000.
 */
char *
config_check_limits(const char *s)
{
	json_t		*v, *l, *x;
	json_error_t	 jerr;
	const char	*q, *k;
	char		*msg = NULL;

	if (*s == '\0')
		return (NULL);
	if ((v = json_loads(s, JSON_REJECT_DUPLICATES, &jerr)) == NULL) {
		xasprintf(&msg, "not JSON: %s (an object such as "
		    "{\"build\": {\"max_running\": 4, \"max_per_s\": 10}})",
		    jerr.text);
		return (msg);
	}
	if (!json_is_object(v))
		xasprintf(&msg, "must be an object of queues");
	json_object_foreach(v, q, l) {
		if (msg != NULL)
			break;
		if ((msg = config_check_name(q)) != NULL)
			break;
		if (!json_is_object(l)) {
			xasprintf(&msg, "%s: must be an object: {\"max_running\""
			    ": N, \"max_per_s\": R}", q);
			break;
		}
		json_object_foreach(l, k, x) {
			if (strcmp(k, "max_running") == 0 &&
			    json_is_integer(x) && json_integer_value(x) >= 0 &&
			    json_integer_value(x) <= 100000)
				continue;
			if (strcmp(k, "max_per_s") == 0 && json_is_number(x) &&
			    json_number_value(x) >= 0 &&
			    json_number_value(x) <= 1000000)
				continue;
			xasprintf(&msg, "%s.%s: max_running takes 0 to 100000, "
			    "max_per_s 0 to 1000000; nothing else", q, k);
			break;
		}
	}
	json_decref(v);
	return (msg);
}

/* Queue, reply and consumer names: [A-Za-z0-9_.:-]{1,128}, no '.' first. */
char *
config_check_name(const char *s)
{
	size_t	 len = strlen(s);
	char	*msg;

	if (len >= 1 && len <= CONFIG_NAME_MAX && *s != '.' &&
	    strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789_.:-") == len)
		return (NULL);
	xasprintf(&msg, "'%s' is not a valid name (1-128 of A-Z a-z 0-9 "
	    "_ . : -, not starting with '.')", s);
	return (msg);
}

/*
 * Agents whose own lanes the worker reads: names split by spaces or
 * commas, each a Redis ACL user's: no '.' (the lane is <agent>.<lane>
 * and the agent's queues <agent>.*), no two alike, at most
 * CONFIG_AGENTS_MAX.
 */
char *
config_check_agents(const char *s)
{
	char		*list, *save, *p, *msg = NULL;
	const char	*names[CONFIG_AGENTS_MAX];
	size_t		 n = 0, i, len;

	list = xstrdup(s);
	for (p = strtok_r(list, " ,\t", &save); p != NULL && msg == NULL;
	    p = strtok_r(NULL, " ,\t", &save)) {
		len = strlen(p);
		if (len > 64 || strspn(p, "abcdefghijklmnopqrstuvwxyz"
		    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != len)
			xasprintf(&msg, "'%s' is not an agent's name (1-64 of "
			    "A-Z a-z 0-9 _ -)", p);
		else if (n == CONFIG_AGENTS_MAX)
			xasprintf(&msg, "more than %d agents",
			    CONFIG_AGENTS_MAX);
		for (i = 0; i < n && msg == NULL; i++)
			if (strcmp(names[i], p) == 0)
				xasprintf(&msg, "'%s' is named twice", p);
		if (msg == NULL)
			names[n++] = p;
	}
	free(list);
	return (msg);
}

/* Domain patterns (netaddr_pattern_valid), split by spaces or commas. */
char *
config_check_domains(const char *s)
{
	char	*list, *save, *p, *msg = NULL;

	list = xstrdup(s);
	for (p = strtok_r(list, " ,\t", &save); p != NULL && msg == NULL;
	    p = strtok_r(NULL, " ,\t", &save))
		if (!netaddr_pattern_valid(p))
			xasprintf(&msg, "'%s' is not a domain (pypi.org, "
			    "*.github.com) or an IP address", p);
	free(list);
	return (msg);
}

/* For directories that are resolved later. */
char *
config_check_nonempty(const char *s)
{
	return (*s == '\0' ? xstrdup("must not be empty") : NULL);
}

/* An operator token: long enough not to be guessed; never echoed. */
char *
config_check_operator_token(const char *s)
{
	size_t	i;

	for (i = 0; s[i] != '\0'; i++)
		if (s[i] <= ' ' || s[i] > '~')
			return (xstrdup("must be printable ASCII without "
			    "spaces"));
	if (i != 0 && (i < 16 || i > 128))
		return (xstrdup("must be 16 to 128 characters"));
	return (NULL);
}

/* Empty, or an address the HTTP side door can listen on. */
char *
config_check_http(const char *s)
{
	char		*host, *cause;
	unsigned	 port;

	if (*s == '\0')
		return (NULL);
	if (http_parse_addr(s, &host, &port, &cause) != 0)
		return (cause);
	free(host);
	return (NULL);
}

/* The shell: absolute here, executable at the end. */
char *
config_check_absolute(const char *s)
{
	char	*msg;

	if (*s == '/')
		return (NULL);
	xasprintf(&msg, "'%s' is not an absolute path", s);
	return (msg);
}

/* "auto", "off" or an absolute directory (checked by the cgroup code). */
char *
config_check_cgroup(const char *s)
{
	char	*msg;

	if (strcmp(s, "auto") == 0 || strcmp(s, "off") == 0 || *s == '/')
		return (NULL);
	xasprintf(&msg, "'%s' must be auto, off or an absolute directory", s);
	return (msg);
}

/* auto, or a number of replicas from 0 to 16. */
char *
config_check_replicas(const char *s)
{
	char	*end, *msg;
	long	 n;

	if (strcmp(s, "auto") == 0)
		return (NULL);
	n = strtol(s, &end, 10);
	if (*s != '\0' && *end == '\0' && n >= 0 && n <= 16)
		return (NULL);
	xasprintf(&msg, "'%s' must be auto or a number from 0 to 16", s);
	return (msg);
}

/* auto, read_only, read_write, confined or admin. */
char *
config_check_tier(const char *s)
{
	enum cls_tier	 t;
	char		*msg;

	if (strcmp(s, "auto") == 0 || cls_tier_parse(s, &t) == 0)
		return (NULL);
	xasprintf(&msg, "'%s' must be auto, read_only, read_write, confined "
	    "or admin", s);
	return (msg);
}

/* auto, required or off. */
char *
config_check_confine(const char *s)
{
	char	*msg;

	if (strcmp(s, "auto") == 0 || strcmp(s, "required") == 0 ||
	    strcmp(s, "off") == 0)
		return (NULL);
	xasprintf(&msg, "'%s' must be auto, required or off", s);
	return (msg);
}

/* hold, refuse or off. */
char *
config_check_sandbox(const char *s)
{
	enum cls_sandbox	 sb;
	char			*msg;

	if (cls_sandbox_parse(s, &sb) == 0)
		return (NULL);
	xasprintf(&msg, "'%s' must be hold, refuse or off", s);
	return (msg);
}
