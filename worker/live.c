/*
 * The live output stream. Entries go out through the queue like answers
 * (queue_send, in order on the one write connection), so a reader that
 * sees an item's answer has been able to see every entry before it.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "logs/log.h"
#include "logs/xmalloc.h"
#include "queue/keyspace.h"
#include "queue/queue.h"
#include "worker/live.h"

struct live {
	struct queue		*q;
	char			*key;		/* execq:out:<id> */
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
	xasprintf(&l->key, KS_OUT "%s", id);
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
	free(l->key);
	free(l);
}

void
live_flush(struct live *l)
{
	char		 skipped[32], offset[32], fd[4];
	const char	*argv[14];
	size_t		 len[14];
	int		 i, n = 0;

	if (l->npending == 0 && l->skipped == 0)
		return;
	evtimer_del(l->ev_flush);
	if (queue_backlog(l->q) >= LIVE_BACKLOG) {
		l->skipped += l->npending;
		l->npending = 0;
		return;
	}
	snprintf(skipped, sizeof skipped, "%llu", l->skipped);
	snprintf(offset, sizeof offset, "%llu", l->pending_off);
	snprintf(fd, sizeof fd, "%d", l->fd);
	argv[n++] = "XADD";
	argv[n++] = l->key;
	argv[n++] = "MAXLEN";
	argv[n++] = "~";
	argv[n++] = LIVE_MAXLEN;
	argv[n++] = "*";
	if (l->per_fd) {
		argv[n++] = "fd";
		argv[n++] = fd;
	}
	argv[n++] = "offset";
	argv[n++] = offset;
	if (l->skipped > 0) {
		argv[n++] = "skipped";
		argv[n++] = skipped;
	}
	argv[n++] = "data";
	argv[n++] = l->pending;
	for (i = 0; i < n; i++)
		len[i] = i == n - 1 ? l->npending : strlen(argv[i]);
	queue_send(l->q, n, argv, len, NULL, NULL);
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
	const char	*argv[5];
	char		 ttl[16];

	live_flush(l);
	argv[0] = "XADD";
	argv[1] = l->key;
	argv[2] = "*";
	argv[3] = "end";
	argv[4] = end;
	queue_send(l->q, 5, argv, NULL, NULL, NULL);
	snprintf(ttl, sizeof ttl, "%u", ttl_s);
	argv[0] = "EXPIRE";
	argv[2] = ttl;
	queue_send(l->q, 3, argv, NULL, NULL, NULL);
}
