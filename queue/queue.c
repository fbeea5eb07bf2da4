#include <sys/queue.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <hiredis/adapters/libevent.h>

#include "logs/log.h"
#include "logs/syncer.h"
#include "logs/xmalloc.h"
#include "queue/queue.h"
#include "queue/rurl.h"
#include "queue/spool.h"

#define QUEUE_GROUP		"execq"
#define QUEUE_NLANES		5	/* ctl, ctl:<consumer>, high... */
#define QUEUE_NCTL		2	/* read whatever the free slots */
#define QUEUE_CTL_COUNT		"64"
#define QUEUE_BLOCK_MS		"2000"
#define QUEUE_REPLY_MAXLEN	"10000"
#define QUEUE_BACKOFF_MIN_MS	50
#define QUEUE_BACKOFF_MAX_MS	2000
#define QUEUE_ERR_BACKOFF_MAX_MS 8000	/* Redis says no (OOM, READONLY) */
#define QUEUE_HEAD_BYTES	65536	/* of an item too large to take */
#define QUEUE_STATUS_KEEP_MS	"86400000"	/* a silent worker's status */

static const char *queue_lanes[QUEUE_NLANES] = {
	"ctl", "ctl:%s", "high", "normal", "low"
};

/*
 * New entries in lane order: up to 64 from each of the first ARGV[4]
 * (control) lanes, then up to ARGV[3] from the work lanes, high first:
 * exact count, exact order. ARGV[5] is the id read from the work lanes:
 * ">" for new entries, "0" for this consumer's own pending ones (after
 * Redis refused claims: those entries are ours but not being worked on).
 * A field over ARGV[6] bytes stays in Redis: only its first 64 KiB come
 * back, with its size as the entry's fourth element.
 */
static const char queue_fetch_lua[] =
    "local out = {} local want = tonumber(ARGV[3]) "
    "local nctl = tonumber(ARGV[4]) "
    "for i, k in ipairs(KEYS) do "
    " local n, id = want, ARGV[5] "
    " if i <= nctl then n, id = 64, '>' end "
    " if n > 0 then "
    "  local r = redis.call('XREADGROUP', 'GROUP', ARGV[1], ARGV[2], "
    "   'COUNT', n, 'STREAMS', k, id) "
    "  if r then for _, e in ipairs(r[1][2]) do "
    "   local f, size = e[2] or {}, 0 "
    "   for j = 2, #f, 2 do if #f[j] > tonumber(ARGV[6]) then "
    "    size = #f[j] f[j] = string.sub(f[j], 1, 65536) end end "
    "   out[#out + 1] = {k, e[1], f, size} "
    "   if i > nctl then want = want - 1 end end end "
    " end "
    "end return out";

/*
 * Hands a PROCESS item to the worker that owns its session. KEYS: the
 * session hash, the stream the item came from. ARGV: me, group, entry,
 * item, queue. Returns 1 forwarded (and acknowledged), 0 not owned by
 * another worker, -1 owned by a worker that is gone.
 */
static const char queue_forward_lua[] =
    "local owner = redis.call('HGET', KEYS[1], 'worker') "
    "if not owner or owner == ARGV[1] then return 0 end "
    "if redis.call('EXISTS', 'execq:worker:' .. owner) == 0 then "
    " return -1 end "
    "if redis.call('XACK', KEYS[2], ARGV[2], ARGV[3]) == 0 then return 1 end "
    "redis.call('XDEL', KEYS[2], ARGV[3]) "
    "redis.call('XADD', 'q:' .. ARGV[5] .. ':ctl:' .. owner, "
    " 'MAXLEN', '~', 10000, '*', 'item', ARGV[4]) "
    "return 1";

/*
 * The idempotency key. KEYS: claim, answer. ARGV: consumer, ttl,
 * redelivered, retries, entry. Returns {1} run, {2, answer}, {3} running,
 * {4} lost. The claim's value is "<consumer>|<runs>|<entry>" ("-" once
 * released: the id may run again), so a claim resent after a lost reply is
 * recognised as ours and runs.
 */
static const char queue_claim_lua[] =
    "local me = ARGV[1] .. '|' local c = redis.call('GET', KEYS[1]) "
    "if not c or c == '-' then "
    " redis.call('SET', KEYS[1], me .. '1|' .. ARGV[5], 'EX', ARGV[2]) "
    " return {1} end "
    "if string.sub(c, 1, #me) == me and "
    " string.sub(c, -#ARGV[5] - 1) == '|' .. ARGV[5] then return {1} end "
    "local a = redis.call('GET', KEYS[2]) "
    "if a then return {2, a} end "
    "if ARGV[3] ~= '1' then return {3} end "
    "local n = tonumber(string.match(c, '|(%d+)|')) or 1 "
    "if n <= tonumber(ARGV[4]) then "
    " redis.call('SET', KEYS[1], me .. (n + 1) .. '|' .. ARGV[5], 'EX', "
    " ARGV[2]) return {1} end "
    "return {4}";

/*
 * An answer, stored and acknowledged atomically. KEYS: reply stream,
 * answer key (for a callback: the session hash), source stream, claim key.
 * ARGV: maxlen, json, store (1: keep it as the item's answer, 2: release
 * the claim so the id may run again, 3: a session's callback, 0: none of
 * these), ttl, entry, group, and what to keep as the answer when it is
 * not the json sent (a session's token is sent once, never kept). The
 * acknowledged entry is deleted from its
 * work stream, so work streams hold only what is waiting or running.
 * An entry that is acknowledged already (this answer resent after a lost
 * reply, or the entry answered by a worker that took it over: either way
 * the item's claim or answer is there) gets no second answer: exactly one
 * per entry. An entry that is gone with no claim and no answer was lost by
 * Redis (a restart without persistence): the answer is still published.
 * A session's callback goes out once: the first of the worker and the
 * lost-session sweep marks the session hash and the other stays silent.
 * A reply stream nobody reads any more expires ttl after its last answer.
 */
static const char queue_answer_lua[] =
    "if ARGV[5] ~= '' then "
    " local n = redis.pcall('XACK', KEYS[3], ARGV[6], ARGV[5]) "
    " if n == 1 then redis.call('XDEL', KEYS[3], ARGV[5]) "
    " elseif ARGV[3] ~= '3' and (redis.call('EXISTS', KEYS[4]) == 1 or "
    "  redis.call('EXISTS', KEYS[2]) == 1) then return 0 end "
    "end "
    "if ARGV[3] == '3' then "
    " if redis.call('HSETNX', KEYS[2], 'callback', '1') == 0 then "
    "  return 0 end "
    " if redis.call('TTL', KEYS[2]) < 0 then "
    "  redis.call('EXPIRE', KEYS[2], ARGV[4]) end "
    "end "
    "redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'item', ARGV[2]) "
    "redis.call('EXPIRE', KEYS[1], ARGV[4]) "
    "if ARGV[3] == '1' then local keep = ARGV[2] "
    " if ARGV[7] and ARGV[7] ~= '' then keep = ARGV[7] end "
    " redis.call('SET', KEYS[2], keep, 'EX', ARGV[4]) "
    " redis.call('EXPIRE', KEYS[4], ARGV[4]) "
    "elseif ARGV[3] == '2' then redis.call('SET', KEYS[4], '-', 'EX', "
    " ARGV[4]) end "
    "return 1";

