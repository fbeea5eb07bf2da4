/*
 * execq: the client's token store, $XDG_STATE_HOME/execq/tokens (else
 * ~/.local/state/execq/tokens): the session tokens that spawn and run
 * keep, and that PROCESS items show. One "<id> <token>" a line, newest
 * last, mode 0600, the newest EXECQ_TOKENS_KEEP lines only.
 *
 * A save is a rewrite, so that the store stays that short: under a lock
 * (flock on tokens.lock beside it), the newest lines of the store and the
 * new one go to tokens.new (0600, fsync'd), which is then renamed over
 * the store. A reader takes no lock: it sees the old store or the new,
 * never half of one. Two clients saving at once both keep their line,
 * one after the other, as when every save was an O_APPEND write.
 */

#include <sys/file.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cli/cli.h"
#include "logs/xmalloc.h"

/*
 * The store's directory (allocated), made if make (parents 0755, its own
 * 0700), or NULL without a home.
 */
static char *
execq_tokens_dir(int make)
{
	const char	*base = getenv("XDG_STATE_HOME"), *home;
	char		*dir;

	if (base != NULL && *base == '/')
		xasprintf(&dir, "%s/execq", base);
	else if ((home = getenv("HOME")) != NULL && *home == '/')
		xasprintf(&dir, "%s/.local/state/execq", home);
	else
		return (NULL);
	if (make) {
		/* Parents as needed; the last one is ours alone. */
		for (char *p = dir + 1; *p != '\0'; p++) {
			if (*p != '/')
				continue;
			*p = '\0';
			(void)mkdir(dir, 0755);
			*p = '/';
		}
		(void)mkdir(dir, 0700);
	}
	return (dir);
}

/*
 * The whole store (allocated, NUL-terminated, ending with a newline unless
 * empty; a missing store is empty) in *buf and *len: 0, or -1 and errno.
 */
static int
execq_tokens_read(const char *path, char **buf, size_t *len)
{
	size_t	 size = 4096;
	ssize_t	 n;
	int	 fd, saved_errno;

	*buf = xmalloc(size);
	*len = 0;
	fd = open(path, O_RDONLY|O_NOFOLLOW|O_CLOEXEC);
	if (fd == -1 && errno != ENOENT)
		goto fail;
	while (fd != -1) {
		if (size - *len < 1024)
			*buf = xrealloc(*buf, size *= 2);
		/* Room kept for a newline and the NUL. */
		n = read(fd, *buf + *len, size - *len - 2);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			goto fail;
		if (n == 0)
			break;
		*len += n;
	}
	if (fd != -1)
		close(fd);
	/* A line cut short by a client that died while appending. */
	if (*len > 0 && (*buf)[*len - 1] != '\n')
		(*buf)[(*len)++] = '\n';
	(*buf)[*len] = '\0';
	return (0);

fail:
	saved_errno = errno;
	if (fd != -1)
		close(fd);
	free(*buf);
	*buf = NULL;
	errno = saved_errno;
	return (-1);
}

/* Where the newest keep lines of buf (each ending with '\n') start. */
static size_t
execq_tokens_tail(const char *buf, size_t len, size_t keep)
{
	size_t	 start = len;

	while (start > 0 && keep > 0) {
		start--;		/* onto the line's newline */
		while (start > 0 && buf[start - 1] != '\n')
			start--;
		keep--;
	}
	return (start);
}

/*
 * Writes the two parts to tmp (made anew, 0600), fsyncs it and renames it
 * to path: 0, or -1 and errno (tmp is gone then).
 */
