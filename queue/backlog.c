/*
 * A queue's backlog: the commands that read it, the facts each reply
 * gives, and the counts and ages made of them, shared by the worker
 * (asynchronous, on the queue's write connection: the read reaches into
 * queue_int.h as a top layer of the queue module, and nothing in the
 * module calls it) and the client (synchronous). Each reply is recorded
 * as it comes; backlog_settle is the one place the counts are made.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>
#include <jansson.h>

#include "logs/log.h"
#include "logs/xmalloc.h"
#include "queue/backlog.h"
#include "queue/cluster.h"
#include "queue/keyspace.h"
#include "queue/queue_int.h"
#include "queue/rconn.h"

/* Round 0: TIME, ZCARD, XLEN, then two per lane. */
#define BACKLOG_HEAD	3

static const char *const backlog_lanes[] = {
	KS_LANE_CTL, KS_LANE_HIGH, KS_LANE_NORMAL, KS_LANE_LOW
};
#define BACKLOG_NLANES	(sizeof backlog_lanes / sizeof backlog_lanes[0])

/* The worker's read under way: one slot per command of the round. */
struct backlog_slot {
	struct backlog_async	*a;
	size_t			 i;
};
struct backlog_async {
	struct backlog		*b;		/* NULL: freed meanwhile */
	struct queue		*q;
	backlog_done_cb		 cb;
	void			*arg;
	int			 round;
	size_t			 left;		/* replies to come */
	struct backlog_slot	*slots;
};

/* Adds lane name (owner's when owner is not NULL). */
static void
backlog_add(struct backlog *b, const char *owner, const char *lane)
{
	struct backlog_lane	*l = &b->lanes[b->nlanes++];

	if (owner != NULL)
		xasprintf(&l->name, "%s.%s", owner, lane);
	else
		l->name = xstrdup(lane);
	xasprintf(&l->key, KS_QUEUE_FMT, b->queue, l->name);
}

struct backlog *
backlog_create(const char *queue, const char *agents)
{
	struct backlog	*b;
	char		*list, *save, *p;
	size_t		 i, n = 0;

	b = xcalloc(1, sizeof *b);
	b->queue = xstrdup(queue);
	xasprintf(&b->delayed_key, KS_DELAYED_FMT, queue);
	xasprintf(&b->dead_key, KS_DEAD_FMT, queue);
	list = xstrdup(agents != NULL ? agents : "");
	for (p = strtok_r(list, " ,\t", &save); p != NULL;
	    p = strtok_r(NULL, " ,\t", &save))
		n++;
	b->lanes = xcalloc((n + 1) * BACKLOG_NLANES, sizeof *b->lanes);
	b->second = xcalloc((n + 1) * BACKLOG_NLANES, sizeof *b->second);
	for (i = 0; i < BACKLOG_NLANES; i++)
		backlog_add(b, NULL, backlog_lanes[i]);
	free(list);
	list = xstrdup(agents != NULL ? agents : "");
	for (p = strtok_r(list, " ,\t", &save); p != NULL;
	    p = strtok_r(NULL, " ,\t", &save))
		for (i = 0; i < BACKLOG_NLANES; i++)
			backlog_add(b, p, backlog_lanes[i]);
	free(list);
	return (b);
}

/* Renames one key for cluster mode (cluster_tag). */
static void
backlog_tag(const struct backlog *b, char **key)
{
	char	*tagged = cluster_tag(*key, b->queue);

	free(*key);
	*key = tagged;
}

void
backlog_cluster(struct backlog *b)
{
	size_t	i;

	for (i = 0; i < b->nlanes; i++)
		backlog_tag(b, &b->lanes[i].key);
	backlog_tag(b, &b->delayed_key);
	backlog_tag(b, &b->dead_key);
}

void
backlog_free(struct backlog *b)
{
	size_t	i;

	if (b == NULL)
		return;
	if (b->async != NULL)
		b->async->b = NULL;	/* it frees itself when Redis is done */
	for (i = 0; i < b->nlanes; i++) {
		free(b->lanes[i].key);
		free(b->lanes[i].name);
	}
	free(b->lanes);
	free(b->second);
	free(b->delayed_key);
	free(b->dead_key);
	free(b->queue);
	free(b);
}

size_t
backlog_ncommands(const struct backlog *b, int round)
{
	return (round == 0 ? BACKLOG_HEAD + 2 * b->nlanes : b->nsecond);
}

