/*
 * What must reach Redis (claims, answers, commands): kept in order until
 * Redis replies, retried across reconnects and refusals, spooled to disk
 * when the worker stops or Redis is away. Commands are built here by
 * appending their arguments (struct qcmd), a script's in the order
 * queue/scripts.c writes beside it. Above queue/conn.c only.
 */

#include <stdarg.h>

#include <sys/queue.h>

#include <netinet/in.h>

#include <fcntl.h>
#include <strings.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>
#include <hiredis/hiredis.h>

#include "logs/log.h"
#include "logs/syncer.h"
#include "logs/xmalloc.h"
#include "queue/keyspace.h"
#include "queue/queue.h"
#include "queue/queue_int.h"
#include "queue/spool.h"

void
queue_cmd_init(struct qcmd *cmd)
{
	memset(cmd, 0, sizeof *cmd);
}

/* Frees what cmd owns (its formatted arguments); it is empty again. */
void
queue_cmd_release(struct qcmd *cmd)
{
	int	i;

	for (i = 0; i < cmd->argc; i++)
		free(cmd->own[i]);
	queue_cmd_init(cmd);
}

void
queue_argn(struct qcmd *cmd, const char *s, size_t len)
{
	if (cmd->argc == QUEUE_ARGC_MAX)
		fatal("queue: a command of more than %d arguments",
		    QUEUE_ARGC_MAX);
	cmd->own[cmd->argc] = NULL;
	cmd->len[cmd->argc] = len;
	cmd->argv[cmd->argc++] = s;
}

void
queue_arg(struct qcmd *cmd, const char *s)
{
	queue_argn(cmd, s, strlen(s));
}

void
queue_argf(struct qcmd *cmd, const char *fmt, ...)
{
	va_list	 ap;
	char	*s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) == -1)
		fatal("out of memory");
	va_end(ap);
	queue_arg(cmd, s);
	cmd->own[cmd->argc - 1] = s;
}

/* A request from a printf-free argument list; strings are copied. */
struct qreq *
queue_req_new(int argc, const char **argv, const size_t *len)
{
	struct qreq	*r;
	int		 i;

	r = xcalloc(1, sizeof *r);
	r->argc = argc;
	r->argv = xcalloc(argc, sizeof *r->argv);
	r->argvlen = xcalloc(argc, sizeof *r->argvlen);
	for (i = 0; i < argc; i++) {
		r->argvlen[i] = len != NULL ? len[i] : strlen(argv[i]);
		r->argv[i] = xmalloc(r->argvlen[i] + 1);
		memcpy(r->argv[i], argv[i], r->argvlen[i]);
		r->argv[i][r->argvlen[i]] = '\0';
	}
	return (r);
}

struct qreq *
queue_cmd_req(struct qcmd *cmd)
{
	struct qreq	*r;

	r = queue_req_new(cmd->argc, cmd->argv, cmd->len);
	queue_cmd_release(cmd);
	return (r);
}

/* Marks a request as not for the spool. */
struct qreq *
queue_nospool(struct qreq *r)
{
	r->nospool = 1;
	return (r);
}

/* Frees a request. */
void
queue_req_free(struct qreq *r)
{
	int	i;

	for (i = 0; i < r->argc; i++)
		free(r->argv[i]);
	free(r->argv);
	free(r->argvlen);
	free(r->answers);
	free(r->got_answer);
	free(r);
}

/* Answers and commands without a callback can be replayed by anyone. */
static int
queue_spoolable(const struct qreq *r)
{
	return (r->claimcb == NULL && r->replycb == NULL && !r->nospool &&
	    r->spool.file == NULL);
}

/* Keeps the requests Redis has not confirmed on disk; how many are. */
unsigned
queue_spool_out(struct queue *q)
{
	struct qreq	*req;
	unsigned	 n = 0;

	if (q->spool == NULL)
		return (0);
	TAILQ_FOREACH(req, &q->out, entry) {
		if (queue_spoolable(req))
			(void)spool_append(q->spool, req->argc,
			    (const char *const *)req->argv, req->argvlen,
			    &req->spool);
		if (req->spool.file != NULL)
			n++;
	}
	spool_sync(q->spool);
	return (n);
}

