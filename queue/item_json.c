/*
 * The JSON the worker writes: answers (EXEC_RESULT, EXEC_STARTED,
 * EXEC_CALLBACK, EXEC_WAITING, PROCESS_RESULT and its actions' fields, ERROR), approval
 * requests and decisions, and the UTF-8 sanitizing every string of
 * output goes through.
 */

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "logs/log.h"
#include "logs/utf8.h"
#include "logs/xmalloc.h"
#include "queue/item.h"
#include "queue/item_int.h"

/*
 * Length of the UTF-8 sequence at s (n bytes left): > 0 when valid and not
 * NUL; otherwise minus the length of the maximal invalid subpart (>= 1).
 */
static int
item_utf8_seq(const unsigned char *s, size_t n)
{
	return (s[0] == '\0' ? -1 : utf8_char(s, n, NULL, NULL));
}

/* Copies s into a valid, NUL-terminated UTF-8 string; see the top. */
char *
item_utf8_sanitize(const char *s, size_t len, size_t *outlen)
{
	const unsigned char	*u = (const unsigned char *)s;
	char			*out;
	size_t			 i, o;
	int			 r;

	for (i = 0; i < len && (r = item_utf8_seq(u + i, len - i)) > 0; i += r)
		/* nothing */;
	if (i == len) {			/* all valid: the common case */
		out = xmalloc(len + 1);
		if (len != 0)
			memcpy(out, s, len);
		out[len] = '\0';
		o = len;
		goto out;
	}
	out = xreallocarray(NULL, len + 1, 3);	/* each byte may become 3 */
	memcpy(out, s, i);
	for (o = i; i < len; i += (r > 0 ? r : -r)) {
		if ((r = item_utf8_seq(u + i, len - i)) > 0) {
			memcpy(out + o, s + i, r);
			o += r;
		} else {
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3;
		}
	}
	out[o] = '\0';
out:
	if (outlen != NULL)
		*outlen = o;
	return (out);
}

/* A JSON string of arbitrary bytes, sanitized; null for NULL. */
static json_t *
item_json_bytes(const char *s, size_t len)
{
	json_t	*v;
	char	*clean;
	size_t	 n;

	if (s == NULL)
		return (json_null());
	clean = item_utf8_sanitize(s, len, &n);
	v = json_stringn_nocheck(clean, n);
	free(clean);
	return (v);
}

/* A JSON string of a C string, sanitized; null for NULL. */
static json_t *
item_json_str(const char *s)
{
	return (item_json_bytes(s, s == NULL ? 0 : strlen(s)));
}

/* Command output as a JSON string, sanitized; "" for NULL. */
static json_t *
item_json_output(const char *s, size_t len)
{
	return (s == NULL ? json_string("") : item_json_bytes(s, len));
}

/* "SIGKILL" for 9, "SIG<n>" when glibc has no name, null for 0. */
json_t *
item_json_signal(int sig)
{
	char		 buf[32];
	const char	*abbrev;

	if (sig == 0)
		return (json_null());
	if ((abbrev = sigabbrev_np(sig)) != NULL)
		snprintf(buf, sizeof buf, "SIG%s", abbrev);
	else
		snprintf(buf, sizeof buf, "SIG%d", sig);
	return (json_string(buf));
}

/* Dumps and frees root; out of memory is fatal. */
static char *
item_dump(json_t *root, size_t *len)
{
	char	*s;

	if (root == NULL)
		fatal("out of memory");
	s = json_dumps(root, JSON_COMPACT|JSON_PRESERVE_ORDER);
	json_decref(root);
	if (s == NULL)
		fatal("out of memory");
	if (len != NULL)
		*len = strlen(s);
	return (s);
}

/* An EXEC_RESULT answer. The "o" values are stolen by json_pack. */
json_t *
item_json_text(const char *s, size_t len)
{
	return (item_json_bytes(s, len));
}

