/*
 * Redis Sentinel, from the worker's side: asking the sentinels of a
 * redis-sentinel:// URL, one after the other, where the primary is
 * (SENTINEL GET-MASTER-ADDR-BY-NAME), and listening on one of them for
 * +switch-master, the sentinels' word that a failover moved it. The
 * bottom of the queue module beside conn.c, which alone uses it: the
 * answers go back through the callbacks it gives, from an event of
 * their own (never on a hiredis callback's stack), and nothing here
 * knows a connection of the queue.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <hiredis/adapters/libevent.h>

#include <fcntl.h>

#include "logs/log.h"
#include "logs/xmalloc.h"
#include "queue/rurl.h"
#include "queue/sentinel.h"

#define SENTINEL_ASK_MS		1000	/* one sentinel's time to answer */
#define SENTINEL_RETRY_MIN_MS	100	/* the subscription, again */
#define SENTINEL_RETRY_MAX_MS	2000
#define SENTINEL_HOST_MAX	256

/* One question to the sentinels, asked of each in turn. */
struct sentinel_ask {
	const struct rurl	*url;		/* borrowed: the queue's */
	sentinel_found_cb	 cb;
	void			*arg;
	redisAsyncContext	*ac;		/* the sentinel asked now */
	int			 i;		/* its index */
	int			 left;		/* sentinels not asked yet */
	int			 done;		/* ev delivers the result */
	struct event		*ev;		/* its deadline, then the result */
	struct event_base	*base;
	char			 host[SENTINEL_HOST_MAX];
	int			 port;		/* 0: nobody knew */
	char			 why[160];	/* the last refusal */
};

/* The subscription to +switch-master. */
struct sentinel_watch {
	const struct rurl	*url;
	sentinel_switch_cb	 cb;
	void			*arg;
	struct event_base	*base;
	redisAsyncContext	*ac;
	int			 i;		/* the sentinel listened to */
	int			 subscribed;
	unsigned		 backoff_ms;
	struct event		*ev_retry;
	struct event		*ev_switch;	/* delivers host:port */
	char			 host[SENTINEL_HOST_MAX];
	int			 port;
};

static void	sentinel_ask_start(struct sentinel_ask *);

/* A new async context to sentinel i, attached, CLOEXEC; NULL (why). */
static redisAsyncContext *
sentinel_connect(struct event_base *base, const struct rurl *url, int i,
    void *data, char *why, size_t whylen)
{
	redisAsyncContext	*ac;

	ac = redisAsyncConnect(url->sentinels[i].host, url->sentinels[i].port);
	if (ac == NULL || ac->err) {
		snprintf(why, whylen, "%s:%d: %s", url->sentinels[i].host,
		    url->sentinels[i].port, ac != NULL ? ac->errstr :
		    "out of memory");
		if (ac != NULL)
			redisAsyncFree(ac);
		return (NULL);
	}
	fcntl(ac->c.fd, F_SETFD, FD_CLOEXEC);
	ac->data = data;
	redisLibeventAttach(ac, base);
	if (url->sentinel_password != NULL && url->sentinel_user != NULL)
		redisAsyncCommand(ac, NULL, NULL, "AUTH %s %s",
		    url->sentinel_user, url->sentinel_password);
	else if (url->sentinel_password != NULL)
		redisAsyncCommand(ac, NULL, NULL, "AUTH %s",
		    url->sentinel_password);
	return (ac);
}

/* Delivers the result from ev, off every hiredis stack. */
static void
sentinel_ask_finish(struct sentinel_ask *a)
{
	struct timeval	tv = { 0, 0 };

	a->done = 1;
	evtimer_add(a->ev, &tv);
}

/* The next sentinel, or the end: nobody knew. */
static void
sentinel_ask_next(struct sentinel_ask *a)
{
	if (--a->left <= 0) {
		a->port = 0;
		sentinel_ask_finish(a);
		return;
	}
	a->i = (a->i + 1) % a->url->nsentinels;
	sentinel_ask_start(a);
}

/* SENTINEL GET-MASTER-ADDR-BY-NAME's answer: [ip, port] or nil. */
static void
sentinel_ask_reply_cb(redisAsyncContext *ac, void *r, void *arg)
{
	redisReply		*reply = r;
	struct sentinel_ask	*a = arg;

	if (a->ac != ac || reply == NULL)
		return;		/* dropped: the deadline moved on */
	if (reply->type == REDIS_REPLY_ARRAY && reply->elements == 2 &&
	    reply->element[0]->type == REDIS_REPLY_STRING &&
	    reply->element[1]->type == REDIS_REPLY_STRING &&
	    reply->element[0]->len < sizeof a->host &&
	    (a->port = atoi(reply->element[1]->str)) > 0) {
		memcpy(a->host, reply->element[0]->str,
		    reply->element[0]->len + 1);
	} else {
		a->port = 0;
		snprintf(a->why, sizeof a->why, "%s:%d: %s",
		    a->url->sentinels[a->i].host, a->url->sentinels[a->i].port,
		    reply->type == REDIS_REPLY_ERROR ? reply->str :
		    "does not know the master");
	}
	redisAsyncDisconnect(ac);	/* then sentinel_ask_gone_cb */
}

