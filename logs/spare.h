#ifndef EXECQ_SPARE_H
#define EXECQ_SPARE_H

/*
 * Files made before they are needed. Creating a file allocates an inode,
 * which on a busy ext4 takes from 0.2 to over 1 ms, and every item makes
 * two (its <id>.log and <id>.json) on its way from the queue to its
 * answer. The spares are unnamed files of the log directory (O_TMPFILE),
 * made on a thread of their own while commands run; giving one a name
 * (linkat) costs a directory entry, some 10 us. Where the filesystem has
 * no O_TMPFILE the stock stays empty and callers create files as before.
 *
 * spare_take() runs on the loop; the stock is refilled off it.
 */

#include <sys/types.h>

struct event_base;
struct spare;

/*
 * A stock of up to n spare files in dir (borrowed: it must outlive the
 * stock), filled now on a thread of its own (a syncer: logs/syncer.h).
 * Never NULL: without a thread the stock stays empty.
 */
struct spare	*spare_create(struct event_base *, const char *dir,
		    unsigned n);
/*
 * A spare file (O_WRONLY|O_APPEND, mode 0644 less the umask, no name),
 * or -1: none left, or the filesystem has none. The caller owns it; a
 * refill is started once the stock is down to half. NULL ok.
 */
int		 spare_take(struct spare *);
/*
 * Gives the spare fd the name path; it never replaces a file. Its times
 * are set to now first: a spare's creation time says nothing of the file
 * it becomes. 0, or -1 with errno (EEXIST: the name is taken).
 */
int		 spare_link(int fd, const char *path);
/* Files in stock, for tests and the bench. */
unsigned	 spare_count(struct spare *);
/* Closes the stock. NULL ok. */
void		 spare_free(struct spare *);

#endif
