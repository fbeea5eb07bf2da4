/*
 * What the worker keeps in Redis for others to read (queue/queue.h): the
 * session mirror (execq:session:<id>, execq:sessions, execq:running, the
 * fence check), approvals (execq:approval:<request>, the pending set, the
 * execq:approvals stream) and their decisions (execq:decisions), and the
 * live output streams (execq:out:<id>). The worker hands over plain
 * values; the commands are built here, by appending, and sent through
 * the outbox (or, for decisions, read once on the write connection).
 *
 * One file, not one per concern: each concern is a handful of commands of
 * one shape (values in, arguments appended, sent), so three files would
 * each repeat the same few lines, and one keeps every write of these keys
 * in one place to read against docs/PROTOCOL.md. On top of the module,
 * beside queue.c: above queue/outbox.c and queue/reader.c, and nothing
 * in queue/ calls it.
 */

#include <sys/queue.h>

#include <netinet/in.h>

#include <stddef.h>
#include <string.h>

#include "queue/item.h"
#include "queue/keyspace.h"
#include "queue/queue.h"
#include "queue/queue_int.h"

/* Appends a field and its value to an HSET. */
static void
queue_field(struct qcmd *cmd, const char *field, const char *value)
{
	queue_arg(cmd, field);
	queue_arg(cmd, value);
}

/* EXPIRE key ttl: key execq:session:<id>, or execq:out:<id>. */
static void
queue_expire(struct queue *q, const char *prefix, const char *id,
    long long ttl_s)
{
	struct qcmd	cmd;

	queue_cmd_init(&cmd);
	queue_arg(&cmd, "EXPIRE");
	queue_argf(&cmd, "%s%s", prefix, id);
	queue_argf(&cmd, "%lld", ttl_s);
	queue_send(q, &cmd, NULL, NULL);
}

/* A command of three arguments: verb, key, member (SADD, ZREM...). */
static void
queue_send3(struct queue *q, const char *verb, const char *key,
    const char *member)
{
	struct qcmd	cmd;

	queue_cmd_init(&cmd);
	queue_arg(&cmd, verb);
	queue_arg(&cmd, key);
	queue_arg(&cmd, member);
	queue_send(q, &cmd, NULL, NULL);
}

/* ZADD key score member. */
static void
queue_zadd(struct queue *q, const char *key, long long score,
    const char *member)
{
	struct qcmd	cmd;

	queue_cmd_init(&cmd);
	queue_arg(&cmd, "ZADD");
	queue_arg(&cmd, key);
	queue_argf(&cmd, "%lld", score);
	queue_arg(&cmd, member);
	queue_send(q, &cmd, NULL, NULL);
}

void
queue_session_mirror(struct queue *q, const struct queue_session *s,
    unsigned ttl_s)
{
	struct qcmd	cmd;

	queue_cmd_init(&cmd);
	queue_arg(&cmd, "HSET");
	queue_argf(&cmd, KS_SESSION "%s", s->id);
	queue_field(&cmd, KS_SF_WORKER, q->consumer);
	queue_arg(&cmd, KS_SF_PID);
	queue_argf(&cmd, "%ld", s->pid);
	queue_field(&cmd, KS_SF_COMMAND, s->command);
	queue_field(&cmd, KS_SF_STATUS, s->status);
	queue_field(&cmd, KS_SF_LOG_PATH, s->log_path);
	queue_arg(&cmd, KS_SF_STARTED);
	queue_argf(&cmd, "%lld", s->started_ms);
	queue_field(&cmd, KS_SF_REPLY_TO, s->reply_to);
	queue_field(&cmd, KS_SF_PTY, s->pty ? "1" : "0");
	queue_arg(&cmd, KS_SF_OUTPUT_BYTES);
	queue_argf(&cmd, "%llu", s->output_bytes);
	queue_field(&cmd, KS_SF_WAITING, s->waiting_input ? "1" : "0");
	queue_arg(&cmd, KS_SF_ACTIVITY);
	queue_argf(&cmd, "%lld", s->last_activity_ms);
	queue_field(&cmd, KS_SF_KEEP, s->keep ? "1" : "0");
	if (s->ended) {
		queue_arg(&cmd, KS_SF_EXIT_CODE);
		queue_argf(&cmd, "%lld", s->exit_code);
		queue_arg(&cmd, KS_SF_ENDED);
		queue_argf(&cmd, "%lld", s->ended_ms);
	}
	queue_send(q, &cmd, NULL, NULL);
	queue_expire(q, KS_SESSION, s->id, ttl_s);
}

