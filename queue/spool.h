#ifndef EXECQ_SPOOL_H
#define EXECQ_SPOOL_H

/*
 * The spool: Redis commands (answers, callbacks, acks) that could not
 * reach Redis, appended to files in the state directory so that none is
 * lost when the worker stops or dies before Redis is back. The worker
 * writing a file holds it under flock(2); a file nobody holds belongs to
 * a worker that is gone, and the next worker on the host that starts
 * adopts it and sends what is in it.
 *
 * Records are written from the loop (the page cache) and fsync'd by the
 * syncer thread. When Redis confirms a record it is marked done, so an
 * adopted file replays only what never arrived; a file whose records are
 * all done is removed.
 */

#include <stddef.h>
#include <stdint.h>

struct spool;
struct spool_file;
struct syncer;

/* Where a spooled command is, to mark it done. */
struct spool_ref {
	struct spool_file	*file;		/* NULL: not spooled */
	uint32_t		 seq;
};

/* A command read back from an adopted file; everything is borrowed. */
typedef void (*spool_replay_cb)(int argc, const char **argv,
    const size_t *len, const struct spool_ref *, void *arg);

/*
 * Opens the spool in dir (created, 0700). Files are named
 * spool-<name>-<time>-<n>; name is the worker's consumer name. sync may
 * be NULL (fsync is then skipped). NULL with *cause on error.
 */
struct spool	*spool_open(const char *dir, const char *name,
		    struct syncer *sync, char **cause);
/*
 * Adopts every spool file in the directory whose writer is gone and calls
 * cb for each command in it not yet done, oldest first. Returns how many.
 */
unsigned	 spool_adopt(struct spool *, spool_replay_cb, void *arg);
/*
 * Appends a command; ref says where it went. -1 (logged once a second at
 * most) when the disk refuses: the command then stays in memory only.
 */
int		 spool_append(struct spool *, int argc, const char *const *argv,
		    const size_t *len, struct spool_ref *ref);
/* Hands what was appended since the last call to the syncer (fsync). */
void		 spool_sync(struct spool *);
/* Redis has the command: marks it done; a file all done is removed. */
void		 spool_done(struct spool *, struct spool_ref *);
/* Commands spooled and not yet done. */
unsigned	 spool_pending(const struct spool *);
/*
 * Closes every file (what is not done stays for the next start, its
 * fsync handed to the syncer first) and frees the spool. NULL ok.
 */
void		 spool_close(struct spool *);

/*
 * The record format, for tests: one record encoded into buf (NULL: only
 * the size), and one decoded from p (-1 if it is torn or malformed).
 */
size_t		 spool_encode(char *buf, char type, uint32_t seq, int argc,
		    const char *const *argv, const size_t *len);
struct spool_rec {
	char		 type;		/* 'R' a command, 'D' done */
	uint32_t	 seq;
	int		 argc;
	const char	**argv;		/* malloc'd array into p */
	size_t		*len;		/* malloc'd */
};
ssize_t		 spool_decode(const char *p, size_t n, struct spool_rec *);
void		 spool_rec_release(struct spool_rec *);

#endif
