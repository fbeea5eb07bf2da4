/* A command's durable files: <id>.log as bytes arrive, <id>.json replaced. */

#include <sys/file.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "logs/execlog.h"
#include "logs/spare.h"
#include "logs/xmalloc.h"

struct execlog {
	int			 fd;
	char			*path;
	unsigned long long	 size;
};

int
execlog_id_ok(const char *id)
{
	return (id != NULL && *id != '\0' && *id != '.' &&
	    strchr(id, '/') == NULL && strlen(id) <= 200);
}

int
execlog_fd_ok(int fd)
{
	struct stat	st;

	if (fstat(fd, &st) == -1)
		return (-1);
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    st.st_nlink > 1) {
		errno = EPERM;
		return (-1);
	}
	return (0);
}

int
execlog_open_safe(const char *path, int flags, mode_t mode)
{
	int	fd, saved;

	/* O_NONBLOCK: a FIFO planted in its place must not hang anyone. */
	fd = open(path, flags|O_NOFOLLOW|O_CLOEXEC|O_NOCTTY|O_NONBLOCK, mode);
	if (fd == -1)
		return (-1);
	if (execlog_fd_ok(fd) == -1) {
		saved = errno;
		close(fd);
		errno = saved;
		return (-1);
	}
	/* Back to blocking writes: a log is a plain file. */
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) == -1) {
		saved = errno;
		close(fd);
		errno = saved;
		return (-1);
	}
	return (fd);
}

const char *
execlog_strerror(int err)
{
	if (err == ELOOP)
		return ("it is a symbolic link; refused");
	if (err == EPERM)
		return ("it is not a regular file of the worker's own (or has "
		    "other names); refused");
	return (strerror(err));
}

int
execlog_probe(const char *dir)
{
	char	*path;
	int	 fd, saved;

	if (execlog_mkdir(dir) == -1)
		return (-1);
	xasprintf(&path, "%s/.probe-%ld", dir, (long)getpid());
	(void)unlink(path);
	fd = open(path, O_WRONLY|O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC, 0600);
	if (fd == -1 || write(fd, "probe\n", 6) != 6) {
		saved = errno;
		if (fd != -1)
			close(fd);
		(void)unlink(path);
		free(path);
		errno = saved;
		return (-1);
	}
	close(fd);
	(void)unlink(path);
	free(path);
	return (0);
}

int
execlog_mkdir(const char *dir)
{
	char	 path[PATH_MAX], *p;

	if (strlen(dir) >= sizeof path) {
		errno = ENAMETOOLONG;
		return (-1);
	}
	strcpy(path, dir);
	for (p = path + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) == -1 && errno != EEXIST)
			return (-1);
		*p = '/';
	}
	if (mkdir(path, 0755) == -1 && errno != EEXIST)
		return (-1);
	return (0);
}

/*
 * Locks fd (shared: the cleaner's exclusive lock waits for every writer)
 * for the life of the fd, and stamps it now: named for a run. 0 locked,
 * 1 the cleaner is removing it, -1 the file was removed under us. A
 * filesystem without locks leaves the fd unlocked (0).
 */
static int
execlog_lock(int fd)
{
	struct stat	st;

	if (flock(fd, LOCK_SH|LOCK_NB) == -1 && errno == EWOULDBLOCK)
		return (1);
	if (fstat(fd, &st) == 0 && st.st_nlink == 0)
		return (-1);
	(void)futimens(fd, NULL);
	return (0);
}

/*
 * Opens (append, create) the log at lg->path and locks it. The cleaner
 * holds its lock only while it unlinks, so a busy lock is waited out a
 * millisecond at a time; a log it removed is made again.
 */
static int
execlog_open_locked(struct execlog *lg, const char *dir)
{
	struct timespec	ms = { 0, 1000000 };
	int		fd = -1, tries;

	for (tries = 0; tries < 1000; tries++) {
		fd = execlog_open_safe(lg->path, O_WRONLY|O_CREAT|O_APPEND,
		    0644);
		/* The directory vanished (a tmp cleaner, an operator). */
		if (fd == -1 && errno == ENOENT && execlog_mkdir(dir) == 0)
			fd = execlog_open_safe(lg->path,
			    O_WRONLY|O_CREAT|O_APPEND, 0644);
		if (fd == -1)
			return (-1);
		switch (execlog_lock(fd)) {
		case 0:
			return (fd);
		case 1:
			nanosleep(&ms, NULL);
			break;
		}
		close(fd);
	}
	return (execlog_open_safe(lg->path, O_WRONLY|O_CREAT|O_APPEND, 0644));
}

