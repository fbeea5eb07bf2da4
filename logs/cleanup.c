/*
 * Clean-up of the session log dir by each item's state. One readdir pass;
 * every lookup is relative to the dir's fd (fstatat, openat, unlinkat),
 * so the loop builds no paths except for the callback. An id's files
 * (<id>.log, <id>.json, .<id>.json.tmp) are judged together and go
 * together: kept while the command runs (the worker holds a lock on its
 * log, or the metadata says a session runs with a live pid), kept while
 * the newest of them is younger than the limit, else removed.
 *
 * Why a lock and not a time stamp: spare files (logs/spare.h) are made
 * ahead of time, a command can stay silent for days, and a foreground
 * command writes no metadata until it ends, so no time stamp or file says
 * "running" for sure. A flock(2) lock is held by the worker from the
 * moment the log is named until its fd is closed (after the final fsync),
 * and it is dropped by the kernel when the worker dies: it cannot go
 * stale. The cleaner takes the lock exclusively before it removes, so a
 * worker that reopens the same log in between waits, then sees the
 * unlinked file and makes a new one (execlog_open).
 */

#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "logs/cleanup.h"
#include "logs/log.h"
#include "logs/xmalloc.h"

/* A metadata file bigger than this is not ours: not running. */
#define CLEANUP_JSON_MAX	(1024 * 1024)

/* One pass over one dir. */
struct cleanup_ctx {
	const char		*dir;
	int			 dirfd;
	double			 limit;		/* mtime at or below: old */
	int			 dry_run;
	cleanup_file_cb		 cb;
	void			*arg;
	struct cleanup_stats	*stats;
};

/* The files of one id, in the order that picks who judges them. */
enum { CLEANUP_LOG, CLEANUP_JSON, CLEANUP_TMP, CLEANUP_KINDS };

/* One id's files: which exist, and the newest time among them. */
struct cleanup_group {
	char			 name[CLEANUP_KINDS][NAME_MAX + 1];
	int			 have[CLEANUP_KINDS];
	unsigned long long	 size[CLEANUP_KINDS];
	unsigned		 n;
	double			 newest;
};

/* Whether name (len bytes) ends in suffix, with something before it. */
static int
cleanup_has_suffix(const char *name, size_t len, const char *suffix)
{
	size_t	slen = strlen(suffix);

	return (len > slen && memcmp(name + len - slen, suffix, slen) == 0);
}

/*
 * The session id inside a name this module owns: <id>.log, <id>.json or
 * .<id>.json.tmp, where an id never starts with '.' (execlog_id_ok).
 * Sets *id and returns its length; 0 for any other file, audit.log too.
 */
static size_t
cleanup_id(const char *name, const char **id)
{
	size_t	len = strlen(name);

	*id = name;
	if (name[0] != '.' && cleanup_has_suffix(name, len, ".log"))
		return (strcmp(name, "audit.log") == 0 ? 0 : len - 4);
	if (name[0] != '.' && cleanup_has_suffix(name, len, ".json"))
		return (len - 5);
	if (name[0] == '.' && name[1] != '.' &&
	    cleanup_has_suffix(name + 1, len - 1, ".json.tmp")) {
		*id = name + 1;
		return (len - 10);
	}
	return (0);
}

/* Whether pid, from a metadata file, names a live process on this host. */
static int
cleanup_pid_alive(json_t *pid)
{
	json_int_t	p;

	if (!json_is_integer(pid))
		return (0);
	p = json_integer_value(pid);
	if (p <= 0 || p > INT_MAX)	/* kill(0) or kill(-n) hit groups */
		return (0);
	return (kill((pid_t)p, 0) == 0 || errno == EPERM);
}

/*
 * Reads the whole regular file fd into buf (size bytes) or, when it is
 * bigger, into an allocated *big. Returns the text and sets *len, or NULL.
 * jansson's json_loadfd() reads a byte per syscall: too slow here.
 */
static const char *
cleanup_read(int fd, char *buf, size_t size, char **big, size_t *len)
{
	struct stat	 st;
	ssize_t		 n;
	char		*p = buf;

	*big = NULL;
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    st.st_size > CLEANUP_JSON_MAX)
		return (NULL);
	if ((size_t)st.st_size > size) {
		size = st.st_size;
		p = *big = xmalloc(size);
	}
	*len = 0;
	while (*len < size) {
		n = read(fd, p + *len, size - *len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			free(*big);
			*big = NULL;
			return (NULL);
		}
		if (n == 0)
			break;
		*len += n;
	}
	return (p);
}