/*
 * Sessions whose worker is gone (no heartbeat for claim_idle) end as
 * "lost", with their one EXEC_CALLBACK, sent by whichever worker sees it
 * first (the script is atomic). KEYS: the running set. ARGV: now, ttl.
 */
static const char queue_lost_lua[] =
    "local n = 0 "
    "for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do "
    " local h = 'execq:session:' .. id "
    " local st = redis.call('HMGET', h, 'status', 'worker', 'reply_to', "
    "  'log_path', 'callback') "
    " if st[1] ~= 'running' or st[5] then redis.call('SREM', KEYS[1], id) "
    " elseif st[2] and redis.call('EXISTS', 'execq:worker:' .. st[2]) == 0 "
    " then "
    "  redis.call('SREM', KEYS[1], id) "
    "  redis.call('HSET', h, 'status', 'lost', 'ended_ms', ARGV[1], "
    "   'callback', '1') "
    "  redis.call('EXPIRE', h, ARGV[2]) "
    "  local cb = '{\"type\":\"EXEC_CALLBACK\",\"priority\":\"high\",' .. "
    "   '\"id\":' .. cjson.encode(id) .. ',\"session_id\":' .. "
    "   cjson.encode(id) .. ',\"status\":\"lost\",\"exit_code\":null,' .. "
    "   '\"signal\":null,\"killed_by\":null,\"log_path\":' .. "
    "   cjson.encode(st[4] or '') .. ',\"tail\":[],\"worker\":' .. "
    "   cjson.encode(st[2]) .. ',\"message\":\"the worker running this ' .. "
    "   'session stopped before the session ended\"}' "
    "  redis.call('XADD', 'q:' .. (st[3] or 'replies') .. ':high', "
    "   'MAXLEN', '~', 10000, '*', 'item', cb) "
    "  n = n + 1 "
    " end "
    "end return n";

/*
 * The fleet registry: this worker's status (JSON) in the hash
 * execq:workers, its beat time in the sorted set execq:workers:beat, and
 * entries not heard of for ARGV[4] ms removed. KEYS: the hash, the set.
 * ARGV: consumer, status, now (ms).
 */
static const char queue_status_lua[] =
    "redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) "
    "redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1]) "
    "local old = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', "
    " '(' .. (tonumber(ARGV[3]) - tonumber(ARGV[4]))) "
    "for _, c in ipairs(old) do "
    " redis.call('HDEL', KEYS[1], c) redis.call('ZREM', KEYS[2], c) "
    "end return #old";

struct queue;

/* One Redis connection and its reconnect timer. */
struct qconn {
	struct queue		*q;
	const char		*name;
	redisAsyncContext	*ac;
	int			 up;
	unsigned		 backoff_ms;
	struct event		*ev_retry;
	struct event		*ev_kick;
	int			 ever_up;	/* connected once: a later
						   connect is a reconnect */
	int			 resolving;	/* a DNS lookup is under way */
	char			 addr[INET6_ADDRSTRLEN];	/* its answer */
	const char		*gai_error;	/* ... or why not */
};

/* A command that must reach Redis: kept until it has a reply. */
struct qreq {
	TAILQ_ENTRY(qreq)	 entry;
	int			 argc;
	char			**argv;
	size_t			*argvlen;
	int			 sent;
	queue_claim_cb		 claimcb;	/* NULL for answers */
	queue_reply_cb		 replycb;	/* or this, or neither */
	void			*arg;
	int			 nospool;	/* wrong to replay later */
	struct spool_ref	 spool;		/* where it is kept on disk */
};
TAILQ_HEAD(qreqs, qreq);

/* An entry delivered by Redis that the worker had no room for yet. */
struct qheld {
	TAILQ_ENTRY(qheld)	 entry;
	char			*stream, *entry_id, *body;
	size_t			 len, size;
	int			 has_body, redelivered;
};
TAILQ_HEAD(qhelds, qheld);

/* An entry being worked on, refreshed so no one takes it over. */
struct qtrack {
	LIST_ENTRY(qtrack)	 entry;
	char			*stream, *entry_id;
};

struct queue {
	struct event_base	*base;
	struct rurl		 url;
	char			*name, *consumer;
	char			*lanes[QUEUE_NLANES];
	unsigned		 claim_idle_ms, answer_ttl_s;
	size_t			 max_item_bytes;
	queue_item_cb		 itemcb;
	void			*arg;
	struct qconn		 rd, wr;
	unsigned		 want;
	int			 reading;	/* a read is outstanding */
	int			 ctl_only;	/* ... blocking on ctl lanes only */
	long long		 rd_client_id;	/* for CLIENT UNBLOCK */
	int			 stopped;	/* no more work items */
	int			 retired;	/* worker key deleted */
	int			 freeing;
	struct qreqs		 out;		/* answers and claims */
	unsigned		 nout;
	struct spool		*spool;		/* NULL: no state dir */
	struct syncer		*resolver;	/* DNS; NULL: none needed */
	unsigned		 err_backoff_ms;	/* Redis said no */
	int			 err_wait;	/* ... so nothing goes out */
	time_t			 err_logged;
	unsigned		 err_quiet;	/* errors not logged since */
	unsigned		 read_backoff_ms;	/* reads refused */
	int			 let_go;	/* claims refused: read our own
						   pending entries again */
	int			 fetch_own;	/* ... this fetch does */
	int			 leased;	/* our lease key was set */
	int			 was_up;	/* the write side connected once */
	queue_event_cb		 eventcb;
	void			*eventarg;
	time_t			 read_logged;
	struct qhelds		 held;
	LIST_HEAD(, qtrack)	 tracked;
	struct event		*ev_beat;
	char			*status;	/* for execq:workers; NULL */
	unsigned long long	 reconnects;
	struct event		*ev_read_retry;
	struct event		*ev_flush;
	struct event		*ev_unblock;
};

static void	queue_connect(struct qconn *);
static void	queue_read_next(struct queue *);
static void	queue_flush(struct queue *);
static void	queue_push(struct queue *, struct qreq *);
static void	queue_announce(struct queue *);
static void	queue_write_status(struct queue *);
static void	queue_block_cb(redisAsyncContext *, void *, void *);
static void	queue_unblock_cb(redisAsyncContext *, void *, void *);

/*
 * Writes what is buffered on c in this loop turn instead of after the next
 * epoll round: one round trip less per command on the hot path. It runs
 * as an event of its own, never inside a hiredis callback, where a write
 * error would free the context under hiredis' feet.
 */