char *
item_result_to_json(const struct item_result *r, size_t *len)
{
	json_t	*root;

	root = json_pack("{s:s, s:o, s:i, s:o, s:o, s:o, s:b, s:b, s:I, s:o,"
	    " s:{s:I, s:I, s:I}}",
	    "type", "EXEC_RESULT",
	    "id", item_json_str(r->id),
	    "exit_code", r->exit_code,
	    "signal", item_json_signal(r->signal),
	    "stdout", item_json_output(r->out, r->out_len),
	    "stderr", item_json_output(r->err, r->err_len),
	    "truncated", r->truncated != 0,
	    "timed_out", r->timed_out != 0,
	    "duration_ms", (json_int_t)r->duration_ms,
	    "log_path", item_json_str(r->log_path),
	    "rusage",
	    "user_ms", (json_int_t)r->user_ms,
	    "sys_ms", (json_int_t)r->sys_ms,
	    "max_rss_kb", (json_int_t)r->max_rss_kb);
	if (root != NULL && r->confinement != NULL)
		json_object_set(root, "confinement", r->confinement);
	if (root != NULL && r->log_error != NULL) {
		json_object_set_new(root, "log_complete", json_false());
		json_object_set_new(root, "log_error",
		    json_string(r->log_error));
	}
	if (root != NULL && r->approved_by != NULL)
		json_object_set_new(root, "approval", json_pack("{s:o, s:o}",
		    "request", item_json_str(r->request),
		    "by", item_json_str(r->approved_by)));
	if (root != NULL && r->attempt != 0)
		json_object_set_new(root, "attempt",
		    json_integer(r->attempt));
	if (root != NULL && r->retry_end != NULL)
		json_object_set_new(root, "retry", json_string(r->retry_end));
	if (root != NULL && r->token != NULL)
		json_object_set_new(root, "session_token",
		    item_json_str(r->token));
	return (item_dump(root, len));
}

char *
item_scheduled_to_json(const char *id, const char *reason,
    unsigned attempt, long delay_ms, json_t *last, size_t *len)
{
	json_t	*root;

	root = json_pack("{s:s, s:o, s:s, s:I, s:i}",
	    "type", "EXEC_SCHEDULED",
	    "id", item_json_str(id),
	    "reason", reason,
	    "attempt", (json_int_t)attempt,
	    "due_ms", -1);
	if (root != NULL && delay_ms >= 0)
		json_object_set_new(root, "delay_ms", json_integer(delay_ms));
	if (root != NULL && last != NULL)
		json_object_set_new(root, "last", last);
	else
		json_decref(last);
	return (item_dump(root, len));
}

void
item_json_add_attempt(char **json, size_t *len, unsigned attempt,
    const char *retry_end)
{
	json_t	*root;

	if ((root = json_loadb(*json, *len, 0, NULL)) == NULL ||
	    !json_is_object(root)) {
		json_decref(root);
		return;
	}
	json_object_set_new(root, "attempt", json_integer(attempt));
	if (retry_end != NULL)
		json_object_set_new(root, "retry", json_string(retry_end));
	free(*json);
	*json = item_dump(root, len);
}

json_t *
item_callback_to_json(const struct item_callback *c)
{
	json_t	*root, *tail;
	size_t	 i;

	tail = json_array();
	for (i = 0; i < c->ntail; i++)
		json_array_append_new(tail, item_json_bytes(c->tail[i],
		    strlen(c->tail[i])));
	root = json_pack("{s:s, s:s, s:o, s:o, s:o, s:i, s:o, s:o, s:o, s:o, "
	    "s:I, s:I, s:I, s:{s:I, s:I, s:I}, s:o}",
	    "type", "EXEC_CALLBACK", "priority", "high",
	    "id", item_json_str(c->id),
	    "session_id", item_json_str(c->session_id),
	    "status", item_json_str(c->status),
	    "exit_code", c->exit_code,
	    "signal", item_json_signal(c->signal),
	    "killed_by", item_json_str(c->killed_by),
	    "log_path", item_json_str(c->log_path),
	    "tail", tail,
	    "duration_ms", (json_int_t)c->duration_ms,
	    "output_bytes", (json_int_t)c->output_bytes,
	    "ended_ms", (json_int_t)c->ended_ms,
	    "rusage", "user_ms", (json_int_t)c->user_ms,
	    "sys_ms", (json_int_t)c->sys_ms,
	    "max_rss_kb", (json_int_t)c->max_rss_kb,
	    "worker", item_json_str(c->worker));
	if (root == NULL)
		fatal("out of memory (json)");
	if (c->log_error != NULL) {
		json_object_set_new(root, "log_complete", json_false());
		json_object_set_new(root, "log_error",
		    item_json_str(c->log_error));
	}
	if (c->confinement != NULL)
		json_object_set(root, "confinement", c->confinement);
	return (root);
}

char *
item_lost_template(size_t *len)
{
	return (item_dump(json_pack("{s:s, s:s, s:s, s:s, s:s, s:n, s:n, "
	    "s:n, s:s, s:[], s:s, s:s}", "type", "EXEC_CALLBACK", "priority",
	    "high", "id", "@ID@", "session_id", "@ID@", "status", "lost",
	    "exit_code", "signal", "killed_by", "log_path", "@LOG@", "tail",
	    "worker", "@WORKER@", "message", "the worker running this session "
	    "stopped before the session ended"), len));
}

