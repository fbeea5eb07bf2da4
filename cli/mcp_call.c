/*
 * execq mcp: the exec and process tools' calls as items on the queue, and
 * the server's one reply queue, read for their answers, the approval
 * requests of held items and the callbacks of ended sessions.
 */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>
#include <jansson.h>

#include "cli/cli.h"
#include "cli/mcp.h"
#include "logs/clock.h"
#include "logs/display.h"
#include "logs/log.h"
#include "logs/xmalloc.h"
#include "queue/client.h"
#include "queue/keyspace.h"

#define EXECQ_MCP_CALLBACKS_KEEP	1000	/* unseen callbacks kept */
#define EXECQ_MCP_WAIT_MS		30000	/* wait without timeout_s */
#define EXECQ_MCP_WAIT_MAX_MS		3600000	/* the worker's most */
#define EXECQ_MCP_POLL_MAX_MS		60000
#define EXECQ_MCP_TOKENS_MAX		1024	/* list's tokens, at most */

/* What a read of the reply queue found of the item awaited. */
enum execq_mcp_found {
	EXECQ_MCP_NONE,
	EXECQ_MCP_ANSWER,	/* its answer */
	EXECQ_MCP_HELD,		/* its APPROVAL_REQUEST */
};

int
execq_mcp_init(struct execq_mcp *m, const char *redis, char **cause)
{
	memset(m, 0, sizeof *m);
	execq_opts_init(&m->o, redis);
	if ((m->source = execq_tools_source(cause)) == NULL)
		return (-1);
	if ((m->tools = execq_tools_json(EXECQ_TOOLS_MCP, cause)) == NULL)
		return (-1);
	m->tokens = json_object();
	m->held = json_object();
	m->answers = json_object();
	m->open = json_object();
	m->callbacks = json_array();
	m->level = EXECQ_MCP_LEVEL_INFO;
	m->cursor = xstrdup("0");
	m->notice_cursor = xstrdup("0");
	execq_error_keep(&m->why);
	return (0);
}

void
execq_mcp_release(struct execq_mcp *m)
{
	execq_error_keep(NULL);
	if (m->up)
		execq_session_close(&m->s);	/* DELs the reply queue */
	execq_opts_release(&m->o);
	free(m->reply);
	free(m->cursor);
	free(m->notice_cursor);
	free(m->why);
	json_decref(m->source);
	json_decref(m->tools);
	json_decref(m->tokens);
	json_decref(m->held);
	json_decref(m->answers);
	json_decref(m->open);
	json_decref(m->callbacks);
	memset(m, 0, sizeof *m);
}

/*
 * Connects and logs in, once (again after the connection failed). The
 * reply queue is named on the first connection and kept for the server's
 * life: mcp.<host>.<pid>.<random>, after "<user>." with a Redis user (an
 * agent's ACL confines it to q:<user>.*). 0, or -1 (said).
 */
static int
execq_mcp_connect(struct execq_mcp *m)
{
	char	*name;

	if (m->up)
		return (0);
	if (!execq_name_valid(m->o.queue)) {
		execq_error("bad queue name '%s': it must match "
		    EXECQ_NAME_RULE, m->o.queue);
		return (-1);
	}
	if (execq_session_open(&m->s, &m->o) != 0) {
		execq_session_close(&m->s);
		return (-1);
	}
	if (m->reply == NULL) {
		m->reply = execq_reply_name();	/* "cli.<host>.<pid>..." */
		memcpy(m->reply, "mcp", 3);
		if (m->s.user != NULL) {
			xasprintf(&name, "%s.%s", m->s.user, m->reply);
			if (execq_name_valid(name)) {
				free(m->reply);
				m->reply = name;
			} else
				free(name);
		}
	}
	m->s.reply = xstrdup(m->reply);		/* session_close DELs it */
	m->s.answer_key = client_lane_key(m->s.c, m->reply, KS_LANE_NORMAL);
	m->s.notice_key = client_lane_key(m->s.c, m->reply, KS_LANE_HIGH);
	m->up = 1;
	return (0);
}

/* After a Redis failure: a connection that is down is dropped. */
static void
execq_mcp_failed(struct execq_mcp *m)
{
	if (!m->up || client_up(m->s.c))
		return;
	execq_session_close(&m->s);	/* down: it deletes nothing */
	m->up = 0;
}