static void
queue_kick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct qconn	*c = arg;

	(void)fd;
	(void)what;
	if (c->up && c->ac != NULL)
		redisAsyncHandleWrite(c->ac);	/* may disconnect: c->ac NULL */
}

/* Schedules queue_kick_cb for this loop turn. */
static void
queue_kick(struct qconn *c)
{
	if (c->up && c->ac != NULL)
		event_active(c->ev_kick, EV_TIMEOUT, 1);
}

/* A request from a printf-free argument list; strings are copied. */
static struct qreq *
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

/* Marks a request as not for the spool. */
static struct qreq *
queue_nospool(struct qreq *r)
{
	r->nospool = 1;
	return (r);
}

/* Frees a request. */
static void
queue_req_free(struct qreq *r)
{
	int	i;

	for (i = 0; i < r->argc; i++)
		free(r->argv[i]);
	free(r->argv);
	free(r->argvlen);
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
static unsigned
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

unsigned
queue_spool_all(struct queue *q)
{
	return (queue_spool_out(q));
}

/* Schedules a reconnect with exponential backoff. */
static void
queue_retry_later(struct qconn *c)
{
	struct timeval	tv;

	if (c->q->freeing)
		return;
	c->backoff_ms = c->backoff_ms == 0 ? QUEUE_BACKOFF_MIN_MS :
	    c->backoff_ms * 2;
	if (c->backoff_ms > QUEUE_BACKOFF_MAX_MS)
		c->backoff_ms = QUEUE_BACKOFF_MAX_MS;
	tv.tv_sec = c->backoff_ms / 1000;
	tv.tv_usec = (c->backoff_ms % 1000) * 1000;
	evtimer_add(c->ev_retry, &tv);
}

/* The reconnect timer. */
static void
queue_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	queue_connect(arg);
}

/* Any reply on a connection's setup commands: errors are logged. */
static void
queue_setup_cb(redisAsyncContext *ac, void *r, void *arg)
{
	redisReply	*reply = r;
	struct qconn	*c = arg;

	(void)ac;
	if (reply != NULL && reply->type == REDIS_REPLY_ERROR &&
	    strncmp(reply->str, "BUSYGROUP", 9) != 0) {
		log_warn("queue: redis %s: %s", c->name, reply->str);
		if (strstr(reply->str, "AUTH") != NULL ||
		    strstr(reply->str, "WRONGPASS") != NULL ||
		    strstr(reply->str, "NOPERM") != NULL)
			redisAsyncDisconnect(c->ac);
	}
}

/* AUTH and SELECT, first on every new connection. */
static void
queue_hello(struct qconn *c)
{
	struct queue	*q = c->q;
	char		 db[16];

	if (q->url.password != NULL && q->url.user != NULL)
		redisAsyncCommand(c->ac, queue_setup_cb, c, "AUTH %s %s",
		    q->url.user, q->url.password);
	else if (q->url.password != NULL)
		redisAsyncCommand(c->ac, queue_setup_cb, c, "AUTH %s",
		    q->url.password);
	if (q->url.db != 0) {
		snprintf(db, sizeof db, "%d", q->url.db);
		redisAsyncCommand(c->ac, queue_setup_cb, c, "SELECT %s", db);
	}
}

/* Creates the consumer group on every lane (BUSYGROUP is fine). */
static void
queue_create_groups(struct queue *q)
{
	int	i;

	for (i = 0; i < QUEUE_NLANES; i++)
		redisAsyncCommand(q->rd.ac, queue_setup_cb, &q->rd,
		    "XGROUP CREATE %s " QUEUE_GROUP " 0 MKSTREAM", q->lanes[i]);
}

/* The read connection's id, to unblock it from the other one. */
static void
queue_client_id_cb(redisAsyncContext *ac, void *r, void *arg)
{
	redisReply	*reply = r;
	struct queue	*q = arg;

	(void)ac;
	if (reply != NULL && reply->type == REDIS_REPLY_INTEGER)
		q->rd_client_id = reply->integer;
	else if (reply != NULL && reply->type == REDIS_REPLY_ERROR)
		log_warn("queue: CLIENT ID: %s (new work waits for the read "
		    "timeout when all slots were busy)", reply->str);
}

/* Connected (or not). */
static void
queue_connect_cb(const redisAsyncContext *ac, int status)
{
	struct qconn	*c = ac->data;

	if (status != REDIS_OK) {
		log_warn("queue: redis %s: connect: %s", c->name, ac->errstr);
		c->ac = NULL;		/* hiredis frees it */
		queue_retry_later(c);
		return;
	}
	log_info("queue: redis %s connection up", c->name);
	c->up = 1;
	if (c->ever_up)
		c->q->reconnects++;
	c->ever_up = 1;
	c->backoff_ms = 0;
	if (c == &c->q->rd) {
		redisAsyncCommand(c->ac, queue_client_id_cb, c->q, "CLIENT ID");
		queue_create_groups(c->q);
		queue_read_next(c->q);
	} else {
		/* Announce ourselves at once: forwarding checks for it. */
		queue_announce(c->q);
		if (c->q->was_up && c->q->eventcb != NULL)
			c->q->eventcb(QUEUE_EV_RECONNECTED, c->q->eventarg);
		c->q->was_up = 1;
		queue_flush(c->q);
	}
}

/* Lost: everything pending got a NULL reply already; reconnect. */
static void
queue_disconnect_cb(const redisAsyncContext *ac, int status)
{
	struct qconn	*c = ac->data;

	c->ac = NULL;
	c->up = 0;
	if (c == &c->q->rd)
		c->q->reading = 0;
	if (c->q->freeing)
		return;
	log_warn("queue: redis %s connection lost%s%s", c->name,
	    status == REDIS_OK ? "" : ": ", status == REDIS_OK ? "" : ac->errstr);
	if (c == &c->q->wr)
		queue_spool_out(c->q);
	queue_retry_later(c);
}

/* On the resolver's thread: the host's first address, as text. */
static int
queue_resolve_work(void *arg)
{
	struct qconn	*c = arg;
	struct addrinfo	 hints, *res;
	int		 rc;

	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if ((rc = getaddrinfo(c->q->url.host, NULL, &hints, &res)) != 0) {
		c->gai_error = gai_strerror(rc);
		return (EHOSTUNREACH);
	}
	if (res->ai_family == AF_INET6)
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)
		    (void *)res->ai_addr)->sin6_addr, c->addr, sizeof c->addr);
	else
		inet_ntop(AF_INET, &((struct sockaddr_in *)
		    (void *)res->ai_addr)->sin_addr, c->addr, sizeof c->addr);
	freeaddrinfo(res);
	return (0);
}

/* Back on the loop with the address: connect to it. */
static void
queue_resolved_cb(int err, void *arg)
{
	struct qconn	*c = arg;

	c->resolving = 0;
	if (c->q->freeing)
		return;
	if (err != 0) {
		log_warn("queue: redis %s: cannot resolve %s: %s", c->name,
		    c->q->url.host, c->gai_error);
		queue_retry_later(c);
		return;
	}
	queue_connect(c);
}