void
queue_session_index(struct queue *q, const char *id, long long started_ms)
{
	struct qcmd	cmd;

	queue_zadd(q, KS_SESSIONS, started_ms, id);
	queue_cmd_init(&cmd);
	queue_arg(&cmd, "ZREMRANGEBYSCORE");
	queue_arg(&cmd, KS_SESSIONS);
	queue_arg(&cmd, "-inf");
	queue_argf(&cmd, "(%lld", started_ms - QUEUE_SESSIONS_KEEP_MS);
	queue_send(q, &cmd, NULL, NULL);
	queue_send3(q, "SADD", KS_RUNNING, id);	/* checked for lost ones */
}

void
queue_session_ended(struct queue *q, const char *id)
{
	queue_send3(q, "SREM", KS_RUNNING, id);
}

void
queue_session_fence(struct queue *q, const char *id, long long serial,
    queue_reply_cb cb, void *arg)
{
	struct qcmd	cmd;

	queue_cmd_init(&cmd);
	queue_arg(&cmd, "EVAL");
	queue_arg(&cmd, queue_fence_lua);
	queue_arg(&cmd, "1");
	queue_argf(&cmd, KS_SESSION "%s", id);
	queue_argf(&cmd, "%lld", serial);
	queue_send(q, &cmd, cb, arg);
}

void
queue_held_mirror(struct queue *q, const struct item_held *h,
    const char *reply_to, long long ttl_s)
{
	struct qcmd	cmd;

	queue_cmd_init(&cmd);
	queue_arg(&cmd, "HSET");
	queue_argf(&cmd, KS_SESSION "%s", h->id);
	queue_field(&cmd, KS_SF_WORKER, q->consumer);
	queue_field(&cmd, KS_SF_STATUS, h->state);
	queue_field(&cmd, KS_SF_COMMAND, h->command);
	queue_field(&cmd, KS_SF_REQUEST, h->request);
	queue_field(&cmd, KS_SF_RISK, h->risk);
	queue_field(&cmd, KS_SF_REASON, h->reason);
	queue_arg(&cmd, KS_SF_STARTED);
	queue_argf(&cmd, "%lld", h->created_ms);
	queue_arg(&cmd, KS_SF_EXPIRES);
	queue_argf(&cmd, "%lld", h->expires_ms);
	queue_field(&cmd, KS_SF_REPLY_TO, reply_to);
	queue_send(q, &cmd, NULL, NULL);
	queue_expire(q, KS_SESSION, h->id, ttl_s);
	queue_zadd(q, KS_SESSIONS, h->created_ms, h->id);
}

void
queue_held_drop(struct queue *q, const char *id)
{
	struct qcmd	cmd;

	queue_cmd_init(&cmd);
	queue_arg(&cmd, "DEL");
	queue_argf(&cmd, KS_SESSION "%s", id);
	queue_send(q, &cmd, NULL, NULL);
	queue_send3(q, "ZREM", KS_SESSIONS, id);
}

/* SET execq:approval:<request> json EX ttl. */
static void
queue_approval_record(struct queue *q, const char *request,
    const char *json, long long ttl_s)
{
	struct qcmd	cmd;

	queue_cmd_init(&cmd);
	queue_arg(&cmd, "SET");
	queue_argf(&cmd, KS_APPROVAL "%s", request);
	queue_arg(&cmd, json);
	queue_arg(&cmd, "EX");
	queue_argf(&cmd, "%lld", ttl_s);
	queue_send(q, &cmd, NULL, NULL);
}

