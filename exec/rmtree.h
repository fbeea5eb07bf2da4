#ifndef EXECQ_RMTREE_H
#define EXECQ_RMTREE_H

/*
 * Removes a directory tree a command left behind (its tmp dir), whatever
 * its depth: iteratively, in constant memory (two directory streams and
 * a counter), every lookup relative to a directory fd held open
 * (openat/unlinkat/renameat2 with O_NOFOLLOW|O_DIRECTORY), never
 * following a symlink (a link is removed, never its target) and never
 * entering another file system (a directory whose st_dev is not the
 * tree's is left where it is; a mount point cannot be removed or
 * renamed anyway). Whoever may still write in the tree could keep it
 * going: call it once its writers are gone.
 *
 * How: the tree is kept two levels deep. Each directory below the top is
 * opened, its files removed, its empty directories removed, and its
 * non-empty ones renamed up into the top (".execq-rm-<n>", never over
 * a name that is there), then it is removed itself; passes over the top
 * go on while they remove something. A 1000-deep chain costs about five
 * system calls a level, no stack, no list of names, and one fd more
 * than a flat dir.
 */

/*
 * Removes name in the directory parent (a file, a symlink, or a tree).
 * 0 (also when it was not there), or -1 with errno of the first thing
 * that could not be removed (what could be, is): EXDEV for another
 * file system in the tree, EBUSY for a mount point.
 */
int	rmtree_at(int parent, const char *name);

#endif