/* 1 if host is an address already (no lookup). */
static int
queue_numeric(const char *host)
{
	unsigned char	buf[sizeof(struct in6_addr)];

	return (inet_pton(AF_INET, host, buf) == 1 ||
	    inet_pton(AF_INET6, host, buf) == 1);
}

/*
 * Starts connecting c; failures come back through the callbacks. A host
 * name is looked up first on the resolver's thread, on every attempt (a
 * failover may move it), so a slow DNS never stops the loop.
 */
static void
queue_connect(struct qconn *c)
{
	struct queue	*q = c->q;

	if (q->url.path == NULL && q->resolver != NULL && !c->resolving &&
	    c->addr[0] == '\0') {
		c->resolving = 1;
		syncer_call(q->resolver, queue_resolve_work, queue_resolved_cb,
		    c);
		return;
	}
	if (q->url.path != NULL)
		c->ac = redisAsyncConnectUnix(q->url.path);
	else
		c->ac = redisAsyncConnect(c->addr[0] != '\0' ? c->addr :
		    q->url.host, q->url.port);
	c->addr[0] = '\0';	/* looked up again next time */
	if (c->ac == NULL || c->ac->err) {
		log_warn("queue: redis %s: %s", c->name, c->ac != NULL ?
		    c->ac->errstr : "out of memory");
		if (c->ac != NULL)
			redisAsyncFree(c->ac);
		c->ac = NULL;
		queue_retry_later(c);
		return;
	}
	/* hiredis 0.14 does not set CLOEXEC: children must not inherit it. */
	fcntl(c->ac->c.fd, F_SETFD, FD_CLOEXEC);
	c->ac->data = c;
	redisLibeventAttach(c->ac, q->base);
	redisAsyncSetConnectCallback(c->ac, queue_connect_cb);
	redisAsyncSetDisconnectCallback(c->ac, queue_disconnect_cb);
	queue_hello(c);
}

/* The "item" field of an entry's field list, or NULL. */
static const redisReply *
queue_item_field(const redisReply *fields)
{
	size_t	i;

	if (fields == NULL || fields->type != REDIS_REPLY_ARRAY)
		return (NULL);
	for (i = 0; i + 1 < fields->elements; i += 2) {
		if (fields->element[i]->type == REDIS_REPLY_STRING &&
		    strcmp(fields->element[i]->str, "item") == 0 &&
		    fields->element[i + 1]->type == REDIS_REPLY_STRING)
			return (fields->element[i + 1]);
	}
	return (NULL);
}

/* 1 if the entry is one we are working on. */
static int
queue_is_tracked(struct queue *q, const char *stream, const char *id)
{
	struct qtrack	*t;

	LIST_FOREACH(t, &q->tracked, entry) {
		if (strcmp(t->entry_id, id) == 0 &&
		    strcmp(t->stream, stream) == 0)
			return (1);
	}
	return (0);
}

/* Lane order of a stream key, for sorting a blocking read's result. */
static int
queue_lane_index(struct queue *q, const char *stream)
{
	int	i;

	for (i = 0; i < QUEUE_NLANES; i++)
		if (strcmp(q->lanes[i], stream) == 0)
			return (i);
	return (QUEUE_NLANES);
}

/*
 * Hands one entry to the worker, or holds it when there is no room. size
 * is the item's size when only its head came (0: all of it); a body over
 * max_item_bytes that came whole (a blocking read) is cut to its head
 * here, so no more than that is kept.
 */
static void
queue_offer(struct queue *q, const char *stream, const char *id,
    const redisReply *fields, int redelivered, size_t size)
{
	const redisReply	*item = queue_item_field(fields);
	struct queue_entry	 e;
	struct qheld		*h;
	int			 ctl = queue_lane_index(q, stream) < QUEUE_NCTL;
	size_t			 len = item != NULL ? item->len : 0;

	if (size == 0 && len > q->max_item_bytes)
		size = len;
	if (size != 0 && len > QUEUE_HEAD_BYTES)
		len = QUEUE_HEAD_BYTES;
	if (q->want == 0 && !ctl) {
		h = xcalloc(1, sizeof *h);
		h->stream = xstrdup(stream);
		h->entry_id = xstrdup(id);
		h->has_body = item != NULL;
		h->body = item != NULL ? xstrndup(item->str, len) : NULL;
		h->len = len;
		h->size = size;
		h->redelivered = redelivered;
		TAILQ_INSERT_TAIL(&q->held, h, entry);
		queue_track(q, stream, id);	/* nobody takes it over */
		return;
	}
	if (!ctl)
		q->want--;
	e.stream = stream;
	e.entry_id = id;
	e.body = item != NULL ? item->str : NULL;
	e.len = len;
	e.size = size;
	e.redelivered = redelivered;
	e.control = ctl;
	q->itemcb(&e, q->arg);
}

/* Entries held back earlier go first, as room appears. */
static void
queue_offer_held(struct queue *q)
{
	struct qheld		*h;
	struct queue_entry	 e;

	while (q->want > 0 && !q->freeing &&
	    (h = TAILQ_FIRST(&q->held)) != NULL) {
		TAILQ_REMOVE(&q->held, h, entry);
		queue_untrack(q, h->stream, h->entry_id);
		q->want--;
		e.stream = h->stream;
		e.entry_id = h->entry_id;
		e.body = h->body;
		e.len = h->len;
		e.size = h->size;
		e.redelivered = h->redelivered;
		e.control = 0;
		q->itemcb(&e, q->arg);
		free(h->stream);
		free(h->entry_id);
		free(h->body);
		free(h);
	}
}

/* Retries a read that failed (NOGROUP after a Redis restart, ...). */
static void
queue_read_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	struct queue	*q = arg;

	(void)fd;
	(void)what;
	if (q->rd.up)
		queue_create_groups(q);
	queue_read_next(q);
}

/*
 * A read came back as an error (OOM, a missing group after a restart):
 * try again after a backoff that doubles while it goes on, saying so once
 * a second at most.
 */
static void
queue_read_failed(struct queue *q, const char *what, const redisReply *r)
{
	struct timeval	tv;
	time_t		now = time(NULL);

	q->read_backoff_ms = q->read_backoff_ms == 0 ? QUEUE_BACKOFF_MIN_MS :
	    q->read_backoff_ms * 2;
	if (q->read_backoff_ms > QUEUE_ERR_BACKOFF_MAX_MS)
		q->read_backoff_ms = QUEUE_ERR_BACKOFF_MAX_MS;
	if (now != q->read_logged) {
		log_warn("queue: %s: %s (retrying in %u ms)", what, r->str,
		    q->read_backoff_ms);
		q->read_logged = now;
	}
	tv.tv_sec = q->read_backoff_ms / 1000;
	tv.tv_usec = (q->read_backoff_ms % 1000) * 1000;
	evtimer_add(q->ev_read_retry, &tv);
}