/*
 * The answers about to be lost (the worker stops, and neither Redis nor
 * the spool has them): by id, so an operator knows which items had no
 * answer from here. Their entries stay pending under this worker's
 * claims, made in a life that ends now: whoever takes them over answers
 * worker_lost (or runs them again as args.retries allow).
 */
void
queue_log_unsaved(struct queue *q)
{
	struct qreq	*req;
	unsigned	 n = 0;

	TAILQ_FOREACH(req, &q->out, entry)
		if (req->answers != NULL && req->spool.file == NULL)
			n++;
	if (n == 0)
		return;
	log_warn("queue: %u answer(s) neither confirmed by Redis nor spooled "
	    "are lost; their entries stay pending, and whoever takes them "
	    "over answers worker_lost (or runs them again as args.retries "
	    "allow):", n);
	TAILQ_FOREACH(req, &q->out, entry)
		if (req->answers != NULL && req->spool.file == NULL)
			log_warn("queue: answer lost: %s", req->answers);
}

unsigned
queue_spool_all(struct queue *q)
{
	return (queue_spool_out(q));
}

/* Retry failed requests once the backoff is over. */
void
queue_flush_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	struct queue	*q = arg;

	(void)fd;
	(void)what;
	q->err_wait = 0;
	queue_flush(q);
}

/*
 * Redis refused a request (OOM, READONLY, a script error): nothing more
 * goes out for a while, doubling up to QUEUE_ERR_BACKOFF_MAX_MS while the
 * refusals go on, and the log says so once a second at most.
 */
static void
queue_refused(struct queue *q, const char *what, const char *why)
{
	struct timeval	 tv;
	time_t		 now = time(NULL);

	if (now != q->err_logged) {
		log_warn("queue: redis refused %s: %s (%u more since; retrying "
		    "in %u ms)", what, why, q->err_quiet, q->err_backoff_ms == 0 ?
		    QUEUE_BACKOFF_MIN_MS : q->err_backoff_ms);
		q->err_logged = now;
		q->err_quiet = 0;
	} else
		q->err_quiet++;
	if (q->err_wait)
		return;		/* this burst is counted already */
	q->err_backoff_ms = q->err_backoff_ms == 0 ? QUEUE_BACKOFF_MIN_MS :
	    q->err_backoff_ms * 2;
	if (q->err_backoff_ms > QUEUE_ERR_BACKOFF_MAX_MS)
		q->err_backoff_ms = QUEUE_ERR_BACKOFF_MAX_MS;
	q->err_wait = 1;
	tv.tv_sec = q->err_backoff_ms / 1000;
	tv.tv_usec = (q->err_backoff_ms % 1000) * 1000;
	evtimer_add(q->ev_flush, &tv);
}

static void	queue_req_done(struct queue *, struct qreq *, const char *,
		    size_t);
static void	queue_wait(struct queue *);
static void	queue_req_unack(struct qreq *);

