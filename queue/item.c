/*
 * Work items and answers: JSON <-> C (see queue/item.h, docs/PROTOCOL.md).
 *
 * Error codes item_parse() can return (struct item_error.code):
 *   item_too_large   len > max_len; not parsed
 *   nul_byte         raw NUL in the text, or "\u0000" in a string we use
 *                    (id, type, reply_to, command, cwd, env) or in any key
 *   bad_json         not JSON (also duplicate keys, number overflow)
 *   bad_item         not an object; a required member missing or of the
 *                    wrong type; a bad flag, rows, cols or retries
 *   bad_id           id does not match item_id_valid()
 *   unknown_type     type is a string other than "EXEC"
 *   bad_reply_to     reply_to does not match item_id_valid()
 *   missing_command  args.command missing, null, empty or only whitespace
 *   command_too_long args.command or one NAME=value of args.env longer than
 *                    execve(2) takes (ITEM_ARG_STRLEN_MAX), or all of
 *                    them together over ITEM_ARGS_MAX
 *   bad_timeout      args.timeout_s not a number in (0, 604800]
 *   bad_env          args.env not an object, too many entries, a bad name
 *                    or a value that is not a string
 *   bad_action       PROCESS: args.action missing or not a known action
 *   bad_args         PROCESS: a missing or ill-typed argument
 * JSON null in an optional member means "absent". The member readers and
 * item_fail() are queue/item_field.c's, shared with item_process.c.
 *
 * item_utf8_sanitize() follows the Unicode "maximal subpart" practice
 * (as Python and WHATWG decoders do): each maximal prefix of a valid
 * sequence that cannot be completed becomes one U+FFFD, and every other
 * invalid byte becomes one U+FFFD. "\xE2\x82" is one U+FFFD, "\xC0\xAF"
 * is two, "\xED\xA0\x80" (a surrogate) is three.
 */

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "logs/log.h"
#include "logs/xmalloc.h"
#include "queue/item.h"
#include "queue/item_int.h"

/* 1 if s is an environment variable name we pass on. */
static int
item_env_name_valid(const char *s)
{
	size_t	i;

	if (s[0] == '\0' || isdigit((unsigned char)s[0]))
		return (0);
	for (i = 0; s[i] != '\0'; i++) {
		if (i >= ITEM_ENV_NAME_MAX)
			return (0);
		if (!isascii((unsigned char)s[i]) ||
		    (!isalnum((unsigned char)s[i]) && s[i] != '_'))
			return (0);
	}
	return (1);
}

/* Loads buf as a JSON object, or fails with bad_json/bad_item/nul_byte. */
static json_t *
item_load(const char *buf, size_t len, struct item_error *err)
{
	json_t		*root;
	json_error_t	 jerr;
	const size_t	 flags = JSON_DECODE_ANY|JSON_ALLOW_NUL|
			    JSON_REJECT_DUPLICATES;

	root = json_loadb(buf, len, flags, &jerr);
	if (root == NULL) {
		switch (json_error_code(&jerr)) {
		case json_error_out_of_memory:
			fatal("out of memory");
		case json_error_null_byte_in_key:
			item_fail(err, ERR_NUL_BYTE, "a key contains a NUL at "
			    "line %d, column %d", jerr.line, jerr.column);
			break;
		default:
			item_fail(err, ERR_BAD_JSON, "bad JSON at line %d, "
			    "column %d: %s", jerr.line, jerr.column, jerr.text);
			break;
		}
		return (NULL);
	}
	if (!json_is_object(root)) {
		item_fail_got(err, ERR_BAD_ITEM, root,
		    "an item must be a JSON object");
		json_decref(root);
		return (NULL);
	}
	return (root);
}

