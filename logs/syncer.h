#ifndef EXECQ_SYNCER_H
#define EXECQ_SYNCER_H

/*
 * Waiting off the event loop: a single thread fsyncs and closes the fds it
 * is handed (or runs a function that may block: a disk read, a DNS
 * lookup), one job after the other, and the loop is told through a pipe
 * when each is done. Nothing that waits on the disk or the network runs
 * on the loop. Jobs of one syncer wait for each other: give slow ones
 * (DNS) a syncer of their own.
 */

struct event_base;
struct syncer;

/* Called on the loop: err is 0 or the errno of fsync/close. */
typedef void (*syncer_done_cb)(int err, void *arg);

/* NULL with errno if the thread or the pipe cannot be made. */
struct syncer	*syncer_create(struct event_base *);
/* Runs on the thread; returns 0 or an errno, handed to the done cb. */
typedef int (*syncer_work_fn)(void *arg);

/* work(arg) runs on the thread, then cb(its result, arg) on the loop. */
void		 syncer_call(struct syncer *, syncer_work_fn work,
		    syncer_done_cb cb, void *arg);
/* Takes fd: it is fsync'd, closed, then cb runs on the loop. */
void		 syncer_submit(struct syncer *, int fd, syncer_done_cb,
		    void *arg);
/*
 * Waits for the thread. Callbacks not yet run are dropped, but those of
 * syncer_call jobs are called with ECANCELED (to free their arg). NULL ok.
 */
void		 syncer_free(struct syncer *);

#endif
