/* The spool: what could not reach Redis, kept on disk until it does. */

#include <sys/file.h>
#include <sys/queue.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "logs/clock.h"
#include "logs/execlog.h"
#include "logs/log.h"
#include "logs/syncer.h"
#include "logs/xmalloc.h"
#include "queue/spool.h"

/*
 * A file starts with SPOOL_MAGIC; then records, each:
 *   u32 size (of what follows), u8 type, u32 seq, u32 argc,
 *   argc times (u32 len, len bytes)
 * in host byte order (a spool never leaves its host). A torn record at the
 * end (the worker died while writing) is ignored.
 */
#define SPOOL_MAGIC	"execq-spool 1\n"
#define SPOOL_MAGICLEN	(sizeof SPOOL_MAGIC - 1)
#define SPOOL_MAXARGS	64

struct spool_file {
	LIST_ENTRY(spool_file)	 entry;
	char			*path;
	int			 fd;
	unsigned		 live;		/* records not done */
	uint32_t		 next_seq;
	int			 dirty;		/* written since the last fsync */
};

struct spool {
	char			*dir, *name;
	struct syncer		*sync;
	struct spool_file	*cur;		/* appended to; NULL: none yet */
	LIST_HEAD(, spool_file)	 files;		/* cur and adopted ones */
	unsigned		 pending;
	unsigned		 nmade;
	time_t			 warned;
};

size_t
spool_encode(char *buf, char type, uint32_t seq, int argc,
    const char *const *argv, const size_t *len)
{
	size_t		 n = 4 + 1 + 4 + 4, off;
	uint32_t	 u;
	int		 i;

	for (i = 0; i < argc; i++)
		n += 4 + len[i];
	if (buf == NULL)
		return (n);
	u = n - 4;
	memcpy(buf, &u, 4);
	buf[4] = type;
	memcpy(buf + 5, &seq, 4);
	u = argc;
	memcpy(buf + 9, &u, 4);
	off = 13;
	for (i = 0; i < argc; i++) {
		u = len[i];
		memcpy(buf + off, &u, 4);
		memcpy(buf + off + 4, argv[i], len[i]);
		off += 4 + len[i];
	}
	return (n);
}

ssize_t
spool_decode(const char *p, size_t n, struct spool_rec *r)
{
	uint32_t	 size, argc, len;
	size_t		 off;
	uint32_t	 i;

	memset(r, 0, sizeof *r);
	if (n < 4)
		return (-1);
	memcpy(&size, p, 4);
	if (size < 9 || size > n - 4)
		return (-1);
	r->type = p[4];
	memcpy(&r->seq, p + 5, 4);
	memcpy(&argc, p + 9, 4);
	if ((r->type != 'R' && r->type != 'D') || argc > SPOOL_MAXARGS ||
	    (r->type == 'D' && argc != 0) || (r->type == 'R' && argc == 0))
		return (-1);
	r->argc = argc;
	r->argv = xcalloc(argc + 1, sizeof *r->argv);
	r->len = xcalloc(argc + 1, sizeof *r->len);
	off = 13;
	for (i = 0; i < argc; i++) {
		if (off + 4 > size + 4)
			goto bad;
		memcpy(&len, p + off, 4);
		if (len > size + 4 - off - 4)
			goto bad;
		r->argv[i] = p + off + 4;
		r->len[i] = len;
		off += 4 + len;
	}
	if (off != size + 4)
		goto bad;
	return (off);

bad:
	spool_rec_release(r);
	return (-1);
}

void
spool_rec_release(struct spool_rec *r)
{
	free(r->argv);
	free(r->len);
	r->argv = NULL;
	r->len = NULL;
}

/* Says a disk problem once a second at most. */
static void
spool_warn(struct spool *sp, const char *what, const char *path)
{
	time_t	now = time(NULL);

	if (now == sp->warned)
		return;
	sp->warned = now;
	log_warn("spool %s %s: %s (kept in memory only)", what, path,
	    strerror(errno));
}

/* Writes all of buf at the end of f; a short write is taken back. */
static int
spool_put(struct spool *sp, struct spool_file *f, const char *buf, size_t n)
{
	off_t	 end;
	ssize_t	 w;
	size_t	 done = 0;

	if ((end = lseek(f->fd, 0, SEEK_END)) == -1) {
		spool_warn(sp, "seek", f->path);
		return (-1);
	}
	while (done < n) {
		w = write(f->fd, buf + done, n - done);
		if (w == -1 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = ENOSPC;
			spool_warn(sp, "write", f->path);
			if (ftruncate(f->fd, end) == -1)
				log_warn("spool truncate %s: %s", f->path,
				    strerror(errno));
			return (-1);
		}
		done += w;
	}
	f->dirty = 1;
	return (0);
}