/* The sentinel's connection ended: the answer, or the next one. */
static void
sentinel_ask_gone_cb(const redisAsyncContext *ac, int status)
{
	struct sentinel_ask	*a = ac->data;

	(void)status;
	if (a->ac != ac)
		return;
	a->ac = NULL;
	evtimer_del(a->ev);
	if (a->port > 0)
		sentinel_ask_finish(a);
	else
		sentinel_ask_next(a);
}

/* Connected, or not: not is the next sentinel's turn. */
static void
sentinel_ask_connect_cb(const redisAsyncContext *ac, int status)
{
	struct sentinel_ask	*a = ac->data;

	if (a->ac != ac || status == REDIS_OK)
		return;
	snprintf(a->why, sizeof a->why, "%s:%d: %s",
	    a->url->sentinels[a->i].host, a->url->sentinels[a->i].port,
	    ac->errstr);
	a->ac = NULL;		/* hiredis frees it */
	evtimer_del(a->ev);
	sentinel_ask_next(a);
}

/* Asks sentinel a->i, with a deadline. */
static void
sentinel_ask_start(struct sentinel_ask *a)
{
	struct timeval	tv = { SENTINEL_ASK_MS / 1000,
			    (SENTINEL_ASK_MS % 1000) * 1000 };

	a->ac = sentinel_connect(a->base, a->url, a->i, a, a->why,
	    sizeof a->why);
	if (a->ac == NULL) {
		sentinel_ask_next(a);
		return;
	}
	redisAsyncSetConnectCallback(a->ac, sentinel_ask_connect_cb);
	redisAsyncSetDisconnectCallback(a->ac, sentinel_ask_gone_cb);
	redisAsyncCommand(a->ac, sentinel_ask_reply_cb, a,
	    "SENTINEL GET-MASTER-ADDR-BY-NAME %s", a->url->master);
	evtimer_add(a->ev, &tv);
}

/* The deadline of one sentinel, or the result's delivery. */
static void
sentinel_ask_ev_cb(evutil_socket_t fd, short what, void *arg)
{
	struct sentinel_ask	*a = arg;
	redisAsyncContext	*ac;

	(void)fd;
	(void)what;
	if (a->done) {
		a->cb(a->port > 0 ? a->host : NULL, a->port,
		    a->port > 0 ? NULL : a->why, a->arg);
		sentinel_ask_free(a);
		return;
	}
	snprintf(a->why, sizeof a->why, "%s:%d: no answer within %d ms",
	    a->url->sentinels[a->i].host, a->url->sentinels[a->i].port,
	    SENTINEL_ASK_MS);
	ac = a->ac;
	a->ac = NULL;		/* its callbacks see a stranger */
	if (ac != NULL)
		redisAsyncFree(ac);
	sentinel_ask_next(a);
}

struct sentinel_ask *
sentinel_ask(struct event_base *base, const struct rurl *url, int first,
    sentinel_found_cb cb, void *arg)
{
	struct sentinel_ask	*a;

	a = xcalloc(1, sizeof *a);
	a->base = base;
	a->url = url;
	a->cb = cb;
	a->arg = arg;
	a->i = first % url->nsentinels;
	a->left = url->nsentinels;
	snprintf(a->why, sizeof a->why, "no sentinel");
	if ((a->ev = evtimer_new(base, sentinel_ask_ev_cb, a)) == NULL)
		fatal("out of memory (libevent)");
	sentinel_ask_start(a);
	return (a);
}

void
sentinel_ask_free(struct sentinel_ask *a)
{
	redisAsyncContext	*ac;

	if (a == NULL)
		return;
	ac = a->ac;
	a->ac = NULL;
	if (ac != NULL)
		redisAsyncFree(ac);
	event_free(a->ev);
	free(a);
}

static void	sentinel_watch_start(struct sentinel_watch *);

/* Tries the next sentinel after a backoff. */
static void
sentinel_watch_later(struct sentinel_watch *w)
{
	struct timeval	tv;

	w->backoff_ms = w->backoff_ms == 0 ? SENTINEL_RETRY_MIN_MS :
	    w->backoff_ms * 2;
	if (w->backoff_ms > SENTINEL_RETRY_MAX_MS)
		w->backoff_ms = SENTINEL_RETRY_MAX_MS;
	tv.tv_sec = w->backoff_ms / 1000;
	tv.tv_usec = (w->backoff_ms % 1000) * 1000;
	w->i = (w->i + 1) % w->url->nsentinels;
	evtimer_add(w->ev_retry, &tv);
}