/* Appends s to c. */
static void
backlog_arg(struct backlog_cmd *c, const char *s)
{
	c->argv[c->argc] = s;
	c->len[c->argc++] = strlen(s);
}

void
backlog_command(const struct backlog *b, int round, size_t i,
    struct backlog_cmd *c)
{
	const struct backlog_lane	*l;

	memset(c, 0, sizeof *c);
	if (round == 1) {
		l = &b->lanes[b->second[i]];
		backlog_arg(c, "XRANGE");
		backlog_arg(c, l->key);
		/* After the last delivered entry ("(<id>"), or all. */
		backlog_arg(c, l->grouped ? l->last_id : "-");
		backlog_arg(c, "+");
		backlog_arg(c, "COUNT");
		backlog_arg(c, "1");
		return;
	}
	if (i == 0)
		backlog_arg(c, "TIME");
	else if (i == 1) {
		backlog_arg(c, "ZCARD");
		backlog_arg(c, b->delayed_key);
	} else if (i == 2) {
		backlog_arg(c, "XLEN");
		backlog_arg(c, b->dead_key);
	} else {
		l = &b->lanes[(i - BACKLOG_HEAD) / 2];
		if ((i - BACKLOG_HEAD) % 2 == 0)
			backlog_arg(c, "XLEN");
		else {
			backlog_arg(c, "XINFO");
			backlog_arg(c, "GROUPS");
		}
		backlog_arg(c, l->key);
	}
}

void
backlog_begin(struct backlog *b)
{
	size_t	i;

	b->delayed = b->dead = 0;
	b->now_ms = 0;
	b->failed = 0;
	b->error[0] = '\0';
	b->nsecond = 0;
	for (i = 0; i < b->nlanes; i++) {
		b->lanes[i].waiting = b->lanes[i].running = 0;
		b->lanes[i].oldest_age_s = 0;
		b->lanes[i].len = 0;
		b->lanes[i].grouped = 0;
		b->lanes[i].lag = -1;
		b->lanes[i].last_id[0] = '\0';
	}
}

/* The first failure, for the caller to say. */
static void
backlog_fail(struct backlog *b, const char *what, const redisReply *r)
{
	if (b->failed)
		return;
	b->failed = 1;
	snprintf(b->error, sizeof b->error, "%s: %s", what, r == NULL ?
	    "no reply" : r->type == REDIS_REPLY_ERROR ? r->str :
	    "unexpected reply");
}

/* An integer reply, or -1 (and failed). */
static long long
backlog_int(struct backlog *b, const char *what, const redisReply *r)
{
	if (r != NULL && r->type == REDIS_REPLY_INTEGER && r->integer >= 0)
		return (r->integer);
	backlog_fail(b, what, r);
	return (-1);
}

long long
backlog_id_ms(const char *id)
{
	char			*end;
	unsigned long long	 v;

	errno = 0;
	v = strtoull(id, &end, 10);
	if (end == id || (*end != '-' && *end != '\0') || errno != 0 ||
	    v > (unsigned long long)1 << 62)
		return (-1);
	return ((long long)v);
}

double
backlog_age_s(long long then_ms, long long now_ms)
{
	return (now_ms > then_ms ? (double)(now_ms - then_ms) / 1000.0 : 0);
}

/* One field of an XINFO row (a flat name, value array), or NULL. */
static const redisReply *
backlog_field(const redisReply *row, const char *name)
{
	size_t	i;

	for (i = 0; i + 1 < row->elements; i += 2)
		if (row->element[i]->type == REDIS_REPLY_STRING &&
		    strcmp(row->element[i]->str, name) == 0)
			return (row->element[i + 1]);
	return (NULL);
}

int
backlog_parse_groups(const redisReply *r, const char *name,
    struct backlog_group *g)
{
	const redisReply	*row, *v;
	size_t			 i;