/*
 * Whether session id (idlen bytes) still runs: its <id>.json says
 * "status":"running" and its "pid" is alive. No file, or a file that
 * does not parse, is not running.
 */
static int
cleanup_running(int dirfd, const char *id, size_t idlen)
{
	char		 name[NAME_MAX + 1], buf[16384], *big;
	json_t		*root;
	json_error_t	 jerr;
	const char	*text, *status;
	size_t		 len;
	int		 fd, running;

	if (idlen + sizeof ".json" > sizeof name)
		return (0);
	memcpy(name, id, idlen);
	memcpy(name + idlen, ".json", sizeof ".json");
	fd = openat(dirfd, name, O_RDONLY|O_CLOEXEC|O_NOFOLLOW|O_NOCTTY|
	    O_NONBLOCK);
	if (fd == -1)
		return (0);
	text = cleanup_read(fd, buf, sizeof buf, &big, &len);
	close(fd);
	if (text == NULL)
		return (0);
	root = json_loadb(text, len, 0, &jerr);
	free(big);
	if (root == NULL)
		return (0);
	status = json_string_value(json_object_get(root, "status"));
	running = status != NULL && strcmp(status, "running") == 0 &&
	    cleanup_pid_alive(json_object_get(root, "pid"));
	json_decref(root);
	return (running);
}

/* Tells the callback about a removed file, by its path. */
static void
cleanup_report(struct cleanup_ctx *ctx, const char *name)
{
	char	path[PATH_MAX];

	if (ctx->cb == NULL)
		return;
	if ((size_t)snprintf(path, sizeof path, "%s/%s", ctx->dir, name) >=
	    sizeof path)
		ctx->cb(name, ctx->arg);	/* cannot happen on Linux */
	else
		ctx->cb(path, ctx->arg);
}

/*
 * Fills g with the files of id (idlen bytes) that exist as regular files.
 * 0, or -1 if a name would be too long.
 */
static int
cleanup_group(struct cleanup_ctx *ctx, const char *id, size_t idlen,
    struct cleanup_group *g)
{
	struct stat	st;
	double		mtime;
	int		k;

	memset(g, 0, sizeof *g);
	for (k = 0; k < CLEANUP_KINDS; k++) {
		if (idlen + 12 > sizeof g->name[k])
			return (-1);
		if (k == CLEANUP_TMP)
			snprintf(g->name[k], sizeof g->name[k], ".%.*s.json.tmp",
			    (int)idlen, id);
		else
			snprintf(g->name[k], sizeof g->name[k], "%.*s%s",
			    (int)idlen, id, k == CLEANUP_LOG ? ".log" :
			    ".json");
		if (fstatat(ctx->dirfd, g->name[k], &st,
		    AT_SYMLINK_NOFOLLOW) == -1 || !S_ISREG(st.st_mode))
			continue;
		g->have[k] = 1;
		g->size[k] = st.st_size;
		g->n++;
		mtime = st.st_mtim.tv_sec + st.st_mtim.tv_nsec / 1e9;
		if (mtime > g->newest)
			g->newest = mtime;
	}
	return (0);
}

/*
 * Takes <id>.log's lock for the removal: -1 when the worker holds it (its
 * command runs: execlog.h), else an fd that holds it (or -1 with *fd -1
 * when there is no log to lock). The worker never writes a log it could
 * not lock first, so between this and the unlink nobody starts writing.
 */
static int
cleanup_lock_log(struct cleanup_ctx *ctx, struct cleanup_group *g, int *fd)
{
	*fd = -1;
	if (!g->have[CLEANUP_LOG])
		return (0);
	*fd = openat(ctx->dirfd, g->name[CLEANUP_LOG], O_RDONLY|O_CLOEXEC|
	    O_NOFOLLOW|O_NOCTTY|O_NONBLOCK);
	if (*fd == -1)
		return (0);	/* gone meanwhile, or not ours to read */
	if (flock(*fd, LOCK_EX|LOCK_NB) == 0)
		return (0);
	if (errno != EWOULDBLOCK) {	/* no locks here: judge the rest */
		close(*fd);
		*fd = -1;
		return (0);
	}
	close(*fd);
	*fd = -1;
	return (-1);
}

