/*
 * The holder (worker/holder.h) under hostile timing: a session whose main
 * process the worker had reaped already when it handed over (its pid is
 * no session's any more), signals that reach a worker before it has its
 * handlers (SIGUSR2 right after the holder started it, several in a row),
 * input EOF to a session whose stdin the holder holds a copy of, before
 * and after a hand-over, a hand-over waiting for a shell command, and the
 * holder's fds and children back to their baseline once sessions end.
 * Every wait has a deadline; nothing is checked by sleeping.
 */

#include <sys/types.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "logs/xmalloc.h"
#include "tests/integration/harness.h"

#define WAIT_MS		30000

/* Starts a background session (pty or not); its main pid. */
static long
start_session(struct harness *h, const char *id, const char *cmd, int pty)
{
	json_t	*a;
	long	 pid;

	harness_submit(h, "normal", id, cmd, pty ?
	    "{\"background\": true, \"pty\": true}" :
	    "{\"background\": true}");
	a = harness_wait_answer(h, NULL, id, WAIT_MS);
	if (strcmp(harness_jstr(a, "type"), "EXEC_STARTED") != 0)
		harness_fail(h, "session %s did not start", id);
	pid = (long)harness_jint(a, "pid");
	json_decref(a);
	return (pid);
}

/* PROCESS action on session sid with extra JSON members; its answer. */
static json_t *
act(struct harness *h, const char *sid, const char *action,
    const char *extra)
{
	char	*args;
	json_t	*a;

	xasprintf(&args, "{\"action\": \"%s\", \"session_id\": \"%s\"%s%s}",
	    action, sid, extra != NULL ? ", " : "", extra != NULL ? extra : "");
	a = harness_process(h, args, WAIT_MS);
	free(args);
	if (strcmp(harness_jstr(a, "type"), "PROCESS_RESULT") != 0) {
		args = json_dumps(a, JSON_COMPACT);
		harness_fail(h, "%s %s: %s", action, sid, args);
	}
	return (a);
}