static int
execq_tokens_replace(const char *tmp, const char *path, const char *old,
    size_t old_len, const char *line)
{
	const char	*part[2] = { old, line };
	size_t		 left[2] = { old_len, strlen(line) };
	ssize_t		 n;
	int		 fd, i, saved_errno;

	/* A file already at tmp is a leftover of a client that died. */
	(void)unlink(tmp);
	fd = open(tmp, O_WRONLY|O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC, 0600);
	if (fd == -1 || fchmod(fd, 0600) == -1)	/* whatever the umask */
		goto fail;
	for (i = 0; i < 2; i++) {
		while (left[i] > 0) {
			n = write(fd, part[i], left[i]);
			if (n == -1 && errno == EINTR)
				continue;
			if (n == -1)
				goto fail;
			part[i] += n;
			left[i] -= n;
		}
	}
	if (fsync(fd) == -1)
		goto fail;
	if (close(fd) == -1) {
		fd = -1;
		goto fail;
	}
	fd = -1;
	if (rename(tmp, path) == -1)
		goto fail;
	return (0);

fail:
	saved_errno = errno;
	if (fd != -1)
		close(fd);
	(void)unlink(tmp);
	errno = saved_errno;
	return (-1);
}

/* Takes the store's lock, waiting for it: the fd, or -1 and errno. */
static int
execq_tokens_lock(const char *path)
{
	int	 fd, saved_errno;

	fd = open(path, O_RDWR|O_CREAT|O_NOFOLLOW|O_CLOEXEC, 0600);
	if (fd == -1)
		return (-1);
	while (flock(fd, LOCK_EX) == -1) {
		if (errno == EINTR)
			continue;
		saved_errno = errno;
		close(fd);
		errno = saved_errno;
		return (-1);
	}
	return (fd);
}

void
execq_tokens_save(const char *session_id, const char *token)
{
	char		*dir, *path, *lock, *tmp, *line, *old = NULL;
	const char	*failed = NULL;
	size_t		 len, start;
	int		 lfd;

	if ((dir = execq_tokens_dir(1)) == NULL)
		return;
	xasprintf(&path, "%s/tokens", dir);
	xasprintf(&lock, "%s/tokens.lock", dir);
	xasprintf(&tmp, "%s/tokens.new", dir);
	xasprintf(&line, "%s %s\n", session_id, token);
	if ((lfd = execq_tokens_lock(lock)) == -1)
		failed = lock;
	else if (execq_tokens_read(path, &old, &len) == -1)
		failed = path;	/* not rewritten: its tokens would go */
	else {
		start = execq_tokens_tail(old, len, EXECQ_TOKENS_KEEP - 1);
		if (execq_tokens_replace(tmp, path, old + start, len - start,
		    line) == -1)
			failed = tmp;
	}
	if (failed != NULL)
		execq_error("cannot keep the session token in %s: %s (pass it "
		    "with EXECQ_TOKEN)", failed, strerror(errno));
	if (lfd != -1)
		close(lfd);		/* releases the lock */
	free(old);
	free(line);
	free(tmp);
	free(lock);
	free(path);
	free(dir);
}

json_t *
execq_tokens_load(const char *session_id, const char **found)
{
	static char	 tok[160];
	json_t		*all = json_array();
	char		*dir, *path, line[512], *sp;
	FILE		*f;

	*found = NULL;
	if ((dir = execq_tokens_dir(0)) == NULL)
		return (all);
	xasprintf(&path, "%s/tokens", dir);
	free(dir);
	if ((f = fopen(path, "re")) != NULL) {
		while (fgets(line, sizeof line, f) != NULL) {
			line[strcspn(line, "\n")] = '\0';
			if ((sp = strchr(line, ' ')) == NULL)
				continue;
			*sp++ = '\0';
			json_array_append_new(all, json_string(sp));
			if (session_id != NULL &&
			    strcmp(line, session_id) == 0) {
				snprintf(tok, sizeof tok, "%s", sp);
				*found = tok;
			}
		}
		fclose(f);
	}
	free(path);
	/* A store an older client grew past the bound. */
	while (json_array_size(all) > EXECQ_TOKENS_KEEP)
		json_array_remove(all, 0);
	return (all);
}