/* The reply to an answer or a claim. */
static void
queue_req_cb(struct rconn *rc, redisReply *reply, void *arg)
{
	struct qreq	*req = arg;
	struct qconn	*c = rconn_arg(rc);
	struct queue	*q = c->q;
	enum queue_claim what;
	const char	*answer = NULL;
	size_t		 len = 0;

	req->sent = 0;
	if (reply == NULL || q->freeing)
		return;		/* resent when the connection is back */
	if (reply->type == REDIS_REPLY_ERROR) {
		/* Not the primary (any more): kept, and we find the one. */
		(void)queue_readonly(q, reply);
		queue_refused(q, req->claimcb != NULL ? "a claim" :
		    "an answer", reply->str);
		if (req->claimcb == NULL) {
			if (queue_spoolable(req) && q->spool != NULL) {
				(void)spool_append(q->spool, req->argc,
				    (const char *const *)req->argv, req->argvlen,
				    &req->spool);
				spool_sync(q->spool);
			}
			return;		/* kept; sent again after the backoff */
		}
		/* A claim lets go: the entry stays pending, read again. */
		q->let_go = 1;
		TAILQ_REMOVE(&q->out, req, entry);
		q->nout--;
		req->claimcb(QUEUE_CLAIM_FAILED, NULL, 0, req->arg);
		queue_req_free(req);
		return;
	}
	q->err_backoff_ms = 0;
	req->got_int = reply->type == REDIS_REPLY_INTEGER ? reply->integer : 0;
	what = QUEUE_CLAIM_RUNNING;
	if (reply->type == REDIS_REPLY_ARRAY && reply->elements >= 1)
		what = (enum queue_claim)reply->element[0]->integer;
	req->got_claim = what;
	if (reply->type == REDIS_REPLY_ARRAY && reply->elements == 2 &&
	    reply->element[1]->type == REDIS_REPLY_STRING) {
		answer = reply->element[1]->str;
		len = reply->element[1]->len;
	}
	if (q->wait_replicas == 0 || q->unreplicated) {
		queue_req_done(q, req, answer, len);
		return;
	}
	/* Counted once replicas have it: kept till the WAIT's answer. */
	req->acked = 1;
	if (answer != NULL) {
		req->got_answer = xmalloc(len + 1);
		memcpy(req->got_answer, answer, len);
		req->got_answer[len] = '\0';
		req->got_len = len;
	}
	queue_wait(q);
}

/* A request Redis (and its replicas) have: its callback, and it goes. */
static void
queue_req_done(struct queue *q, struct qreq *req, const char *answer,
    size_t len)
{
	TAILQ_REMOVE(&q->out, req, entry);
	q->nout--;
	if (q->spool != NULL)
		spool_done(q->spool, &req->spool);
	if (req->pends && req->got_int == 1)	/* a reply to deliver */
		event_active(q->ev_sweep, EV_TIMEOUT, 1);
	if (req->replycb != NULL)
		req->replycb(req->got_int, req->arg);
	else if (req->claimcb != NULL)
		req->claimcb((enum queue_claim)req->got_claim, answer, len,
		    req->arg);
	queue_req_free(req);
}

/*
 * WAIT's answer: how many replicas have every write sent before it, so
 * every request acknowledged by now. Enough: they count, and so a
 * failover cannot take them back (the replica it promotes has them).
 * Too few within QUEUE_WAIT_MS: either this node is being demoted (its
 * replica was promoted and left it: the switch follows within about a
 * second, which drops this connection first and sends them again to the
 * new primary) or no replica is there (one down, or none back yet after
 * a failover). Then they count anyway, the worker says so once and runs
 * unreplicated (/healthz: redis_replicas "short") until the heartbeat's
 * ROLE shows enough replicas again: a fleet keeps working with its
 * replica down, as Redis itself does, and says what it lost.
 */
static void
queue_wait_cb(struct rconn *rc, redisReply *reply, void *arg)
{
	struct queue	*q = arg;
	struct qreq	*req, *next;
	long long	 got;

	(void)rc;
	q->waiting = 0;
	if (reply == NULL || q->freeing)
		return;		/* sent again once the connection is back */
	got = reply->type == REDIS_REPLY_INTEGER ? reply->integer : -1;
	if (got < (long long)q->wait_replicas && !q->unreplicated) {
		log_warn("queue: redis: %lld of %u replicas confirmed our "
		    "writes within %d ms%s%s: going on without them until "
		    "they are back (a failover now may lose what Redis "
		    "confirms)", got < 0 ? 0 : got, q->wait_replicas,
		    QUEUE_WAIT_MS, reply->type == REDIS_REPLY_ERROR ? ": " :
		    "", reply->type == REDIS_REPLY_ERROR ? reply->str : "");
		q->unreplicated = 1;
	}
	for (req = TAILQ_FIRST(&q->out); req != NULL; req = next) {
		next = TAILQ_NEXT(req, entry);
		if (req->acked)
			queue_req_done(q, req, req->got_answer, req->got_len);
	}
}

