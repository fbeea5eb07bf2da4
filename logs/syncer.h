#ifndef EXECQ_SYNCER_H
#define EXECQ_SYNCER_H

/*
 * fsync off the event loop: a single thread fsyncs and closes the fds it
 * is handed, and the loop is told through a pipe when each is on disk.
 * Nothing that waits on the disk runs on the loop.
 */

struct event_base;
struct syncer;

/* Called on the loop: err is 0 or the errno of fsync/close. */
typedef void (*syncer_done_cb)(int err, void *arg);

/* NULL with errno if the thread or the pipe cannot be made. */
struct syncer	*syncer_create(struct event_base *);
/* Takes fd: it is fsync'd, closed, then cb runs on the loop. */
void		 syncer_submit(struct syncer *, int fd, syncer_done_cb,
		    void *arg);
/* Waits for the thread; callbacks not yet run are dropped. NULL ok. */
void		 syncer_free(struct syncer *);

#endif