static void
spool_file_free(struct spool_file *f)
{
	if (f->fd != -1)
		close(f->fd);		/* releases the flock */
	free(f->path);
	free(f);
}

/*
 * A new file for this worker, made under a name no scanner picks up,
 * locked, then renamed: nobody adopts a file while it is being born.
 */
static struct spool_file *
spool_make(struct spool *sp)
{
	struct spool_file	*f;
	char			*tmp, *path;
	int			 fd;

	xasprintf(&tmp, "%s/.spool-%s-%ld", sp->dir, sp->name, (long)getpid());
	xasprintf(&path, "%s/spool-%s-%lld-%u", sp->dir, sp->name,
	    (long long)clock_wall_ms(), sp->nmade++);
	(void)unlink(tmp);		/* a leftover of our pid, long ago */
	fd = open(tmp, O_WRONLY|O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC, 0600);
	if (fd == -1 || flock(fd, LOCK_EX|LOCK_NB) == -1 ||
	    write(fd, SPOOL_MAGIC, SPOOL_MAGICLEN) != (ssize_t)SPOOL_MAGICLEN ||
	    rename(tmp, path) == -1) {
		spool_warn(sp, "create", tmp);
		if (fd != -1) {
			close(fd);
			(void)unlink(tmp);
		}
		free(tmp);
		free(path);
		return (NULL);
	}
	free(tmp);
	f = xcalloc(1, sizeof *f);
	f->fd = fd;
	f->path = path;
	f->dirty = 1;
	LIST_INSERT_HEAD(&sp->files, f, entry);
	return (f);
}

struct spool *
spool_open(const char *dir, const char *name, struct syncer *sync,
    char **cause)
{
	struct spool	*sp;

	if (execlog_mkdir(dir) == -1 || chmod(dir, 0700) == -1) {
		xasprintf(cause, "state dir %s: %s", dir, strerror(errno));
		return (NULL);
	}
	sp = xcalloc(1, sizeof *sp);
	sp->dir = xstrdup(dir);
	sp->name = xstrdup(name);
	sp->sync = sync;
	LIST_INIT(&sp->files);
	return (sp);
}

/* Reads all of fd (a regular file) into memory. */
static char *
spool_slurp(int fd, size_t *n)
{
	struct stat	 st;
	char		*buf;
	ssize_t		 r;
	size_t		 got = 0;

	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) || st.st_nlink == 0 ||
	    st.st_uid != geteuid())
		return (NULL);
	buf = xmalloc((size_t)st.st_size + 1);
	while (got < (size_t)st.st_size) {
		r = pread(fd, buf + got, st.st_size - got, got);
		if (r == -1 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += r;
	}
	*n = got;
	return (buf);
}

/* Replays one adopted file; returns the commands handed to cb. */
static unsigned
spool_replay(struct spool *sp, struct spool_file *f, const char *buf,
    size_t n, spool_replay_cb cb, void *arg)
{
	struct spool_rec	 r;
	struct spool_ref	 ref;
	unsigned char		*done;
	uint32_t		 max = 0;
	size_t			 off;
	ssize_t			 used;
	unsigned		 count = 0;

	/* Pass one: which records are done. */
	for (off = SPOOL_MAGICLEN; (used = spool_decode(buf + off, n - off,
	    &r)) > 0; off += used) {
		if (r.seq >= max)
			max = r.seq + 1;
		spool_rec_release(&r);
	}
	if (off < n)
		log_warn("spool %s: %zu byte(s) of a torn record at the end "
		    "ignored", f->path, n - off);
	done = xcalloc(max + 1, 1);
	for (off = SPOOL_MAGICLEN; (used = spool_decode(buf + off, n - off,
	    &r)) > 0; off += used) {
		if (r.type == 'D')
			done[r.seq] = 1;
		spool_rec_release(&r);
	}
	for (off = SPOOL_MAGICLEN; (used = spool_decode(buf + off, n - off,
	    &r)) > 0; off += used) {
		if (r.type == 'R' && !done[r.seq]) {
			done[r.seq] = 1;	/* a seq is replayed once */
			ref.file = f;
			ref.seq = r.seq;
			f->live++;
			sp->pending++;
			count++;
			cb(r.argc, r.argv, r.len, &ref, arg);
		}
		spool_rec_release(&r);
	}
	free(done);
	f->next_seq = max;
	return (count);
}

