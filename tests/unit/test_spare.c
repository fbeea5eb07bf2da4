/*
 * Unit tests for logs/spare.c, files made ahead, and their use by
 * logs/execlog.c: a spare becomes a log or a metadata file with the
 * content, mode and name the plain path gives, and never replaces a file.
 */

#include <sys/stat.h>
#include <sys/time.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>

#include "logs/execlog.h"
#include "logs/spare.h"

struct fixture {
	char			 dir[64];
	struct event_base	*base;
};

static int
setup(void **state)
{
	struct fixture	*fx;

	fx = calloc(1, sizeof *fx);
	assert_non_null(fx);
	snprintf(fx->dir, sizeof fx->dir, "/tmp/test_spare.XXXXXX");
	assert_non_null(mkdtemp(fx->dir));
	fx->base = event_base_new();
	assert_non_null(fx->base);
	*state = fx;
	return (0);
}

static int
teardown(void **state)
{
	struct fixture	*fx = *state;
	char		 cmd[128];

	event_base_free(fx->base);
	snprintf(cmd, sizeof cmd, "rm -rf %s", fx->dir);
	assert_int_equal(system(cmd), 0);
	free(fx);
	return (0);
}

/* Runs the loop until the stock holds n (the refill's barrier). */
static void
wait_stock(struct fixture *fx, struct spare *s, unsigned n)
{
	struct timeval	tv = { 0, 10000 };
	int		i;

	for (i = 0; i < 3000 && spare_count(s) < n; i++)
		event_base_loopexit(fx->base, &tv),
		event_base_dispatch(fx->base);
	assert_int_equal(spare_count(s), n);
}

/* Entries of dir, less . and .. */
static int
entries(const char *dir)
{
	char	cmd[128], buf[32];
	FILE	*p;
	int	n = -1;

	snprintf(cmd, sizeof cmd, "ls -A %s | wc -l", dir);
	p = popen(cmd, "r");
	assert_non_null(p);
	if (fgets(buf, sizeof buf, p) != NULL)
		n = atoi(buf);
	pclose(p);
	return (n);
}

static void
read_file(const char *path, char *buf, size_t size)
{
	ssize_t	n;
	int	fd;

	fd = open(path, O_RDONLY|O_CLOEXEC);
	assert_true(fd != -1);
	n = read(fd, buf, size - 1);
	assert_true(n >= 0);
	buf[n] = '\0';
	close(fd);
}

/*
 * The stock fills off the loop, holds no names, and refills once it is
 * down to half.
 */
static void
test_spare_stock(void **state)
{
	struct fixture	*fx = *state;
	struct spare	*s;
	struct stat	 st;
	int		 fd;

	s = spare_create(fx->base, fx->dir, 3);
	wait_stock(fx, s, 3);
	assert_int_equal(entries(fx->dir), 0);	/* unnamed */
	fd = spare_take(s);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_nlink, 0);
	assert_int_equal(st.st_size, 0);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	assert_true(fcntl(fd, F_GETFL) & O_APPEND);
	close(fd);
	fd = spare_take(s);		/* 1 of 3 left: a refill */
	assert_true(fd >= 0);
	close(fd);
	wait_stock(fx, s, 3);
	spare_free(s);
	assert_int_equal(entries(fx->dir), 0);
}

/* A stock of 0 gives nothing; so does NULL. */
static void
test_spare_none(void **state)
{
	struct fixture	*fx = *state;
	struct spare	*s;

	s = spare_create(fx->base, fx->dir, 0);
	assert_int_equal(spare_take(s), -1);
	assert_int_equal(spare_count(s), 0);
	spare_free(s);
	assert_int_equal(spare_take(NULL), -1);
	spare_free(NULL);
}