void
queue_approval_publish(struct queue *q, const char *request,
    const char *json, long long ttl_s, long long expires_ms)
{
	struct qcmd	cmd;

	queue_approval_record(q, request, json, ttl_s);
	queue_zadd(q, KS_APPROVALS_PENDING, expires_ms, request);
	queue_cmd_init(&cmd);
	queue_arg(&cmd, "XADD");
	queue_arg(&cmd, KS_APPROVALS);
	queue_arg(&cmd, "MAXLEN");
	queue_arg(&cmd, "~");
	queue_arg(&cmd, QUEUE_APPROVALS_MAXLEN);
	queue_arg(&cmd, "*");
	queue_arg(&cmd, "item");
	queue_arg(&cmd, json);
	queue_send(q, &cmd, NULL, NULL);
}

void
queue_approval_settle(struct queue *q, const char *request,
    const char *json, long long ttl_s)
{
	queue_approval_record(q, request, json, ttl_s);
	queue_send3(q, "ZREM", KS_APPROVALS_PENDING, request);
}

int
queue_decisions_last(struct queue *q, queue_read_cb cb, void *arg)
{
	struct qcmd	cmd;

	queue_cmd_init(&cmd);
	queue_arg(&cmd, "XREVRANGE");
	queue_arg(&cmd, KS_DECISIONS);
	queue_arg(&cmd, "+");
	queue_arg(&cmd, "-");
	queue_arg(&cmd, "COUNT");
	queue_arg(&cmd, "1");
	return (queue_read(q, &cmd, cb, arg));
}

int
queue_decisions_after(struct queue *q, const char *cursor, queue_read_cb cb,
    void *arg)
{
	struct qcmd	cmd;

	queue_cmd_init(&cmd);
	queue_arg(&cmd, "XREAD");
	queue_arg(&cmd, "COUNT");
	queue_argf(&cmd, "%d", QUEUE_READ_MAX);
	queue_arg(&cmd, "STREAMS");
	queue_arg(&cmd, KS_DECISIONS);
	queue_arg(&cmd, cursor);
	return (queue_read(q, &cmd, cb, arg));
}

void
queue_live_add(struct queue *q, const char *id, int fd,
    unsigned long long offset, unsigned long long skipped, const char *data,
    size_t len)
{
	struct qcmd	cmd;

	queue_cmd_init(&cmd);
	queue_arg(&cmd, "XADD");
	queue_argf(&cmd, KS_OUT "%s", id);
	queue_arg(&cmd, "MAXLEN");
	queue_arg(&cmd, "~");
	queue_argf(&cmd, "%d", QUEUE_LIVE_MAXLEN);
	queue_arg(&cmd, "*");
	if (fd >= 0) {
		queue_arg(&cmd, "fd");
		queue_argf(&cmd, "%d", fd);
	}
	queue_arg(&cmd, "offset");
	queue_argf(&cmd, "%llu", offset);
	if (skipped > 0) {
		queue_arg(&cmd, "skipped");
		queue_argf(&cmd, "%llu", skipped);
	}
	queue_arg(&cmd, "data");
	queue_argn(&cmd, data, len);
	queue_send(q, &cmd, NULL, NULL);
}

void
queue_live_end(struct queue *q, const char *id, const char *end,
    unsigned ttl_s)
{
	struct qcmd	cmd;

	queue_cmd_init(&cmd);
	queue_arg(&cmd, "XADD");
	queue_argf(&cmd, KS_OUT "%s", id);
	queue_arg(&cmd, "*");
	queue_arg(&cmd, "end");
	queue_arg(&cmd, end);
	queue_send(q, &cmd, NULL, NULL);
	queue_expire(q, KS_OUT, id, ttl_s);
}