/*
 * XADDs text to the queue's lane (the Redis user's own lane first, as
 * execq_item_add does). The entry id (allocated), or NULL (said).
 */
static char *
execq_mcp_add(struct execq_mcp *m, const char *lane, const char *text)
{
	char	*entry, *own;

	free(m->s.item_key);
	free(m->s.own_key);
	m->s.own_key = NULL;
	m->s.item_key = client_lane_key(m->s.c, m->o.queue, lane);
	if (m->s.user != NULL) {
		xasprintf(&own, "%s.%s", m->s.user, lane);
		m->s.own_key = client_lane_key(m->s.c, m->o.queue, own);
		free(own);
	}
	if ((entry = execq_item_add(&m->s, text)) == NULL)
		execq_mcp_failed(m);
	return (entry);
}

/* An answer on the normal lane: want's, or a held item's (kept). */
static void
execq_mcp_answer(struct execq_mcp *m, json_t *o, const char *want,
    json_t **found, int *what)
{
	const char	*id;

	if ((id = json_string_value(json_object_get(o, "id"))) == NULL)
		return;
	if (want != NULL && strcmp(id, want) == 0 &&
	    *what != EXECQ_MCP_ANSWER) {
		json_decref(*found);	/* its answer beats its hold */
		*found = json_incref(o);
		*what = EXECQ_MCP_ANSWER;
		json_object_del(m->held, id);
	} else if (json_object_get(m->held, id) != NULL)
		json_object_set(m->answers, id, o);
}

/* An entry of the high lane: an APPROVAL_REQUEST, or an EXEC_CALLBACK. */
static void
execq_mcp_notice(struct execq_mcp *m, json_t *o, const char *want,
    json_t **found, int *what)
{
	const char	*type, *id;

	type = json_string_value(json_object_get(o, "type"));
	id = json_string_value(json_object_get(o, "id"));
	if (type == NULL || id == NULL)
		return;
	if (strcmp(type, "APPROVAL_REQUEST") == 0) {
		json_object_set(m->held, id, o);
		if (want != NULL && strcmp(id, want) == 0 &&
		    *what == EXECQ_MCP_NONE) {
			*found = json_incref(o);
			*what = EXECQ_MCP_HELD;
		}
	} else if (strcmp(type, "EXEC_CALLBACK") == 0) {
		json_object_del(m->open, id);
		if (json_array_size(m->callbacks) >= EXECQ_MCP_CALLBACKS_KEEP)
			json_array_remove(m->callbacks, 0);
		json_array_append(m->callbacks, o);
		if (m->callback_cb != NULL)
			m->callback_cb(m, o);
	}
}

/* The entries of one stream of an XREAD reply, moving its cursor. */
static void
execq_mcp_entries(struct execq_mcp *m, const redisReply *entries,
    int high, const char *want, json_t **found, int *what)
{
	const redisReply	*e, *v;
	const char		*eid;
	char			**cursor;
	json_t			*o;
	size_t			 i;

	cursor = high ? &m->notice_cursor : &m->cursor;
	for (i = 0; i < entries->elements; i++) {
		e = entries->element[i];
		if ((eid = execq_entry_id(e)) == NULL)
			continue;
		free(*cursor);
		*cursor = xstrdup(eid);
		if ((v = execq_entry_field(e, "item")) == NULL)
			continue;
		o = json_loadb(v->str, v->len, JSON_ALLOW_NUL, NULL);
		if (json_is_object(o) && high)
			execq_mcp_notice(m, o, want, found, what);
		else if (json_is_object(o))
			execq_mcp_answer(m, o, want, found, what);
		json_decref(o);
	}
}

/*
 * One XREAD of both lanes of the reply queue (block_ms < 0: no BLOCK):
 * everything read is taken in, and what concerns want is in *found (a
 * new reference). EXECQ_MCP_*, or -1 (said) if Redis failed.
 */