	memset(g, 0, sizeof *g);
	g->lag = -1;
	if (r == NULL || r->type != REDIS_REPLY_ARRAY)
		return (-1);
	for (i = 0; i < r->elements; i++) {
		row = r->element[i];
		if (row->type != REDIS_REPLY_ARRAY ||
		    (v = backlog_field(row, "name")) == NULL ||
		    v->type != REDIS_REPLY_STRING || strcmp(v->str, name) != 0)
			continue;
		g->found = 1;
		if ((v = backlog_field(row, "pending")) != NULL &&
		    v->type == REDIS_REPLY_INTEGER)
			g->pending = v->integer;
		if ((v = backlog_field(row, "lag")) != NULL &&
		    v->type == REDIS_REPLY_INTEGER && v->integer >= 0)
			g->lag = v->integer;
		if ((v = backlog_field(row, "last-delivered-id")) != NULL &&
		    v->type == REDIS_REPLY_STRING)
			snprintf(g->last_id, sizeof g->last_id, "%s", v->str);
		return (0);
	}
	return (0);
}

/* XINFO GROUPS of lane l: its group's facts. */
static void
backlog_record_groups(struct backlog *b, struct backlog_lane *l,
    const redisReply *r)
{
	struct backlog_group	g;

	/* A lane nobody made yet: "no such key". */
	if (r != NULL && r->type == REDIS_REPLY_ERROR && l->len == 0)
		return;
	if (backlog_parse_groups(r, KS_GROUP, &g) == -1) {
		backlog_fail(b, "XINFO GROUPS", r);
		return;
	}
	l->grouped = g.found;
	l->running = g.found && g.pending > 0 ? (unsigned long long)g.pending :
	    0;
	l->lag = g.lag;
	snprintf(l->last_id, sizeof l->last_id, "(%s", g.found ?
	    g.last_id : "");
}

/* The counts, once round 0 is in: the one place they are made. */
static void
backlog_settle(struct backlog *b)
{
	struct backlog_lane	*l;
	size_t			 i;

	b->nsecond = 0;
	for (i = 0; i < b->nlanes; i++) {
		l = &b->lanes[i];
		if (!l->grouped)
			l->waiting = (unsigned long long)l->len;
		else if (l->lag >= 0)
			l->waiting = (unsigned long long)l->lag;
		else		/* acknowledged entries are deleted */
			l->waiting = l->len > (long long)l->running ?
			    (unsigned long long)l->len - l->running : 0;
		if (l->waiting > 0 && !b->failed)
			b->second[b->nsecond++] = i;
	}
}

/* XRANGE of a lane with items waiting: the first of them. */
static void
backlog_record_oldest(struct backlog *b, struct backlog_lane *l,
    const redisReply *r)
{
	long long	ms;

	if (r == NULL || r->type != REDIS_REPLY_ARRAY) {
		backlog_fail(b, "XRANGE", r);
		return;
	}
	if (r->elements == 0 || r->element[0]->type != REDIS_REPLY_ARRAY ||
	    r->element[0]->elements < 1 ||
	    r->element[0]->element[0]->type != REDIS_REPLY_STRING)
		return;		/* taken since round 0 */
	if ((ms = backlog_id_ms(r->element[0]->element[0]->str)) >= 0)
		l->oldest_age_s = backlog_age_s(ms, b->now_ms);
}

void
backlog_record(struct backlog *b, int round, size_t i, const redisReply *r)
{
	long long	v;

	if (round == 1) {
		if (i < b->nsecond)
			backlog_record_oldest(b, &b->lanes[b->second[i]], r);
		return;
	}
	if (i == 0) {
		/* TIME: [seconds, microseconds] as strings. */
		if (r != NULL && r->type == REDIS_REPLY_ARRAY &&
		    r->elements == 2 &&
		    r->element[0]->type == REDIS_REPLY_STRING &&
		    r->element[1]->type == REDIS_REPLY_STRING)
			b->now_ms = strtoll(r->element[0]->str, NULL, 10) *
			    1000 + strtoll(r->element[1]->str, NULL, 10) / 1000;
		else
			backlog_fail(b, "TIME", r);
	} else if (i == 1) {
		if ((v = backlog_int(b, "ZCARD delayed", r)) >= 0)
			b->delayed = (unsigned long long)v;
	} else if (i == 2) {
		if ((v = backlog_int(b, "XLEN dead", r)) >= 0)
			b->dead = (unsigned long long)v;
	} else if ((i - BACKLOG_HEAD) / 2 < b->nlanes) {
		if ((i - BACKLOG_HEAD) % 2 == 0) {
			if ((v = backlog_int(b, "XLEN", r)) >= 0)
				b->lanes[(i - BACKLOG_HEAD) / 2].len = v;
		} else
			backlog_record_groups(b,
			    &b->lanes[(i - BACKLOG_HEAD) / 2], r);
	}
	if (i + 1 == backlog_ncommands(b, 0))
		backlog_settle(b);
}

