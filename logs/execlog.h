#ifndef EXECQ_EXECLOG_H
#define EXECQ_EXECLOG_H

/*
 * Durable per-process output logs: <dir>/<id>.log holds the raw bytes as
 * they arrive (tail -f works), <dir>/<id>.json the metadata, replaced
 * atomically. Ids are checked before any path is built.
 */

#include <sys/types.h>

#include <stddef.h>

struct execlog;

/* 1 if id is safe as a file name: no '/', no leading '.', not empty. */
int		 execlog_id_ok(const char *id);
/*
 * Opens path (open(2) flags and mode) without following a symlink, and
 * only if it is a regular file of the worker's own with no other name:
 * a link planted in the log dir cannot turn a command's output, or a
 * read of its log, to another file. fd, or -1 with errno (ELOOP: a
 * symlink; EPERM: anything else refused).
 */
int		 execlog_open_safe(const char *path, int flags, mode_t mode);
/* The same check on an open fd: 0, or -1 with errno EPERM. */
int		 execlog_fd_ok(int fd);
/* What went wrong, worded for an answer (ELOOP, EPERM explained). */
const char	*execlog_strerror(int err);
/*
 * Can logs be written in dir at all? Makes it (again) if needed, then
 * writes and removes a file of its own (".probe-<pid>": no item id starts
 * with a dot). 0, or -1 with errno.
 */
int		 execlog_probe(const char *dir);
/* Creates dir and its parents (0755); 0 or -1 with errno. */
int		 execlog_mkdir(const char *dir);
/*
 * Opens (append, create) <dir>/<id>.log with execlog_open_safe(), making
 * dir again first if it vanished. spare (logs/spare.h, or -1) is taken:
 * it becomes the log when no log of that id exists. NULL with errno on
 * failure.
 *
 * The log is stamped now (a spare was made earlier) and holds a shared
 * flock(2) lock for as long as its fd is open, the detached fd too: that
 * lock is what tells the cleaner (logs/cleanup.h) that its command runs.
 * A spare is locked before it is named.
 */
struct execlog	*execlog_open(const char *dir, const char *id, int spare);
/* Writes all of buf, retrying short writes and EINTR; 0 or -1 (errno). */
int		 execlog_write(struct execlog *, const void *buf, size_t len);
const char	*execlog_path(const struct execlog *);
/* Bytes written so far. */
unsigned long long execlog_size(const struct execlog *);
/*
 * Takes the fd out of the log (the caller then owns it, e.g. to fsync it
 * off the event loop) or -1; the log keeps its path for reporting. The
 * file is stamped now, its end; it stays locked until the fd is closed.
 */
int		 execlog_detach_fd(struct execlog *);
/* Closes the fd if still attached (no fsync) and frees. NULL ok. */
void		 execlog_free(struct execlog *);
/*
 * Writes <dir>/<id>.json atomically, mode 0600: a new one is written
 * whole and then linked under its name; one that is there already (a
 * session's "running" file) is replaced by a temporary file and a
 * rename. spare (logs/spare.h, or -1) is taken and used as the file.
 * 0 or -1 with errno; nothing is left behind on failure.
 */
int		 execlog_write_meta(const char *dir, const char *id,
		    const char *json, size_t len, int spare);

#endif
