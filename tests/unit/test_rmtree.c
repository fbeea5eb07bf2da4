/*
 * rmtree: a 1000-deep chain and a wide tree removed whole, links that
 * point outside removed without their targets, directories a command made
 * unreadable, names the flattening would use already taken, and a mount
 * point inside the tree left alone (where this process may mount).
 */

#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "exec/rmtree.h"

/* A temp dir with outside/marker beside the tree to be. */
struct fixture {
	char	dir[PATH_MAX];
	char	outside[PATH_MAX + 16];
	int	fd;
};

static int
setup(void **state)
{
	struct fixture	*fx = calloc(1, sizeof *fx);
	int		 fd;

	snprintf(fx->dir, sizeof fx->dir, "/tmp/execq-rmtree-XXXXXX");
	assert_non_null(mkdtemp(fx->dir));
	fx->fd = open(fx->dir, O_RDONLY|O_DIRECTORY|O_CLOEXEC);
	assert_true(fx->fd != -1);
	snprintf(fx->outside, sizeof fx->outside, "%s/outside", fx->dir);
	assert_int_equal(mkdir(fx->outside, 0755), 0);
	fd = openat(fx->fd, "outside/marker", O_WRONLY|O_CREAT|O_CLOEXEC, 0644);
	assert_true(fd != -1);
	assert_int_equal(write(fd, "keep\n", 5), 5);
	close(fd);
	*state = fx;
	return (0);
}

static int
teardown(void **state)
{
	struct fixture	*fx = *state;

	(void)rmtree_at(fx->fd, "tree");
	(void)rmtree_at(fx->fd, "outside");
	close(fx->fd);
	rmdir(fx->dir);
	free(fx);
	return (0);
}

/* How many fds this process has open. */
static int
open_fds(void)
{
	DIR	*d = opendir("/proc/self/fd");
	int	 n = 0;

	assert_non_null(d);
	while (readdir(d) != NULL)
		n++;
	closedir(d);
	return (n);
}

/* Makes name (a file) in dir with a few bytes. */
static void
put(int dir, const char *name)
{
	int	fd = openat(dir, name, O_WRONLY|O_CREAT|O_EXCL|O_CLOEXEC, 0644);

	assert_true(fd != -1);
	assert_int_equal(write(fd, "x\n", 2), 2);
	close(fd);
}

/* The marker outside is still there, unchanged. */
static void
marker_kept(struct fixture *fx)
{
	char	buf[16];
	ssize_t	n;
	int	fd;

	fd = openat(fx->fd, "outside/marker", O_RDONLY|O_CLOEXEC);
	assert_true(fd != -1);
	n = read(fd, buf, sizeof buf);
	close(fd);
	assert_int_equal(n, 5);
	assert_memory_equal(buf, "keep\n", 5);
}

/*
 * tree/d/d/.../d, depth levels, a file at every level and, halfway down,
 * links to the outside dir and to the marker; the deepest dir's fd.
 */
static int
make_chain(struct fixture *fx, int top, int depth)
{
	int	fd, next, i;

	fd = dup(top);
	for (i = 0; i < depth; i++) {
		assert_int_equal(mkdirat(fd, "d", 0755), 0);
		put(fd, "f");
		if (i == depth / 2) {
			assert_int_equal(symlinkat(fx->outside, fd, "out"), 0);
			assert_int_equal(symlinkat("../../../../outside/marker",
			    fd, "rel"), 0);
			assert_int_equal(mkfifoat(fd, "fifo", 0600), 0);
		}
		next = openat(fd, "d", O_RDONLY|O_DIRECTORY|O_CLOEXEC);
		assert_true(next != -1);
		close(fd);
		fd = next;
	}
	return (fd);
}