static int
execq_mcp_read(struct execq_mcp *m, long long block_ms, const char *want,
    json_t **found)
{
	const char		*keys[2], *ids[2];
	const redisReply	*st;
	redisReply		*r;
	size_t			 k;
	int			 what = EXECQ_MCP_NONE;

	/* The high lane first: a hold, then the answer, in one read. */
	keys[0] = m->s.notice_key;
	ids[0] = m->notice_cursor;
	keys[1] = m->s.answer_key;
	ids[1] = m->cursor;
	*found = NULL;
	r = execq_reply(&m->s, "XREAD", client_xread(m->s.c, 64, block_ms, 2,
	    keys, ids));
	if (r == NULL) {
		execq_mcp_failed(m);
		return (-1);
	}
	for (k = 0; r->type == REDIS_REPLY_ARRAY && k < r->elements; k++) {
		st = r->element[k];
		if (st->type != REDIS_REPLY_ARRAY || st->elements != 2 ||
		    st->element[0]->type != REDIS_REPLY_STRING ||
		    st->element[1]->type != REDIS_REPLY_ARRAY)
			continue;
		execq_mcp_entries(m, st->element[1], strcmp(
		    st->element[0]->str, keys[0]) == 0, want, found, &what);
	}
	freeReplyObject(r);
	return (what);
}

/*
 * Waits up to wait_ms for want's answer, or (held_ok) its hold:
 * EXECQ_MCP_ANSWER or _HELD with *found (a new reference), 0 at the
 * deadline, -1 (said) if Redis failed.
 */
static int
execq_mcp_wait(struct execq_mcp *m, const char *want, long long wait_ms,
    int held_ok, json_t **found)
{
	long long	 deadline, left;
	int		 rc;

	deadline = clock_mono_ms() + wait_ms;
	for (;;) {
		if ((left = deadline - clock_mono_ms()) <= 0)
			return (0);
		rc = execq_mcp_read(m, left > EXECQ_BLOCK_MS ? EXECQ_BLOCK_MS :
		    left, want, found);
		if (rc == -1 || rc == EXECQ_MCP_ANSWER ||
		    (rc == EXECQ_MCP_HELD && held_ok))
			return (rc);
		json_decref(*found);
		*found = NULL;
	}
}

int
execq_mcp_poll(struct execq_mcp *m)
{
	json_t	*found;
	int	 rc;

	if (!m->up)
		return (0);
	free(m->why);		/* no call to tell: stderr has it */
	m->why = NULL;
	rc = execq_mcp_read(m, -1, NULL, &found);
	json_decref(found);
	return (rc == -1 ? -1 : 0);
}

int
execq_mcp_watching(const struct execq_mcp *m)
{
	const char	*id;
	json_t		*v;

	if (!m->up)
		return (0);
	if (json_object_size(m->open) > 0)
		return (1);
	json_object_foreach(m->held, id, v) {
		if (json_object_get(m->answers, id) == NULL)
			return (1);
	}
	return (0);
}

/* The string member key of o, or "?". */
static const char *
execq_mcp_str(const json_t *o, const char *key)
{
	const char	*v;

	v = json_string_value(json_object_get(o, key));
	return (v != NULL ? v : "?");
}

/* A JSON string of text, escaped if it is not UTF-8. A new reference. */
static json_t *
execq_mcp_string(const char *text, size_t len)
{
	json_t	*s;
	char	*copy, *shown;

	if ((s = json_stringn(text, len)) != NULL)
		return (s);
	copy = xstrndup(text, len);
	shown = display_str(copy);
	s = json_string(shown);
	free(shown);
	free(copy);
	return (s != NULL ? s : json_string("(not UTF-8)"));
}

/*
 * A CallToolResult: one text content, the answer as structuredContent
 * (copied without its session_token: the server keeps tokens), isError.
 * A new reference; text is freed.
 */
static json_t *
execq_mcp_result(char *text, size_t len, const json_t *answer, int error)
{
	json_t	*r, *sc;

	r = json_pack("{s:[{s:s, s:o}], s:b}", "content", "type", "text",
	    "text", execq_mcp_string(text, len), "isError", error);
	if (answer != NULL) {
		sc = json_deep_copy(answer);
		json_object_del(sc, "session_token");
		json_object_set_new(r, "structuredContent", sc);
	}
	free(text);
	return (r);
}

/* An error result that says fmt (no structuredContent). */
static json_t *
execq_mcp_fail(const char *, ...) __attribute__((format(printf, 1, 2)));

static json_t *
execq_mcp_fail(const char *fmt, ...)
{
	va_list	 ap;
	char	*text;

	va_start(ap, fmt);
	if (vasprintf(&text, fmt, ap) == -1)
		text = xstrdup("out of memory");
	va_end(ap);
	return (execq_mcp_result(text, strlen(text), NULL, 1));
}