/* The non-blocking fetch: entries {stream, id, fields} in lane order. */
static void
queue_fetch_cb(redisAsyncContext *ac, void *r, void *arg)
{
	redisReply	*reply = r, *e;
	struct queue	*q = arg;
	size_t		 i, n = 0;
	char		 count[16];

	(void)ac;
	q->reading = 0;
	if (reply == NULL || q->freeing)
		return;
	if (reply->type == REDIS_REPLY_ERROR) {
		queue_read_failed(q, "fetch", reply);
		return;
	}
	q->read_backoff_ms = 0;
	if (q->fetch_own)
		q->let_go = 0;
	for (i = 0; reply->type == REDIS_REPLY_ARRAY && i < reply->elements;
	    i++) {
		e = reply->element[i];
		if (e->type != REDIS_REPLY_ARRAY || e->elements != 4)
			continue;
		if (q->fetch_own && queue_is_tracked(q, e->element[0]->str,
		    e->element[1]->str))
			continue;	/* being worked on, or held */
		queue_offer(q, e->element[0]->str, e->element[1]->str,
		    e->element[2], 0, (size_t)e->element[3]->integer);
		n++;
	}
	if (n > 0 || !q->rd.up) {
		queue_read_next(q);
		return;
	}
	/*
	 * Nothing waiting: block until something arrives on a control lane,
	 * or on any lane when there is room (queue_want unblocks a
	 * control-only read as soon as room appears).
	 */
	q->reading = 1;
	q->ctl_only = q->want == 0;
	if (q->ctl_only)
		redisAsyncCommand(q->rd.ac, queue_block_cb, q, "XREADGROUP GROUP "
		    QUEUE_GROUP " %s COUNT " QUEUE_CTL_COUNT " BLOCK "
		    QUEUE_BLOCK_MS " STREAMS %s %s > >", q->consumer,
		    q->lanes[0], q->lanes[1]);
	else {
		snprintf(count, sizeof count, "%u", q->want);
		redisAsyncCommand(q->rd.ac, queue_block_cb, q, "XREADGROUP GROUP "
		    QUEUE_GROUP " %s COUNT %s BLOCK " QUEUE_BLOCK_MS " STREAMS "
		    "%s %s %s %s %s > > > > >", q->consumer, count, q->lanes[0],
		    q->lanes[1], q->lanes[2], q->lanes[3], q->lanes[4]);
	}
	queue_kick(&q->rd);
}

/* The blocking read: [[stream, [[id, fields], ...]], ...]. */
static void
queue_block_cb(redisAsyncContext *ac, void *r, void *arg)
{
	redisReply	*reply = r, *s, *e;
	struct queue	*q = arg;
	size_t		 i, j;
	int		 lane;

	(void)ac;
	q->reading = 0;
	q->ctl_only = 0;
	if (reply == NULL || q->freeing)
		return;
	if (reply->type == REDIS_REPLY_ERROR) {
		if (strncmp(reply->str, "UNBLOCKED", 9) != 0)
			queue_read_failed(q, "XREADGROUP", reply);
		else
			queue_read_next(q);
		return;
	}
	q->read_backoff_ms = 0;
	/* Several lanes may answer at once: control first, then high. */
	for (lane = 0; lane < QUEUE_NLANES; lane++) {
		for (i = 0; reply->type == REDIS_REPLY_ARRAY &&
		    i < reply->elements; i++) {
			s = reply->element[i];
			if (s->type != REDIS_REPLY_ARRAY || s->elements != 2 ||
			    queue_lane_index(q, s->element[0]->str) != lane)
				continue;
			for (j = 0; j < s->element[1]->elements; j++) {
				e = s->element[1]->element[j];
				if (e->type == REDIS_REPLY_ARRAY &&
				    e->elements == 2)
					queue_offer(q, s->element[0]->str,
					    e->element[0]->str, e->element[1],
					    0, 0);
			}
		}
	}
	queue_read_next(q);
}

/* Reads more if there is room and no read outstanding. */
static void
queue_read_next(struct queue *q)
{
	struct qtrack	*t;
	char		 count[16], max[32];
	unsigned	 n;

	queue_offer_held(q);
	if (q->reading || !q->rd.up || q->freeing)
		return;
	n = q->want;
	q->fetch_own = q->let_go && q->want > 0 && !q->stopped;
	if (q->fetch_own)	/* the tracked ones come back too */
		LIST_FOREACH(t, &q->tracked, entry)
			n++;
	snprintf(count, sizeof count, "%u", n);
	snprintf(max, sizeof max, "%zu", q->max_item_bytes);
	q->reading = 1;
	redisAsyncCommand(q->rd.ac, queue_fetch_cb, q, "EVAL %s 5 %s %s %s %s "
	    "%s " QUEUE_GROUP " %s %s %d %s %s", queue_fetch_lua, q->lanes[0],
	    q->lanes[1], q->lanes[2], q->lanes[3], q->lanes[4], q->consumer,
	    count, QUEUE_NCTL, q->fetch_own ? "0" : ">", max);
	queue_kick(&q->rd);
}

/*
 * Ends a read blocked on the control lanes only: there is room for work
 * now. The blocking command may not have reached Redis yet (it travels
 * on the other connection), so when nothing was unblocked, try again.
 */
static void
queue_unblock(struct queue *q)
{
	if (q->reading && q->ctl_only && q->want > 0 && q->rd_client_id > 0 &&
	    q->wr.up) {
		redisAsyncCommand(q->wr.ac, queue_unblock_cb, q, "CLIENT UNBLOCK "
		    "%lld ERROR", q->rd_client_id);
		queue_kick(&q->wr);
	}
}

/* CLIENT UNBLOCK's answer: 0 means the read was not blocked yet. */
static void
queue_unblock_cb(redisAsyncContext *ac, void *r, void *arg)
{
	redisReply	*reply = r;
	struct queue	*q = arg;
	struct timeval	 tv = { 0, 1000 };

	(void)ac;
	if (reply == NULL || q->freeing)
		return;
	if (reply->type == REDIS_REPLY_INTEGER && reply->integer == 0)
		evtimer_add(q->ev_unblock, &tv);
	else if (reply->type == REDIS_REPLY_ERROR)	/* an ACL, maybe */
		log_warn("queue: CLIENT UNBLOCK: %s (new work waits for the "
		    "read timeout)", reply->str);
}

/* The retry timer. */
static void
queue_unblock_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	queue_unblock(arg);
}

void
queue_want(struct queue *q, unsigned n)
{
	q->want = q->stopped ? 0 : n;
	queue_unblock(q);	/* a control-only read would not see work */
	queue_read_next(q);
}

void
queue_stop_reading(struct queue *q)
{
	q->stopped = 1;		/* control lanes are still read */
	q->want = 0;
}

void
queue_retire(struct queue *q)
{
	const char	*argv[2];
	char		*key;

	q->retired = 1;			/* no more heartbeats either */
	xasprintf(&key, "execq:worker:%s", q->consumer);
	argv[0] = "DEL";
	argv[1] = key;
	/* Never replayed: a later worker of this name may be alive then. */
	queue_push(q, queue_nospool(queue_req_new(2, argv, NULL)));
	free(key);
}