/* Copies a valid id and reply_to into err before anything else can fail. */
static void
item_route(json_t *root, struct item_error *err)
{
	json_t	*v;

	v = json_object_get(root, "id");
	if (json_is_string(v) && !item_has_nul(v) &&
	    item_id_valid(json_string_value(v)))
		err->id = xstrdup(json_string_value(v));
	v = json_object_get(root, "reply_to");
	if (json_is_string(v) && !item_has_nul(v) &&
	    item_id_valid(json_string_value(v)))
		err->reply_to = xstrdup(json_string_value(v));
}

/* Reads id, type and reply_to. */
static int
item_parse_head(json_t *root, struct item *it, struct item_error *err)
{
	const char	*s;
	int		 r;

	if ((r = item_get_string(root, "id", "id", &s, err)) != 1)
		return (r == 0 ? item_fail(err, ERR_BAD_ITEM, "id is missing") :
		    -1);
	if (!item_id_valid(s))
		return (item_fail_got(err, ERR_BAD_ID,
		    json_object_get(root, "id"), "id must be " ITEM_ID_RULE));
	it->id = xstrdup(s);

	if ((r = item_get_string(root, "type", "type", &s, err)) != 1)
		return (r == 0 ? item_fail(err, ERR_BAD_ITEM, "type is missing") :
		    -1);
	if (strcmp(s, "EXEC") == 0)
		it->type = ITEM_EXEC;
	else if (strcmp(s, "PROCESS") == 0)
		it->type = ITEM_PROCESS;
	else
		return (item_fail_got(err, ERR_UNKNOWN_TYPE,
		    json_object_get(root, "type"),
		    "type must be \"EXEC\" or \"PROCESS\""));

	if ((r = item_get_string(root, "reply_to", "reply_to", &s, err)) != 1)
		return (r);
	if (!item_id_valid(s))
		return (item_fail_got(err, ERR_BAD_REPLY_TO,
		    json_object_get(root, "reply_to"),
		    "reply_to must be " ITEM_ID_RULE));
	it->reply_to = xstrdup(s);
	return (0);
}

/* Reads args.command (required, not blank) and args.cwd. */
static int
item_parse_command(json_t *args, struct item *it, struct item_error *err)
{
	const char	*s, *p;
	int		 r;

	r = item_get_string(args, "command", "args.command", &s, err);
	if (r == -1)
		return (-1);
	if (r == 0)
		return (item_fail(err, ERR_MISSING_COMMAND,
		    "args.command is missing"));
	for (p = s; *p != '\0' && isspace((unsigned char)*p); p++)
		/* nothing */;
	if (*p == '\0')
		return (item_fail(err, ERR_MISSING_COMMAND,
		    "args.command is empty"));
	if (strlen(s) > ITEM_ARG_STRLEN_MAX)
		return (item_fail(err, ERR_COMMAND_TOO_LONG, "args.command is "
		    "%zu bytes; a command may have at most %d (the kernel's "
		    "limit on one argument)", strlen(s), ITEM_ARG_STRLEN_MAX));
	it->command = xstrdup(s);

	if (item_get_string(args, "cwd", "args.cwd", &s, err) == -1)
		return (-1);
	if (s != NULL && *s != '\0')
		it->cwd = xstrdup(s);
	if (item_get_string(args, "tier", "args.tier", &s, err) == -1)
		return (-1);
	if (s != NULL)
		it->tier = xstrdup(s);
	return (0);
}

/* Reads an optional args member in seconds into *ms, rounding up. */
static int
item_parse_seconds(json_t *args, const char *key, long *out,
    enum errcode code, struct item_error *err)
{
	json_t	*v;
	double	 ms;

	*out = 0;
	if ((v = json_object_get(args, key)) == NULL || json_is_null(v))
		return (0);
	if (!json_is_number(v) || !isfinite(json_number_value(v)) ||
	    !(json_number_value(v) > 0) ||
	    json_number_value(v) > ITEM_TIMEOUT_MAX_S)
		return (item_fail_got(err, code, v, "args.%s "
		    "must be a number of seconds > 0 and <= %d", key,
		    ITEM_TIMEOUT_MAX_S));
	ms = json_number_value(v) * 1000.0;
	*out = (long)ms;
	if ((double)*out < ms)		/* ceil() without libm */
		(*out)++;
	if (*out < 1)
		*out = 1;
	return (0);
}