/* An error result with the last error said (execq_error_keep). */
static json_t *
execq_mcp_fail_said(struct execq_mcp *m)
{
	return (execq_mcp_fail("%s", m->why != NULL ? m->why :
	    "execq failed (see the server's stderr)"));
}

/* NULL if args has only fields of tool's inputSchema, else an error. */
static json_t *
execq_mcp_check(struct execq_mcp *m, const char *tool, json_t *args)
{
	json_t		*t, *props = NULL;
	const char	*k;
	size_t		 i;
	void		*it;

	json_array_foreach(json_object_get(m->source, "tools"), i, t) {
		if (strcmp(json_string_value(json_object_get(t, "name")),
		    tool) == 0)
			props = json_object_get(json_object_get(t,
			    "inputSchema"), "properties");
	}
	for (it = json_object_iter(args); it != NULL;
	    it = json_object_iter_next(args, it)) {
		k = json_object_iter_key(it);
		if (json_object_get(props, k) == NULL)
			return (execq_mcp_fail("%s has no field \"%s\" (see "
			    "its inputSchema)", tool, k));
	}
	return (NULL);
}

/* "--- name ---", then the text of v on its own lines, if any. */
static void
execq_mcp_section(FILE *f, const char *name, const json_t *v)
{
	size_t	len = json_string_length(v);

	if (len == 0)
		return;
	fprintf(f, "--- %s ---\n", name);
	fwrite(json_string_value(v), 1, len, f);
	if (json_string_value(v)[len - 1] != '\n')
		fputc('\n', f);
}

/* The text a model reads of an EXEC answer, allocated (*len set). */
static char *
execq_mcp_exec_text(const json_t *a, size_t *len)
{
	const json_t	*err = json_object_get(a, "error");
	const char	*type, *id, *log;
	char		*text;
	FILE		*f;

	type = json_string_value(json_object_get(a, "type"));
	id = json_string_value(json_object_get(a, "id"));
	log = execq_mcp_str(a, "log_path");
	if ((f = open_memstream(&text, len)) == NULL)
		fatal("open_memstream: out of memory");
	if (strcmp(type, "ERROR") == 0) {
		fprintf(f, "%s: %s", execq_mcp_str(err, "code"),
		    execq_mcp_str(err, "message"));
	} else if (strcmp(type, "EXEC_STARTED") == 0) {
		fprintf(f, "started session %s (pid %lld%s); follow it with "
		    "the process tool (poll, log, write, wait) and this "
		    "session_id; its log: %s", id, json_integer_value(
		    json_object_get(a, "pid")), json_is_true(json_object_get(a,
		    "pty")) ? ", on a pty" : "", log);
	} else {
		if (json_is_true(json_object_get(a, "timed_out")))
			fprintf(f, "timed out after %.1f s: the process tree "
			    "was killed", json_number_value(json_object_get(a,
			    "duration_ms")) / 1000);
		else
			fprintf(f, "exit code %lld", json_integer_value(
			    json_object_get(a, "exit_code")));
		if (json_is_true(json_object_get(a, "truncated")))
			fprintf(f, "; the output was cut to the output cap: "
			    "process log with session_id %s has all of it "
			    "(%s)", id, log);
		fputc('\n', f);
		execq_mcp_section(f, "stdout", json_object_get(a, "stdout"));
		execq_mcp_section(f, "stderr", json_object_get(a, "stderr"));
	}
	fclose(f);
	return (text);
}

/*
 * An EXEC answer (EXEC_RESULT, EXEC_STARTED or ERROR) of item id as the
 * tool's result; its token is kept, a session started is watched.
 */
static json_t *
execq_mcp_exec_answer(struct execq_mcp *m, const char *id, json_t *a)
{
	const char	*type, *token, *sid;
	char		*text;
	size_t		 len;

	type = json_string_value(json_object_get(a, "type"));
	if (type == NULL || (strcmp(type, "EXEC_RESULT") != 0 &&
	    strcmp(type, "EXEC_STARTED") != 0 && strcmp(type, "ERROR") != 0))
		return (execq_mcp_fail("unexpected answer to %s", id));
	sid = json_string_value(json_object_get(a, "session_id"));
	if (sid == NULL)
		sid = id;
	if ((token = json_string_value(json_object_get(a, "session_token"))) !=
	    NULL)
		json_object_set_new(m->tokens, sid, json_string(token));
	if (strcmp(type, "EXEC_STARTED") == 0)
		json_object_set_new(m->open, sid, json_true());
	text = execq_mcp_exec_text(a, &len);
	return (execq_mcp_result(text, len, a, strcmp(type, "ERROR") == 0));
}

