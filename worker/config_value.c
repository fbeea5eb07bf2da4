/*
 * The worker's settings: one value. Every value, defaults included, is
 * parsed by its row's type (seconds, sizes, booleans, whole numbers) and
 * checked, and where it came from is kept for the messages of the checks
 * that run once all layers are in.
 */

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "logs/xmalloc.h"
#include "worker/config_int.h"

#define CONFIG_HUGE	100000000000ULL		/* above every maximum */

/* Reads digits at *pp, saturating at CONFIG_HUGE; 0 if there are none. */
static int
config_digits(const char **pp, unsigned long long *v)
{
	const char	*p, *start = *pp;

	*v = 0;
	for (p = start; isdigit((unsigned char)*p); p++) {
		if (*v < CONFIG_HUGE)
			*v = *v * 10 + (*p - '0');
	}
	*pp = p;
	return (p != start);
}

/* Seconds as "N", "N.F" or ".F" to milliseconds, rounded; -1 if junk. */
static int
config_seconds(const char *s, unsigned long long *ms)
{
	unsigned long long	 sec, frac = 0, round = 0;
	const char		*p = s;
	int			 n, i = 0;

	n = config_digits(&p, &sec);
	if (*p == '.') {
		for (p++; isdigit((unsigned char)*p); p++, i++) {
			if (i < 3)
				frac = frac * 10 + (*p - '0');
			else if (i == 3 && *p >= '5')
				round = 1;
		}
		for (n += i; i < 3; i++)
			frac *= 10;
	}
	if (n == 0 || *p != '\0')
		return (-1);
	*ms = sec * 1000 + frac + round;
	return (0);
}

/* Bytes, with an optional k or m (binary); -1 if junk. */
static int
config_size(const char *s, unsigned long long *v)
{
	const char	*p = s;

	if (!config_digits(&p, v))
		return (-1);
	if (*p == 'k' || *p == 'K') {
		*v <<= 10;
		p++;
	} else if (*p == 'm' || *p == 'M') {
		*v <<= 20;
		p++;
	} else if (*p == 'g' || *p == 'G') {
		*v <<= 30;
		p++;
	}
	return (*p == '\0' ? 0 : -1);
}

/* A limit for messages, in the units the user types. */
void
config_format(enum config_type type, unsigned long long v, char *buf,
    size_t len)
{
	if (type == CONFIG_MS && v % 1000 != 0)
		snprintf(buf, len, "%llu.%03llu", v / 1000, v % 1000);
	else if (type == CONFIG_MS)
		snprintf(buf, len, "%llu", v / 1000);
	else if (type == CONFIG_SIZE && v != 0 && v % (1 << 30) == 0)
		snprintf(buf, len, "%llug", v >> 30);
	else if (type == CONFIG_SIZE && v != 0 && v % (1 << 20) == 0)
		snprintf(buf, len, "%llum", v >> 20);
	else if (type == CONFIG_SIZE && v != 0 && v % 1024 == 0)
		snprintf(buf, len, "%lluk", v >> 10);
	else
		snprintf(buf, len, "%llu", v);
}

/* Parses a number setting into *v; NULL, or an allocated reason. */
static char *
config_number(const struct config_opt *opt, const char *s,
    unsigned long long *v)
{
	static const char	*what[] = {
		[CONFIG_UINT] = "a whole number",
		[CONFIG_MS] = "a number of seconds",
		[CONFIG_SIZE] = "a size (bytes, or with k, m or g: 64k, 1m)",
	};
	static const char	*unit[] = {
		[CONFIG_UINT] = "", [CONFIG_MS] = " seconds",
		[CONFIG_SIZE] = " bytes",
	};
	const char		*p = s;
	char			*msg, lo[32], hi[32];
	int			 bad;

	if (opt->type == CONFIG_UINT)
		bad = !config_digits(&p, v) || *p != '\0';
	else if (opt->type == CONFIG_MS)
		bad = config_seconds(s, v) != 0;
	else
		bad = config_size(s, v) != 0;
	if (bad) {
		xasprintf(&msg, "'%s' is not %s", s, what[opt->type]);
		return (msg);
	}
	if (*v >= opt->min && *v <= opt->max)
		return (NULL);
	config_format(opt->type, opt->min, lo, sizeof lo);
	config_format(opt->type, opt->max, hi, sizeof hi);
	xasprintf(&msg, "'%s' must be between %s and %s%s", s, lo, hi,
	    unit[opt->type]);
	return (msg);
}

/* 1/0, true/false, yes/no, on/off, any case. */
static char *
config_bool(const char *s, int *out)
{
	static const char	*words[] = { "0", "false", "no", "off",
				    "1", "true", "yes", "on" };
	char			*msg;
	size_t			 i;

	for (i = 0; i < sizeof words / sizeof words[0]; i++) {
		if (strcasecmp(s, words[i]) == 0) {
			*out = (i >= 4);
			return (NULL);
		}
	}
	xasprintf(&msg, "'%s' is not a boolean (use 1/0, true/false, yes/no "
	    "or on/off)", s);
	return (msg);
}

/* Parses s and stores it in c; NULL, or an allocated reason. */
static char *
config_store(struct config *c, const struct config_opt *opt, const char *s)
{
	void			*dst = (char *)c + opt->off;
	unsigned long long	 v = 0;
	char			*msg;

	if (opt->type == CONFIG_BOOL)
		return (config_bool(s, dst));
	if (opt->type == CONFIG_STRING) {
		if (opt->check != NULL && (msg = opt->check(s)) != NULL)
			return (msg);
		free(*(char **)dst);
		*(char **)dst = xstrdup(s);
		return (NULL);
	}
	if ((msg = config_number(opt, s, &v)) != NULL)
		return (msg);
	if (opt->type == CONFIG_SIZE)
		*(size_t *)dst = v;
	else
		*(unsigned *)dst = v;
	return (NULL);
}

/* Applies one value; the message names where it came from. */
int
config_set(struct config_state *st, size_t i, const char *value,
    const char *where, char **cause)
{
	char	*msg;

	if ((msg = config_store(st->c, &config_opts[i], value)) != NULL) {
		xasprintf(cause, "%s: %s", where, msg);
		free(msg);
		return (-1);
	}
	free(st->seen[i].where);
	st->seen[i].where = xstrdup(where);
	return (0);
}

/* Where the setting with this file key came from, for messages. */
const char *
config_where(const struct config_state *st, const char *key)
{
	return (st->seen[config_find(key)].where);
}
