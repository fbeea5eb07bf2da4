/* Spare files: O_TMPFILE files made off the loop, named when needed. */

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "logs/log.h"
#include "logs/spare.h"
#include "logs/syncer.h"
#include "logs/xmalloc.h"

struct spare {
	struct syncer	*syncer;	/* its own: nobody waits behind it */
	const char	*dir;
	pthread_mutex_t	 lock;
	int		*fds;		/* under lock */
	unsigned	 n, have;	/* have: under lock */
	int		 none;		/* no O_TMPFILE here; under lock */
	int		 filling;	/* a refill is queued (the loop's) */
};

static void	spare_refill(struct spare *);

/* On the syncer's thread: makes spares until the stock is full. */
static int
spare_fill_work(void *arg)
{
	struct spare	*s = arg;
	int		 fd;

	for (;;) {
		pthread_mutex_lock(&s->lock);
		if (s->have >= s->n || s->none) {
			pthread_mutex_unlock(&s->lock);
			return (0);
		}
		pthread_mutex_unlock(&s->lock);
		fd = open(s->dir, O_TMPFILE|O_WRONLY|O_APPEND|O_CLOEXEC, 0644);
		if (fd == -1) {
			/* EISDIR, EOPNOTSUPP: no unnamed files here. */
			if (errno == EISDIR || errno == EOPNOTSUPP ||
			    errno == EINVAL) {
				pthread_mutex_lock(&s->lock);
				s->none = 1;
				pthread_mutex_unlock(&s->lock);
			}
			return (errno);	/* ENOENT: the dir is made again */
		}
		pthread_mutex_lock(&s->lock);
		s->fds[s->have++] = fd;
		pthread_mutex_unlock(&s->lock);
	}
}

/* Back on the loop. */
static void
spare_fill_done(int err, void *arg)
{
	struct spare	*s = arg;
	int		 short_of;

	s->filling = 0;
	if (err == ECANCELED)		/* the syncer is being freed */
		return;
	if (err != 0) {
		log_debug("spare files in %s: %s (files are created as they "
		    "are needed)", s->dir, strerror(err));
		return;
	}
	/*
	 * A take between the work's last look and this callback found a
	 * refill still queued and asked for none: ask now.
	 */
	pthread_mutex_lock(&s->lock);
	short_of = s->have < s->n && !s->none;
	pthread_mutex_unlock(&s->lock);
	if (short_of)
		spare_refill(s);
}

static void
spare_refill(struct spare *s)
{
	if (s->filling)
		return;
	s->filling = 1;
	syncer_call(s->syncer, spare_fill_work, spare_fill_done, s);
}

struct spare *
spare_create(struct event_base *base, const char *dir, unsigned n)
{
	struct spare	*s;

	s = xcalloc(1, sizeof *s);
	if (n > 0 && (s->syncer = syncer_create(base)) == NULL) {
		log_warn("spare files: %s (files are created as they are "
		    "needed)", strerror(errno));
		n = 0;
	}
	s->dir = dir;
	s->n = n;
	s->fds = xcalloc(n > 0 ? n : 1, sizeof *s->fds);
	pthread_mutex_init(&s->lock, NULL);
	if (n > 0)
		spare_refill(s);
	return (s);
}

int
spare_take(struct spare *s)
{
	int	fd = -1, low;

	if (s == NULL || s->n == 0)
		return (-1);
	pthread_mutex_lock(&s->lock);
	if (s->have > 0)
		fd = s->fds[--s->have];
	/*
	 * A refill wakes the thread (a futex call, a switch): once the
	 * stock is down to half, not at every take.
	 */
	low = !s->none && s->have <= s->n / 2;
	pthread_mutex_unlock(&s->lock);
	if (low)
		spare_refill(s);
	return (fd);
}

int
spare_link(int fd, const char *path)
{
	static int	no_empty_path;
	char		proc[64];

	(void)futimens(fd, NULL);
	/*
	 * linkat(fd, "", ..., AT_EMPTY_PATH) wants CAP_DAC_READ_SEARCH
	 * before Linux 6.10 (ENOENT without it); the /proc name of the fd
	 * works for anyone, at the price of a walk through /proc.
	 */
	if (!no_empty_path) {
		if (linkat(fd, "", AT_FDCWD, path, AT_EMPTY_PATH) == 0)
			return (0);
		if (errno != ENOENT && errno != EPERM && errno != EINVAL)
			return (-1);
	}
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
	if (linkat(AT_FDCWD, proc, AT_FDCWD, path, AT_SYMLINK_FOLLOW) == -1)
		return (-1);
	no_empty_path = 1;	/* the /proc name works where "" did not */
	return (0);
}

unsigned
spare_count(struct spare *s)
{
	unsigned	n;

	if (s == NULL)
		return (0);
	pthread_mutex_lock(&s->lock);
	n = s->have;
	pthread_mutex_unlock(&s->lock);
	return (n);
}

void
spare_free(struct spare *s)
{
	unsigned	i;

	if (s == NULL)
		return;
	syncer_free(s->syncer);		/* the thread is done with the stock */
	for (i = 0; i < s->have; i++)
		close(s->fds[i]);
	pthread_mutex_destroy(&s->lock);
	free(s->fds);
	free(s);
}