/* A spare becomes the log: linked, appended to, 0644 less the umask. */
static void
test_spare_log(void **state)
{
	struct fixture	*fx = *state;
	struct spare	*s;
	struct execlog	*lg;
	struct stat	 st;
	char		 path[128], buf[64];
	mode_t		 mask = umask(022);

	s = spare_create(fx->base, fx->dir, 2);
	wait_stock(fx, s, 2);
	lg = execlog_open(fx->dir, "a1", spare_take(s));
	assert_non_null(lg);
	assert_int_equal(execlog_write(lg, "one\n", 4), 0);
	execlog_free(lg);
	snprintf(path, sizeof path, "%s/a1.log", fx->dir);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0644);
	assert_int_equal(st.st_nlink, 1);
	/* The log is there: the spare is not linked, the log appended to. */
	lg = execlog_open(fx->dir, "a1", spare_take(s));
	assert_non_null(lg);
	assert_int_equal(execlog_write(lg, "two\n", 4), 0);
	execlog_free(lg);
	read_file(path, buf, sizeof buf);
	assert_string_equal(buf, "one\ntwo\n");
	assert_int_equal(entries(fx->dir), 1);
	/* A bad id closes the spare it was given. */
	errno = 0;
	assert_null(execlog_open(fx->dir, "../x", spare_take(s)));
	assert_int_equal(errno, EINVAL);
	spare_free(s);
	umask(mask);
}

/* A spare becomes <id>.json: 0600, replaced whole, no temp file left. */
static void
test_spare_meta(void **state)
{
	struct fixture	*fx = *state;
	struct spare	*s;
	struct stat	 st;
	char		 path[128], buf[64];

	s = spare_create(fx->base, fx->dir, 2);
	wait_stock(fx, s, 2);
	assert_int_equal(execlog_write_meta(fx->dir, "m1", "{\"a\":1}", 7,
	    spare_take(s)), 0);
	snprintf(path, sizeof path, "%s/m1.json", fx->dir);
	read_file(path, buf, sizeof buf);
	assert_string_equal(buf, "{\"a\":1}");
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	/* Again, shorter: the whole file is replaced. */
	assert_int_equal(execlog_write_meta(fx->dir, "m1", "{}", 2,
	    spare_take(s)), 0);
	read_file(path, buf, sizeof buf);
	assert_string_equal(buf, "{}");
	/* Without a spare, the same. */
	assert_int_equal(execlog_write_meta(fx->dir, "m1", "[]", 2, -1), 0);
	read_file(path, buf, sizeof buf);
	assert_string_equal(buf, "[]");
	assert_int_equal(entries(fx->dir), 1);
	assert_int_equal(execlog_write_meta(fx->dir, ".x", "{}", 2,
	    spare_take(s)), -1);
	assert_int_equal(errno, EINVAL);
	spare_free(s);
}

/*
 * A file or a symlink already where the temporary file goes (a leftover,
 * or planted) is removed, never written through: with a spare or not.
 * (With a spare, the temporary file is only used to replace an
 * <id>.json already there: p0.json is made first.)
 */
static void
test_spare_meta_planted_tmp(void **state)
{
	struct fixture	*fx = *state;
	struct spare	*s;
	char		 tmp[128], target[128], path[128], buf[64];
	int		 fd, i;

	s = spare_create(fx->base, fx->dir, 2);
	wait_stock(fx, s, 2);
	snprintf(target, sizeof target, "%s/target", fx->dir);
	fd = open(target, O_WRONLY|O_CREAT|O_EXCL|O_CLOEXEC, 0600);
	assert_true(fd != -1);
	assert_int_equal(write(fd, "keep", 4), 4);
	close(fd);
	assert_int_equal(execlog_write_meta(fx->dir, "p0", "{}", 2, -1), 0);
	for (i = 0; i < 2; i++) {
		snprintf(tmp, sizeof tmp, "%s/.p%d.json.tmp", fx->dir, i);
		assert_int_equal(symlink(target, tmp), 0);
		assert_int_equal(execlog_write_meta(fx->dir, i == 0 ? "p0" :
		    "p1", "{\"n\":1}", 7, i == 0 ? spare_take(s) : -1), 0);
		snprintf(path, sizeof path, "%s/p%d.json", fx->dir, i);
		read_file(path, buf, sizeof buf);
		assert_string_equal(buf, "{\"n\":1}");
		assert_int_equal(access(tmp, F_OK), -1);
	}
	read_file(target, buf, sizeof buf);
	assert_string_equal(buf, "keep");
	assert_int_equal(entries(fx->dir), 3);
	spare_free(s);
}