char *
item_stream_end_to_json(const char *id, int exit_code, int timed_out,
    uint64_t stdout_bytes, uint64_t stderr_bytes, const char *log_path,
    size_t *len)
{
	return (item_dump(json_pack("{s:o, s:i, s:b, s:I, s:I, s:o}", "id",
	    item_json_str(id), "exit_code", exit_code, "timed_out",
	    timed_out != 0, "stdout_bytes", (json_int_t)stdout_bytes,
	    "stderr_bytes", (json_int_t)stderr_bytes, "log_path",
	    item_json_str(log_path)), len));
}

char *
item_process_result_to_json(const char *id, const char *action,
    const char *session_id, json_t *fields, size_t *len)
{
	json_t	*root;

	root = json_pack("{s:s, s:o, s:s, s:o?}", "type", "PROCESS_RESULT",
	    "id", item_json_str(id), "action", action, "session_id",
	    session_id != NULL ? item_json_str(session_id) : NULL);
	if (root == NULL)
		fatal("out of memory (json)");
	json_object_update_new(root, fields);
	return (item_dump(root, len));
}

void
item_json_put_output(json_t *o, const char *buf, size_t len, int base64)
{
	char	*b64;

	if (!base64) {
		json_object_set_new(o, "output", item_json_output(buf, len));
		return;
	}
	b64 = item_base64_encode(buf, len, NULL);
	json_object_set_new(o, "output_b64", json_string(b64));
	free(b64);
}

/*
 * The status members: "status", "exit_code", then, once it ended,
 * "signal" and "killed_by".
 */
static void
item_json_put_status(json_t *o, const struct item_session_status *st)
{
	json_object_set_new(o, "status", item_json_str(st->status));
	json_object_set_new(o, "exit_code", st->has_exit_code ?
	    json_integer(st->exit_code) : json_null());
	if (!st->ended)
		return;
	json_object_set_new(o, "signal", item_json_signal(st->signal));
	json_object_set_new(o, "killed_by", item_json_str(st->killed_by));
}

/* The output read, "offset" where it starts, "next_offset" past it. */
static void
item_json_put_read(json_t *o, const struct item_read *rd)
{
	item_json_put_output(o, rd->buf, rd->len, rd->base64);
	json_object_set_new(o, "offset", json_integer(rd->offset));
	json_object_set_new(o, "next_offset", json_integer(rd->offset +
	    (long long)rd->len));
}

/* o, which is NULL only when jansson ran out of memory: then fatal. */
static json_t *
item_json_checked(json_t *o)
{
	if (o == NULL)
		fatal("out of memory (json)");
	return (o);
}

json_t *
item_poll_to_json(const struct item_session_status *st,
    const struct item_read *rd)
{
	json_t	*o = item_json_checked(json_object());

	item_json_put_status(o, st);
	item_json_put_read(o, rd);
	json_object_set_new(o, "eof", json_boolean(rd->eof));
	json_object_set_new(o, "waiting_input",
	    json_boolean(st->waiting_input));
	return (o);
}

json_t *
item_log_to_json(const struct item_session_status *st,
    const struct item_read *rd)
{
	json_t	*o = item_json_checked(json_object());

	item_json_put_read(o, rd);
	json_object_set_new(o, "size", json_integer(rd->size));
	item_json_put_status(o, st);
	return (o);
}

json_t *
item_session_end_to_json(const struct item_session_status *st,
    const char *log_path)
{
	json_t	*o = item_json_checked(json_object());

	item_json_put_status(o, st);
	json_object_set_new(o, "log_path", item_json_str(log_path));
	return (o);
}

json_t *
item_wait_to_json(const json_t *final, int waited_out)
{
	json_t	*o;

	if (final == NULL)
		return (item_json_checked(json_pack("{s:s, s:b}", "status",
		    "running", "waited_out", waited_out != 0)));
	o = item_json_checked(json_deep_copy(final));
	/* The envelope says what the item and the session are. */
	json_object_del(o, "type");
	json_object_del(o, "priority");
	json_object_del(o, "id");
	json_object_del(o, "session_id");
	return (o);
}