/* Removes (or, dry, reports) every file of the group. */
static void
cleanup_remove(struct cleanup_ctx *ctx, struct cleanup_group *g)
{
	int	k;

	/* The log last: a pass cut short leaves a log, never a lone .json. */
	for (k = CLEANUP_KINDS - 1; k >= 0; k--) {
		if (!g->have[k])
			continue;
		if (!ctx->dry_run && unlinkat(ctx->dirfd, g->name[k], 0) ==
		    -1) {
			if (errno != ENOENT)	/* another cleaner was first */
				log_warn("cleanup %s/%s: unlink: %s",
				    ctx->dir, g->name[k], strerror(errno));
			continue;
		}
		ctx->stats->removed++;
		ctx->stats->bytes += g->size[k];
		cleanup_report(ctx, g->name[k]);
	}
}

/*
 * Judges one directory entry. An id's files are judged together, once: by
 * the first of <id>.log, <id>.json, .<id>.json.tmp that exists, the
 * others being skipped. They go together when the newest of them is old
 * and the command is not running.
 */
static void
cleanup_entry(struct cleanup_ctx *ctx, const struct dirent *de)
{
	struct cleanup_group	 g;
	const char		*name = de->d_name, *id;
	size_t			 idlen;
	int			 k, fd;

	if (de->d_type != DT_REG && de->d_type != DT_UNKNOWN)
		return;
	if ((idlen = cleanup_id(name, &id)) == 0)
		return;
	if (cleanup_group(ctx, id, idlen, &g) == -1)
		return;
	for (k = 0; k < CLEANUP_KINDS && strcmp(g.name[k], name) != 0; k++)
		if (g.have[k])
			return;		/* judged by that one */
	if (k == CLEANUP_KINDS || !g.have[k])
		return;			/* not a regular file, or gone */
	if (g.newest > ctx->limit) {
		ctx->stats->kept_recent += g.n;
		return;
	}
	if (cleanup_lock_log(ctx, &g, &fd) == -1 ||
	    cleanup_running(ctx->dirfd, id, idlen)) {
		if (fd != -1)
			close(fd);
		ctx->stats->kept_running += g.n;
		return;
	}
	cleanup_remove(ctx, &g);
	if (fd != -1)
		close(fd);
}

/* Opens dir, then judges each entry in readdir order. */
int
cleanup_logs(const char *dir, double max_age_hours, int dry_run,
    cleanup_file_cb cb, void *arg, struct cleanup_stats *stats)
{
	struct cleanup_stats	 local;
	struct cleanup_ctx	 ctx;
	struct timespec		 now;
	struct dirent		*de;
	DIR			*d;
	int			 fd, saved_errno;

	if (stats == NULL)
		stats = &local;
	memset(stats, 0, sizeof *stats);
	if (!(max_age_hours >= 0)) {	/* negative or NaN */
		errno = EINVAL;
		return (-1);
	}
	if (max_age_hours == 0)		/* off: everything is kept */
		return (0);
	if ((fd = open(dir, O_RDONLY|O_DIRECTORY|O_CLOEXEC)) == -1)
		return (errno == ENOENT ? 0 : -1);
	if ((d = fdopendir(fd)) == NULL) {
		saved_errno = errno;
		close(fd);
		errno = saved_errno;
		return (-1);
	}
	clock_gettime(CLOCK_REALTIME, &now);
	ctx.dir = dir;
	ctx.dirfd = fd;
	ctx.limit = now.tv_sec + now.tv_nsec / 1e9 - max_age_hours * 3600;
	ctx.dry_run = dry_run;
	ctx.cb = cb;
	ctx.arg = arg;
	ctx.stats = stats;
	for (;;) {
		errno = 0;	/* readdir: NULL and errno 0 is the end */
		if ((de = readdir(d)) == NULL)
			break;
		cleanup_entry(&ctx, de);
	}
	saved_errno = errno;
	closedir(d);
	errno = saved_errno;
	return (saved_errno == 0 ? 0 : -1);
}