/* Retry failed requests once the backoff is over. */
static void
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

/* The reply to an answer or a claim. */
static void
queue_req_cb(redisAsyncContext *ac, void *r, void *arg)
{
	redisReply	*reply = r;
	struct qreq	*req = arg;
	struct qconn	*c = ac->data;
	struct queue	*q = c->q;
	enum queue_claim what;
	const char	*answer = NULL;
	size_t		 len = 0;

	req->sent = 0;
	if (reply == NULL || q->freeing)
		return;		/* resent when the connection is back */
	if (reply->type == REDIS_REPLY_ERROR) {
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
	TAILQ_REMOVE(&q->out, req, entry);
	q->nout--;
	if (q->spool != NULL)
		spool_done(q->spool, &req->spool);
	if (req->replycb != NULL)
		req->replycb(reply->type == REDIS_REPLY_INTEGER ?
		    reply->integer : 0, req->arg);
	else if (req->claimcb != NULL) {
		what = QUEUE_CLAIM_RUNNING;
		if (reply->type == REDIS_REPLY_ARRAY && reply->elements >= 1)
			what = (enum queue_claim)reply->element[0]->integer;
		if (what == QUEUE_CLAIM_ANSWERED && reply->elements == 2) {
			answer = reply->element[1]->str;
			len = reply->element[1]->len;
		}
		req->claimcb(what, answer, len, req->arg);
	}
	queue_req_free(req);
}

/* Sends every request that is not on its way. */
static void
queue_flush(struct queue *q)
{
	struct qreq	*req;

	if (!q->wr.up || q->freeing || q->err_wait)
		return;
	TAILQ_FOREACH(req, &q->out, entry) {
		if (req->sent)
			continue;
		req->sent = 1;
		redisAsyncCommandArgv(q->wr.ac, queue_req_cb, req, req->argc,
		    (const char **)req->argv, req->argvlen);
	}
	queue_kick(&q->wr);
}

/* Queues a request and sends it if the connection is up. */
static void
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

void
queue_claim(struct queue *q, const char *item_id, const char *entry_id,
    int redelivered, int retries, queue_claim_cb cb, void *arg)
{
	char		*claim, *answer, ttl[16], nretries[16];
	const char	*argv[10];
	struct qreq	*req;

	xasprintf(&claim, "execq:claim:%s", item_id);
	xasprintf(&answer, "execq:answer:%s", item_id);
	snprintf(ttl, sizeof ttl, "%u", q->answer_ttl_s);
	snprintf(nretries, sizeof nretries, "%d", retries);
	argv[0] = "EVAL";
	argv[1] = queue_claim_lua;
	argv[2] = "2";
	argv[3] = claim;
	argv[4] = answer;
	argv[5] = q->consumer;
	argv[6] = ttl;
	argv[7] = redelivered ? "1" : "0";
	argv[8] = nretries;
	argv[9] = entry_id;
	req = queue_req_new(10, argv, NULL);
	req->claimcb = cb;
	req->arg = arg;
	free(claim);
	free(answer);
	queue_push(q, req);
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
	char		*reply, *answer, *claim, ttl[16], how[2];
	const char	*argv[14];
	size_t		 argvlen[14];
	int		 i;

	xasprintf(&reply, "q:%s:%s", reply_to, lane);
	if (store == QUEUE_STORE_CALLBACK)
		xasprintf(&answer, "execq:session:%s", item_id);
	else
		xasprintf(&answer, "execq:answer:%s",
		    item_id != NULL ? item_id : "");
	xasprintf(&claim, "execq:claim:%s", item_id != NULL ? item_id : "");
	snprintf(ttl, sizeof ttl, "%u", q->answer_ttl_s);
	how[0] = item_id == NULL ? '0' : "0123"[store];
	how[1] = '\0';
	argv[0] = "EVAL";
	argv[1] = queue_answer_lua;
	argv[2] = "4";
	argv[3] = reply;
	argv[4] = answer;
	argv[5] = stream != NULL ? stream : reply;
	argv[6] = claim;
	argv[7] = QUEUE_REPLY_MAXLEN;
	argv[8] = json;
	argv[9] = how;
	argv[10] = ttl;
	argv[11] = entry_id != NULL ? entry_id : "";
	argv[12] = QUEUE_GROUP;
	argv[13] = kept != NULL ? kept : "";
	for (i = 0; i < 14; i++)
		argvlen[i] = i == 8 ? len : strlen(argv[i]);
	argvlen[13] = kept != NULL ? kept_len : 0;
	queue_push(q, queue_req_new(14, argv, argvlen));
	free(reply);
	free(answer);
	free(claim);
}

void
queue_send(struct queue *q, int argc, const char **argv, const size_t *len,
    queue_reply_cb cb, void *arg)
{
	struct qreq	*req;

	req = queue_req_new(argc, argv, len);
	req->replycb = cb;
	req->arg = arg;
	queue_push(q, req);
}

void
queue_forward(struct queue *q, const char *session_id, const char *stream,
    const char *entry_id, const char *body, size_t len, queue_reply_cb cb,
    void *arg)
{
	char		*hash;
	const char	*argv[10];
	size_t		 argvlen[10];
	int		 i;

	xasprintf(&hash, "execq:session:%s", session_id);
	argv[0] = "EVAL";
	argv[1] = queue_forward_lua;
	argv[2] = "2";
	argv[3] = hash;
	argv[4] = stream;
	argv[5] = q->consumer;
	argv[6] = QUEUE_GROUP;
	argv[7] = entry_id;
	argv[8] = body;
	argv[9] = q->name;
	for (i = 0; i < 10; i++)
		argvlen[i] = i == 8 ? len : strlen(argv[i]);
	queue_send(q, 10, argv, argvlen, cb, arg);
	free(hash);
}

/* A one-shot read in flight. */
struct qread {
	struct queue	*q;
	queue_read_cb	 cb;
	void		*arg;
};

/* Entries of an XRANGE-shaped reply ([[id, [field, value...]]...]). */
static size_t
queue_read_entries(const redisReply *r, const char *stream,
    struct queue_entry *out, size_t max)
{
	const redisReply	*e, *item;
	size_t			 i, n = 0;

	for (i = 0; r->type == REDIS_REPLY_ARRAY && i < r->elements &&
	    n < max; i++) {
		e = r->element[i];
		if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 ||
		    e->element[0]->type != REDIS_REPLY_STRING)
			continue;
		memset(&out[n], 0, sizeof out[n]);
		out[n].stream = stream;
		out[n].entry_id = e->element[0]->str;
		if ((item = queue_item_field(e->element[1])) != NULL) {
			out[n].body = item->str;
			out[n].len = item->len;
		}
		n++;
	}
	return (n);
}