/* 1000 levels (the old walk stopped at 256): all gone, the outside kept. */
static void
test_rmtree_deep_chain(void **state)
{
	struct fixture	*fx = *state;
	int		 top, fds;

	assert_int_equal(mkdirat(fx->fd, "tree", 0700), 0);
	top = openat(fx->fd, "tree", O_RDONLY|O_DIRECTORY|O_CLOEXEC);
	assert_true(top != -1);
	close(make_chain(fx, top, 1000));
	close(top);
	fds = open_fds();
	assert_int_equal(rmtree_at(fx->fd, "tree"), 0);
	assert_int_equal(faccessat(fx->fd, "tree", F_OK, AT_SYMLINK_NOFOLLOW),
	    -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(open_fds(), fds);
	marker_kept(fx);
	assert_int_equal(access(fx->outside, F_OK), 0);
}

/* Three wide, six deep, a deep chain in one branch, names already taken. */
static void
make_wide(struct fixture *fx, int dir, int depth)
{
	char	name[8];
	int	fd, i;

	put(dir, "file");
	if (depth == 0) {
		close(make_chain(fx, dir, 300));
		return;
	}
	for (i = 0; i < 3; i++) {
		snprintf(name, sizeof name, "w%d", i);
		assert_int_equal(mkdirat(dir, name, 0755), 0);
		fd = openat(dir, name, O_RDONLY|O_DIRECTORY|O_CLOEXEC);
		assert_true(fd != -1);
		if (i != 0 || depth > 4)
			make_wide(fx, fd, depth - 1);
		close(fd);
	}
}

static void
test_rmtree_wide(void **state)
{
	struct fixture	*fx = *state;
	int		 top, i;
	char		 name[32];

	assert_int_equal(mkdirat(fx->fd, "tree", 0700), 0);
	top = openat(fx->fd, "tree", O_RDONLY|O_DIRECTORY|O_CLOEXEC);
	assert_true(top != -1);
	for (i = 0; i < 3; i++) {	/* the names it moves dirs up to */
		snprintf(name, sizeof name, ".execq-rm-%d", i);
		put(top, name);
	}
	assert_int_equal(mkdirat(top, ".execq-rm-3", 0700), 0);
	make_wide(fx, top, 6);
	close(top);
	assert_int_equal(rmtree_at(fx->fd, "tree"), 0);
	assert_int_equal(faccessat(fx->fd, "tree", F_OK, AT_SYMLINK_NOFOLLOW),
	    -1);
	marker_kept(fx);
}

/* A link, a file, nothing: the name goes, never what a link points to. */
static void
test_rmtree_not_a_tree(void **state)
{
	struct fixture	*fx = *state;

	assert_int_equal(symlinkat(fx->outside, fx->fd, "tree"), 0);
	assert_int_equal(rmtree_at(fx->fd, "tree"), 0);
	marker_kept(fx);
	put(fx->fd, "tree");
	assert_int_equal(rmtree_at(fx->fd, "tree"), 0);
	assert_int_equal(rmtree_at(fx->fd, "tree"), 0);	/* not there: 0 */
	assert_int_equal(faccessat(fx->fd, "tree", F_OK, AT_SYMLINK_NOFOLLOW),
	    -1);
}

/* Directories made unreadable or unwritable by their owner still go. */
static void
test_rmtree_modes(void **state)
{
	struct fixture	*fx = *state;

	assert_int_equal(mkdirat(fx->fd, "tree", 0700), 0);
	assert_int_equal(mkdirat(fx->fd, "tree/a", 0700), 0);
	assert_int_equal(mkdirat(fx->fd, "tree/a/b", 0700), 0);
	put(fx->fd, "tree/a/b/f");
	assert_int_equal(mkdirat(fx->fd, "tree/a/b/c", 0700), 0);
	put(fx->fd, "tree/a/b/c/f");
	assert_int_equal(fchmodat(fx->fd, "tree/a/b/c", 0500, 0), 0);
	assert_int_equal(fchmodat(fx->fd, "tree/a/b", 0, 0), 0);
	assert_int_equal(fchmodat(fx->fd, "tree/a", 0500, 0), 0);
	assert_int_equal(rmtree_at(fx->fd, "tree"), 0);
	assert_int_equal(faccessat(fx->fd, "tree", F_OK, AT_SYMLINK_NOFOLLOW),
	    -1);
}

/*
 * A file system mounted inside the tree is not entered: its file stays,
 * the walk says why, and once it is unmounted the rest goes. Only where
 * this process may have a mount namespace of its own.
 */
static void
test_rmtree_mount_point(void **state)
{
	struct fixture	*fx = *state;
	char		 m[PATH_MAX + 16];

	if (unshare(CLONE_NEWNS) == -1 ||
	    mount("none", "/", "none", MS_REC|MS_PRIVATE, NULL) == -1) {
		print_message("no mount namespace here: skipped\n");
		skip();
	}
	assert_int_equal(mkdirat(fx->fd, "tree", 0700), 0);
	assert_int_equal(mkdirat(fx->fd, "tree/a", 0700), 0);
	assert_int_equal(mkdirat(fx->fd, "tree/a/m", 0700), 0);
	put(fx->fd, "tree/a/f");
	snprintf(m, sizeof m, "%s/tree/a/m", fx->dir);
	assert_int_equal(mount("execq-test", m, "tmpfs", 0, "size=64k"), 0);
	put(fx->fd, "tree/a/m/kept");
	assert_int_equal(rmtree_at(fx->fd, "tree"), -1);
	assert_true(errno == EXDEV || errno == EBUSY);
	assert_int_equal(faccessat(fx->fd, "tree/a/m/kept", F_OK, 0), 0);
	assert_int_equal(umount2(m, MNT_DETACH), 0);
	assert_int_equal(rmtree_at(fx->fd, "tree"), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_rmtree_deep_chain, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_rmtree_wide, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_rmtree_not_a_tree, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_rmtree_modes, setup,
		    teardown),
		/* Last: it leaves this process in a mount namespace of its own. */
		cmocka_unit_test_setup_teardown(test_rmtree_mount_point, setup,
		    teardown),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
