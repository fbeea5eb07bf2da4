/* Removes a command's leftover tree iteratively, flattening it as it goes. */

#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "exec/rmtree.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE	(1 << 0)
#endif

#define RMTREE_DIR_FLAGS	(O_RDONLY|O_DIRECTORY|O_NOFOLLOW|O_CLOEXEC)

/* One removal. */
struct rmtree {
	int		 top;		/* the tree's root, open */
	dev_t		 dev;		/* its file system */
	unsigned long	 seq;		/* the next moved directory's name */
	int		 progress;	/* this pass removed or moved something */
	int		 err;		/* the first errno that stopped one */
};

/* Records errno as t's first failure; -1. */
static int
rmtree_fail(struct rmtree *t)
{
	if (t->err == 0)
		t->err = errno;
	return (-1);
}

/* 1 for "." and "..". */
static int
rmtree_dot(const char *name)
{
	return (name[0] == '.' && (name[1] == '\0' ||
	    (name[1] == '.' && name[2] == '\0')));
}

/*
 * Removes name in dir unless it is a directory with something inside:
 * 0 if it is gone, 1 if it is such a directory, -1 if it stays.
 */
static int
rmtree_unlink(struct rmtree *t, int dir, const char *name, unsigned char type)
{
	int	rc;

	if (type == DT_DIR)
		rc = unlinkat(dir, name, AT_REMOVEDIR);
	else if ((rc = unlinkat(dir, name, 0)) == -1 &&
	    (errno == EISDIR || errno == EPERM))
		rc = unlinkat(dir, name, AT_REMOVEDIR);
	if (rc == -1 && type == DT_DIR && errno == ENOTDIR)
		rc = unlinkat(dir, name, 0);	/* d_type was stale */
	if (rc == 0 || errno == ENOENT) {
		t->progress = 1;
		return (0);
	}
	if (errno == ENOTEMPTY || errno == EEXIST)
		return (1);
	return (rmtree_fail(t));
}

/* 0 if fd is on the tree's file system, else -1 with errno. */
static int
rmtree_same_fs(const struct rmtree *t, int fd)
{
	struct stat	st;

	if (fstat(fd, &st) == -1)
		return (-1);
	if (st.st_dev != t->dev) {
		errno = EXDEV;
		return (-1);
	}
	return (0);
}

/*
 * Gives the owner of the directory name in dir its rights back (a
 * command may take them away, and a worker that is not root then could
 * neither read, empty nor move it): through an O_PATH fd, never through
 * the name, which could be a link by now. 0 or -1 with errno.
 */
static int
rmtree_give_back(const struct rmtree *t, int dir, const char *name)
{
	char	path[64];
	int	pfd, rc = -1, saved_errno;

	pfd = openat(dir, name, O_PATH|O_DIRECTORY|O_NOFOLLOW|O_CLOEXEC);
	if (pfd == -1)
		return (-1);
	snprintf(path, sizeof path, "/proc/self/fd/%d", pfd);
	if (rmtree_same_fs(t, pfd) == 0)
		rc = chmod(path, S_IRWXU);
	saved_errno = errno;
	close(pfd);
	errno = saved_errno;
	return (rc);
}

/*
 * name in dir as a directory stream, if it is on the tree's file system;
 * a directory the command made unwritable gets u+rwx first (it goes
 * anyway). NULL with errno.
 */
static DIR *
rmtree_opendir(struct rmtree *t, int dir, const char *name)
{
	struct stat	 st;
	DIR		*d;
	int		 fd, saved_errno;

	fd = openat(dir, name, RMTREE_DIR_FLAGS);
	if (fd == -1 && errno == EACCES && rmtree_give_back(t, dir, name) == 0)
		fd = openat(dir, name, RMTREE_DIR_FLAGS);
	if (fd == -1)
		return (NULL);
	if (rmtree_same_fs(t, fd) == -1 || fstat(fd, &st) == -1)
		goto fail;
	if ((st.st_mode & S_IRWXU) != S_IRWXU)
		(void)fchmod(fd, (st.st_mode & 07777) | S_IRWXU);
	if ((d = fdopendir(fd)) == NULL)
		goto fail;
	return (d);

fail:
	saved_errno = errno;
	close(fd);
	errno = saved_errno;
	return (NULL);
}

/* Moves dir/name up into the top, under a name nobody there uses. */
static void
rmtree_hoist(struct rmtree *t, int dir, const char *name)
{
	char	up[32];
	int	given = 0;

	for (;;) {
		snprintf(up, sizeof up, ".execq-rm-%lu", t->seq);
		if (renameat2(dir, name, t->top, up, RENAME_NOREPLACE) == 0) {
			t->progress = 1;
			return;
		}
		if (errno == EEXIST)
			t->seq++;
		else if (errno != EACCES || given++ ||
		    rmtree_give_back(t, dir, name) == -1)
			break;
	}
	(void)rmtree_fail(t);
}

/*
 * Empties the directory name in the top, its directories that are not
 * empty moved up into the top, and removes it.
 */
static void
rmtree_flatten(struct rmtree *t, const char *name)
{
	struct dirent	*de;
	DIR		*d;

	if ((d = rmtree_opendir(t, t->top, name)) == NULL) {
		(void)rmtree_fail(t);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (!rmtree_dot(de->d_name) &&
		    rmtree_unlink(t, dirfd(d), de->d_name, de->d_type) == 1)
			rmtree_hoist(t, dirfd(d), de->d_name);
	}
	closedir(d);
	if (rmtree_unlink(t, t->top, name, DT_DIR) == 1)
		(void)rmtree_fail(t);	/* something in it stayed */
}

int
rmtree_at(int parent, const char *name)
{
	struct rmtree	 t;
	struct stat	 st;
	struct dirent	*de;
	DIR		*d;
	int		 rc;

	memset(&t, 0, sizeof t);
	if ((rc = rmtree_unlink(&t, parent, name, DT_UNKNOWN)) != 1)
		return (rc);
	if (fstat(parent, &st) == -1)
		return (-1);
	t.dev = st.st_dev;
	if ((d = rmtree_opendir(&t, parent, name)) == NULL)
		return (-1);
	t.top = dirfd(d);
	/* Each pass removes or moves up; a pass that does neither ends it. */
	do {
		t.progress = 0;
		rewinddir(d);
		while ((de = readdir(d)) != NULL) {
			if (!rmtree_dot(de->d_name) && rmtree_unlink(&t, t.top,
			    de->d_name, de->d_type) == 1)
				rmtree_flatten(&t, de->d_name);
		}
	} while ((rc = rmtree_unlink(&t, parent, name, DT_DIR)) == 1 &&
	    t.progress);
	closedir(d);
	if (rc == 0)
		return (0);
	errno = t.err != 0 ? t.err : ENOTEMPTY;
	return (-1);
}