/* The reply to queue_read(): XREAD's [[stream, entries]] or entries. */
static void
queue_read_reply_cb(redisAsyncContext *ac, void *r, void *arg)
{
	redisReply		*reply = r;
	struct qread		*rd = arg;
	struct queue_entry	 entries[QUEUE_READ_MAX];
	const redisReply	*list = reply;
	const char		*stream = "";
	size_t			 n = 0;

	(void)ac;
	if (rd->q->freeing) {
		free(rd);
		return;
	}
	if (reply == NULL || reply->type == REDIS_REPLY_ERROR) {
		rd->cb(NULL, 0, -1, rd->arg);
		free(rd);
		return;
	}
	if (reply->type == REDIS_REPLY_ARRAY && reply->elements == 1 &&
	    reply->element[0]->type == REDIS_REPLY_ARRAY &&
	    reply->element[0]->elements == 2 &&
	    reply->element[0]->element[0]->type == REDIS_REPLY_STRING) {
		stream = reply->element[0]->element[0]->str;
		list = reply->element[0]->element[1];
	}
	if (list->type == REDIS_REPLY_ARRAY)
		n = queue_read_entries(list, stream, entries, QUEUE_READ_MAX);
	rd->cb(entries, n, 0, rd->arg);
	free(rd);
}

int
queue_read(struct queue *q, int argc, const char **argv, queue_read_cb cb,
    void *arg)
{
	struct qread	*rd;

	if (!q->wr.up || q->freeing)
		return (-1);
	rd = xcalloc(1, sizeof *rd);
	rd->q = q;
	rd->cb = cb;
	rd->arg = arg;
	if (redisAsyncCommandArgv(q->wr.ac, queue_read_reply_cb, rd, argc, argv,
	    NULL) != REDIS_OK) {
		free(rd);
		return (-1);
	}
	queue_kick(&q->wr);
	return (0);
}

const char *
queue_consumer(const struct queue *q)
{
	return (q->consumer);
}

void
queue_track(struct queue *q, const char *stream, const char *entry_id)
{
	struct qtrack	*t;

	t = xcalloc(1, sizeof *t);
	t->stream = xstrdup(stream);
	t->entry_id = xstrdup(entry_id);
	LIST_INSERT_HEAD(&q->tracked, t, entry);
}

void
queue_untrack(struct queue *q, const char *stream, const char *entry_id)
{
	struct qtrack	*t;

	LIST_FOREACH(t, &q->tracked, entry) {
		if (strcmp(t->entry_id, entry_id) == 0 &&
		    strcmp(t->stream, stream) == 0)
			break;
	}
	if (t == NULL)
		return;
	LIST_REMOVE(t, entry);
	free(t->stream);
	free(t->entry_id);
	free(t);
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

int
queue_connected(const struct queue *q)
{
	return (q->rd.up && q->wr.up);
}

/* XAUTOCLAIM: [cursor, [[id, fields|nil], ...], [deleted...]]. */
static void
queue_autoclaim_cb(redisAsyncContext *ac, void *r, void *arg)
{
	redisReply	*reply = r, *e;
	struct queue	*q = ((struct qconn *)ac->data)->q;
	const char	*stream = arg;
	size_t		 i;

	if (reply == NULL || q->freeing || q->stopped)
		return;
	if (reply->type == REDIS_REPLY_ERROR) {
		if (strncmp(reply->str, "NOGROUP", 7) != 0)
			log_warn("queue: XAUTOCLAIM %s: %s", stream, reply->str);
		return;
	}
	if (reply->type != REDIS_REPLY_ARRAY || reply->elements < 2)
		return;
	for (i = 0; i < reply->element[1]->elements; i++) {
		e = reply->element[1]->element[i];
		if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 ||
		    queue_is_tracked(q, stream, e->element[0]->str))
			continue;
		log_info("queue: taking over %s %s from a silent worker",
		    stream, e->element[0]->str);
		queue_offer(q, stream, e->element[0]->str, e->element[1], 1, 0);
	}
}

/*
 * The old value of our lease key: none after we had one means it lapsed
 * (Redis could not hear from us for claim_idle), and others may have
 * declared our sessions lost.
 */
static void
queue_lease_cb(redisAsyncContext *ac, void *r, void *arg)
{
	redisReply	*reply = r;
	struct queue	*q = arg;

	(void)ac;
	if (reply == NULL || q->freeing)
		return;
	if (reply->type == REDIS_REPLY_NIL && q->leased) {
		log_warn("queue: our lease in Redis had lapsed; checking our "
		    "sessions");
		if (q->eventcb != NULL)
			q->eventcb(QUEUE_EV_LEASE_LOST, q->eventarg);
	}
	if (reply->type != REDIS_REPLY_ERROR)
		q->leased = 1;
}

/* Renews our lease: execq:worker:<consumer>, for claim_idle. */
static void
queue_announce(struct queue *q)
{
	if (q->retired || !q->wr.up)
		return;
	redisAsyncCommand(q->wr.ac, queue_lease_cb, q, "SET execq:worker:%s %s "
	    "EX %u GET", q->consumer, q->name, q->claim_idle_ms / 1000 + 1);
	queue_write_status(q);
}

/* The status for execq:workers, now (a lost write waits for the beat). */
static void
queue_write_status(struct queue *q)
{
	struct timespec	ts;
	char		now[32];

	if (q->status == NULL || !q->wr.up)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	snprintf(now, sizeof now, "%lld", (long long)ts.tv_sec * 1000 +
	    ts.tv_nsec / 1000000);
	redisAsyncCommand(q->wr.ac, NULL, NULL, "EVAL %s 2 execq:workers "
	    "execq:workers:beat %s %s %s %s", queue_status_lua, q->consumer,
	    q->status, now, QUEUE_STATUS_KEEP_MS);
}

void
queue_set_status(struct queue *q, const char *json, int now)
{
	free(q->status);
	q->status = json != NULL ? xstrdup(json) : NULL;
	if (now)
		queue_write_status(q);
}

void
queue_stats(const struct queue *q, struct queue_stats *st)
{
	memset(st, 0, sizeof *st);
	st->connected = queue_connected(q);
	st->reconnects = q->reconnects;
	st->outbox = queue_backlog(q);
	st->spooled = q->spool != NULL ? spool_pending(q->spool) : 0;
}

void
queue_on_event(struct queue *q, queue_event_cb cb, void *arg)
{
	q->eventcb = cb;
	q->eventarg = arg;
}

/* Sessions found lost (logged) */
static void
queue_lost_cb(redisAsyncContext *ac, void *r, void *arg)
{
	redisReply	*reply = r;

	(void)ac;
	(void)arg;
	if (reply != NULL && reply->type == REDIS_REPLY_INTEGER &&
	    reply->integer > 0)
		log_warn("queue: %lld session(s) of a vanished worker ended "
		    "as lost", reply->integer);
	else if (reply != NULL && reply->type == REDIS_REPLY_ERROR)
		log_warn("queue: lost-session check: %s", reply->str);
}

