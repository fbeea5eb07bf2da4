/* One thread that fsyncs, closes and waits, so the loop never does. */

#include <sys/queue.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "logs/log.h"
#include "logs/syncer.h"
#include "logs/xmalloc.h"

struct syncjob {
	STAILQ_ENTRY(syncjob)	 entry;
	syncer_work_fn		 work;		/* or fsync and close fd */
	int			 fd;
	int			 err;
	syncer_done_cb		 cb;
	void			*arg;
};
STAILQ_HEAD(syncjobs, syncjob);

struct syncer {
	pthread_t	 thread;
	pthread_mutex_t	 lock;
	pthread_cond_t	 cond;
	struct syncjobs	 todo;		/* under lock */
	int		 stop;		/* under lock */
	int		 pipe[2];	/* done jobs, pointer by pointer */
	struct event	*ev;
};

/* The thread: fsync, close, and hand the job back through the pipe. */
static void *
syncer_main(void *arg)
{
	struct syncer	*s = arg;
	struct syncjob	*j;
	ssize_t		 n;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		while (STAILQ_EMPTY(&s->todo) && !s->stop)
			pthread_cond_wait(&s->cond, &s->lock);
		if ((j = STAILQ_FIRST(&s->todo)) == NULL)
			break;
		STAILQ_REMOVE_HEAD(&s->todo, entry);
		pthread_mutex_unlock(&s->lock);
		if (j->work != NULL)
			j->err = j->work(j->arg);
		else {
			j->err = fsync(j->fd) == -1 ? errno : 0;
			if (close(j->fd) == -1 && j->err == 0)
				j->err = errno;
		}
		/* The pipe is non-blocking: a full one waits here, never loses. */
		while ((n = write(s->pipe[1], &j, sizeof j)) == -1 &&
		    (errno == EINTR || errno == EAGAIN))
			usleep(1000);
		if (n == -1)
			fatal("syncer: %s", strerror(errno));
		pthread_mutex_lock(&s->lock);
	}
	pthread_mutex_unlock(&s->lock);
	return (NULL);
}

/* On the loop: run the callbacks of the jobs that are done. */
static void
syncer_done_ev(evutil_socket_t fd, short what, void *arg)
{
	struct syncjob	*j;

	(void)what;
	(void)arg;
	while (read(fd, &j, sizeof j) == (ssize_t)sizeof j) {
		j->cb(j->err, j->arg);
		free(j);
	}
}

struct syncer *
syncer_create(struct event_base *base)
{
	struct syncer	*s;
	sigset_t	 all, old;
	int		 rc;

	s = xcalloc(1, sizeof *s);
	STAILQ_INIT(&s->todo);
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	if (pipe2(s->pipe, O_CLOEXEC) == -1) {
		free(s);
		return (NULL);
	}
	fcntl(s->pipe[0], F_SETFL, O_NONBLOCK);
	fcntl(s->pipe[1], F_SETFL, O_NONBLOCK);
	s->ev = event_new(base, s->pipe[0], EV_READ|EV_PERSIST, syncer_done_ev,
	    s);
	/* The thread takes no signals: they belong to the loop. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = s->ev == NULL || event_add(s->ev, NULL) == -1 ? -1 :
	    pthread_create(&s->thread, NULL, syncer_main, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		errno = rc == -1 ? ENOMEM : rc;
		if (s->ev != NULL)
			event_free(s->ev);
		close(s->pipe[0]);
		close(s->pipe[1]);
		free(s);
		return (NULL);
	}
	return (s);
}

/* Queues a job for the thread. */
static void
syncer_push(struct syncer *s, syncer_work_fn work, int fd, syncer_done_cb cb,
    void *arg)
{
	struct syncjob	*j;

	j = xcalloc(1, sizeof *j);
	j->work = work;
	j->fd = fd;
	j->cb = cb;
	j->arg = arg;
	pthread_mutex_lock(&s->lock);
	STAILQ_INSERT_TAIL(&s->todo, j, entry);
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

void
syncer_call(struct syncer *s, syncer_work_fn work, syncer_done_cb cb,
    void *arg)
{
	syncer_push(s, work, -1, cb, arg);
}

void
syncer_submit(struct syncer *s, int fd, syncer_done_cb cb, void *arg)
{
	syncer_push(s, NULL, fd, cb, arg);
}

/*
 * A job done but not delivered when the syncer goes: an fsync is simply
 * forgotten; a function's callback hears ECANCELED, to free what it owns
 * (it must not reach anything that is being freed).
 */
static void
syncer_drop(struct syncjob *j)
{
	if (j->work != NULL)
		j->cb(ECANCELED, j->arg);
	free(j);
}

void
syncer_free(struct syncer *s)
{
	struct syncjob	*j;

	if (s == NULL)
		return;
	pthread_mutex_lock(&s->lock);
	s->stop = 1;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
	/* It finishes what was queued; keep its pipe from filling up. */
	while (pthread_tryjoin_np(s->thread, NULL) == EBUSY) {
		while (read(s->pipe[0], &j, sizeof j) == (ssize_t)sizeof j)
			syncer_drop(j);
		usleep(1000);
	}
	while (read(s->pipe[0], &j, sizeof j) == (ssize_t)sizeof j)
		syncer_drop(j);
	event_free(s->ev);
	close(s->pipe[0]);
	close(s->pipe[1]);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->cond);
	free(s);
}