/* Asks the replicas for what Redis acknowledged, unless a WAIT is out. */
static void
queue_wait(struct queue *q)
{
	if (q->waiting || !q->wr.up)
		return;
	q->waiting = 1;
	rconn_command(q->wr.rc, queue_wait_cb, q, "WAIT %u %d",
	    q->wait_replicas, QUEUE_WAIT_MS);
}

/* Not counted after all: it goes out again. */
static void
queue_req_unack(struct qreq *req)
{
	req->acked = 0;
	free(req->got_answer);
	req->got_answer = NULL;
	req->got_len = 0;
}

void
queue_unack_all(struct queue *q)
{
	struct qreq	*req;

	q->waiting = 0;
	TAILQ_FOREACH(req, &q->out, entry)
		queue_req_unack(req);
}

/* Replaces argument i of r by s (len bytes), copied. */
static void
queue_req_set(struct qreq *r, int i, const char *s, size_t len)
{
	char	*copy = xmalloc(len + 1);

	memcpy(copy, s, len);
	copy[len] = '\0';
	free(r->argv[i]);
	r->argv[i] = copy;
	r->argvlen[i] = len;
}

/* Appends s to r's arguments. */
static void
queue_req_add(struct qreq *r, const char *s)
{
	r->argv = xreallocarray(r->argv, (size_t)r->argc + 1,
	    sizeof *r->argv);
	r->argvlen = xreallocarray(r->argvlen, (size_t)r->argc + 1,
	    sizeof *r->argvlen);
	r->argv[r->argc] = NULL;
	r->argc++;
	queue_req_set(r, r->argc - 1, s, strlen(s));
}

/*
 * Which of argv are keys, as Redis Cluster reads a command: [*first,
 * *first + *n). Only the commands execq sends.
 */
void
queue_key_args(int argc, const char *const *argv, int *first, int *n)
{
	int	i;

	*first = 1;
	*n = argc > 1 ? 1 : 0;
	if (argc < 1)
		return;
	if (strcasecmp(argv[0], "EVAL") == 0 ||
	    strcasecmp(argv[0], "EVALSHA") == 0) {
		*first = 3;
		*n = argc > 2 ? atoi(argv[2]) : 0;
		if (*n < 0 || *first + *n > argc)
			*n = 0;
	} else if (strcasecmp(argv[0], "XREAD") == 0 ||
	    strcasecmp(argv[0], "XREADGROUP") == 0) {
		*n = 0;
		for (i = 1; i < argc; i++)
			if (strcasecmp(argv[i], "STREAMS") == 0) {
				*first = i + 1;
				*n = (argc - i - 1) / 2;
				break;
			}
	} else if (strcasecmp(argv[0], "DEL") == 0 ||
	    strcasecmp(argv[0], "UNLINK") == 0 ||
	    strcasecmp(argv[0], "EXISTS") == 0)
		*n = argc - 1;
	else if (strcasecmp(argv[0], "WAIT") == 0 ||
	    strcasecmp(argv[0], "PING") == 0 ||
	    strcasecmp(argv[0], "CLIENT") == 0)
		*n = 0;
}

/* Names cmd's keys for a cluster, as queue_req_tag does a request's. */
void
queue_cmd_tag(struct queue *q, struct qcmd *cmd)
{
	int	first, n, i;

	queue_key_args(cmd->argc, cmd->argv, &first, &n);
	for (i = first; i < first + n; i++) {
		char	*tagged = cluster_tag(cmd->argv[i], q->name);

		free(cmd->own[i]);
		cmd->own[i] = tagged;
		cmd->argv[i] = tagged;
		cmd->len[i] = strlen(tagged);
	}
}

/*
 * An answer's reply stream, in cluster mode: another queue's, most often
 * on another shard, which the answer script cannot write. The script
 * writes the reply into the queue's pending replies instead, in the same
 * step as the acknowledgement, under a mark that names this reply once:
 * the source entry when there is one (an answer sent again finds the
 * entry acknowledged and adds nothing), else this life's serial. shard.c
 * delivers it with the mark (KS_SENT), so it lands once. The reply
 * stream becomes KEYS[1]'s pending hash (and KEYS[3] when it stood
 * there for want of a source stream); ARGV[13] is the mark, ARGV[14] the
 * reply stream's cluster name.
 */