json_t *
item_session_to_json(const struct item_session *e)
{
	json_t	*o;

	o = item_json_checked(json_pack("{s:o, s:o, s:I, s:b, s:I, s:I, s:o}",
	    "session_id", item_json_str(e->session_id),
	    "command", item_json_str(e->command),
	    "pid", (json_int_t)e->pid, "pty", e->pty != 0,
	    "started_ms", (json_int_t)e->started_ms,
	    "output_bytes", (json_int_t)e->output_bytes,
	    "log_path", item_json_str(e->log_path)));
	json_object_set_new(o, "keep", json_boolean(e->keep));
	item_json_put_status(o, &e->status);
	if (e->status.ended)
		json_object_set_new(o, "ended_ms", json_integer(e->ended_ms));
	else
		json_object_set_new(o, "idle_ms", json_integer(e->idle_ms));
	json_object_set_new(o, "waiting_input",
	    json_boolean(e->status.waiting_input));
	return (o);
}

json_t *
item_list_to_json(json_t *sessions)
{
	return (item_json_checked(json_pack("{s:o}", "sessions", sessions)));
}

json_t *
item_write_to_json(long long written)
{
	return (item_json_checked(json_pack("{s:I}", "written",
	    (json_int_t)written)));
}

json_t *
item_kill_to_json(void)
{
	return (item_json_checked(json_pack("{s:s}", "status", "killing")));
}

/* A held item: as a list entry, or (with_id 0) an answer's fields. */
static json_t *
item_json_held(const struct item_held *h, int with_id)
{
	json_t	*o;

	/* Nothing ran: no exit code, whatever became of the request. */
	o = item_json_checked(json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, "
	    "s:I, s:I, s:o, s:n, s:b}", "session_id", item_json_str(h->id),
	    "status", item_json_str(h->state),
	    "request", item_json_str(h->request),
	    "command", item_json_str(h->command),
	    "risk", item_json_str(h->risk), "rule", item_json_str(h->rule),
	    "reason", item_json_str(h->reason),
	    "created_ms", (json_int_t)h->created_ms,
	    "expires_ms", (json_int_t)h->expires_ms,
	    "decided_by", item_json_str(h->decided_by), "exit_code",
	    "ran", 0));
	if (!with_id)		/* the envelope has it */
		json_object_del(o, "session_id");
	return (o);
}

json_t *
item_held_to_json(const struct item_held *h)
{
	return (item_json_held(h, 1));
}

json_t *
item_held_answer_to_json(const struct item_held *h, enum item_action action,
    int base64)
{
	json_t	*o = item_json_held(h, 0);

	if (action == ITEM_ACTION_WAIT) {
		json_object_set_new(o, "waited_out", json_false());
		return (o);
	}
	item_json_put_output(o, "", 0, base64);
	if (action == ITEM_ACTION_LOG)
		json_object_set_new(o, "size", json_integer(0));
	json_object_set_new(o, "offset", json_integer(0));
	json_object_set_new(o, "next_offset", json_integer(0));
	/* A request that ended will never have output. */
	json_object_set_new(o, "eof", json_boolean(strcmp(h->state,
	    "held") != 0));
	return (o);
}

char *
item_started_to_json(const struct item_started *st, size_t *len)
{
	json_t	*root;

	root = json_pack("{s:s, s:o, s:o, s:I, s:o, s:b, s:o}",
	    "type", "EXEC_STARTED", "id", item_json_str(st->id),
	    "session_id", item_json_str(st->session_id),
	    "pid", (json_int_t)st->pid, "log_path", item_json_str(st->log_path),
	    "pty", st->pty != 0, "worker", item_json_str(st->worker));
	if (root != NULL && st->confinement != NULL)
		json_object_set(root, "confinement", st->confinement);
	if (root != NULL && st->token != NULL)
		json_object_set_new(root, "session_token",
		    item_json_str(st->token));
	return (item_dump(root, len));
}

char *
item_waiting_to_json(const struct item_waiting *w, size_t *len)
{
	json_t	*tail;
	size_t	 i;

	tail = json_array();
	for (i = 0; i < w->ntail; i++)
		json_array_append_new(tail, item_json_bytes(w->tail[i],
		    strlen(w->tail[i])));
	return (item_dump(json_pack("{s:s, s:s, s:o, s:o, s:o, s:I, s:I}",
	    "type", "EXEC_WAITING", "priority", "high",
	    "id", item_json_str(w->id),
	    "session_id", item_json_str(w->session_id), "tail", tail,
	    "waiting_since_ms", (json_int_t)w->waiting_since_ms,
	    "pid", (json_int_t)w->pid), len));
}