/* Reads args.timeout_s into timeout_ms, rounding up. */
static int
item_parse_timeout(json_t *args, struct item *it, struct item_error *err)
{
	return (item_parse_seconds(args, "timeout_s", &it->timeout_ms,
	    ERR_BAD_TIMEOUT, err));
}

/* Fails with bad_env for an environment variable name. Returns -1. */
static int
item_fail_env_name(struct item_error *err, const char *name)
{
	json_t	*v;

	v = json_string(name);		/* a key: valid UTF-8, no NUL */
	item_fail_got(err, ERR_BAD_ENV, v, "args.env names must match "
	    "[A-Za-z_][A-Za-z0-9_]*, at most %d long", ITEM_ENV_NAME_MAX);
	json_decref(v);
	return (-1);
}

/* Reads args.env into it->env as "NAME=value" strings. */
static int
item_parse_env(json_t *args, struct item *it, struct item_error *err)
{
	json_t		*env, *v;
	const char	*name;
	size_t		 total = 0;

	if ((env = json_object_get(args, "env")) == NULL || json_is_null(env))
		return (0);
	if (!json_is_object(env))
		return (item_fail_got(err, ERR_BAD_ENV, env,
		    "args.env must be an object of strings"));
	if (json_object_size(env) > ITEM_ENV_MAX)
		return (item_fail(err, ERR_BAD_ENV, "args.env has %zu entries, "
		    "at most %d are allowed", json_object_size(env),
		    ITEM_ENV_MAX));
	it->env = xcalloc(json_object_size(env) + 1, sizeof *it->env);
	json_object_foreach(env, name, v) {
		if (!item_env_name_valid(name))
			return (item_fail_env_name(err, name));
		if (!json_is_string(v))
			return (item_fail_got(err, ERR_BAD_ENV, v,
			    "args.env.%s must be a string", name));
		if (item_has_nul(v))
			return (item_fail(err, ERR_NUL_BYTE,
			    "args.env.%s contains a NUL", name));
		xasprintf(&it->env[it->nenv++], "%s=%s", name,
		    json_string_value(v));
		if (strlen(it->env[it->nenv - 1]) > ITEM_ARG_STRLEN_MAX)
			return (item_fail(err, ERR_COMMAND_TOO_LONG,
			    "args.env.%s is %zu bytes with its name; a "
			    "variable may have at most %d (the kernel's limit "
			    "on one string)", name,
			    strlen(it->env[it->nenv - 1]),
			    ITEM_ARG_STRLEN_MAX));
		total += strlen(it->env[it->nenv - 1]) + 1 + sizeof(char *);
	}
	if (total > ITEM_ARGS_MAX)
		return (item_fail(err, ERR_COMMAND_TOO_LONG, "args.env holds %zu "
		    "bytes; the command's environment may have at most %d",
		    total, ITEM_ARGS_MAX));
	return (0);
}

/*
 * Reads args.network: true or "host" (the host's network), false, or a
 * list of domains to reach through the worker's proxy.
 */
static int
item_parse_network(json_t *args, struct item *it, struct item_error *err)
{
	json_t		*v = json_object_get(args, "network"), *d;
	size_t		 i;

	it->network = -1;
	if (v == NULL || json_is_null(v))
		return (0);
	if (json_is_string(v) && strcmp(json_string_value(v), "host") == 0) {
		it->network = 1;
		return (0);
	}
	if (!json_is_array(v))
		return (item_get_bool(args, "network", &it->network, err));
	if (json_array_size(v) == 0 || json_array_size(v) > ITEM_DOMAINS_MAX)
		return (item_fail(err, ERR_BAD_ARGS, "args.network as a list "
		    "holds 1 to %d domains", ITEM_DOMAINS_MAX));
	it->network = 0;
	it->domains = xcalloc(json_array_size(v) + 1, sizeof *it->domains);
	json_array_foreach(v, i, d) {
		if (!json_is_string(d) || json_string_length(d) == 0 ||
		    json_string_length(d) > 253)
			return (item_fail(err, ERR_BAD_ARGS, "args.network[%zu] "
			    "must be a domain (\"pypi.org\", "
			    "\"*.github.com\")", i));
		it->domains[i] = xstrdup(json_string_value(d));
	}
	return (0);
}

