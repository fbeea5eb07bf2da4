/*
 * PROCESS items: the action and its arguments (docs/PROTOCOL.md section
 * 12), and the base64 their data travels in. Members are read with
 * queue/item_field.c's helpers; nothing of item.c, which calls in here.
 */

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "logs/xmalloc.h"
#include "queue/item.h"
#include "queue/item_int.h"

static const struct {
	const char		*name;
	enum item_action	 action;
} item_actions[] = {
	{ "list", ITEM_ACTION_LIST },
	{ "poll", ITEM_ACTION_POLL },
	{ "log", ITEM_ACTION_LOG },
	{ "write", ITEM_ACTION_WRITE },
	{ "send-keys", ITEM_ACTION_SEND_KEYS },
	{ "kill", ITEM_ACTION_KILL },
	{ "wait", ITEM_ACTION_WAIT },
	{ "cancel", ITEM_ACTION_CANCEL },
	{ "exec", ITEM_ACTION_EXEC },
	{ "interrupt", ITEM_ACTION_INTERRUPT },
};

/* Reads an optional non-negative integer PROCESS argument. */
static int
item_get_count(json_t *args, const char *key, long max, long *out,
    struct item_error *err)
{
	if (item_get_int(args, key, 0, max, out, err) == -1) {
		err->code = ERR_BAD_ARGS;
		return (-1);
	}
	return (0);
}