/* Entries in /proc/<pid>/fd. */
static int
fd_count(pid_t pid)
{
	char		 path[64];
	DIR		*d;
	struct dirent	*e;
	int		 n = 0;

	snprintf(path, sizeof path, "/proc/%ld/fd", (long)pid);
	if ((d = opendir(path)) == NULL)
		return (-1);
	while ((e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	closedir(d);
	return (n);
}

/* Children of pid, as /proc lists them (zombies included). */
static int
child_count(pid_t pid)
{
	char	 path[64], *kids, *p, *end;
	int	 n = 0;

	snprintf(path, sizeof path, "/proc/%ld/task/%ld/children", (long)pid,
	    (long)pid);
	if ((kids = harness_read_file(path, NULL)) == NULL)
		return (-1);
	for (p = kids; strtol(p, &end, 10) > 0; p = end)
		n++;
	free(kids);
	return (n);
}

/* Waits until the holder has fds fds and one child (its worker). */
static void
wait_holder_baseline(struct harness *h, pid_t holder, int fds)
{
	int64_t	deadline = harness_now_ms() + WAIT_MS;

	while (fd_count(holder) != fds || child_count(holder) != 1) {
		if (harness_now_ms() > deadline)
			harness_fail(h, "holder %ld: %d fds (baseline %d), %d "
			    "children (want 1: its worker)", (long)holder,
			    fd_count(holder), fds, child_count(holder));
		harness_sleep_ms(20);
	}
}

/* Waits until pid is gone (reaped, not a zombie). */
static void
wait_pid_gone(struct harness *h, long pid)
{
	int64_t	deadline = harness_now_ms() + WAIT_MS;
	char	path[64];

	snprintf(path, sizeof path, "/proc/%ld", pid);
	while (access(path, F_OK) == 0) {
		if (harness_now_ms() > deadline)
			harness_fail(h, "pid %ld was not reaped", pid);
		harness_sleep_ms(10);
	}
}

/* A number a command wrote to the workspace's file name. */
static long
ws_number(struct harness *h, const char *name)
{
	char	*path, *text;
	long	 n;

	xasprintf(&path, "%s/%s", h->ws, name);
	if (harness_wait_file(path, WAIT_MS) == -1)
		harness_fail(h, "%s was not written", name);
	while ((text = harness_read_file(path, NULL)) == NULL ||
	    strchr(text, '\n') == NULL) {
		free(text);
		harness_sleep_ms(10);
	}
	n = atol(text);
	free(text);
	free(path);
	return (n);
}

/* Lines of the holder's stderr that contain s. */
static int
holder_log_count(struct harness *h, pid_t holder, const char *s)
{
	char		*text;
	const char	*p;
	unsigned	 i;
	int		 n = 0;

	for (i = 0; i < h->nw; i++)
		if (h->w[i].pid == holder)
			break;
	if (i == h->nw ||
	    (text = harness_read_file(h->w[i].err_path, NULL)) == NULL)
		return (-1);
	for (p = text; (p = strstr(p, s)) != NULL; p += strlen(s))
		n++;
	free(text);
	return (n);
}

/*
 * A session whose main process had ended (reaped by the worker) while a
 * child of it kept the output open (the drain) when the worker handed
 * over: the pid the holder is given is no session's any more. The next
 * worker must still end it, with its exit code, once; and nobody may
 * signal that pid as the session's.
 */
static void
test_holder_reaped_handover(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "drain");
	json_t		*cb;
	pid_t		 holder, w1;
	long		 main_pid, bg;

	holder = harness_worker_start(h, NULL, "--drain", "60", NULL);
	w1 = harness_wait_worker_proc(h, holder, -1, WAIT_MS);
	main_pid = start_session(h, id, "sleep 300 & echo $! > bg.pid; "
	    "exit 3", 0);
	bg = ws_number(h, "bg.pid");
	wait_pid_gone(h, main_pid);	/* reaped; its output still open */
	assert_int_equal(kill(holder, SIGUSR2), 0);
	(void)harness_wait_worker_proc(h, holder, w1, WAIT_MS);
	assert_int_equal(kill((pid_t)bg, SIGKILL), 0);	/* the output ends */
	cb = harness_wait_callback(h, id, WAIT_MS);
	assert_int_equal(harness_jint(cb, "exit_code"), 3);
	json_decref(cb);
	assert_int_equal(harness_count_callbacks(h, id), 1);
	harness_stop_clean(h, holder);
	harness_pass(h);
}

/*
 * SIGUSR2 to the holder the moment it has started a worker (before that
 * worker has its handlers), then several in a row: each is a hand-over,
 * never a death by the signal's default action (which, for the first
 * worker, ends the holder and every session with it).
 */
static void
test_holder_usr2_early(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*sh = harness_id(h, "sh");
	json_t		*a;
	pid_t		 holder, w;
	int		 i;

	holder = harness_worker_launch(h, NULL, NULL);
	w = harness_wait_worker_proc(h, holder, -1, WAIT_MS);
	assert_int_equal(kill(holder, SIGUSR2), 0);
	assert_true(harness_outer_limit(h, holder) > 0);
	harness_shell_start(h, sh, "cd /; export KEPT=yes");
	for (i = 0; i < 3; i++) {
		w = harness_wait_worker_proc(h, holder, w, WAIT_MS);
		assert_int_equal(kill(holder, SIGUSR2), 0);
	}
	a = harness_shell_exec(h, sh, "echo $KEPT; pwd", 0);
	assert_string_equal(harness_jstr(a, "stdout"), "yes\n/\n");
	json_decref(a);
	assert_true(harness_worker_alive(h, holder));
	assert_int_equal(holder_log_count(h, holder,
	    "without handing over"), 0);
	harness_stop_clean(h, holder);
	json_decref(harness_wait_callback(h, sh, WAIT_MS));
	assert_int_equal(harness_count_callbacks(h, sh), 1);
	harness_pass(h);
}

/*
 * Input EOF to a non-PTY session reaches the command although the holder
 * holds a copy of its stdin: before a hand-over, and after one (the
 * adopted copy and the holder's both closed).
 */
static void
test_holder_eof(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*c1 = harness_id(h, "cat1"), *c2 = harness_id(h, "cat2");
	json_t		*cb;
	pid_t		 holder, w1;

	holder = harness_worker_start(h, NULL, NULL);
	w1 = harness_wait_worker_proc(h, holder, -1, WAIT_MS);
	start_session(h, c1, "cat", 0);
	start_session(h, c2, "cat; echo after", 0);
	json_decref(act(h, c1, "write", "\"data\": \"one\\n\", \"eof\": true"));
	cb = harness_wait_callback(h, c1, WAIT_MS);
	assert_int_equal(harness_jint(cb, "exit_code"), 0);
	json_decref(cb);
	json_decref(act(h, c2, "write", "\"data\": \"two\\n\""));
	assert_int_equal(kill(holder, SIGUSR2), 0);
	(void)harness_wait_worker_proc(h, holder, w1, WAIT_MS);
	json_decref(act(h, c2, "write", "\"eof\": true"));
	cb = harness_wait_callback(h, c2, WAIT_MS);
	assert_int_equal(harness_jint(cb, "exit_code"), 0);
	assert_string_equal(harness_jstr(cb, "status"), "completed");
	json_decref(cb);
	assert_int_equal(harness_count_callbacks(h, c1), 1);
	assert_int_equal(harness_count_callbacks(h, c2), 1);
	harness_stop_clean(h, holder);
	harness_pass(h);
}

/*
 * The holder keeps no fd and no child of a session that ended: after
 * sessions started and ended under one worker, and after sessions handed
 * over (then the holder's children) ended under the next.
 */
static void
test_holder_fds(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*ids[3];
	pid_t		 holder, w1;
	int		 base, i;

	holder = harness_worker_start(h, NULL, NULL);
	w1 = harness_wait_worker_proc(h, holder, -1, WAIT_MS);
	ids[0] = harness_id(h, "a");
	ids[1] = harness_id(h, "b");
	ids[2] = harness_id(h, "c");
	wait_holder_baseline(h, holder, fd_count(holder));
	base = fd_count(holder);
	start_session(h, ids[0], "exec sleep 300", 0);
	start_session(h, ids[1], "exec sleep 300", 1);
	start_session(h, ids[2], "sleep 300 & sleep 300", 0);
	json_decref(act(h, ids[0], "kill", NULL));
	json_decref(harness_wait_callback(h, ids[0], WAIT_MS));
	assert_true(fd_count(holder) > base);	/* the others' copies */
	assert_int_equal(kill(holder, SIGUSR2), 0);
	(void)harness_wait_worker_proc(h, holder, w1, WAIT_MS);
	for (i = 1; i < 3; i++) {
		json_decref(act(h, ids[i], "kill", NULL));
		json_decref(harness_wait_callback(h, ids[i], WAIT_MS));
	}
	wait_holder_baseline(h, holder, base);
	for (i = 0; i < 3; i++)
		assert_int_equal(harness_count_callbacks(h, ids[i]), 1);
	harness_stop_clean(h, holder);
	harness_pass(h);
}

/*
 * A hand-over while a shell command runs waits for it: its answer comes
 * from the worker that ran it, and the shell goes on under the next.
 */
static void
test_holder_shell_busy(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*sh = harness_id(h, "sh"), *ex;
	json_t		*a;
	char		*args;
	pid_t		 holder, w1;

	holder = harness_worker_start(h, NULL, NULL);
	w1 = harness_wait_worker_proc(h, holder, -1, WAIT_MS);
	harness_shell_start(h, sh, "X=1");
	xasprintf(&args, "{\"action\": \"exec\", \"session_id\": \"%s\", "
	    "\"command\": \"echo go > go.txt; sleep 1; echo done $X\"}", sh);
	ex = harness_submit_process(h, args);
	free(args);
	harness_wait_ws_lines(h, "go.txt", 1, WAIT_MS);
	assert_int_equal(kill(holder, SIGUSR2), 0);
	assert_int_equal(kill(holder, SIGUSR2), 0);
	a = harness_wait_answer(h, NULL, ex, WAIT_MS);
	assert_string_equal(harness_jstr(a, "stdout"), "done 1\n");
	json_decref(a);
	(void)harness_wait_worker_proc(h, holder, w1, WAIT_MS);
	a = harness_shell_exec(h, sh, "echo again $X", 0);
	assert_string_equal(harness_jstr(a, "stdout"), "again 1\n");
	json_decref(a);
	assert_int_equal(holder_log_count(h, holder,
	    "without handing over"), 0);
	harness_stop_clean(h, holder);
	json_decref(harness_wait_callback(h, sh, WAIT_MS));
	assert_int_equal(harness_count_callbacks(h, sh), 1);
	harness_pass(h);
}

/*
 * SIGTERM to the holder while no worker runs (the backoff after a crash):
 * a last worker adopts the sessions and ends them, their whole trees (a
 * setsid'd child does not outlive them), with their callback, once.
 */
static void
test_holder_term_no_worker(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "tree");
	json_t		*cb;
	int64_t		 deadline;
	pid_t		 holder, w1;
	long		 esc;
	int		 status;

	holder = harness_worker_start(h, NULL, NULL);
	assert_true(harness_outer_limit(h, holder) > 0);
	w1 = harness_wait_worker_proc(h, holder, -1, WAIT_MS);
	start_session(h, id, "setsid sleep 300 & echo $! > esc.pid; "
	    "exec sleep 300", 0);
	esc = ws_number(h, "esc.pid");
	assert_int_equal(kill(w1, SIGKILL), 0);
	status = harness_worker_stop(h, holder);	/* its SIGTERM */
	assert_true(WIFEXITED(status) || WIFSIGNALED(status));
	deadline = harness_now_ms() + WAIT_MS;
	while (kill((pid_t)esc, 0) == 0) {
		if (harness_now_ms() > deadline) {
			kill((pid_t)esc, SIGKILL);
			harness_fail(h, "the session's setsid child %ld "
			    "outlived the holder", esc);
		}
		harness_sleep_ms(20);
	}
	cb = harness_wait_callback(h, id, WAIT_MS);
	assert_string_equal(harness_jstr(cb, "killed_by"), "shutdown");
	json_decref(cb);
	assert_int_equal(harness_count_callbacks(h, id), 1);
	harness_pass(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_holder_reaped_handover,
		    harness_setup, harness_teardown),
		cmocka_unit_test_setup_teardown(test_holder_usr2_early,
		    harness_setup, harness_teardown),
		cmocka_unit_test_setup_teardown(test_holder_eof,
		    harness_setup, harness_teardown),
		cmocka_unit_test_setup_teardown(test_holder_fds,
		    harness_setup, harness_teardown),
		cmocka_unit_test_setup_teardown(test_holder_shell_busy,
		    harness_setup, harness_teardown),
		cmocka_unit_test_setup_teardown(test_holder_term_no_worker,
		    harness_setup, harness_teardown),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