/* Reads the optional flags and sizes of args. */
static int
item_parse_flags(json_t *args, struct item *it, struct item_error *err)
{
	long	rows, cols, retries;

	if (item_parse_network(args, it, err) == -1)
		return (-1);
	if (item_get_bool(args, "background", &it->background, err) == -1 ||
	    item_get_bool(args, "shell", &it->shell, err) == -1 ||
	    item_get_bool(args, "pty", &it->pty, err) == -1 ||
	    item_get_bool(args, "stream", &it->stream, err) == -1 ||
	    item_get_bool(args, "keep", &it->keep, err) == -1 ||
	    item_get_int(args, "rows", 1, ITEM_SIZE_MAX, &rows, err) == -1 ||
	    item_get_int(args, "cols", 1, ITEM_SIZE_MAX, &cols, err) == -1 ||
	    item_get_int(args, "retries", 0, ITEM_RETRIES_MAX, &retries,
	    err) == -1)
		return (-1);
	if (it->shell && (!it->background || it->pty))
		return (item_fail(err, ERR_BAD_ARGS, "args.shell starts a "
		    "background session without a pty: give background true, "
		    "and no pty"));
	it->rows = (unsigned)rows;
	it->cols = (unsigned)cols;
	it->retries = (int)retries;
	it->tail_lines = -1;
	if (json_object_get(args, "tail_lines") != NULL &&
	    !json_is_null(json_object_get(args, "tail_lines"))) {
		if (item_get_int(args, "tail_lines", 0, 100, &rows, err) == -1)
			return (-1);
		it->tail_lines = (int)rows;
	}
	return (item_parse_seconds(args, "idle_timeout_s", &it->idle_timeout_ms,
	    ERR_BAD_TIMEOUT, err));
}

/* Reads the args object of an EXEC item. */
static int
item_parse_args(json_t *root, struct item *it, struct item_error *err)
{
	json_t	*args;

	if ((args = json_object_get(root, "args")) == NULL)
		return (item_fail(err, ERR_BAD_ITEM, "args is missing"));
	if (!json_is_object(args))
		return (item_fail_got(err, ERR_BAD_ITEM, args,
		    "args must be an object"));
	if (it->type == ITEM_PROCESS)
		return (item_parse_process(args, it, err));
	if (item_parse_command(args, it, err) == -1 ||
	    item_parse_timeout(args, it, err) == -1 ||
	    item_parse_env(args, it, err) == -1 ||
	    item_parse_flags(args, it, err) == -1 ||
	    item_parse_schedule(args, it, err) == -1)
		return (-1);
	return (0);
}

/*
 * The value of a top-level string member key in the first bytes of an
 * item too large to parse: a scan that tracks strings and nesting, so
 * "id" inside args does not count. Only plain values (no escapes) that
 * item_id_valid() accepts are taken. Allocated, or NULL.
 */
