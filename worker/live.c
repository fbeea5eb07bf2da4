/*
 * The live output stream: output gathered here, its entries written by
 * queue/store.c (queue_live_add, queue_live_end). Entries go out through
 * the queue like answers (in order on the one write connection), so a
 * reader that sees an item's answer has been able to see every entry
 * before it.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "logs/log.h"
#include "logs/xmalloc.h"
#include "queue/queue.h"
#include "worker/live.h"

struct live {
	struct queue		*q;
	char			*id;		/* of execq:out:<id> */
	int			 per_fd;
	int			 fd;		/* of what is pending */
	char			*pending;	/* not sent yet */
	size_t			 npending;
	unsigned long long	 pending_off;	/* where it starts */
	unsigned long long	 skipped;	/* dropped since the last */
	unsigned long long	 off[3];	/* bytes seen: [0] merged,
						   [1] stdout, [2] stderr */
	struct event		*ev_flush;
};

static void
live_flush_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	live_flush(arg);
}

struct live *
live_create(struct event_base *base, struct queue *q, const char *id,
    int per_fd)
{
	struct live	*l;

	l = xcalloc(1, sizeof *l);
	l->q = q;
	l->per_fd = per_fd;
	l->id = xstrdup(id);
	l->pending = xmalloc(LIVE_FLUSH_BYTES);
	if ((l->ev_flush = evtimer_new(base, live_flush_cb, l)) == NULL)
		fatal("out of memory (libevent)");
	return (l);
}

void
live_free(struct live *l)
{
	if (l == NULL)
		return;
	event_free(l->ev_flush);
	free(l->pending);
	free(l->id);
	free(l);
}

void
live_flush(struct live *l)
{
	if (l->npending == 0 && l->skipped == 0)
		return;
	evtimer_del(l->ev_flush);
	if (queue_backlog(l->q) >= LIVE_BACKLOG) {
		l->skipped += l->npending;
		l->npending = 0;
		return;
	}
	queue_live_add(l->q, l->id, l->per_fd ? l->fd : -1, l->pending_off,
	    l->skipped, l->pending, l->npending);
	l->skipped = 0;
	l->npending = 0;
}

void
live_output(struct live *l, int fd, const char *buf, size_t len)
{
	struct timeval	 tv = { 0, LIVE_FLUSH_MS * 1000 };
	size_t		 n;

	fd = l->per_fd && (fd == 1 || fd == 2) ? fd : 0;
	if (l->npending > 0 && fd != l->fd)
		live_flush(l);		/* an entry holds one stream */
	if (l->npending == 0) {
		l->fd = fd;
		l->pending_off = l->off[fd];
	}
	l->off[fd] += len;
	n = LIVE_FLUSH_BYTES - l->npending;
	if (n > len)
		n = len;
	memcpy(l->pending + l->npending, buf, n);
	l->npending += n;
	l->skipped += len - n;
	if (!evtimer_pending(l->ev_flush, NULL))
		evtimer_add(l->ev_flush, &tv);
}

void
live_end(struct live *l, const char *end, unsigned ttl_s)
{
	live_flush(l);
	queue_live_end(l->q, l->id, end, ttl_s);
}
