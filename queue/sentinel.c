/*
 * Redis Sentinel, from the worker's side: asking the sentinels of a
 * redis-sentinel:// URL, one after the other, where the primary is
 * (SENTINEL GET-MASTER-ADDR-BY-NAME), and listening on one of them for
 * +switch-master, the sentinels' word that a failover moved it. The
 * bottom of the queue module beside conn.c, which alone uses it: the
 * answers go back through the callbacks it gives, from an event of
 * their own (never on a connection callback's stack), and nothing here
 * knows a connection of the queue.
 *
 * Each sentinel is reached on a connection of queue/rconn.c, plain TCP
 * (redis-sentinel:// has no TLS form: the sentinels are asked in the
 * clear; the data nodes they name are reached as the URL says).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <hiredis/hiredis.h>

#include "logs/log.h"
#include "logs/xmalloc.h"
#include "queue/rconn.h"
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
	struct rconn		*rc;		/* the sentinel asked now */
	int			 replied;	/* ... it answered */
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
	struct rconn		*rc;
	int			 i;		/* the sentinel listened to */
	int			 subscribed;
	unsigned		 backoff_ms;
	struct event		*ev_retry;
	struct event		*ev_switch;	/* delivers host:port */
	char			 host[SENTINEL_HOST_MAX];
	int			 port;
};

static void	sentinel_ask_start(struct sentinel_ask *);

/* A new connection to sentinel i, AUTH queued; NULL (why). */
static struct rconn *
sentinel_connect(struct event_base *base, const struct rurl *url, int i,
    rconn_state_cb statecb, void *data, char *why, size_t whylen)
{
	struct rconn	*rc;

	rc = rconn_connect_host(base, url->sentinels[i].host,
	    url->sentinels[i].port, NULL, NULL, statecb, data);
	if (rc == NULL) {
		snprintf(why, whylen, "%s:%d: out of memory",
		    url->sentinels[i].host, url->sentinels[i].port);
		return (NULL);
	}
	if (url->sentinel_password != NULL && url->sentinel_user != NULL)
		rconn_command(rc, NULL, NULL, "AUTH %s %s",
		    url->sentinel_user, url->sentinel_password);
	else if (url->sentinel_password != NULL)
		rconn_command(rc, NULL, NULL, "AUTH %s",
		    url->sentinel_password);
	return (rc);
}

/* Delivers the result from ev, off every connection's stack. */
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
sentinel_ask_reply_cb(struct rconn *rc, redisReply *reply, void *arg)
{
	struct sentinel_ask	*a = arg;

	if (a->rc != rc || reply == NULL)
		return;		/* dropped: the deadline moved on */
	a->replied = 1;
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
	rconn_disconnect(rc, "asked");	/* then sentinel_ask_state_cb */
}

/*
 * The sentinel's connection ended (or never came up): the answer, or
 * the next one's turn.
 */
static void
sentinel_ask_state_cb(struct rconn *rc, int up, void *arg)
{
	struct sentinel_ask	*a = arg;

	if (up || a->rc != rc)
		return;
	if (!a->replied)
		snprintf(a->why, sizeof a->why, "%s:%d: %s",
		    a->url->sentinels[a->i].host, a->url->sentinels[a->i].port,
		    rconn_errstr(rc));
	a->rc = NULL;
	rconn_free(rc);		/* the memory goes when its frame ends */
	evtimer_del(a->ev);
	if (a->port > 0)
		sentinel_ask_finish(a);
	else
		sentinel_ask_next(a);
}

/* Asks sentinel a->i, with a deadline. */
static void
sentinel_ask_start(struct sentinel_ask *a)
{
	struct timeval	tv = { SENTINEL_ASK_MS / 1000,
			    (SENTINEL_ASK_MS % 1000) * 1000 };

	a->replied = 0;
	a->rc = sentinel_connect(a->base, a->url, a->i, sentinel_ask_state_cb,
	    a, a->why, sizeof a->why);
	if (a->rc == NULL) {
		sentinel_ask_next(a);
		return;
	}
	rconn_command(a->rc, sentinel_ask_reply_cb, a,
	    "SENTINEL GET-MASTER-ADDR-BY-NAME %s", a->url->master);
	evtimer_add(a->ev, &tv);
}

/* The deadline of one sentinel, or the result's delivery. */
static void
sentinel_ask_ev_cb(evutil_socket_t fd, short what, void *arg)
{
	struct sentinel_ask	*a = arg;
	struct rconn		*rc;

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
	rc = a->rc;
	a->rc = NULL;		/* its callbacks see a stranger */
	rconn_free(rc);
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
	struct rconn	*rc;

	if (a == NULL)
		return;
	rc = a->rc;
	a->rc = NULL;
	rconn_free(rc);
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
sentinel_watch_msg_cb(struct rconn *rc, redisReply *reply, void *arg)
{
	redisReply		*m;
	struct sentinel_watch	*w = arg;
	char			 name[SENTINEL_HOST_MAX], host[SENTINEL_HOST_MAX];
	int			 port;
	struct timeval		 tv = { 0, 0 };

	if (w->rc != rc || reply == NULL)
		return;
	if (reply->type == REDIS_REPLY_ERROR) {
		log_warn("queue: sentinel %s:%d: SUBSCRIBE: %s",
		    w->url->sentinels[w->i].host, w->url->sentinels[w->i].port,
		    reply->str);
		rconn_disconnect(rc, "SUBSCRIBE refused");
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

/*
 * The subscription's connection ended (or never came up): another
 * sentinel, later.
 */
static void
sentinel_watch_state_cb(struct rconn *rc, int up, void *arg)
{
	struct sentinel_watch	*w = arg;

	if (up || w->rc != rc)
		return;
	w->rc = NULL;
	if (w->subscribed)
		log_warn("queue: sentinel %s:%d: subscription lost%s%s",
		    w->url->sentinels[w->i].host, w->url->sentinels[w->i].port,
		    rconn_errstr(rc)[0] != '\0' ? ": " : "",
		    rconn_errstr(rc));
	rconn_free(rc);		/* the memory goes when its frame ends */
	w->subscribed = 0;
	sentinel_watch_later(w);
}

/* Subscribes on sentinel w->i. */
static void
sentinel_watch_start(struct sentinel_watch *w)
{
	char	why[160];

	if ((w->rc = sentinel_connect(w->base, w->url, w->i,
	    sentinel_watch_state_cb, w, why, sizeof why)) == NULL) {
		sentinel_watch_later(w);
		return;
	}
	rconn_subscribe(w->rc, sentinel_watch_msg_cb, w,
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
	struct rconn	*rc;

	if (w == NULL)
		return;
	rc = w->rc;
	w->rc = NULL;
	rconn_free(rc);
	event_free(w->ev_retry);
	event_free(w->ev_switch);
	free(w);
}
