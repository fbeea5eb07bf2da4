/*
 * mountinfo: lines written to a temp file, read back as structs: escapes,
 * optional fields (none, one, several), the " - " separator, lines that
 * are not mounts; and this process's own mountinfo.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "exec/mountinfo.h"

static const char sample[] =
    /* no optional field */
    "22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw,errors=remount-ro\n"
    /* one */
    "25 22 0:22 / /sys/fs/cgroup rw,nosuid,nodev,noexec shared:9 - "
    "cgroup2 cgroup2 rw,nsdelegate\n"
    /* several, and escapes in root, mount point and source */
    "36 22 98:0 /mnt\\0401 /mnt/a\\040b\\134c rw,noatime master:1 "
    "shared:2 propagate_from:3 - ext3 /dev/my\\011disk rw\n"
    /* not a mount: no separator, too few fields, a bad id */
    "40 22 0:5 / /nosep rw shared:4 ext4 /dev/x rw\n"
    "41 22\n"
    "x1 22 0:5 / /badid rw - tmpfs tmpfs rw\n"
    /* a v1 controller, a field that looks like the separator's dash */
    "42 25 0:30 / /sys/fs/cgroup/pids rw - cgroup -x rw,pids\n"
    /* no super options, no trailing newline */
    "43 22 0:6 / /last rw - proc proc";

/* Writes text to a temp file; its path (allocated). */
static char *
write_temp(const char *text)
{
	char	*path = strdup("/tmp/test_mountinfo.XXXXXX");
	int	 fd;

	assert_non_null(path);
	fd = mkstemp(path);
	assert_true(fd != -1);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return (path);
}

/* The sample, read line by line. */
static void
test_mountinfo_fields(void **state)
{
	struct mountinfo		 mi;
	const struct mountinfo_entry	*e;
	char				*path = write_temp(sample);

	(void)state;
	assert_int_equal(mountinfo_open(&mi, path), 0);

	assert_non_null(e = mountinfo_next(&mi));
	assert_int_equal(e->id, 22);
	assert_int_equal(e->parent, 1);
	assert_string_equal(e->root, "/");
	assert_string_equal(e->mount_point, "/");
	assert_string_equal(e->opts, "rw,relatime");
	assert_string_equal(e->fstype, "ext4");
	assert_string_equal(e->source, "/dev/sda1");
	assert_string_equal(e->super_opts, "rw,errors=remount-ro");

	assert_non_null(e = mountinfo_next(&mi));
	assert_int_equal(e->id, 25);
	assert_string_equal(e->mount_point, "/sys/fs/cgroup");
	assert_string_equal(e->opts, "rw,nosuid,nodev,noexec");
	assert_string_equal(e->fstype, "cgroup2");
	assert_string_equal(e->super_opts, "rw,nsdelegate");

	assert_non_null(e = mountinfo_next(&mi));
	assert_int_equal(e->id, 36);
	assert_int_equal(e->parent, 22);
	assert_string_equal(e->root, "/mnt 1");
	assert_string_equal(e->mount_point, "/mnt/a b\\c");
	assert_string_equal(e->opts, "rw,noatime");
	assert_string_equal(e->fstype, "ext3");
	assert_string_equal(e->source, "/dev/my\tdisk");
	assert_string_equal(e->super_opts, "rw");

	assert_non_null(e = mountinfo_next(&mi));	/* 40, 41, x1 skipped */
	assert_int_equal(e->id, 42);
	assert_string_equal(e->fstype, "cgroup");
	assert_string_equal(e->source, "-x");
	assert_true(mountinfo_has_opt(e->super_opts, "pids"));

	assert_non_null(e = mountinfo_next(&mi));
	assert_int_equal(e->id, 43);
	assert_string_equal(e->mount_point, "/last");
	assert_string_equal(e->source, "proc");
	assert_string_equal(e->super_opts, "");

	assert_null(mountinfo_next(&mi));
	assert_null(mountinfo_next(&mi));
	mountinfo_close(&mi);
	unlink(path);
	free(path);
}

/* Options match whole, never a prefix or a value. */
static void
test_mountinfo_has_opt(void **state)
{
	(void)state;
	assert_true(mountinfo_has_opt("rw,nosuid,nodev", "rw"));
	assert_true(mountinfo_has_opt("rw,nosuid,nodev", "nosuid"));
	assert_true(mountinfo_has_opt("rw,nosuid,nodev", "nodev"));
	assert_false(mountinfo_has_opt("rw,nosuid,nodev", "nosu"));
	assert_false(mountinfo_has_opt("rw,nodiratime", "noatime"));
	assert_false(mountinfo_has_opt("rw,pids=1", "pids"));
	assert_true(mountinfo_has_opt(",,pids,", "pids"));
	assert_false(mountinfo_has_opt("", "rw"));
}

/* A file that is not there fails with errno; close is still safe. */
static void
test_mountinfo_missing(void **state)
{
	struct mountinfo	mi;

	(void)state;
	assert_int_equal(mountinfo_open(&mi, "/nonexistent/mountinfo"), -1);
	assert_int_equal(errno, ENOENT);
	mountinfo_close(&mi);
}

/* This process's own mountinfo has a root mount. */
static void
test_mountinfo_self(void **state)
{
	struct mountinfo		 mi;
	const struct mountinfo_entry	*e;
	int				 root = 0;

	(void)state;
	assert_int_equal(mountinfo_open(&mi, NULL), 0);
	while ((e = mountinfo_next(&mi)) != NULL)
		root |= strcmp(e->mount_point, "/") == 0;
	mountinfo_close(&mi);
	assert_true(root);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mountinfo_fields),
		cmocka_unit_test(test_mountinfo_has_opt),
		cmocka_unit_test(test_mountinfo_missing),
		cmocka_unit_test(test_mountinfo_self),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
