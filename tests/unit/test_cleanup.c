/* Unit tests for logs/cleanup.c: the log dir's clean-up by item state. */

#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "logs/cleanup.h"
#include "logs/execlog.h"

#define OLD	48.0		/* hours: older than the 24 h limit */
#define NEW	0.0

/* A private temp dir, and what the callback was told. */
struct fixture {
	char	  dir[64];
	char	**paths;
	unsigned  npaths;
};

static int
setup(void **state)
{
	struct fixture	*fx;

	fx = calloc(1, sizeof *fx);
	assert_non_null(fx);
	snprintf(fx->dir, sizeof fx->dir, "/tmp/test_cleanup.XXXXXX");
	assert_non_null(mkdtemp(fx->dir));
	*state = fx;
	return (0);
}

/* nftw callback: removes one entry, children first. */
static int
rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return (remove(path));
}

/* Forgets what the callback was told. */
static void
clear_paths(struct fixture *fx)
{
	unsigned	i;

	for (i = 0; i < fx->npaths; i++)
		free(fx->paths[i]);
	free(fx->paths);
	fx->paths = NULL;
	fx->npaths = 0;
}

static int
teardown(void **state)
{
	struct fixture	*fx = *state;

	clear_paths(fx);
	nftw(fx->dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
	free(fx);
	return (0);
}

/* cleanup_file_cb: records the path. */
static void
record_cb(const char *path, void *arg)
{
	struct fixture	*fx = arg;

	fx->paths = realloc(fx->paths, (fx->npaths + 1) * sizeof *fx->paths);
	assert_non_null(fx->paths);
	fx->paths[fx->npaths] = strdup(path);
	assert_non_null(fx->paths[fx->npaths]);
	fx->npaths++;
}

/* Whether the callback was told about dir/name. */
static int
reported(struct fixture *fx, const char *name)
{
	char		path[256];
	unsigned	i;

	snprintf(path, sizeof path, "%s/%s", fx->dir, name);
	for (i = 0; i < fx->npaths; i++) {
		if (strcmp(fx->paths[i], path) == 0)
			return (1);
	}
	return (0);
}

/* Creates dir/name holding text, last modified hours ago. */
static void
make_file(struct fixture *fx, const char *name, const char *text,
    double hours)
{
	struct timespec	 ts[2];
	char		 path[256];
	size_t		 len = strlen(text);
	int		 fd;

	snprintf(path, sizeof path, "%s/%s", fx->dir, name);
	fd = open(path, O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC, 0644);
	assert_true(fd != -1);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	assert_int_equal(clock_gettime(CLOCK_REALTIME, &ts[0]), 0);
	ts[0].tv_sec -= (time_t)(hours * 3600);
	ts[1] = ts[0];
	assert_int_equal(futimens(fd, ts), 0);
	assert_int_equal(close(fd), 0);
}

/* Creates the metadata dir/<id>.json for a session. */
static void
make_json(struct fixture *fx, const char *id, const char *status, long pid,
    double hours)
{
	char	name[128], text[256];

	snprintf(name, sizeof name, "%s.json", id);
	snprintf(text, sizeof text,
	    "{\"id\":\"%s\",\"command\":\"sleep 1000\",\"pid\":%ld,"
	    "\"status\":\"%s\",\"pty\":false}", id, pid, status);
	make_file(fx, name, text, hours);
}

/* Whether dir/name exists (without following a symlink). */
static int
exists(struct fixture *fx, const char *name)
{
	struct stat	st;
	char		path[256];

	snprintf(path, sizeof path, "%s/%s", fx->dir, name);
	return (lstat(path, &st) == 0);
}

/* The pid of a child that has exited and been reaped. */
static pid_t
dead_pid(void)
{
	pid_t	pid;
	int	status;

	pid = fork();
	assert_true(pid != -1);
	if (pid == 0)
		_exit(0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return (pid);
}

/* Runs cleanup_logs on the fixture's dir with a 24 h limit. */
static struct cleanup_stats
run(struct fixture *fx, int dry_run)
{
	struct cleanup_stats	st;

	clear_paths(fx);
	memset(&st, 0xff, sizeof st);	/* must be reset by the call */
	assert_int_equal(cleanup_logs(fx->dir, 24, dry_run, record_cb, fx,
	    &st), 0);
	assert_int_equal(st.removed, fx->npaths);
	return (st);
}

static void
test_cleanup_old_removed_recent_kept(void **state)
{
	struct fixture		*fx = *state;
	struct cleanup_stats	 st;

	make_file(fx, "old.log", "0123456789", OLD);		/* 10 */
	make_json(fx, "old", "completed", (long)getpid(), OLD);
	make_file(fx, "new.log", "new", NEW);
	make_json(fx, "new", "completed", (long)getpid(), NEW);
	make_file(fx, "mixed.log", "recent", NEW);
	make_json(fx, "mixed", "failed", 1, OLD);
	st = run(fx, 0);
	assert_int_equal(st.removed, 2);
	assert_int_equal(st.kept_recent, 4);
	assert_int_equal(st.kept_running, 0);
	assert_false(exists(fx, "old.log"));
	assert_false(exists(fx, "old.json"));
	assert_true(exists(fx, "new.log"));
	assert_true(exists(fx, "new.json"));
	/* An id's files go together: the recent log keeps its .json. */
	assert_true(exists(fx, "mixed.log"));
	assert_true(exists(fx, "mixed.json"));
	assert_true(reported(fx, "old.log"));
	assert_true(reported(fx, "old.json"));
	assert_false(reported(fx, "mixed.json"));
}

/* A recent .json (a run that just ended) keeps its old, silent log. */
static void
test_cleanup_group_newest_decides(void **state)
{
	struct fixture		*fx = *state;
	struct cleanup_stats	 st;

	make_file(fx, "quiet.log", "", OLD);
	make_json(fx, "quiet", "completed", 1, NEW);
	make_file(fx, "half.log", "x", OLD);
	make_file(fx, ".half.json.tmp", "{", NEW);
	make_file(fx, "lone.json", "{\"status\":\"completed\"}", OLD);
	make_file(fx, ".lone.json.tmp", "{", OLD);
	st = run(fx, 0);
	assert_int_equal(st.kept_recent, 4);
	assert_int_equal(st.removed, 2);
	assert_true(exists(fx, "quiet.log"));
	assert_true(exists(fx, "half.log"));
	assert_false(exists(fx, "lone.json"));
	assert_false(exists(fx, ".lone.json.tmp"));
}

/*
 * A log whose writer holds a lock is running, whatever its time stamp
 * and whatever its metadata says (a foreground command writes none).
 */
static void
test_cleanup_locked_log_kept(void **state)
{
	struct fixture		*fx = *state;
	struct cleanup_stats	 st;
	char			 path[256];
	int			 fd;

	make_file(fx, "fg.log", "", OLD);
	make_file(fx, "stale.log", "", OLD);
	make_json(fx, "stale", "running", (long)dead_pid(), OLD);
	snprintf(path, sizeof path, "%s/fg.log", fx->dir);
	fd = open(path, O_WRONLY|O_APPEND|O_CLOEXEC);
	assert_true(fd != -1);
	assert_int_equal(flock(fd, LOCK_SH), 0);
	st = run(fx, 0);
	assert_int_equal(st.kept_running, 1);
	assert_int_equal(st.removed, 2);
	assert_true(exists(fx, "fg.log"));
	assert_false(exists(fx, "stale.log"));
	assert_int_equal(close(fd), 0);		/* the lock goes with it */
	st = run(fx, 0);
	assert_int_equal(st.removed, 1);
	assert_false(exists(fx, "fg.log"));
}

/*
 * execlog_open's log is locked and stamped, spare or not, until its fd
 * is closed, also once detached; then the final .json decides the age.
 */
static void
test_cleanup_execlog_locked_until_closed(void **state)
{
	struct fixture		*fx = *state;
	struct cleanup_stats	 st;
	struct execlog		*a, *b;
	struct timespec		 ts[2];
	char			 path[256];
	int			 spare, fd;

	spare = open(fx->dir, O_TMPFILE|O_WRONLY|O_APPEND|O_CLOEXEC, 0644);
	if (spare != -1) {	/* made "two days ago" */
		assert_int_equal(clock_gettime(CLOCK_REALTIME, &ts[0]), 0);
		ts[0].tv_sec -= (time_t)(OLD * 3600);
		ts[1] = ts[0];
		assert_int_equal(futimens(spare, ts), 0);
	}
	a = execlog_open(fx->dir, "a", spare);
	assert_non_null(a);
	make_file(fx, "b.log", "", OLD);	/* appended to: old, reused */
	b = execlog_open(fx->dir, "b", -1);
	assert_non_null(b);
	make_file(fx, "b.log", "", OLD);	/* the stamp is old again */
	st = run(fx, 0);
	assert_int_equal(st.removed, 0);
	assert_int_equal(st.kept_running + st.kept_recent, 2);
	assert_int_equal(st.kept_running, 1);	/* b; a was stamped now */
	fd = execlog_detach_fd(b);
	make_file(fx, "b.log", "", OLD);
	st = run(fx, 0);
	assert_int_equal(st.kept_running, 1);	/* the detached fd locks */
	assert_int_equal(close(fd), 0);
	execlog_free(b);
	execlog_free(a);
	st = run(fx, 0);
	assert_int_equal(st.removed, 1);	/* b: old, closed */
	assert_true(exists(fx, "a.log"));
	snprintf(path, sizeof path, "%s/b.log", fx->dir);
	assert_int_equal(access(path, F_OK), -1);
}

static void
test_cleanup_bytes_exact(void **state)
{
	struct fixture		*fx = *state;
	struct cleanup_stats	 st;

	make_file(fx, "a.log", "12345", OLD);
	make_file(fx, "b.log", "1234567890", OLD);
	make_file(fx, "c.log", "", OLD);
	make_file(fx, "d.log", "not counted", NEW);
	make_file(fx, ".b.json.tmp", "{\"x\":", OLD);		/* 5 */
	st = run(fx, 0);
	assert_int_equal(st.removed, 4);
	assert_int_equal(st.kept_recent, 1);
	assert_int_equal(st.bytes, 20);
	assert_false(exists(fx, ".b.json.tmp"));
	assert_true(reported(fx, ".b.json.tmp"));
}

static void
test_cleanup_running_session_kept(void **state)
{
	struct fixture		*fx = *state;
	struct cleanup_stats	 st;

	make_file(fx, "run.log", "still going", OLD);
	make_json(fx, "run", "running", (long)getpid(), OLD);
	make_file(fx, ".run.json.tmp", "{", OLD);
	make_file(fx, "done.log", "finished", OLD);
	make_json(fx, "done", "completed", (long)getpid(), OLD);
	st = run(fx, 0);
	assert_int_equal(st.kept_running, 3);
	assert_int_equal(st.removed, 2);
	assert_int_equal(st.kept_recent, 0);
	assert_true(exists(fx, "run.log"));
	assert_true(exists(fx, "run.json"));
	assert_true(exists(fx, ".run.json.tmp"));
	assert_false(exists(fx, "done.log"));
	assert_false(exists(fx, "done.json"));
	assert_false(reported(fx, "run.log"));
}

/* A metadata file bigger than the stack buffer, with a long command. */
static void
test_cleanup_running_big_metadata(void **state)
{
	struct fixture		*fx = *state;
	struct cleanup_stats	 st;
	char			*text;
	size_t			 len;

	text = malloc(40000);
	assert_non_null(text);
	len = sprintf(text, "{\"command\":\"echo ");
	memset(text + len, 'a', 30000);
	len += 30000;
	sprintf(text + len, "\",\"status\":\"running\",\"pid\":%ld}",
	    (long)getpid());
	make_file(fx, "big.json", text, OLD);
	make_file(fx, "big.log", "x", OLD);
	free(text);
	st = run(fx, 0);
	assert_int_equal(st.kept_running, 2);
	assert_int_equal(st.removed, 0);
	assert_true(exists(fx, "big.json"));
}

static void
test_cleanup_running_with_dead_pid_removed(void **state)
{
	struct fixture		*fx = *state;
	struct cleanup_stats	 st;

	make_file(fx, "lost.log", "the worker died", OLD);
	make_json(fx, "lost", "running", (long)dead_pid(), OLD);
	st = run(fx, 0);
	assert_int_equal(st.removed, 2);
	assert_int_equal(st.kept_running, 0);
	assert_false(exists(fx, "lost.log"));
	assert_false(exists(fx, "lost.json"));
}

static void
test_cleanup_running_needs_valid_pid(void **state)
{
	struct fixture		*fx = *state;
	struct cleanup_stats	 st;

	make_json(fx, "zero", "running", 0, OLD);	/* kill(0) is a group */
	make_json(fx, "minus", "running", -1, OLD);
	make_file(fx, "str.json",
	    "{\"status\":\"running\",\"pid\":\"1\"}", OLD);
	make_file(fx, "nopid.json", "{\"status\":\"running\"}", OLD);
	make_file(fx, "bad.json", "{\"status\":\"running\",", OLD);
	make_file(fx, "bad.log", "x", OLD);
	make_file(fx, "nojson.log", "x", OLD);
	st = run(fx, 0);
	assert_int_equal(st.removed, 7);
	assert_int_equal(st.kept_running, 0);
}

static void
test_cleanup_other_files_ignored(void **state)
{
	struct fixture		*fx = *state;
	struct cleanup_stats	 st;
	char			 path[256], target[256];

	make_file(fx, "audit.log", "who did what", OLD);
	make_file(fx, "notes.txt", "x", OLD);
	make_file(fx, "s1.log.1", "x", OLD);
	make_file(fx, ".hidden.log", "x", OLD);
	make_file(fx, "..x.json.tmp", "x", OLD);
	make_file(fx, ".json.tmp", "x", OLD);
	make_file(fx, ".log", "x", OLD);
	make_file(fx, "x.json.tmp", "x", OLD);
	snprintf(path, sizeof path, "%s/sub.log", fx->dir);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(target, sizeof target, "%s/notes.txt", fx->dir);
	snprintf(path, sizeof path, "%s/link.log", fx->dir);
	assert_int_equal(symlink(target, path), 0);
	st = run(fx, 0);
	assert_int_equal(st.removed, 0);
	assert_int_equal(st.kept_recent, 0);
	assert_int_equal(st.kept_running, 0);
	assert_int_equal(st.bytes, 0);
	assert_true(exists(fx, "audit.log"));
	assert_true(exists(fx, "notes.txt"));
	assert_true(exists(fx, "s1.log.1"));
	assert_true(exists(fx, ".hidden.log"));
	assert_true(exists(fx, "..x.json.tmp"));
	assert_true(exists(fx, "x.json.tmp"));
	assert_true(exists(fx, "sub.log"));
	assert_true(exists(fx, "link.log"));
}

static void
test_cleanup_dry_run_removes_nothing(void **state)
{
	struct fixture		*fx = *state;
	struct cleanup_stats	 dry, real;

	make_file(fx, "a.log", "1234", OLD);
	make_json(fx, "a", "completed", 1, OLD);
	make_file(fx, "run.log", "x", OLD);
	make_json(fx, "run", "running", (long)getpid(), OLD);
	make_file(fx, "new.log", "x", NEW);
	make_file(fx, "audit.log", "x", OLD);
	dry = run(fx, 1);
	assert_int_equal(dry.removed, 2);
	assert_int_equal(dry.kept_running, 2);
	assert_int_equal(dry.kept_recent, 1);
	assert_true(dry.bytes > 4);
	assert_true(reported(fx, "a.log"));
	assert_true(reported(fx, "a.json"));
	assert_true(exists(fx, "a.log"));
	assert_true(exists(fx, "a.json"));

	real = run(fx, 0);		/* the dry run told the truth */
	assert_memory_equal(&dry, &real, sizeof dry);
	assert_false(exists(fx, "a.log"));
	assert_false(exists(fx, "a.json"));
	assert_true(exists(fx, "run.log"));
	assert_true(exists(fx, "audit.log"));
}

static void
test_cleanup_fractional_and_zero_age(void **state)
{
	struct fixture		*fx = *state;
	struct cleanup_stats	 st;

	make_file(fx, "hour.log", "x", 1.0);
	make_file(fx, "now.log", "x", NEW);
	make_file(fx, "run.log", "x", NEW);
	make_json(fx, "run", "running", (long)getpid(), NEW);
	assert_int_equal(cleanup_logs(fx->dir, 1.5, 0, NULL, NULL, &st), 0);
	assert_int_equal(st.removed, 0);
	assert_int_equal(st.kept_recent, 4);
	assert_int_equal(cleanup_logs(fx->dir, 0.5, 0, NULL, NULL, &st), 0);
	assert_int_equal(st.removed, 1);
	assert_false(exists(fx, "hour.log"));
	/* 0 is "off" here as in the worker's log_max_age_hours. */
	memset(&st, 0xff, sizeof st);
	assert_int_equal(cleanup_logs(fx->dir, 0, 0, NULL, NULL, &st), 0);
	assert_int_equal(st.removed + st.kept_running + st.kept_recent, 0);
	assert_int_equal(st.bytes, 0);
	assert_true(exists(fx, "now.log"));
	assert_true(exists(fx, "run.log"));
	assert_true(exists(fx, "run.json"));
	assert_int_equal(cleanup_logs(fx->dir, 1e-9, 0, NULL, NULL, &st), 0);
	assert_int_equal(st.removed, 1);		/* now.log */
	assert_int_equal(st.kept_running, 2);
}

static void
test_cleanup_bad_dir(void **state)
{
	struct fixture		*fx = *state;
	struct cleanup_stats	 st;
	char			 path[256];

	snprintf(path, sizeof path, "%s/missing", fx->dir);
	memset(&st, 0xff, sizeof st);
	assert_int_equal(cleanup_logs(path, 24, 0, NULL, NULL, &st), 0);
	assert_int_equal(st.removed + st.kept_recent + st.kept_running, 0);
	assert_int_equal(st.bytes, 0);

	make_file(fx, "file.log", "x", OLD);
	snprintf(path, sizeof path, "%s/file.log", fx->dir);
	errno = 0;
	assert_int_equal(cleanup_logs(path, 24, 0, NULL, NULL, &st), -1);
	assert_int_equal(errno, ENOTDIR);

	errno = 0;
	assert_int_equal(cleanup_logs(fx->dir, -1, 0, NULL, NULL, &st), -1);
	assert_int_equal(errno, EINVAL);
	assert_true(exists(fx, "file.log"));

	assert_int_equal(cleanup_logs(fx->dir, 24, 0, NULL, NULL, NULL), 0);
	assert_false(exists(fx, "file.log"));
}

/*
 * Many files: all removed. The time is printed for information, never
 * asserted (a loaded CI machine is not a failure).
 */
static void
test_cleanup_many_files(void **state)
{
	struct fixture		*fx = *state;
	struct cleanup_stats	 st;
	struct timespec		 t0, t1;
	char			 name[64];
	int			 i;

	for (i = 0; i < 5000; i++) {
		snprintf(name, sizeof name, "s%04d.%s", i / 2,
		    i % 2 ? "json" : "log");
		make_file(fx, name, i % 2 ? "{\"status\":\"completed\"}" :
		    "output\n", OLD);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(cleanup_logs(fx->dir, 24, 0, NULL, NULL, &st), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_int_equal(st.removed, 5000);
	assert_int_equal(st.bytes, 2500 * 7 + 2500 * 22);
	assert_int_equal(rmdir(fx->dir), 0);	/* nothing left behind */
	assert_int_equal(mkdir(fx->dir, 0700), 0);
	print_message("cleanup of 5000 files: %.1f ms\n",
	    (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f)	cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(test_cleanup_old_removed_recent_kept),
		T(test_cleanup_group_newest_decides),
		T(test_cleanup_locked_log_kept),
		T(test_cleanup_execlog_locked_until_closed),
		T(test_cleanup_bytes_exact),
		T(test_cleanup_running_session_kept),
		T(test_cleanup_running_big_metadata),
		T(test_cleanup_running_with_dead_pid_removed),
		T(test_cleanup_running_needs_valid_pid),
		T(test_cleanup_other_files_ignored),
		T(test_cleanup_dry_run_removes_nothing),
		T(test_cleanup_fractional_and_zero_age),
		T(test_cleanup_bad_dir),
		T(test_cleanup_many_files),
#undef T
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
