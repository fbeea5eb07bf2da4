/*
 * The item module's field readers and errors (queue/item_int.h), below
 * both parsers: item.c (EXEC items) and item_process.c (PROCESS items)
 * read their members with these, and neither calls the other's helpers.
 * Also item_id_valid() (queue/item.h), which both parsers use.
 */

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "logs/log.h"
#include "queue/item.h"
#include "queue/item_int.h"

/* Sets err's code and message, replacing an earlier message. Returns -1. */
int
item_fail(struct item_error *err, enum errcode code, const char *fmt, ...)
{
	va_list	ap;

	free(err->message);
	err->code = code;
	va_start(ap, fmt);
	if (vasprintf(&err->message, fmt, ap) == -1)
		fatal("out of memory");
	va_end(ap);
	return (-1);
}

/* A short ASCII rendering of a JSON value for messages. Allocated. */
static char *
item_brief(json_t *v)
{
	char	*s;

	s = json_dumps(v, JSON_ENCODE_ANY|JSON_COMPACT|JSON_ENSURE_ASCII);
	if (s == NULL)
		fatal("out of memory");
	if (strlen(s) > ITEM_BRIEF_MAX)
		memcpy(s + ITEM_BRIEF_MAX - 3, "...", 4);
	return (s);
}

/* item_fail with ", got <v>" appended. Returns -1. */
int
item_fail_got(struct item_error *err, enum errcode code, json_t *v,
    const char *fmt, ...)
{
	va_list	 ap;
	char	*what, *got;

	va_start(ap, fmt);
	if (vasprintf(&what, fmt, ap) == -1)
		fatal("out of memory");
	va_end(ap);
	got = item_brief(v);
	item_fail(err, code, "%s, got %s", what, got);
	free(got);
	free(what);
	return (-1);
}

/* 1 if s is a usable item id or queue name (also safe as a file name). */
int
item_id_valid(const char *s)
{
	size_t	i;

	if (s == NULL || s[0] == '\0' || s[0] == '.')
		return (0);
	for (i = 0; s[i] != '\0'; i++) {
		if (i >= ITEM_ID_MAX)
			return (0);
		if (!isascii((unsigned char)s[i]) ||
		    (!isalnum((unsigned char)s[i]) &&
		    strchr("_.:-", s[i]) == NULL))
			return (0);
	}
	return (1);
}

/* 1 if a JSON string holds a "\u0000". */
int
item_has_nul(json_t *v)
{
	return (json_string_length(v) != strlen(json_string_value(v)));
}

/*
 * Reads an optional string member of obj: 0 absent or null, 1 found (*out
 * borrowed from obj), -1 wrong type or NUL inside (err set). name is the
 * member's full name for messages ("args.cwd").
 */
int
item_get_string(json_t *obj, const char *key, const char *name,
    const char **out, struct item_error *err)
{
	json_t	*v;

	*out = NULL;
	if ((v = json_object_get(obj, key)) == NULL || json_is_null(v))
		return (0);
	if (!json_is_string(v))
		return (item_fail_got(err, ERR_BAD_ITEM, v,
		    "%s must be a string", name));
	if (item_has_nul(v))
		return (item_fail(err, ERR_NUL_BYTE, "%s contains a NUL", name));
	*out = json_string_value(v);
	return (1);
}

/* Reads an optional boolean args member into *out (0 when absent). */
int
item_get_bool(json_t *args, const char *key, int *out,
    struct item_error *err)
{
	json_t	*v;

	*out = 0;
	if ((v = json_object_get(args, key)) == NULL || json_is_null(v))
		return (0);
	if (!json_is_boolean(v))
		return (item_fail_got(err, ERR_BAD_ITEM, v,
		    "args.%s must be true or false", key));
	*out = json_is_true(v);
	return (0);
}

/* Reads an optional integer args member in [min, max] (0 when absent). */
int
item_get_int(json_t *args, const char *key, long min, long max, long *out,
    struct item_error *err)
{
	json_t		*v;
	json_int_t	 n;

	*out = 0;
	if ((v = json_object_get(args, key)) == NULL || json_is_null(v))
		return (0);
	if (!json_is_integer(v) || (n = json_integer_value(v)) < min ||
	    n > max)
		return (item_fail_got(err, ERR_BAD_ITEM, v,
		    "args.%s must be an integer from %ld to %ld", key, min,
		    max));
	*out = (long)n;
	return (0);
}