/*
 * SUBSCRIBE's replies: the subscription, then each message,
 * "<master> <old ip> <old port> <new ip> <new port>".
 */
static void
sentinel_watch_msg_cb(redisAsyncContext *ac, void *r, void *arg)
{
	redisReply		*reply = r, *m;
	struct sentinel_watch	*w = arg;
	char			 name[SENTINEL_HOST_MAX], host[SENTINEL_HOST_MAX];
	int			 port;
	struct timeval		 tv = { 0, 0 };

	if (w->ac != ac || reply == NULL)
		return;
	if (reply->type == REDIS_REPLY_ERROR) {
		log_warn("queue: sentinel %s:%d: SUBSCRIBE: %s",
		    w->url->sentinels[w->i].host, w->url->sentinels[w->i].port,
		    reply->str);
		redisAsyncDisconnect(ac);
		return;
	}
	if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 3 ||
	    reply->element[0]->type != REDIS_REPLY_STRING)
		return;
	if (strcmp(reply->element[0]->str, "subscribe") == 0) {
		w->subscribed = 1;
		w->backoff_ms = 0;
		return;
	}
	m = reply->element[2];
	if (strcmp(reply->element[0]->str, "message") != 0 ||
	    m->type != REDIS_REPLY_STRING ||
	    sscanf(m->str, "%255s %*s %*s %255s %d", name, host, &port) != 3 ||
	    strcmp(name, w->url->master) != 0)
		return;
	log_info("queue: sentinel %s:%d: +switch-master %s", w->url->
	    sentinels[w->i].host, w->url->sentinels[w->i].port, m->str);
	memcpy(w->host, host, sizeof w->host);
	w->port = port;
	evtimer_add(w->ev_switch, &tv);
}

/* The subscription's connection ended: another sentinel, later. */
static void
sentinel_watch_gone_cb(const redisAsyncContext *ac, int status)
{
	struct sentinel_watch	*w = ac->data;

	if (w->ac != ac)
		return;
	w->ac = NULL;
	if (w->subscribed)
		log_warn("queue: sentinel %s:%d: subscription lost%s%s",
		    w->url->sentinels[w->i].host, w->url->sentinels[w->i].port,
		    status == REDIS_OK ? "" : ": ",
		    status == REDIS_OK ? "" : ac->errstr);
	w->subscribed = 0;
	sentinel_watch_later(w);
}

static void
sentinel_watch_connect_cb(const redisAsyncContext *ac, int status)
{
	struct sentinel_watch	*w = ac->data;

	if (w->ac != ac || status == REDIS_OK)
		return;
	w->ac = NULL;		/* hiredis frees it */
	sentinel_watch_later(w);
}

/* Subscribes on sentinel w->i. */
static void
sentinel_watch_start(struct sentinel_watch *w)
{
	char	why[160];

	if ((w->ac = sentinel_connect(w->base, w->url, w->i, w, why,
	    sizeof why)) == NULL) {
		sentinel_watch_later(w);
		return;
	}
	redisAsyncSetConnectCallback(w->ac, sentinel_watch_connect_cb);
	redisAsyncSetDisconnectCallback(w->ac, sentinel_watch_gone_cb);
	redisAsyncCommand(w->ac, sentinel_watch_msg_cb, w,
	    "SUBSCRIBE +switch-master");
}

static void
sentinel_watch_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	sentinel_watch_start(arg);
}

/* Hands a switch over, off the subscription's stack. */
static void
sentinel_watch_switch_cb(evutil_socket_t fd, short what, void *arg)
{
	struct sentinel_watch	*w = arg;

	(void)fd;
	(void)what;
	w->cb(w->host, w->port, w->arg);
}

struct sentinel_watch *
sentinel_watch(struct event_base *base, const struct rurl *url,
    sentinel_switch_cb cb, void *arg)
{
	struct sentinel_watch	*w;

	w = xcalloc(1, sizeof *w);
	w->base = base;
	w->url = url;
	w->cb = cb;
	w->arg = arg;
	w->ev_retry = evtimer_new(base, sentinel_watch_retry_cb, w);
	w->ev_switch = evtimer_new(base, sentinel_watch_switch_cb, w);
	if (w->ev_retry == NULL || w->ev_switch == NULL)
		fatal("out of memory (libevent)");
	sentinel_watch_start(w);
	return (w);
}

void
sentinel_watch_free(struct sentinel_watch *w)
{
	redisAsyncContext	*ac;

	if (w == NULL)
		return;
	ac = w->ac;
	w->ac = NULL;
	if (ac != NULL)
		redisAsyncFree(ac);
	event_free(w->ev_retry);
	event_free(w->ev_switch);
	free(w);
}