int
item_base64_decode(const char *in, size_t len, char **out, size_t *outlen)
{
	static const char	 alpha[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				    "abcdefghijklmnopqrstuvwxyz0123456789+/";
	const char		*p;
	uint32_t		 acc = 0;
	int			 bits = 0;
	size_t			 i, n = 0;

	*out = xmalloc(len / 4 * 3 + 4);
	for (i = 0; i < len && in[i] != '='; i++) {
		if (in[i] == '\0' || (p = strchr(alpha, in[i])) == NULL)
			goto fail;
		acc = (acc << 6) | (uint32_t)(p - alpha);
		if ((bits += 6) >= 8) {
			bits -= 8;
			(*out)[n++] = (char)((acc >> bits) & 0xff);
		}
	}
	for (; i < len; i++)		/* only padding after the first '=' */
		if (in[i] != '=')
			goto fail;
	(*out)[n] = '\0';
	*outlen = n;
	return (0);

fail:
	free(*out);
	*out = NULL;
	return (-1);
}

/* exec's args.command: one shell command line (or several), not empty. */
static int
item_parse_shell_command(json_t *args, struct item *it,
    struct item_error *err)
{
	const char	*s, *p;
	int		 r;

	if ((r = item_get_string(args, "command", "args.command", &s,
	    err)) == -1)
		return (-1);
	for (p = s; r == 1 && *p != '\0' && isspace((unsigned char)*p); p++)
		/* nothing */;
	if (r == 0 || *p == '\0')
		return (item_fail(err, ERR_BAD_ARGS, "exec needs args.command, "
		    "not empty"));
	if (strlen(s) > ITEM_SHELL_COMMAND_MAX)
		return (item_fail(err, ERR_BAD_ARGS, "args.command is %zu bytes; "
		    "exec in a shell session takes at most %d (a script that "
		    "long: write it to a file)", strlen(s),
		    ITEM_SHELL_COMMAND_MAX));
	it->command = xstrdup(s);
	return (0);
}

/* Reads write's data (text) or data_b64. */
static int
item_parse_data(json_t *args, struct item *it, struct item_error *err)
{
	json_t	*v;

	if ((v = json_object_get(args, "data_b64")) != NULL &&
	    !json_is_null(v)) {
		if (!json_is_string(v) || item_base64_decode(
		    json_string_value(v), json_string_length(v), &it->data,
		    &it->data_len) == -1)
			return (item_fail(err, ERR_BAD_ARGS,
			    "args.data_b64 must be base64 text"));
		return (0);
	}
	if ((v = json_object_get(args, "data")) != NULL && !json_is_null(v)) {
		if (!json_is_string(v))
			return (item_fail_got(err, ERR_BAD_ARGS, v,
			    "args.data must be a string"));
		it->data_len = json_string_length(v);
		it->data = xmalloc(it->data_len + 1);
		memcpy(it->data, json_string_value(v), it->data_len + 1);
		return (0);
	}
	if (it->eof)
		return (0);
	return (item_fail(err, ERR_BAD_ARGS, "write needs args.data, "
	    "args.data_b64 or args.eof"));
}

/* Reads send-keys' keys: an array of strings. */
static int
item_parse_keys(json_t *args, struct item *it, struct item_error *err)
{
	json_t	*keys, *v;
	size_t	 i;

	keys = json_object_get(args, "keys");
	if (!json_is_array(keys) || json_array_size(keys) == 0 ||
	    json_array_size(keys) > 1024)
		return (item_fail(err, ERR_BAD_ARGS, "args.keys must be an "
		    "array of 1 to 1024 strings"));
	it->keys = xcalloc(json_array_size(keys) + 1, sizeof *it->keys);
	json_array_foreach(keys, i, v) {
		if (!json_is_string(v) || item_has_nul(v))
			return (item_fail_got(err, ERR_BAD_ARGS, v,
			    "args.keys[%zu] must be a string", i));
		it->keys[i] = xstrdup(json_string_value(v));
	}
	return (0);
}

/* 1 if s looks like a token: 1 to 128 printable ASCII, no spaces. */
static int
item_token_valid(const char *s)
{
	size_t	i;

	for (i = 0; s[i] != '\0'; i++)
		if (i >= 128 || s[i] <= ' ' || s[i] > '~')
			return (0);
	return (i > 0);
}

/* args.token, args.tokens (list) and args.operator_token. */
static int
item_parse_tokens(json_t *args, struct item *it, struct item_error *err)
{
	const char	*s;
	json_t		*a, *v;
	size_t		 i;

	if (item_get_string(args, "token", "args.token", &s, err) == -1)
		return (-1);
	if (s != NULL && !item_token_valid(s))
		return (item_fail(err, ERR_BAD_ARGS, "args.token must be 1 to "
		    "128 printable characters"));
	it->token = s != NULL ? xstrdup(s) : NULL;
	if (item_get_string(args, "operator_token", "args.operator_token", &s,
	    err) == -1)
		return (-1);
	if (s != NULL && !item_token_valid(s))
		return (item_fail(err, ERR_BAD_ARGS, "args.operator_token must "
		    "be 1 to 128 printable characters"));
	it->operator_token = s != NULL ? xstrdup(s) : NULL;
	if ((a = json_object_get(args, "tokens")) == NULL || json_is_null(a))
		return (0);
	if (!json_is_array(a) || json_array_size(a) > ITEM_TOKENS_MAX)
		return (item_fail_got(err, ERR_BAD_ARGS, a, "args.tokens must be "
		    "an array of at most %d tokens", ITEM_TOKENS_MAX));
	it->tokens = xcalloc(json_array_size(a) + 1, sizeof *it->tokens);
	json_array_foreach(a, i, v) {
		if (!json_is_string(v) || item_has_nul(v) ||
		    !item_token_valid(json_string_value(v)))
			return (item_fail_got(err, ERR_BAD_ARGS, v, "args.tokens "
			    "must hold tokens (1 to 128 printable characters)"));
		it->tokens[i] = xstrdup(json_string_value(v));
	}
	return (0);
}

/* Reads the args of a PROCESS item. */
int
item_parse_process(json_t *args, struct item *it, struct item_error *err)
{
	const char	*s;
	size_t		 i;
	int		 r;

	if ((r = item_get_string(args, "action", "args.action", &s, err)) != 1)
		return (item_fail(err, ERR_BAD_ACTION, "args.action must be one "
		    "of list, poll, log, write, send-keys, kill, wait, cancel, exec, "
		    "interrupt"));
	for (i = 0; i < sizeof item_actions / sizeof item_actions[0]; i++)
		if (strcmp(s, item_actions[i].name) == 0)
			break;
	if (i == sizeof item_actions / sizeof item_actions[0])
		return (item_fail_got(err, ERR_BAD_ACTION,
		    json_object_get(args, "action"), "args.action must be one "
		    "of list, poll, log, write, send-keys, kill, wait, cancel, exec, "
		    "interrupt"));
	it->action = item_actions[i].action;
	it->action_name = item_actions[i].name;
	if (item_parse_tokens(args, it, err) == -1)
		return (-1);
	if (it->action == ITEM_ACTION_LIST)
		return (0);
	if (item_get_string(args, "session_id", "args.session_id", &s,
	    err) != 1 || !item_id_valid(s))
		return (item_fail(err, ERR_BAD_ARGS, "args.session_id must be "
		    ITEM_ID_RULE));
	it->session_id = xstrdup(s);
	if (item_get_string(args, "encoding", "args.encoding", &s, err) == -1)
		return (-1);
	it->base64 = s != NULL && strcmp(s, "base64") == 0;
	if (item_get_string(args, "signal", "args.signal", &s, err) == -1)
		return (-1);
	it->signal_name = s != NULL ? xstrdup(s) : NULL;
	if (item_get_count(args, "offset", 1L << 50, &it->offset, err) == -1 ||
	    item_get_count(args, "length", 1L << 30, &it->length, err) == -1 ||
	    item_get_count(args, "lines", 100000, &it->lines, err) == -1 ||
	    item_get_count(args, "max_bytes", 1 << 20, &it->max_bytes,
	    err) == -1 ||
	    item_get_count(args, "wait_ms", 60000, &it->wait_ms, err) == -1 ||
	    item_get_count(args, "timeout_ms", 3600000, &it->timeout_ms,
	    err) == -1 ||
	    item_get_bool(args, "eof", &it->eof, err) == -1)
		return (-1);
	if (it->action == ITEM_ACTION_EXEC)
		return (item_parse_shell_command(args, it, err));
	if (it->action == ITEM_ACTION_WRITE)
		return (item_parse_data(args, it, err));
	if (it->action == ITEM_ACTION_SEND_KEYS)
		return (item_parse_keys(args, it, err));
	return (0);
}

char *
item_base64_encode(const void *buf, size_t len, size_t *outlen)
{
	static const char	 alpha[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				    "abcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char	*p = buf;
	char			*out, *o;
	uint32_t		 v;
	size_t			 i;

	out = o = xmalloc((len + 2) / 3 * 4 + 1);
	for (i = 0; i + 2 < len; i += 3) {
		v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
		*o++ = alpha[v >> 18];
		*o++ = alpha[(v >> 12) & 63];
		*o++ = alpha[(v >> 6) & 63];
		*o++ = alpha[v & 63];
	}
	if (i < len) {
		v = (uint32_t)p[i] << 16 | (i + 1 < len ? (uint32_t)p[i + 1] << 8 :
		    0);
		*o++ = alpha[v >> 18];
		*o++ = alpha[(v >> 12) & 63];
		*o++ = i + 1 < len ? alpha[(v >> 6) & 63] : '=';
		*o++ = '=';
	}
	*o = '\0';
	if (outlen != NULL)
		*outlen = o - out;
	return (out);
}