static void
queue_req_pend(struct queue *q, struct qreq *r)
{
	const char	*reply = r->argv[3], *colon;
	char		*rq, *tagged, *mark;
	int		 nokey;

	if (r->argc != 22 || strncmp(reply, KS_QUEUE, 2) != 0 ||
	    (colon = strrchr(reply + 2, ':')) == NULL)
		return;		/* converted already, or not ours */
	rq = xstrndup(reply + 2, (size_t)(colon - reply - 2));
	xasprintf(&tagged, KS_QUEUE "{%s}%s", rq, colon);
	if (r->argv[14][0] != '\0')
		xasprintf(&mark, "e:%s@%s", r->argv[5], r->argv[14]);
	else
		xasprintf(&mark, "n:%s.%llu", q->life, ++q->pend_serial);
	nokey = strcmp(r->argv[5], reply) == 0;
	queue_req_set(r, 3, q->k_replies, strlen(q->k_replies));
	if (nokey)
		queue_req_set(r, 5, q->k_replies, strlen(q->k_replies));
	queue_req_add(r, mark);
	queue_req_add(r, tagged);
	r->pends = 1;
	free(mark);
	free(tagged);
	free(rq);
}

/*
 * Names r's keys for a cluster (cluster_tag, the queue's own name as
 * their tag), once: an answer's reply goes through the pending replies
 * (queue_req_pend). What was built before the first node said it is a
 * cluster's (the spool, a session's end before the connection came up)
 * is renamed here too, as it goes out.
 */
static void
queue_req_tag(struct queue *q, struct qreq *r)
{
	char	*tagged;
	int	 first, n, i;

	r->tagged = 1;
	if (r->argc == 22 && strcmp(r->argv[0], "EVAL") == 0 &&
	    strcmp(r->argv[1], queue_answer_lua) == 0)
		queue_req_pend(q, r);
	else if (r->argc == 24 && strcmp(r->argv[0], "EVAL") == 0 &&
	    strcmp(r->argv[1], queue_answer_lua) == 0)
		r->pends = 1;	/* the spool's, converted before */
	queue_key_args(r->argc, (const char *const *)r->argv, &first, &n);
	for (i = first; i < first + n; i++) {
		tagged = cluster_tag(r->argv[i], q->name);
		queue_req_set(r, i, tagged, strlen(tagged));
		free(tagged);
	}
}

/* Sends every request that is not on its way. */
void
queue_flush(struct queue *q)
{
	struct qreq	*req;

	if (!q->wr.up || q->freeing || q->err_wait)
		return;
	TAILQ_FOREACH(req, &q->out, entry) {
		if (req->sent || req->acked)
			continue;
		req->sent = 1;
		if (q->cluster && !req->tagged)
			queue_req_tag(q, req);
		rconn_command_argv(q->wr.rc, queue_req_cb, req, req->argc,
		    (const char **)req->argv, req->argvlen);
	}
	queue_kick(&q->wr);
}

/* Queues a request and sends it if the connection is up. */
void
queue_push(struct queue *q, struct qreq *req)
{
	TAILQ_INSERT_TAIL(&q->out, req, entry);
	q->nout++;
	if (!q->wr.up && queue_spoolable(req) && q->spool != NULL) {
		(void)spool_append(q->spool, req->argc,
		    (const char *const *)req->argv, req->argvlen, &req->spool);
		spool_sync(q->spool);
	}
	queue_flush(q);
}