/* An ERROR answer; a NULL id or message, or ERR_NONE, encodes as null. */
char *
item_error_to_json(const char *id, enum errcode code, const char *message,
    size_t *len)
{
	json_t	*root;

	root = json_pack("{s:s, s:o, s:{s:o, s:o}}",
	    "type", "ERROR",
	    "id", item_json_str(id),
	    "error",
	    "code", code == ERR_NONE ? json_null() :
	    json_string(errcode_name(code)),
	    "message", item_json_str(message));
	return (item_dump(root, len));
}

/* Reads a required string member of an APPROVE or REJECT item. */
static int
item_decision_string(json_t *root, const char *key, int required,
    char **out, char **cause)
{
	struct item_error	 err;
	const char		*s;
	int			 r;

	memset(&err, 0, sizeof err);
	if ((r = item_get_string(root, key, key, &s, &err)) == -1) {
		*cause = err.message;
		return (-1);
	}
	if (r == 0 || *s == '\0') {
		if (!required)
			return (0);
		xasprintf(cause, "%s is missing", key);
		return (-1);
	}
	*out = xstrdup(s);
	return (0);
}

int
item_decision_parse(const char *buf, size_t len, struct item_decision *d,
    char **cause)
{
	json_t		*root;
	json_error_t	 jerr;
	char		*type = NULL;
	int		 r = -1;

	memset(d, 0, sizeof *d);
	*cause = NULL;
	if ((root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr)) ==
	    NULL) {
		xasprintf(cause, "bad JSON: %s", jerr.text);
		return (-1);
	}
	if (!json_is_object(root))
		xasprintf(cause, "a decision must be a JSON object");
	else if (item_decision_string(root, "type", 1, &type, cause) == 0 &&
	    item_decision_string(root, "request", 1, &d->request, cause) == 0 &&
	    item_decision_string(root, "by", 1, &d->by, cause) == 0 &&
	    item_decision_string(root, "reason", 0, &d->reason, cause) == 0) {
		if (strcmp(type, "APPROVE") == 0 || strcmp(type, "REJECT") == 0) {
			d->approve = type[0] == 'A';
			r = 0;
		} else
			xasprintf(cause, "type must be \"APPROVE\" or "
			    "\"REJECT\"");
	}
	free(type);
	json_decref(root);
	if (r == -1)
		item_decision_release(d);
	return (r);
}

void
item_decision_release(struct item_decision *d)
{
	free(d->request);
	free(d->by);
	free(d->reason);
	memset(d, 0, sizeof *d);
}

/* NAME=value strings as a JSON object; {} for NULL. */
static json_t *
item_json_env(char *const *env)
{
	json_t		*o = json_object();
	const char	*eq;
	char		*name;
	size_t		 i;

	for (i = 0; env != NULL && env[i] != NULL; i++) {
		if ((eq = strchr(env[i], '=')) == NULL)
			continue;
		name = xstrndup(env[i], eq - env[i]);
		json_object_set_new(o, name, item_json_str(eq + 1));
		free(name);
	}
	return (o);
}

char *
item_approval_to_json(const struct item_approval *a, size_t *len)
{
	json_t	*root, *doms;
	size_t	 i;

	root = json_pack("{s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o,"
	    " s:I, s:I, s:o, s:o, s:o, s:o}",
	    "type", "APPROVAL_REQUEST",
	    "id", item_json_str(a->id),
	    "request", item_json_str(a->request),
	    "state", item_json_str(a->state),
	    "command", item_json_str(a->command),
	    "cwd", item_json_str(a->cwd),
	    "env", item_json_env(a->env),
	    "risk", item_json_str(a->risk),
	    "rule", item_json_str(a->rule),
	    "reason", item_json_str(a->reason),
	    "created_ms", (json_int_t)a->created_ms,
	    "expires_ms", (json_int_t)a->expires_ms,
	    "queue", item_json_str(a->queue),
	    "worker", item_json_str(a->worker),
	    "reply_to", item_json_str(a->reply_to),
	    "background", json_boolean(a->background));
	if (root != NULL && a->network)
		json_object_set_new(root, "network", json_true());
	if (root != NULL && a->domains != NULL) {
		doms = json_array();
		for (i = 0; a->domains[i] != NULL; i++)
			json_array_append_new(doms, item_json_str(a->domains[i]));
		json_object_set_new(root, "network_domains", doms);
	}
	if (root != NULL && a->grant_path != NULL)
		json_object_set_new(root, "grant_path",
		    item_json_str(a->grant_path));
	if (root != NULL && a->decided_by != NULL)
		json_object_set_new(root, "decided_by",
		    item_json_str(a->decided_by));
	if (root != NULL && a->decision_reason != NULL)
		json_object_set_new(root, "decision_reason",
		    item_json_str(a->decision_reason));
	return (item_dump(root, len));
}