unsigned
spool_adopt(struct spool *sp, spool_replay_cb cb, void *arg)
{
	DIR			*d;
	struct dirent		*de;
	struct spool_file	*f;
	char			*path, *buf;
	size_t			 n;
	unsigned		 total = 0, count;
	int			 fd;

	if ((d = opendir(sp->dir)) == NULL) {
		log_warn("spool %s: %s", sp->dir, strerror(errno));
		return (0);
	}
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, "spool-", 6) != 0)
			continue;
		xasprintf(&path, "%s/%s", sp->dir, de->d_name);
		fd = open(path, O_RDWR|O_NOFOLLOW|O_CLOEXEC);
		/* Held: its worker is alive (or it is one of ours). */
		if (fd == -1 || flock(fd, LOCK_EX|LOCK_NB) == -1) {
			if (fd != -1)
				close(fd);
			free(path);
			continue;
		}
		/* Gone already: adopted and finished by another worker. */
		if ((buf = spool_slurp(fd, &n)) == NULL || n < SPOOL_MAGICLEN ||
		    memcmp(buf, SPOOL_MAGIC, SPOOL_MAGICLEN) != 0) {
			if (buf != NULL)
				log_warn("spool %s: not a spool file, left "
				    "alone", path);
			free(buf);
			close(fd);
			free(path);
			continue;
		}
		f = xcalloc(1, sizeof *f);
		f->fd = fd;
		f->path = path;
		LIST_INSERT_HEAD(&sp->files, f, entry);
		count = spool_replay(sp, f, buf, n, cb, arg);
		free(buf);
		if (count > 0)
			log_info("spool: %u command(s) of a stopped worker "
			    "from %s to send", count, path);
		total += count;
		if (f->live == 0) {
			(void)unlink(f->path);
			LIST_REMOVE(f, entry);
			spool_file_free(f);
		}
	}
	closedir(d);
	return (total);
}

int
spool_append(struct spool *sp, int argc, const char *const *argv,
    const size_t *len, struct spool_ref *ref)
{
	char	*buf;
	size_t	 n;
	int	 rc;

	ref->file = NULL;
	if (sp->cur == NULL && (sp->cur = spool_make(sp)) == NULL)
		return (-1);
	n = spool_encode(NULL, 'R', 0, argc, argv, len);
	buf = xmalloc(n);
	spool_encode(buf, 'R', sp->cur->next_seq, argc, argv, len);
	rc = spool_put(sp, sp->cur, buf, n);
	free(buf);
	if (rc == -1)
		return (-1);
	ref->file = sp->cur;
	ref->seq = sp->cur->next_seq++;
	sp->cur->live++;
	sp->pending++;
	return (0);
}

/* fsync's outcome. */
static void
spool_synced_cb(int err, void *arg)
{
	(void)arg;
	if (err != 0)
		log_warn("spool fsync: %s", strerror(err));
}

void
spool_sync(struct spool *sp)
{
	struct spool_file	*f;
	int			 fd;

	LIST_FOREACH(f, &sp->files, entry) {
		if (!f->dirty || sp->sync == NULL)
			continue;
		f->dirty = 0;
		if ((fd = dup(f->fd)) == -1)
			log_warn("spool %s: dup: %s", f->path, strerror(errno));
		else
			syncer_submit(sp->sync, fd, spool_synced_cb, NULL);
	}
}

void
spool_done(struct spool *sp, struct spool_ref *ref)
{
	struct spool_file	*f = ref->file;
	char			 buf[16];

	if (f == NULL)
		return;
	ref->file = NULL;
	sp->pending--;
	if (--f->live > 0) {
		spool_encode(buf, 'D', ref->seq, 0, NULL, NULL);
		(void)spool_put(sp, f, buf, 13);
		return;
	}
	/* All of it reached Redis: the file has nothing more to say. */
	if (unlink(f->path) == -1)
		log_warn("spool %s: %s", f->path, strerror(errno));
	if (sp->cur == f)
		sp->cur = NULL;
	LIST_REMOVE(f, entry);
	spool_file_free(f);
}

unsigned
spool_pending(const struct spool *sp)
{
	return (sp->pending);
}

void
spool_close(struct spool *sp)
{
	struct spool_file	*f;

	if (sp == NULL)
		return;
	while ((f = LIST_FIRST(&sp->files)) != NULL) {
		LIST_REMOVE(f, entry);
		/* The loop has ended: this wait blocks nobody. */
		if (f->dirty && fsync(f->fd) == -1)
			log_warn("spool fsync %s: %s", f->path,
			    strerror(errno));
		if (f->live > 0)
			log_info("spool: %u command(s) left in %s for the next "
			    "start", f->live, f->path);
		spool_file_free(f);
	}
	free(sp->dir);
	free(sp->name);
	free(sp);
}