/*
 * What a model is told of item id, held for approval by req: at once, as
 * a result that is no error; write, send-keys and kill on it (error) are
 * refused.
 */
static json_t *
execq_mcp_held(const char *id, const json_t *req, int error)
{
	static const char *const keep[] = { "request", "command", "risk",
	    "rule", "reason", "expires_ms", "grant_path", "network" };
	json_t		*st, *res;
	const char	*r;
	char		*text;
	size_t		 i;

	st = json_pack("{s:s, s:s, s:s}", "status", "held", "session_id", id,
	    "id", id);
	for (i = 0; i < sizeof keep / sizeof keep[0]; i++) {
		if (json_object_get(req, keep[i]) != NULL)
			json_object_set(st, keep[i], json_object_get(req,
			    keep[i]));
	}
	r = execq_mcp_str(req, "request");
	xasprintf(&text, "%sheld for approval: %s (rule %s). Nothing runs "
	    "until a human approves request %s (execq approve %s) or rejects "
	    "it. Do not send the command again; do other work, or wait for "
	    "the outcome with the process tool: action wait, session_id %s.",
	    error ? "refused: the command is " : "",
	    execq_mcp_str(req, "reason"), execq_mcp_str(req, "rule"), r, r,
	    id);
	res = execq_mcp_result(text, strlen(text), st, error);	/* copies */
	json_decref(st);
	return (res);
}

/* timeout_s of args in ms, at most max_ms; dflt if not a number > 0. */
static long long
execq_mcp_ms(const json_t *args, long long dflt, long long max_ms)
{
	double	t;

	t = json_number_value(json_object_get(args, "timeout_s"));
	if (!(t > 0))
		return (dflt);
	if (t * 1000 > (double)max_ms)
		return (max_ms);
	return ((long long)(t * 1000 + 0.5));
}

/* The exec tool: an EXEC item, each field as args' own (docs/TOOLS.md). */
static json_t *
execq_mcp_exec(struct execq_mcp *m, json_t *args)
{
	json_t		*item, *a = NULL, *res;
	const char	*cmd;
	char		*id, *text, *entry;
	long long	 wait_ms;

	if ((res = execq_mcp_check(m, "exec", args)) != NULL)
		return (res);
	cmd = json_string_value(json_object_get(args, "command"));
	if (cmd == NULL || *cmd == '\0')
		return (execq_mcp_fail("exec needs \"command\", the shell "
		    "command to run"));
	if (execq_mcp_connect(m) == -1)
		return (execq_mcp_fail_said(m));
	id = execq_make_id(&m->s);
	item = json_pack("{s:s, s:s, s:s, s:O}", "id", id, "type", "EXEC",
	    "reply_to", m->reply, "args", args);
	text = json_dumps(item, JSON_COMPACT);
	json_decref(item);
	if ((entry = execq_mcp_add(m, KS_LANE_NORMAL, text)) == NULL) {
		res = execq_mcp_fail_said(m);
		goto out;
	}
	free(entry);
	if (json_is_true(json_object_get(args, "background")))
		wait_ms = EXECQ_SPAWN_WAIT_S * 1000;
	else
		wait_ms = execq_mcp_ms(args, EXECQ_TIMEOUT_S * 1000,
		    (long long)(EXECQ_MAX_SECONDS * 1000)) + EXECQ_SLACK_MS;
	switch (execq_mcp_wait(m, id, wait_ms, 1, &a)) {
	case EXECQ_MCP_ANSWER:
		res = execq_mcp_exec_answer(m, id, a);
		break;
	case EXECQ_MCP_HELD:
		res = execq_mcp_held(id, a, 0);
		break;
	case 0:
		res = execq_mcp_fail("no answer from a worker on queue '%s' "
		    "within %lld s (is execq-worker running with this Redis "
		    "and queue?); item %s stays queued and may still run",
		    m->o.queue, wait_ms / 1000, id);
		break;
	default:
		res = execq_mcp_fail_said(m);
	}
	json_decref(a);
out:
	free(text);
	free(id);
	return (res);
}