int
backlog_read_sync(struct backlog *b, struct rconn *c)
{
	struct backlog_cmd	 cmd;
	redisReply		*r;
	size_t			 i, n;
	int			 round;

	backlog_begin(b);
	for (round = 0; round < 2; round++) {
		n = backlog_ncommands(b, round);
		for (i = 0; i < n; i++) {
			backlog_command(b, round, i, &cmd);
			if (rconn_append_argv(c, cmd.argc, cmd.argv,
			    cmd.len) == -1)
				return (-1);
		}
		for (i = 0; i < n; i++) {
			if ((r = rconn_next(c)) == NULL)
				return (-1);
			backlog_record(b, round, i, r);
			freeReplyObject(r);
		}
	}
	return (0);
}

/* The end of the worker's read: frees it, and tells its owner. */
static void
backlog_async_end(struct backlog_async *a)
{
	free(a->slots);
	if (a->b != NULL) {
		a->b->async = NULL;
		if (!a->q->freeing)
			a->cb(a->b, a->arg);
	}
	free(a);
}

/* Sends a round: how many commands went out. */
static size_t
backlog_async_send(struct backlog_async *a, int round);

/* Every reply of the worker's read. */
static void
backlog_async_cb(struct rconn *rc, redisReply *reply, void *arg)
{
	struct backlog_slot	*s = arg;
	struct backlog_async	*a = s->a;

	(void)rc;
	if (a->b != NULL && !a->q->freeing)
		backlog_record(a->b, a->round, s->i, reply);
	if (--a->left > 0)
		return;
	if (a->round == 0 && a->b != NULL && !a->q->freeing &&
	    backlog_ncommands(a->b, 1) > 0) {
		free(a->slots);
		a->slots = NULL;
		if (backlog_async_send(a, 1) > 0)
			return;
		backlog_fail(a->b, "XRANGE", NULL);
	}
	backlog_async_end(a);
}

static size_t
backlog_async_send(struct backlog_async *a, int round)
{
	struct backlog_cmd	cmd;
	size_t			i, n = backlog_ncommands(a->b, round);

	a->round = round;
	a->left = 0;
	a->slots = xcalloc(n + 1, sizeof *a->slots);
	for (i = 0; i < n; i++) {
		a->slots[i].a = a;
		a->slots[i].i = i;
		backlog_command(a->b, round, i, &cmd);
		if (rconn_command_argv(a->q->wr.rc, backlog_async_cb,
		    &a->slots[i], cmd.argc, cmd.argv, cmd.len) == -1) {
			backlog_fail(a->b, cmd.argv[0], NULL);
			break;
		}
		a->left++;
	}
	if (a->left > 0)
		queue_kick(&a->q->wr);
	return (a->left);
}

int
backlog_read(struct backlog *b, struct queue *q, backlog_done_cb cb,
    void *arg)
{
	struct backlog_async	*a;

	if (b->async != NULL || !q->wr.up || q->freeing)
		return (-1);
	if (q->cluster)
		backlog_cluster(b);	/* once named, it stays so */
	backlog_begin(b);
	a = xcalloc(1, sizeof *a);
	a->b = b;
	a->q = q;
	a->cb = cb;
	a->arg = arg;
	if (backlog_async_send(a, 0) == 0) {
		free(a->slots);
		free(a);
		return (-1);
	}
	b->async = a;
	return (0);
}

json_t *
backlog_to_json(const struct backlog *b)
{
	const struct backlog_lane	*l;
	json_t				*o, *lanes;
	size_t				 i;

	lanes = json_array();
	for (i = 0; i < b->nlanes; i++) {
		l = &b->lanes[i];
		json_array_append_new(lanes, json_pack("{s:s, s:I, s:I, s:f}",
		    "lane", l->name, "waiting", (json_int_t)l->waiting,
		    "running", (json_int_t)l->running, "oldest_age_s",
		    l->oldest_age_s));
	}
	o = json_pack("{s:s, s:o, s:I, s:I}", "queue", b->queue, "lanes",
	    lanes, "delayed", (json_int_t)b->delayed, "dead",
	    (json_int_t)b->dead);
	if (o == NULL)
		fatal("out of memory (json)");
	return (o);
}