/* FNV-1a of "<id> <entry>", never 0 (0 marks an empty slot). */
static uint32_t
queue_ran_hash(const char *item_id, const char *entry_id)
{
	uint32_t	h = 2166136261u;
	const char	*p;

	for (p = item_id; *p != '\0'; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	h = (h ^ ' ') * 16777619u;
	for (p = entry_id; *p != '\0'; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	return (h != 0 ? h : 1);
}

void
queue_started(struct queue *q, const char *item_id, const char *entry_id)
{
	unsigned	i = q->nran++ % QUEUE_RAN_KEEP;

	free(q->ran[i]);
	xasprintf(&q->ran[i], "%s %s", item_id, entry_id);
	q->ranhash[i] = queue_ran_hash(item_id, entry_id);
}

int
queue_ran(const struct queue *q, const char *item_id, const char *entry_id)
{
	uint32_t	h = queue_ran_hash(item_id, entry_id);
	size_t		idlen = strlen(item_id);
	unsigned	i;

	for (i = 0; i < QUEUE_RAN_KEEP && q->ranhash[i] != 0; i++)
		if (q->ranhash[i] == h &&
		    strncmp(q->ran[i], item_id, idlen) == 0 &&
		    q->ran[i][idlen] == ' ' &&
		    strcmp(q->ran[i] + idlen + 1, entry_id) == 0)
			return (1);
	return (0);
}

void
queue_claim(struct queue *q, const char *item_id, const char *entry_id,
    int redelivered, int retries, int requeued, queue_claim_cb cb, void *arg)
{
	struct qcmd	 cmd;
	struct qreq	*req;

	queue_cmd_init(&cmd);
	queue_arg(&cmd, "EVAL");
	queue_arg(&cmd, queue_claim_lua);
	queue_arg(&cmd, "3");
	queue_argf(&cmd, KS_CLAIM "%s", item_id);
	queue_argf(&cmd, KS_ANSWER "%s", item_id);
	queue_argf(&cmd, "%s" KS_REQUEUED, q->lane_prefix);
	queue_arg(&cmd, q->consumer);
	queue_argf(&cmd, "%u", q->answer_ttl_s);
	queue_arg(&cmd, redelivered ? "1" : "0");
	queue_argf(&cmd, "%d", retries);
	queue_arg(&cmd, entry_id);
	/*
	 * An entry this life ran already comes back (its answer was lost):
	 * a mark of its own makes the claim count that run, as another
	 * life's; a resend of this request carries the same mark.
	 */
	if (queue_ran(q, item_id, entry_id))
		queue_argf(&cmd, "%s!%llu", q->life, ++q->reclaims);
	else
		queue_arg(&cmd, q->life);
	queue_arg(&cmd, requeued ? "1" : "0");
	req = queue_cmd_req(&cmd);
	req->claimcb = cb;
	req->arg = arg;
	queue_push(q, req);
}

void
queue_cancel(struct queue *q, const char *item_id, const char *json,
    size_t len, queue_claim_cb cb, void *arg)
{
	struct qcmd	 cmd;
	struct qreq	*req;

	queue_cmd_init(&cmd);
	queue_arg(&cmd, "EVAL");
	queue_arg(&cmd, queue_cancel_lua);
	queue_arg(&cmd, "5");
	queue_argf(&cmd, "%sdelayed", q->lane_prefix);
	queue_argf(&cmd, "%s" KS_DELAYED_ITEMS, q->lane_prefix);
	queue_argf(&cmd, KS_CLAIM "%s", item_id);
	queue_argf(&cmd, KS_ANSWER "%s", item_id);
	queue_argf(&cmd, KS_SESSION "%s", item_id);
	queue_arg(&cmd, item_id);
	queue_argf(&cmd, "%u", q->answer_ttl_s);
	queue_argn(&cmd, json, len);
	req = queue_cmd_req(&cmd);
	req->claimcb = cb;
	req->arg = arg;
	queue_push(q, req);
}

void
queue_release(struct queue *q, const char *item_id, const char *entry_id)
{
	struct qcmd	cmd;

	queue_cmd_init(&cmd);
	queue_arg(&cmd, "EVAL");
	queue_arg(&cmd, queue_release_lua);
	queue_arg(&cmd, "1");
	queue_argf(&cmd, KS_CLAIM "%s", item_id);
	queue_arg(&cmd, q->consumer);
	queue_argf(&cmd, "%s@%s", entry_id, q->life);
	queue_argf(&cmd, "%u", q->answer_ttl_s);
	queue_push(q, queue_cmd_req(&cmd));
}

void
queue_answer(struct queue *q, const char *reply_to, const char *lane,
    const char *item_id, enum queue_store store, const char *stream,
    const char *entry_id, const char *json, size_t len)
{
	queue_answer_kept(q, reply_to, lane, item_id, store, stream, entry_id,
	    json, len, NULL, 0);
}

void
queue_answer_kept(struct queue *q, const char *reply_to, const char *lane,
    const char *item_id, enum queue_store store, const char *stream,
    const char *entry_id, const char *json, size_t len, const char *kept,
    size_t kept_len)
{
	struct queue_answer	a;

	memset(&a, 0, sizeof a);
	a.reply_to = reply_to;
	a.lane = lane;
	a.item_id = item_id;
	a.store = store;
	a.stream = stream;
	a.entry_id = entry_id;
	a.json = json;
	a.len = len;
	a.kept = kept;
	a.kept_len = kept_len;
	queue_answer_send(q, &a);
}

void
queue_answer_send(struct queue *q, const struct queue_answer *a)
{
	struct qcmd	 cmd;
	struct qreq	*req;
	char		*reply;
	const char	*id = a->item_id != NULL ? a->item_id : "";

	xasprintf(&reply, KS_QUEUE_FMT, a->reply_to, a->lane);
	queue_cmd_init(&cmd);
	queue_arg(&cmd, "EVAL");
	queue_arg(&cmd, queue_answer_lua);
	queue_arg(&cmd, "7");
	queue_arg(&cmd, reply);
	if (a->store == QUEUE_STORE_CALLBACK)
		queue_argf(&cmd, KS_SESSION "%s", id);
	else
		queue_argf(&cmd, KS_ANSWER "%s", id);
	queue_arg(&cmd, a->stream != NULL ? a->stream : reply);
	queue_argf(&cmd, KS_CLAIM "%s", id);
	queue_argf(&cmd, "%sdead", q->lane_prefix);
	queue_argf(&cmd, "%sdelayed", q->lane_prefix);
	queue_argf(&cmd, "%s" KS_DELAYED_ITEMS, q->lane_prefix);
	queue_arg(&cmd, QUEUE_REPLY_MAXLEN);
	queue_argn(&cmd, a->json, a->len);
	queue_argf(&cmd, "%c", a->item_id == NULL ? '0' : "0123"[a->store]);
	queue_argf(&cmd, "%u", q->answer_ttl_s);
	queue_arg(&cmd, a->entry_id != NULL ? a->entry_id : "");
	queue_arg(&cmd, QUEUE_GROUP);
	queue_argn(&cmd, a->kept != NULL ? a->kept : "", a->kept != NULL ?
	    a->kept_len : 0);
	/* A dead letter or a schedule needs the entry it moves. */
	queue_arg(&cmd, a->entry_id == NULL ? "" : a->sched ? "sched" :
	    a->dead ? "dead" : "");
	if (a->at_ms > 0)
		queue_argf(&cmd, "%lld", (long long)a->at_ms);
	else
		queue_arg(&cmd, "");
	queue_argf(&cmd, "%ld", a->delay_ms);
	queue_argf(&cmd, "%u", a->attempt);
	queue_arg(&cmd, id);
	if (a->sched && a->entry_id != NULL)
		q->sched_sent++;	/* the promote tick looks each second */
	req = queue_cmd_req(&cmd);
	if (a->store == QUEUE_STORE_CALLBACK)	/* the lost-session sweep's */
		xasprintf(&req->answers, "%s (a session's callback)", id);
	else if (a->item_id != NULL)
		req->answers = xstrdup(a->item_id);
	else if (a->entry_id != NULL)
		xasprintf(&req->answers, "(no id: entry %s of %s)",
		    a->entry_id, a->stream != NULL ? a->stream : reply);
	queue_push(q, req);
	free(reply);
}

void
queue_send(struct queue *q, struct qcmd *cmd, queue_reply_cb cb, void *arg)
{
	struct qreq	*req;

	req = queue_cmd_req(cmd);
	req->replycb = cb;
	req->arg = arg;
	queue_push(q, req);
}

void
queue_limit_take(struct queue *q, const char *item_id, unsigned max_running,
    double max_per_s, unsigned lease_ms, queue_reply_cb cb, void *arg)
{
	struct qcmd	cmd;

	queue_cmd_init(&cmd);
	queue_arg(&cmd, "EVAL");
	queue_arg(&cmd, queue_limit_lua);
	queue_arg(&cmd, "2");
	queue_argf(&cmd, "%s" KS_LIMIT_RUNNING, q->lane_prefix);
	queue_argf(&cmd, "%s" KS_LIMIT_BUCKET, q->lane_prefix);
	queue_arg(&cmd, item_id);
	queue_argf(&cmd, "%u", max_running);
	queue_argf(&cmd, "%.6f", max_per_s);
	queue_argf(&cmd, "%u", lease_ms);
	queue_send(q, &cmd, cb, arg);
}

/* A lease's upkeep: no answer wanted, never spooled (it lapses anyway). */
static void
queue_limit_send(struct queue *q, struct qcmd *cmd)
{
	struct qreq	*req;

	req = queue_cmd_req(cmd);
	req->nospool = 1;
	queue_push(q, req);
}

void
queue_limit_renew(struct queue *q, const char *item_id, unsigned lease_ms)
{
	struct qcmd	cmd;

	queue_cmd_init(&cmd);
	queue_arg(&cmd, "EVAL");
	queue_arg(&cmd, queue_limit_renew_lua);
	queue_arg(&cmd, "1");
	queue_argf(&cmd, "%s" KS_LIMIT_RUNNING, q->lane_prefix);
	queue_arg(&cmd, item_id);
	queue_argf(&cmd, "%u", lease_ms);
	queue_limit_send(q, &cmd);
}

void
queue_limit_done(struct queue *q, const char *item_id)
{
	struct qcmd	cmd;

	queue_cmd_init(&cmd);
	queue_arg(&cmd, "ZREM");
	queue_argf(&cmd, "%s" KS_LIMIT_RUNNING, q->lane_prefix);
	queue_arg(&cmd, item_id);
	queue_limit_send(q, &cmd);
}

void
queue_forward(struct queue *q, const char *session_id, const char *stream,
    const char *entry_id, const char *body, size_t len, const char *owner,
    queue_reply_cb cb, void *arg)
{
	struct qcmd	cmd;

	queue_cmd_init(&cmd);
	queue_arg(&cmd, "EVAL");
	queue_arg(&cmd, queue_forward_lua);
	queue_arg(&cmd, "3");
	queue_argf(&cmd, KS_SESSION "%s", session_id);
	queue_arg(&cmd, stream);
	queue_argf(&cmd, KS_CLAIM "%s", session_id);
	queue_arg(&cmd, q->consumer);
	queue_arg(&cmd, QUEUE_GROUP);
	queue_arg(&cmd, entry_id);
	queue_argn(&cmd, body, len);
	queue_arg(&cmd, q->lane_prefix);
	queue_arg(&cmd, owner != NULL ? owner : "");
	queue_send(q, &cmd, cb, arg);
}

unsigned
queue_backlog(const struct queue *q)
{
	const struct qreq	*req;
	unsigned		 n = 0;

	TAILQ_FOREACH(req, &q->out, entry)
		if (req->claimcb == NULL)
			n++;
	return (n);
}

/* A command of a stopped worker's spool, sent like our own. */
static void
queue_replay_cb(int argc, const char **argv, const size_t *len,
    const struct spool_ref *ref, void *arg)
{
	struct queue	*q = arg;
	struct qreq	*req;

	req = queue_req_new(argc, argv, len);
	req->spool = *ref;
	TAILQ_INSERT_TAIL(&q->out, req, entry);
	q->nout++;
}

/* The spool, and what stopped workers left in it. */
void
queue_spool_open(struct queue *q, const struct queue_config *cfg)
{
	char	*cause;

	if ((q->spool = spool_open(cfg->state_dir, cfg->consumer, cfg->syncer,
	    &cause)) == NULL) {
		log_warn("queue: %s (answers wait in memory only)", cause);
		free(cause);
		return;
	}
	(void)spool_adopt(q->spool, queue_replay_cb, q);
}