/*
 * With a spare and no <id>.json yet, the spare, written first, is named
 * <id>.json at once: a file planted where the temporary file goes is
 * neither used nor written through.
 */
static void
test_spare_meta_new_name(void **state)
{
	struct fixture	*fx = *state;
	struct spare	*s;
	struct stat	 st;
	char		 tmp[128], target[128], path[128], buf[64];
	int		 fd;

	s = spare_create(fx->base, fx->dir, 1);
	wait_stock(fx, s, 1);
	snprintf(target, sizeof target, "%s/target", fx->dir);
	fd = open(target, O_WRONLY|O_CREAT|O_EXCL|O_CLOEXEC, 0600);
	assert_true(fd != -1);
	assert_int_equal(write(fd, "keep", 4), 4);
	close(fd);
	snprintf(tmp, sizeof tmp, "%s/.n.json.tmp", fx->dir);
	assert_int_equal(symlink(target, tmp), 0);
	assert_int_equal(execlog_write_meta(fx->dir, "n", "{\"n\":2}", 7,
	    spare_take(s)), 0);
	snprintf(path, sizeof path, "%s/n.json", fx->dir);
	read_file(path, buf, sizeof buf);
	assert_string_equal(buf, "{\"n\":2}");
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(st.st_nlink, 1);
	read_file(target, buf, sizeof buf);
	assert_string_equal(buf, "keep");
	spare_free(s);
}

/* spare_link never replaces a name. */
static void
test_spare_link_exists(void **state)
{
	struct fixture	*fx = *state;
	struct spare	*s;
	char		 path[128], buf[16];
	int		 fd;

	snprintf(path, sizeof path, "%s/taken", fx->dir);
	fd = open(path, O_WRONLY|O_CREAT|O_EXCL|O_CLOEXEC, 0600);
	assert_true(fd != -1);
	assert_int_equal(write(fd, "old", 3), 3);
	close(fd);
	s = spare_create(fx->base, fx->dir, 1);
	wait_stock(fx, s, 1);
	fd = spare_take(s);
	assert_int_equal(write(fd, "new", 3), 3);
	assert_int_equal(spare_link(fd, path), -1);
	assert_int_equal(errno, EEXIST);
	close(fd);
	read_file(path, buf, sizeof buf);
	assert_string_equal(buf, "old");
	spare_free(s);
}

/* A directory that is not there yet: none, until it is made. */
static void
test_spare_no_dir(void **state)
{
	struct fixture	*fx = *state;
	struct spare	*s;
	struct timeval	 tv = { 0, 10000 };
	char		 dir[128];
	int		 i, fd = -1;

	snprintf(dir, sizeof dir, "%s/later", fx->dir);
	s = spare_create(fx->base, dir, 2);
	assert_int_equal(mkdir(dir, 0755), 0);
	for (i = 0; i < 3000 && fd == -1; i++) {
		if ((fd = spare_take(s)) == -1) {
			event_base_loopexit(fx->base, &tv);
			event_base_dispatch(fx->base);
		}
	}
	assert_true(fd >= 0);
	close(fd);
	spare_free(s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_spare_stock, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_spare_none, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_spare_log, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_spare_meta, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_spare_meta_planted_tmp,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_spare_meta_new_name,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_spare_link_exists, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_spare_no_dir, setup,
		    teardown),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