static char *
item_peek(const char *p, size_t n, const char *key)
{
	size_t	 i, start, klen = strlen(key);
	int	 depth = 0, want_value = 0, in_key;

	for (i = 0; i < n; i++) {
		if (p[i] == '{' || p[i] == '[')
			depth++;
		else if (p[i] == '}' || p[i] == ']')
			depth--;
		if (p[i] != '"')
			continue;
		start = ++i;
		while (i < n && p[i] != '"')
			i += p[i] == '\\' ? 2 : 1;
		if (i >= n)
			return (NULL);
		if (want_value) {
			want_value = 0;
			if (depth == 1 && memchr(p + start, '\\', i - start) ==
			    NULL && i - start <= ITEM_ID_MAX) {
				char	*v = xstrndup(p + start, i - start);

				if (item_id_valid(v))
					return (v);
				free(v);
			}
			continue;
		}
		/* A key is a string followed by ':'. */
		in_key = i - start == klen && memcmp(p + start, key, klen) == 0;
		start = i + 1;
		while (start < n && strchr(" \t\r\n", p[start]) != NULL &&
		    p[start] != '\0')
			start++;
		if (start < n && p[start] == ':' && in_key && depth == 1) {
			i = start;
			while (i + 1 < n && strchr(" \t\r\n", p[i + 1]) !=
			    NULL && p[i + 1] != '\0')
				i++;
			want_value = i + 1 < n && p[i + 1] == '"';
		}
	}
	return (NULL);
}

void
item_refuse_large(const char *head, size_t headlen, size_t size,
    size_t max_len, struct item_error *err)
{
	memset(err, 0, sizeof *err);
	item_fail(err, ERR_ITEM_TOO_LARGE, "item is %zu bytes, at most %zu are "
	    "allowed", size, max_len);
	err->id = item_peek(head, headlen, "id");
	err->reply_to = item_peek(head, headlen, "reply_to");
}

/*
 * Parses one item. *err is overwritten on entry; on success it is left
 * empty (all NULL), on failure it must be released by the caller.
 */
struct item *
item_parse(const char *buf, size_t len, size_t max_len,
    struct item_error *err)
{
	json_t		*root;
	struct item	*it;
	const char	*nul;

	memset(err, 0, sizeof *err);
	if (len > max_len) {
		item_fail(err, ERR_ITEM_TOO_LARGE, "item is %zu bytes, at most "
		    "%zu are allowed", len, max_len);
		return (NULL);
	}
	if (buf == NULL)
		buf = "";
	if ((nul = memchr(buf, '\0', len)) != NULL) {
		item_fail(err, ERR_NUL_BYTE, "item contains a NUL byte at offset "
		    "%zu", (size_t)(nul - buf));
		return (NULL);
	}
	if ((root = item_load(buf, len, err)) == NULL)
		return (NULL);
	item_route(root, err);

	it = xcalloc(1, sizeof *it);
	if (item_parse_head(root, it, err) == -1 ||
	    item_parse_args(root, it, err) == -1) {
		item_free(it);
		it = NULL;
	} else
		item_error_release(err);	/* success leaves err empty */
	json_decref(root);
	return (it);
}

/* Frees an item and everything it owns. */
void
item_free(struct item *it)
{
	size_t	i;

	if (it == NULL)
		return;
	free(it->id);
	free(it->reply_to);
	free(it->command);
	free(it->cwd);
	free(it->tier);
	free(it->retry);
	free(it->session_id);
	free(it->token);
	free(it->operator_token);
	if (it->tokens != NULL) {
		for (i = 0; it->tokens[i] != NULL; i++)
			free(it->tokens[i]);
		free(it->tokens);
	}
	free(it->data);
	free(it->signal_name);
	if (it->keys != NULL) {
		for (i = 0; it->keys[i] != NULL; i++)
			free(it->keys[i]);
		free(it->keys);
	}
	if (it->env != NULL) {
		for (i = 0; it->env[i] != NULL; i++)
			free(it->env[i]);
		free(it->env);
	}
	if (it->domains != NULL) {
		for (i = 0; it->domains[i] != NULL; i++)
			free(it->domains[i]);
		free(it->domains);
	}
	free(it);
}

/* Frees the allocated members of err; code is static and stays. */
void
item_error_release(struct item_error *err)
{
	if (err == NULL)
		return;
	free(err->message);
	err->message = NULL;
	free(err->id);
	err->id = NULL;
	free(err->reply_to);
	err->reply_to = NULL;
}
