/*
 * Age-based clean-up of the session log dir. One readdir pass; every
 * lookup is relative to the dir's fd (fstatat, openat, unlinkat), so the
 * loop builds no paths except for the callback. A file is judged on its
 * own mtime, so a running session's recent .log can sit beside its old
 * .json: the .json is checked (and kept) because the session runs.
 */

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

/* Judges one directory entry: ignored, kept, or removed. */
static void
cleanup_entry(struct cleanup_ctx *ctx, const struct dirent *de)
{
	const char	*name = de->d_name, *id;
	struct stat	 st;
	size_t		 idlen;
	double		 mtime;

	if (de->d_type != DT_REG && de->d_type != DT_UNKNOWN)
		return;
	if ((idlen = cleanup_id(name, &id)) == 0)
		return;
	if (fstatat(ctx->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == -1) {
		if (errno != ENOENT)
			log_warn("cleanup %s/%s: stat: %s", ctx->dir, name,
			    strerror(errno));
		return;
	}
	if (!S_ISREG(st.st_mode))
		return;
	mtime = st.st_mtim.tv_sec + st.st_mtim.tv_nsec / 1e9;
	if (mtime > ctx->limit) {
		ctx->stats->kept_recent++;
		return;
	}
	if (cleanup_running(ctx->dirfd, id, idlen)) {
		ctx->stats->kept_running++;
		return;
	}
	if (!ctx->dry_run && unlinkat(ctx->dirfd, name, 0) == -1) {
		if (errno != ENOENT)	/* ENOENT: another cleaner was first */
			log_warn("cleanup %s/%s: unlink: %s", ctx->dir, name,
			    strerror(errno));
		return;
	}
	ctx->stats->removed++;
	ctx->stats->bytes += st.st_size;
	cleanup_report(ctx, name);
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
