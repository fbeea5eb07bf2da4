/*
 * The log clean-up decides by each item's state, not its files' time
 * stamps (issue 23, item 7): against a real Redis and the worker binary, a
 * silent foreground command and a background session whose files are all
 * made to look two days old survive `execq cleanup` and a second
 * worker's start-up clean-up, while old finished items go, each .log
 * with its .json. Commands wait on a barrier file, never on the clock.
 */

#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "logs/xmalloc.h"
#include "tests/integration/harness.h"

#define OLD_H	48		/* hours: older than the 24 h limit */

/* Sets the times of <log_dir>/<id><suffix> to hours ago. */
static void
age_file(struct harness *h, const char *id, const char *suffix, int hours)
{
	struct timespec	 ts[2];
	char		*path;

	xasprintf(&path, "%s/%s%s", h->log_dir, id, suffix);
	clock_gettime(CLOCK_REALTIME, &ts[0]);
	ts[0].tv_sec -= (time_t)hours * 3600;
	ts[1] = ts[0];
	if (utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW) == -1)
		harness_fail(h, "utimensat %s: %s", path, strerror(errno));
	free(path);
}

/* Whether <log_dir>/<id><suffix> exists. */
static int
has_file(struct harness *h, const char *id, const char *suffix)
{
	char	*path;
	int	 r;

	xasprintf(&path, "%s/%s%s", h->log_dir, id, suffix);
	r = access(path, F_OK) == 0;
	free(path);
	return (r);
}

/* Runs command as a foreground item to its end; its files made old. */
static void
finished_item(struct harness *h, const char *id, const char *command)
{
	json_t	*a;

	harness_submit(h, "normal", id, command, NULL);
	a = harness_wait_answer(h, NULL, id, HARNESS_WAIT_MS);
	if (harness_jint(a, "exit_code") != 0)
		harness_fail(h, "%s did not exit 0", id);
	json_decref(a);
	age_file(h, id, ".log", OLD_H);
	age_file(h, id, ".json", OLD_H);
}

/* `execq cleanup` on the test's log dir with max_age; its stdout. */
static char *
cli_cleanup(struct harness *h, const char *max_age)
{
	const char		*args[] = { "cleanup", "--log-dir", h->log_dir,
				    "--max-age-hours", max_age, "-v", NULL };
	struct harness_proc	 p;
	char			*out;

	harness_cli(h, &p, NULL, HARNESS_WAIT_MS, args);
	if (harness_proc_exit(&p) != 0)
		harness_fail(h, "execq cleanup exited %d: %s",
		    harness_proc_exit(&p), p.err);
	out = xstrdup(p.out);
	harness_proc_release(&p);
	return (out);
}

/* The running items' files are all there. */
static void
expect_running_kept(struct harness *h, const char *fg, const char *ses)
{
	assert_true(has_file(h, fg, ".log"));
	assert_true(has_file(h, ses, ".log"));
	assert_true(has_file(h, ses, ".json"));
}

/*
 * A foreground command that writes nothing for hours and a session keep
 * their logs through the cron and a worker's start-up clean-up, however
 * old their time stamps; finished items go, .log and .json together;
 * --max-age-hours 0 is "off", as in the worker.
 */
static void
test_logclean_running_never_lost(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*fg = harness_id(h, "fg"), *ses = harness_id(h, "ses");
	const char	*old1 = harness_id(h, "old1");
	const char	*old2 = harness_id(h, "old2");
	const char	*quiet = harness_id(h, "quiet");
	char		*cmd, *path, *out;
	json_t		*a;

	harness_worker_start(h, NULL, NULL);
	finished_item(h, old1, "echo first");
	finished_item(h, quiet, "true");	/* an empty log */
	/* Silent until the barrier: its log is a spare's, never written. */
	xasprintf(&cmd, "touch fg-started; while [ ! -e fg-barrier ]; do "
	    "sleep 0.05; done; echo fg-done");
	harness_submit(h, "normal", fg, cmd, NULL);
	free(cmd);
	xasprintf(&path, "%s/fg-started", h->ws);
	if (harness_wait_file(path, HARNESS_WAIT_MS) == -1)
		harness_fail(h, "the foreground command did not start");
	free(path);
	harness_submit(h, "normal", ses, "while [ ! -e ses-barrier ]; do "
	    "sleep 0.05; done", "{\"background\": true}");
	a = harness_wait_answer(h, NULL, ses, HARNESS_WAIT_MS);
	assert_string_equal(harness_jstr(a, "type"), "EXEC_STARTED");
	json_decref(a);
	assert_false(has_file(h, fg, ".json"));	/* foreground: none yet */
	age_file(h, fg, ".log", OLD_H);
	age_file(h, ses, ".log", OLD_H);
	age_file(h, ses, ".json", OLD_H);

	/* 0 is "off": nothing goes. */
	out = cli_cleanup(h, "0");
	assert_non_null(strstr(out, "cleanup is off"));
	free(out);
	assert_true(has_file(h, old1, ".log"));

	/* The cron. */
	out = cli_cleanup(h, "24");
	assert_non_null(strstr(out, "removed 4 files"));
	assert_non_null(strstr(out, "kept 3 of running commands"));
	free(out);
	expect_running_kept(h, fg, ses);
	assert_false(has_file(h, old1, ".log"));
	assert_false(has_file(h, old1, ".json"));
	assert_false(has_file(h, quiet, ".log"));
	assert_false(has_file(h, quiet, ".json"));

	/* A second worker's start-up clean-up: the same rule. */
	finished_item(h, old2, "echo second");
	age_file(h, fg, ".log", OLD_H);
	harness_worker_start(h, NULL, "--log-max-age", "24", NULL);
	expect_running_kept(h, fg, ses);
	assert_false(has_file(h, old2, ".log"));
	assert_false(has_file(h, old2, ".json"));

	/* Once it ended, its old files go together. */
	xasprintf(&path, "%s/fg-barrier", h->ws);
	assert_int_equal(harness_write_file(path, ""), 0);
	free(path);
	a = harness_wait_answer(h, NULL, fg, HARNESS_WAIT_MS);
	assert_int_equal(harness_jint(a, "exit_code"), 0);
	json_decref(a);
	assert_true(has_file(h, fg, ".json"));
	age_file(h, fg, ".log", OLD_H);
	out = cli_cleanup(h, "24");
	assert_non_null(strstr(out, "removed 0 files"));  /* a new .json */
	free(out);
	age_file(h, fg, ".json", OLD_H);
	out = cli_cleanup(h, "24");
	assert_non_null(strstr(out, "removed 2 files"));
	free(out);
	assert_false(has_file(h, fg, ".log"));
	assert_false(has_file(h, fg, ".json"));
	assert_true(has_file(h, ses, ".log"));
	assert_true(has_file(h, ses, ".json"));
	harness_pass(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f)	cmocka_unit_test_setup_teardown(f, harness_setup, \
		    harness_teardown)
		T(test_logclean_running_never_lost),
#undef T
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
