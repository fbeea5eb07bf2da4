#ifndef EXECQ_LIVE_H
#define EXECQ_LIVE_H

/*
 * The live output stream of a command, execq:out:<id>: what it writes,
 * coalesced into at most one entry per LIVE_FLUSH_MS with at most
 * LIVE_FLUSH_BYTES of "data", and "offset", where that data starts. For
 * a session the offset is in its log (stdout and stderr merged); for a
 * foreground item ("args.stream") each entry also has "fd" (1 or 2) and
 * the offset is in that stream. Output faster than that is not all in the
 * stream: "skipped" counts the bytes left out since the previous entry
 * (the log has everything). The last entry holds "end". Capped at
 * QUEUE_LIVE_MAXLEN entries (queue/queue.h); it expires ttl_s after the
 * end.
 */

#include <stddef.h>

struct event_base;
struct queue;
struct live;

#define LIVE_FLUSH_BYTES	65536
#define LIVE_FLUSH_MS		50
#define LIVE_BACKLOG		1000	/* Redis behind: drop, not hoard */

/* The stream of command id; per_fd: foreground (entries carry "fd"). */
struct live	*live_create(struct event_base *, struct queue *,
		    const char *id, int per_fd);
/* Frees it; what was not flushed is dropped. NULL ok. */
void		 live_free(struct live *);
/* New output of fd (1 or 2; ignored unless per_fd). */
void		 live_output(struct live *, int fd, const char *buf,
		    size_t len);
/* Sends what is gathered now. */
void		 live_flush(struct live *);
/* Flushes, adds the last entry {"end": end} and the stream's TTL. */
void		 live_end(struct live *, const char *end, unsigned ttl_s);

#endif