/*
 * Every claim_idle/3: keep our entries fresh, announce ourselves, and take
 * over entries that a dead worker left idle for longer than claim_idle.
 */
static void
queue_beat_cb(evutil_socket_t fd, short what, void *arg)
{
	struct queue	*q = arg;
	struct qtrack	*t;
	char		 idle[16], count[16];
	int		 i;

	(void)fd;
	(void)what;
	if (!q->wr.up)
		return;
	LIST_FOREACH(t, &q->tracked, entry)
		redisAsyncCommand(q->wr.ac, NULL, NULL, "XCLAIM %s " QUEUE_GROUP
		    " %s 0 %s JUSTID", t->stream, q->consumer, t->entry_id);
	/* Before anyone's work is taken over: the worker kills what dead
	   workers on this host left running (and says how it is). */
	if (q->eventcb != NULL)
		q->eventcb(QUEUE_EV_BEAT, q->eventarg);
	queue_announce(q);
	redisAsyncCommand(q->wr.ac, queue_lost_cb, q, "EVAL %s 1 execq:running "
	    "%lld %u", queue_lost_lua, (long long)time(NULL) * 1000,
	    q->answer_ttl_s);
	if (q->want == 0 || q->stopped)
		return;
	snprintf(idle, sizeof idle, "%u", q->claim_idle_ms);
	snprintf(count, sizeof count, "%u", q->want);
	for (i = 0; i < QUEUE_NLANES; i++)
		redisAsyncCommand(q->wr.ac, queue_autoclaim_cb, q->lanes[i],
		    "XAUTOCLAIM %s " QUEUE_GROUP " %s %s 0-0 COUNT %s",
		    q->lanes[i], q->consumer, idle, count);
}

/* Sets up one connection's state. */
static void
queue_conn_init(struct queue *q, struct qconn *c, const char *name)
{
	c->q = q;
	c->name = name;
	c->ev_retry = evtimer_new(q->base, queue_retry_cb, c);
	c->ev_kick = event_new(q->base, -1, 0, queue_kick_cb, c);
	if (c->ev_retry == NULL || c->ev_kick == NULL)
		fatal("out of memory (libevent)");
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
static void
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

struct queue *
queue_create(struct event_base *base, const struct queue_config *cfg,
    queue_item_cb itemcb, void *arg)
{
	struct queue	*q;
	struct timeval	 tv;
	unsigned	 beat_ms;
	int		 i;

	q = xcalloc(1, sizeof *q);
	q->base = base;
	q->url = *cfg->url;
	q->url.host = cfg->url->host ? xstrdup(cfg->url->host) : NULL;
	q->url.path = cfg->url->path ? xstrdup(cfg->url->path) : NULL;
	q->url.user = cfg->url->user ? xstrdup(cfg->url->user) : NULL;
	q->url.password = cfg->url->password ?
	    xstrdup(cfg->url->password) : NULL;
	q->name = xstrdup(cfg->queue);
	q->consumer = xstrdup(cfg->consumer);
	for (i = 0; i < QUEUE_NLANES; i++) {
		if (strchr(queue_lanes[i], '%') != NULL)	/* the inbox */
			xasprintf(&q->lanes[i], "q:%s:ctl:%s", cfg->queue,
			    cfg->consumer);
		else
			xasprintf(&q->lanes[i], "q:%s:%s", cfg->queue,
			    queue_lanes[i]);
	}
	q->claim_idle_ms = cfg->claim_idle_ms;
	q->answer_ttl_s = cfg->answer_ttl_s;
	q->max_item_bytes = cfg->max_item_bytes != 0 ? cfg->max_item_bytes :
	    SIZE_MAX;
	q->itemcb = itemcb;
	q->arg = arg;
	TAILQ_INIT(&q->out);
	TAILQ_INIT(&q->held);
	LIST_INIT(&q->tracked);
	queue_conn_init(q, &q->rd, "read");
	queue_conn_init(q, &q->wr, "write");
	q->ev_read_retry = evtimer_new(base, queue_read_retry_cb, q);
	q->ev_flush = evtimer_new(base, queue_flush_retry_cb, q);
	q->ev_unblock = evtimer_new(base, queue_unblock_retry_cb, q);
	q->ev_beat = event_new(base, -1, EV_PERSIST, queue_beat_cb, q);
	if (q->ev_read_retry == NULL || q->ev_flush == NULL ||
	    q->ev_unblock == NULL || q->ev_beat == NULL)
		fatal("out of memory (libevent)");
	beat_ms = q->claim_idle_ms / 3 < 1000 ? 1000 : q->claim_idle_ms / 3;
	tv.tv_sec = beat_ms / 1000;
	tv.tv_usec = (beat_ms % 1000) * 1000;
	event_add(q->ev_beat, &tv);
	if (cfg->state_dir != NULL)
		queue_spool_open(q, cfg);
	if (q->url.host != NULL && !queue_numeric(q->url.host) &&
	    (q->resolver = syncer_create(base)) == NULL)
		log_warn("queue: no resolver thread (%s): %s is looked up on "
		    "the loop", strerror(errno), q->url.host);
	queue_connect(&q->rd);
	queue_connect(&q->wr);
	return (q);
}

/* Closes a connection; its pending callbacks see NULL replies. */
static void
queue_conn_release(struct qconn *c)
{
	if (c->ac != NULL)
		redisAsyncFree(c->ac);
	c->ac = NULL;
	if (c->ev_retry != NULL)
		event_free(c->ev_retry);
	c->ev_retry = NULL;
	if (c->ev_kick != NULL)
		event_free(c->ev_kick);
	c->ev_kick = NULL;
}

void
queue_free(struct queue *q)
{
	struct qreq	*req;
	struct qheld	*h;
	struct qtrack	*t;
	int		 i;

	if (q == NULL)
		return;
	q->freeing = 1;
	syncer_free(q->resolver);	/* a lookup under way ends first */
	queue_conn_release(&q->rd);
	queue_conn_release(&q->wr);
	spool_close(q->spool);	/* what is not done stays on disk */
	while ((req = TAILQ_FIRST(&q->out)) != NULL) {
		TAILQ_REMOVE(&q->out, req, entry);
		queue_req_free(req);
	}
	while ((h = TAILQ_FIRST(&q->held)) != NULL) {
		TAILQ_REMOVE(&q->held, h, entry);
		free(h->stream);
		free(h->entry_id);
		free(h->body);
		free(h);
	}
	while ((t = LIST_FIRST(&q->tracked)) != NULL) {
		LIST_REMOVE(t, entry);
		free(t->stream);
		free(t->entry_id);
		free(t);
	}
	event_free(q->ev_read_retry);
	event_free(q->ev_flush);
	event_free(q->ev_unblock);
	event_free(q->ev_beat);
	free(q->status);
	for (i = 0; i < QUEUE_NLANES; i++)
		free(q->lanes[i]);
	free(q->url.host);
	free(q->url.path);
	free(q->url.user);
	free(q->url.password);
	free(q->name);
	free(q->consumer);
	free(q);
}
