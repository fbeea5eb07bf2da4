#ifndef EXECQ_MOUNTINFO_H
#define EXECQ_MOUNTINFO_H

/*
 * A reader of /proc/<pid>/mountinfo (proc(5)), one mount a line:
 *
 *   36 35 98:0 /mnt1 /mnt/a\040b rw,noatime master:1 - ext3 /dev/root rw
 *   id pa dev  root  mount point opts       optional  - type source super
 *
 * The optional fields (none or several) end at the " - " separator. The
 * only parser of mountinfo in execq: exec/cgroup.c and exec/confine.c
 * use it.
 */

#include <stdio.h>

/*
 * One mount. The strings are borrowed from the reader until its next
 * mountinfo_next or mountinfo_close. root, mount_point, fstype and source
 * are unescaped (the kernel writes a space as \040, a backslash as
 * \134); the options are as written, since an option's value may hold an
 * escaped comma: split them first (mountinfo_has_opt).
 */
struct mountinfo_entry {
	unsigned long	 id;
	unsigned long	 parent;
	const char	*root;		/* what of the filesystem is mounted */
	const char	*mount_point;
	const char	*opts;		/* per mount: "rw,nosuid,relatime" */
	const char	*fstype;	/* "ext4", "cgroup2" */
	const char	*source;	/* "/dev/sda1", "none" */
	const char	*super_opts;	/* per superblock: "rw,pids" */
};

/* A mountinfo file being read (plain data, embedded by the caller). */
struct mountinfo {
	FILE			*f;
	char			*line;
	size_t			 size;
	struct mountinfo_entry	 e;
};

/* Opens path (NULL: /proc/self/mountinfo): 0, or -1 with errno set. */
int	 mountinfo_open(struct mountinfo *, const char *path);
/*
 * The next mount, or NULL at the end of the file (or on a read error).
 * A line that does not parse (too few fields, no separator) is skipped.
 */
const struct mountinfo_entry *mountinfo_next(struct mountinfo *);
/* Closes the file and frees the line; safe after a failed open. */
void	 mountinfo_close(struct mountinfo *);

/* 1 if opts, comma-separated, holds exactly name ("pids", "nosuid"). */
int	 mountinfo_has_opt(const char *opts, const char *name);

#endif