/* The text of a PROCESS answer: its fields, then its output if any. */
static char *
execq_mcp_process_text(const json_t *a, size_t *len)
{
	const json_t	*err = json_object_get(a, "error");
	json_t		*fields;
	char		*text, *s;
	FILE		*f;

	if ((f = open_memstream(&text, len)) == NULL)
		fatal("open_memstream: out of memory");
	if (err != NULL) {
		fprintf(f, "%s: %s", execq_mcp_str(err, "code"),
		    execq_mcp_str(err, "message"));
	} else {
		fields = json_deep_copy(a);
		json_object_del(fields, "output");
		s = json_dumps(fields, JSON_COMPACT);
		fputs(s != NULL ? s : "{}", f);
		free(s);
		json_decref(fields);
		fputc('\n', f);
		execq_mcp_section(f, "output", json_object_get(a, "output"));
	}
	fclose(f);
	return (text);
}

/*
 * A PROCESS item of args (the tool's, borrowed) with the token this
 * server keeps, and its answer as the result. wait_ms >= 0: the wait
 * action's timeout_ms, else timeout_s's.
 */
static json_t *
execq_mcp_process_item(struct execq_mcp *m, const char *action,
    const char *sid, json_t *args, long long wait_ms)
{
	json_t		*p, *item, *a = NULL, *res, *all, *v;
	const char	*k;
	char		*id, *text, *entry;
	size_t		 len, n;

	p = json_deep_copy(args);
	json_object_del(p, "timeout_s");
	if (strcmp(action, "wait") == 0) {
		if (wait_ms < 0)
			wait_ms = execq_mcp_ms(args, EXECQ_MCP_WAIT_MS,
			    EXECQ_MCP_WAIT_MAX_MS);
		json_object_set_new(p, "timeout_ms", json_integer(wait_ms));
	} else if (strcmp(action, "exec") == 0) {
		wait_ms = execq_mcp_ms(args, EXECQ_MCP_WAIT_MS,
		    EXECQ_MCP_WAIT_MAX_MS);
		json_object_set_new(p, "timeout_ms", json_integer(wait_ms));
	} else if (strcmp(action, "poll") == 0) {
		wait_ms = execq_mcp_ms(args, 0, EXECQ_MCP_POLL_MAX_MS);
		if (wait_ms > 0)
			json_object_set_new(p, "wait_ms",
			    json_integer(wait_ms));
	} else
		wait_ms = 0;
	if (sid != NULL && json_object_get(m->tokens, sid) != NULL)
		json_object_set(p, "token", json_object_get(m->tokens, sid));
	else if (json_object_get(args, "session_id") == NULL) {
		/* list: the newest EXECQ_MCP_TOKENS_MAX, as the worker takes */
		all = json_array();
		n = json_object_size(m->tokens);
		json_object_foreach(m->tokens, k, v) {
			if (n-- <= EXECQ_MCP_TOKENS_MAX)
				json_array_append(all, v);
		}
		json_object_set_new(p, "tokens", all);
	}
	id = execq_make_id(&m->s);
	item = json_pack("{s:s, s:s, s:s, s:o}", "id", id, "type", "PROCESS",
	    "reply_to", m->reply, "args", p);
	text = json_dumps(item, JSON_COMPACT);
	json_decref(item);
	if ((entry = execq_mcp_add(m, KS_LANE_CTL, text)) == NULL) {
		res = execq_mcp_fail_said(m);
		goto out;
	}
	switch (execq_mcp_wait(m, id, wait_ms + EXECQ_SLACK_MS, 0, &a)) {
	case EXECQ_MCP_ANSWER:
		free(text);		/* the item's */
		text = execq_mcp_process_text(a, &len);
		res = execq_mcp_result(text, len, a,
		    json_object_get(a, "error") != NULL);
		text = NULL;		/* the result's */
		break;
	case 0:
		/* Withdrawn: a kill found minutes later would surprise. */
		freeReplyObject(client_item_del(m->s.c, m->s.item_key,
		    entry));
		res = execq_mcp_fail("no answer to process %s from a worker "
		    "on queue '%s' within %lld s (is execq-worker running with "
		    "this Redis and queue?)", action, m->o.queue,
		    (wait_ms + EXECQ_SLACK_MS) / 1000);
		break;
	default:
		res = execq_mcp_fail_said(m);
	}
	json_decref(a);
	free(entry);
out:
	free(text);
	free(id);
	return (res);
}