struct execlog *
execlog_open(const char *dir, const char *id, int spare)
{
	struct execlog	*lg;

	if (!execlog_id_ok(id)) {
		if (spare != -1)
			close(spare);
		errno = EINVAL;
		return (NULL);
	}
	lg = xcalloc(1, sizeof *lg);
	xasprintf(&lg->path, "%s/%s.log", dir, id);
	if (spare != -1) {
		/* Locked before it has a name: never seen unlocked. */
		(void)flock(spare, LOCK_SH|LOCK_NB);
		if (spare_link(spare, lg->path) == 0) {
			lg->fd = spare;
			return (lg);
		}
		close(spare);	/* the log is there already: append */
	}
	if ((lg->fd = execlog_open_locked(lg, dir)) == -1) {
		free(lg->path);
		free(lg);
		return (NULL);
	}
	return (lg);
}

int
execlog_write(struct execlog *lg, const void *buf, size_t len)
{
	const char	*p = buf;
	ssize_t		 n;

	if (lg->fd == -1) {
		errno = EBADF;
		return (-1);
	}
	while (len > 0) {
		n = write(lg->fd, p, len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			return (-1);
		p += n;
		len -= n;
		lg->size += n;
	}
	return (0);
}

const char *
execlog_path(const struct execlog *lg)
{
	return (lg->path);
}

unsigned long long
execlog_size(const struct execlog *lg)
{
	return (lg->size);
}

int
execlog_detach_fd(struct execlog *lg)
{
	int	fd = lg->fd;

	/*
	 * Stamped as it ends: once the fd is closed the lock is gone, and
	 * until <id>.json is there the log's time is all the cleaner has.
	 */
	if (fd != -1)
		(void)futimens(fd, NULL);
	lg->fd = -1;
	return (fd);
}

void
execlog_free(struct execlog *lg)
{
	if (lg == NULL)
		return;
	if (lg->fd != -1)
		close(lg->fd);
	free(lg->path);
	free(lg);
}

/* All of buf into fd. 0, or -1 with errno. */
static int
execlog_write_all(int fd, const char *p, size_t len)
{
	ssize_t	n;

	while (len > 0) {
		n = write(fd, p, len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			return (-1);
		p += n;
		len -= n;
	}
	return (0);
}

int
execlog_write_meta(const char *dir, const char *id, const char *json,
    size_t len, int spare)
{
	char		 tmp[PATH_MAX], path[PATH_MAX];
	int		 fd = -1, written = 0, saved_errno;

	if (!execlog_id_ok(id) ||
	    (size_t)snprintf(path, sizeof path, "%s/%s.json", dir, id) >=
	    sizeof path || (size_t)snprintf(tmp, sizeof tmp,
	    "%s/.%s.json.tmp", dir, id) >= sizeof tmp) {
		if (spare != -1)
			close(spare);
		errno = execlog_id_ok(id) ? ENAMETOOLONG : EINVAL;
		return (-1);
	}
	/*
	 * The worker's alone: a session's token is in it. A spare is
	 * written before it has a name, so it is never seen part-written:
	 * it is named <id>.json at once when there is none yet (one link,
	 * no rename); else (a session's "running" file, an earlier
	 * attempt's, something planted) it goes through tmp and a rename,
	 * which replaces it. A file already at tmp is a leftover, or
	 * something planted: it goes first (with a spare, only when the
	 * link finds it there).
	 */
	if (spare != -1) {
		if (fchmod(spare, 0600) == -1 ||
		    execlog_write_all(spare, json, len) == -1)
			close(spare);
		else if (spare_link(spare, path) == 0) {
			if (close(spare) == 0)
				return (0);
			saved_errno = errno;
			unlink(path);
			errno = saved_errno;
			return (-1);
		} else if (errno == EEXIST && (spare_link(spare, tmp) == 0 ||
		    (errno == EEXIST && unlink(tmp) == 0 &&
		    spare_link(spare, tmp) == 0))) {
			fd = spare;
			written = 1;
		} else
			close(spare);
	}
	if (fd == -1) {
		(void)unlink(tmp);
		fd = open(tmp, O_WRONLY|O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC,
		    0600);
	}
	if (fd == -1)
		return (-1);
	if (!written && execlog_write_all(fd, json, len) == -1)
		goto fail;
	if (close(fd) == -1) {
		fd = -1;
		goto fail;
	}
	if (rename(tmp, path) == -1) {
		fd = -1;
		goto fail;
	}
	return (0);

fail:
	saved_errno = errno;
	if (fd != -1)
		close(fd);
	unlink(tmp);
	errno = saved_errno;
	return (-1);
}