/*
 * process on an item this server saw held: wait waits (timeout_s) for
 * the item's own answer, the other actions say it is held. NULL once it
 * was answered and the action is for the worker (a session started, or
 * any action but wait on a foreground item that ran); *left_ms is then
 * what is left of wait's time.
 */
static json_t *
execq_mcp_held_action(struct execq_mcp *m, const char *sid,
    const char *action, json_t *args, long long *left_ms)
{
	json_t		*a, *res;
	const char	*type;
	long long	 start;
	int		 wait = strcmp(action, "wait") == 0, started;

	a = json_incref(json_object_get(m->answers, sid));
	if (a == NULL && wait) {
		start = clock_mono_ms();
		*left_ms = execq_mcp_ms(args, EXECQ_MCP_WAIT_MS,
		    EXECQ_MCP_WAIT_MAX_MS);
		if (execq_mcp_wait(m, sid, *left_ms, 0, &a) == -1)
			return (execq_mcp_fail_said(m));
		*left_ms -= clock_mono_ms() - start;
		if (*left_ms < 1)
			*left_ms = 1;
	}
	if (a == NULL)
		return (execq_mcp_held(sid, json_object_get(m->held, sid),
		    strcmp(action, "write") == 0 ||
		    strcmp(action, "send-keys") == 0 ||
		    strcmp(action, "kill") == 0));
	json_object_del(m->held, sid);
	json_object_del(m->answers, sid);
	res = execq_mcp_exec_answer(m, sid, a);
	type = json_string_value(json_object_get(a, "type"));
	started = type != NULL && strcmp(type, "EXEC_STARTED") == 0;
	json_decref(a);
	if (wait && !started)
		return (res);		/* its final answer */
	json_decref(res);
	return (NULL);
}

/* process callbacks: the EXEC_CALLBACKs not yet given, then forgotten. */
static json_t *
execq_mcp_callbacks(struct execq_mcp *m)
{
	json_t	*st, *res;
	char	*text;

	if (m->up)
		(void)execq_mcp_poll(m);
	st = json_pack("{s:O}", "callbacks", m->callbacks);
	if (json_array_size(m->callbacks) == 0)
		text = xstrdup("no session of this agent ended since the last "
		    "callbacks");
	else if ((text = json_dumps(m->callbacks, JSON_COMPACT)) == NULL)
		text = xstrdup("(the callbacks cannot be shown)");
	res = execq_mcp_result(text, strlen(text), st, 0);	/* copies */
	json_decref(st);
	json_array_clear(m->callbacks);
	return (res);
}

/* The process tool: a PROCESS item, or the server's own answer. */
static json_t *
execq_mcp_process(struct execq_mcp *m, json_t *args)
{
	json_t		*res;
	const char	*action, *sid;
	long long	 left_ms = -1;

	if ((res = execq_mcp_check(m, "process", args)) != NULL)
		return (res);
	if ((action = json_string_value(json_object_get(args, "action"))) ==
	    NULL)
		return (execq_mcp_fail("process needs \"action\": list, poll, "
		    "log, write, send-keys, kill, wait, cancel, exec, interrupt or "
		    "callbacks"));
	if (strcmp(action, "callbacks") == 0)
		return (execq_mcp_callbacks(m));
	if (execq_mcp_connect(m) == -1)
		return (execq_mcp_fail_said(m));
	sid = json_string_value(json_object_get(args, "session_id"));
	/* A held item's cancel is the worker's; the rest is known here. */
	if (sid != NULL && json_object_get(m->held, sid) != NULL &&
	    strcmp(action, "cancel") != 0 &&
	    (res = execq_mcp_held_action(m, sid, action, args, &left_ms)) !=
	    NULL)
		return (res);
	return (execq_mcp_process_item(m, action, sid, args, left_ms));
}

json_t *
execq_mcp_call(struct execq_mcp *m, const char *name, json_t *args)
{
	free(m->why);
	m->why = NULL;
	if (strcmp(name, "exec") == 0)
		return (execq_mcp_exec(m, args));
	if (strcmp(name, "process") == 0)
		return (execq_mcp_process(m, args));
	return (NULL);
}
