/*
 * Faults, tried on the real thing: Redis killed and restarted with and
 * without persistence while items run, a worker stopped while Redis is
 * away (its answers go to the spool and come out at the next start).
 * Every test counts items in, answers out and duplicates, and waits on
 * barriers (a file the commands wait for, an item answered after the
 * others), never on the clock.
 */

#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hiredis/hiredis.h>
#include <jansson.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "logs/xmalloc.h"
#include "tests/integration/harness.h"

#define FAULTS_ITEMS	200	/* more than the worker's slots */
#define FAULTS_SESSIONS	20
#define FAULTS_SLOTS	"32"

/* Switches on the append-only file, synced on every write. */
static void
redis_aof_on(struct harness *h)
{
	redisReply	*r;
	int		 i;

	freeReplyObject(harness_cmd(h, "CONFIG SET appendfsync always"));
	freeReplyObject(harness_cmd(h, "CONFIG SET appendonly yes"));
	for (i = 0; i < 1000; i++) {	/* its first rewrite must finish */
		r = harness_cmd(h, "INFO persistence");
		if (strstr(r->str, "aof_rewrite_in_progress:0") != NULL &&
		    strstr(r->str, "aof_enabled:1") != NULL &&
		    strstr(r->str, "aof_rewrite_scheduled:0") != NULL) {
			freeReplyObject(r);
			return;
		}
		freeReplyObject(r);
		harness_sleep_ms(10);
	}
	harness_fail(h, "the AOF rewrite did not finish");
}

/* Items that each wait until the file "go" exists in the workspace. */
static void
submit_waiting(struct harness *h, const char *prefix, int n)
{
	char	 name[64];
	int	 i;

	for (i = 0; i < n; i++) {
		snprintf(name, sizeof name, "%s%d", prefix, i);
		harness_submit(h, "normal", harness_id(h, name),
		    "while [ ! -e go ]; do sleep 0.1; done; echo out", NULL);
	}
}

/* Waits until n log files of items with prefix exist (they started). */
static void
wait_started(struct harness *h, const char *prefix, int n)
{
	char	 name[64], *path;
	int	 i;

	for (i = 0; i < n; i++) {
		snprintf(name, sizeof name, "%s%d", prefix, i);
		xasprintf(&path, "%s/%s.log", h->log_dir, harness_id(h, name));
		if (harness_wait_file(path, HARNESS_WAIT_MS) == -1)
			harness_fail(h, "item %s did not start", name);
		free(path);
	}
}

/* Lets the waiting items finish. */
static void
release_waiting(struct harness *h)
{
	char	*path;
	int	 fd;

	xasprintf(&path, "%s/go", h->ws);
	if ((fd = open(path, O_WRONLY|O_CREAT, 0644)) == -1)
		harness_fail(h, "%s: %m", path);
	close(fd);
	free(path);
}

/* How many entries of the reply stream answer id. */
static int
count_answers(struct harness *h, const char *id)
{
	json_t		*all, *a;
	size_t		 i;
	const char	*s;
	int		 n = 0;

	all = harness_all_answers(h, NULL);
	json_array_foreach(all, i, a) {
		s = harness_jstr(a, "id");
		if (s != NULL && strcmp(s, id) == 0)
			n++;
	}
	json_decref(all);
	return (n);
}

/*
 * Answers of items prefix0..n-1 after the barrier item (submitted last,
 * answered last by a one-slot worker... or by any worker: it only proves
 * the worker is past the others' answers when they were sent first).
 * Asserts none has two; returns how many have one.
 */
static int
count_all(struct harness *h, const char *prefix, int n, int *dups)
{
	char	 name[64];
	int	 i, c, got = 0;

	*dups = 0;
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof name, "%s%d", prefix, i);
		c = count_answers(h, harness_id(h, name));
		if (c > 1)
			(*dups)++;
		if (c >= 1)
			got++;
	}
	return (got);
}

/* Waits for every answer of prefix0..n-1 (fails at the deadline). */
static void
wait_all(struct harness *h, const char *prefix, int n)
{
	char	 name[64];
	json_t	*a;
	int	 i;

	for (i = 0; i < n; i++) {
		snprintf(name, sizeof name, "%s%d", prefix, i);
		a = harness_wait_answer(h, NULL, harness_id(h, name),
		    HARNESS_WAIT_MS * 2);
		assert_string_equal(harness_jstr(a, "type"), "EXEC_RESULT");
		json_decref(a);
	}
}

/* Callbacks of session id on q:<reply>:high. */
static int
count_callbacks(struct harness *h, const char *id)
{
	char	*key, *needle;
	int	 n;

	xasprintf(&key, "q:%s:high", h->reply);
	xasprintf(&needle, "\"session_id\":\"%s\"", id);
	n = harness_count_entries(h, key, needle);
	free(needle);
	free(key);
	return (n);
}

/* Spool files in the state dir. */
static int
count_spool_files(struct harness *h)
{
	DIR		*d;
	struct dirent	*de;
	int		 n = 0;

	if ((d = opendir(h->state_dir)) == NULL)
		harness_fail(h, "%s: %m", h->state_dir);
	while ((de = readdir(d)) != NULL)
		if (strncmp(de->d_name, "spool-", 6) == 0)
			n++;
	closedir(d);
	return (n);
}

/* A last item, answered once the worker is through with the others. */
static void
barrier(struct harness *h, const char *name)
{
	const char	*id = harness_id(h, name);
	json_t		*a;

	harness_submit(h, "normal", id, "echo barrier", NULL);
	a = harness_wait_answer(h, NULL, id, HARNESS_WAIT_MS * 2);
	assert_string_equal(harness_jstr(a, "type"), "EXEC_RESULT");
	json_decref(a);
}

/*
 * Redis dies (SIGKILL) while FAULTS_SESSIONS sessions and as many items
 * as the worker has slots left run, FAULTS_ITEMS in all, and comes back
 * with the append-only file (aof) or empty. Every callback and every
 * answer of an item a worker took arrives exactly once; with the AOF
 * that is every item. Without persistence, the items only Redis held
 * (no worker had taken them) are gone with it: nothing had accepted
 * them.
 */
static void
restart_scenario(struct harness *h, const char *prefix, int aof)
{
	char		 items[32], sessions[32], name[64];
	const char	*ctx = aof ? "AOF" : "no persistence";
	json_t		*a;
	pid_t		 pid;
	int		 i, got, dups, taken, callbacks = 0, cbdups = 0;

	snprintf(items, sizeof items, "%s-i", prefix);
	snprintf(sessions, sizeof sessions, "%s-s", prefix);
	if (aof)
		redis_aof_on(h);
	/* More sessions than the default max_sessions (half the slots). */
	pid = harness_worker_start(h, NULL, "--max-procs", FAULTS_SLOTS,
	    "--max-sessions", FAULTS_SLOTS, NULL);
	for (i = 0; i < FAULTS_SESSIONS; i++) {
		snprintf(name, sizeof name, "%s%d", sessions, i);
		harness_submit(h, "normal", harness_id(h, name),
		    "while [ ! -e go ]; do sleep 0.1; done; echo out",
		    "{\"background\": true}");
	}
	wait_started(h, sessions, FAULTS_SESSIONS);
	submit_waiting(h, items, FAULTS_ITEMS);
	taken = atoi(FAULTS_SLOTS) - FAULTS_SESSIONS;
	wait_started(h, items, taken);
	harness_redis_kill(h);
	if (aof)
		harness_redis_start(h, "--appendonly", "yes");
	else
		harness_redis_start(h, NULL, NULL);
	release_waiting(h);
	wait_all(h, items, aof ? FAULTS_ITEMS : taken);
	for (i = 0; i < FAULTS_SESSIONS; i++) {
		snprintf(name, sizeof name, "%s%d", sessions, i);
		a = harness_wait_callback(h, harness_id(h, name),
		    HARNESS_WAIT_MS * 2);
		assert_string_equal(harness_jstr(a, "status"), "completed");
		json_decref(a);
	}
	barrier(h, aof ? "aof-barrier" : "empty-barrier");
	harness_stop_clean(h, pid);	/* and every answer is out */
	got = count_all(h, items, FAULTS_ITEMS, &dups);
	for (i = 0; i < FAULTS_SESSIONS; i++) {
		snprintf(name, sizeof name, "%s%d", sessions, i);
		switch (count_callbacks(h, harness_id(h, name))) {
		case 0:
			break;
		case 1:
			callbacks++;
			break;
		default:
			callbacks++;
			cbdups++;
		}
	}
	print_message("redis SIGKILL + restart, %s: %d items in (%d taken "
	    "by the worker), %d answers, %d duplicates; %d sessions, %d "
	    "callbacks, %d duplicates\n", ctx, FAULTS_ITEMS, taken, got, dups,
	    FAULTS_SESSIONS, callbacks, cbdups);
	assert_int_equal(dups, 0);
	assert_int_equal(got, aof ? FAULTS_ITEMS : taken);
	assert_int_equal(cbdups, 0);
	assert_int_equal(callbacks, FAULTS_SESSIONS);
	if (aof)	/* leave the server as the next test expects it */
		freeReplyObject(harness_cmd(h, "CONFIG SET appendonly no"));
}

static void
test_faults_redis_restart_empty(void **state)
{
	struct harness	*h = harness_fixture(state);

	restart_scenario(h, "empty", 0);
	harness_pass(h);
}

static void
test_faults_redis_restart_aof(void **state)
{
	struct harness	*h = harness_fixture(state);

	restart_scenario(h, "aof", 1);
	harness_pass(h);
}

/*
 * SIGTERM while Redis is away: the worker still exits (kill_grace +
 * shutdown_flush), its answers go to the spool, and the next worker
 * started on the host sends them once Redis is back: each arrives once.
 */
static void
test_faults_sigterm_redis_down_spools(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*ids[3];
	char		 name[16];
	json_t		*a;
	pid_t		 pid;
	int		 status, i;
	struct stat	 st;

	pid = harness_worker_start(h, NULL, "--kill-grace", "1",
	    "--shutdown-flush", "1", NULL);
	submit_waiting(h, "down", 3);
	wait_started(h, "down", 3);
	for (i = 0; i < 3; i++) {
		snprintf(name, sizeof name, "down%d", i);
		ids[i] = harness_id(h, name);
	}
	harness_redis_kill(h);
	status = harness_worker_stop(h, pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	/* The three answers (killed by the shutdown) wait in the spool. */
	assert_int_equal(stat(h->state_dir, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);

	harness_redis_start(h, NULL, NULL);
	pid = harness_worker_start(h, NULL, NULL);
	for (i = 0; i < 3; i++) {
		a = harness_wait_answer(h, NULL, ids[i], HARNESS_WAIT_MS);
		assert_string_equal(harness_jstr(a, "type"), "EXEC_RESULT");
		assert_string_equal(harness_jstr(a, "signal"), "SIGTERM");
		json_decref(a);
	}
	barrier(h, "down-barrier");
	for (i = 0; i < 3; i++)
		assert_int_equal(count_answers(h, ids[i]), 1);
	print_message("SIGTERM with redis down: 3 items in, 3 answers "
	    "through the spool, 0 duplicates\n");
	harness_stop_clean(h, pid);
	/* Everything was sent: no spool file is left. */
	assert_int_equal(count_spool_files(h), 0);
	harness_pass(h);
}

/* Waits until worker i's stderr holds s; how many times it does. */
static int
wait_worker_log(struct harness *h, unsigned i, const char *s)
{
	char		*text, *p;
	int64_t		 end = harness_now_ms() + HARNESS_WAIT_MS;
	int		 n;

	for (;;) {
		n = 0;
		if ((text = harness_read_file(h->w[i].err_path, NULL)) != NULL)
			for (p = text; (p = strstr(p, s)) != NULL; p++)
				n++;
		free(text);
		if (n > 0)
			return (n);
		if (harness_now_ms() > end)
			harness_fail(h, "the worker never logged '%s'", s);
		harness_sleep_ms(20);
	}
}

/*
 * SIGTERM while Redis is away and the state dir is full (a 1 MiB tmpfs,
 * filled once the items run; Redis keeps its data in the AOF): the
 * answers can be neither sent nor spooled. The worker lists their ids in
 * its log, and a worker started afterwards under the same name answers
 * those items worker_lost: none runs again (each marker has one line).
 */
static void
test_faults_sigterm_nowhere_to_spool(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*ids[3];
	char		 name[32], cmd[128], marker[16], consumer[256];
	char		*small, *sh, *line;
	json_t		*a;
	pid_t		 pid;
	int		 status, i;

	xasprintf(&small, "%s/state-small", h->dir);
	assert_int_equal(mkdir(small, 0700), 0);
	xasprintf(&sh, "mount -t tmpfs -o size=1m tmpfs '%s' 2>/dev/null",
	    small);
	if (system(sh) != 0) {
		free(sh);
		free(small);
		skip();
	}
	free(sh);
	redis_aof_on(h);
	pid = harness_worker_start(h, NULL, "--state-dir", small,
	    "--kill-grace", "1", "--shutdown-flush", "1", NULL);
	snprintf(consumer, sizeof consumer, "%s", h->w[0].consumer);
	for (i = 0; i < 3; i++) {
		snprintf(name, sizeof name, "nowhere%d", i);
		ids[i] = harness_id(h, name);
		/* Only the sleep, not the shell, shows "sleep 7788.<pid>". */
		snprintf(cmd, sizeof cmd, "echo run >> runs%d; "
		    "sleep 778''8.%07ld", i, (long)getpid());
		harness_submit(h, "normal", ids[i], cmd, NULL);
	}
	for (i = 0; i < 3; i++) {
		snprintf(marker, sizeof marker, "runs%d", i);
		harness_wait_ws_lines(h, marker, 1, HARNESS_WAIT_MS);
	}
	xasprintf(&sh, "head -c 2000000 /dev/zero > '%s/fill' 2>/dev/null",
	    small);
	if (system(sh) == 0)
		harness_fail(h, "%s is not full", small);
	free(sh);
	harness_redis_kill(h);
	status = harness_worker_stop(h, pid);
	/* Back as the next test expects it, whatever happens below. */
	harness_redis_start(h, "--appendonly", "yes");
	freeReplyObject(harness_cmd(h, "CONFIG SET appendonly no"));
	xasprintf(&sh, "umount -l '%s'", small);
	assert_int_equal(system(sh), 0);
	free(sh);
	free(small);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);

	pid = harness_worker_start(h, NULL, "--claim-idle", "1",
	    "--consumer", consumer, NULL);
	for (i = 0; i < 3; i++) {
		a = harness_wait_answer(h, NULL, ids[i], HARNESS_WAIT_MS);
		assert_string_equal(harness_jstr(a, "type"), "ERROR");
		assert_string_equal(harness_jstr(a, "error.code"),
		    "worker_lost");
		json_decref(a);
	}
	barrier(h, "nowhere-barrier");
	for (i = 0; i < 3; i++) {
		snprintf(marker, sizeof marker, "runs%d", i);
		assert_int_equal(harness_ws_lines(h, marker), 1);
		assert_int_equal(count_answers(h, ids[i]), 1);
	}
	assert_int_equal(harness_pending(h, "normal"), 0);
	harness_stop_clean(h, pid);
	/* The first worker named them as it stopped. */
	for (i = 0; i < 3; i++) {
		xasprintf(&line, "answer lost: %s\n", ids[i]);
		assert_int_equal(wait_worker_log(h, 0, line), 1);
		free(line);
	}
	print_message("SIGTERM with redis down and the state dir full: 3 "
	    "answers lost and listed in the log, 3 items answered "
	    "worker_lost by the next worker of the name, 0 run again\n");
	harness_pass(h);
}

/*
 * A one-slot worker whose slot is taken by item first (waiting for the
 * file "go"): what comes next waits in Redis and is fetched by the
 * script, not handed over by a blocking read. Returns the worker's pid.
 */
static pid_t
busy_worker(struct harness *h, const char *first)
{
	char	*path;
	pid_t	 pid;

	pid = harness_worker_start(h, NULL, "--max-procs", "1", NULL);
	harness_submit(h, "normal", first,
	    "while [ ! -e go ]; do sleep 0.1; done; echo first", NULL);
	xasprintf(&path, "%s/%s.log", h->log_dir, first);
	if (harness_wait_file(path, HARNESS_WAIT_MS) == -1)
		harness_fail(h, "the first item did not start");
	free(path);
	return (pid);
}

/*
 * Redis out of memory: the answer of the running item and the fetch of
 * the next are refused. The worker backs off, keeps the answer, and once
 * Redis has room both items are answered, once each.
 */
static void
test_faults_redis_oom_backs_off(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*first = harness_id(h, "oom-first");
	const char	*second = harness_id(h, "oom-second");
	json_t		*a;
	pid_t		 pid;

	pid = busy_worker(h, first);
	harness_submit(h, "normal", second, "echo second", NULL);
	freeReplyObject(harness_cmd(h, "CONFIG SET maxmemory 1"));
	release_waiting(h);
	(void)wait_worker_log(h, 0, "OOM");
	freeReplyObject(harness_cmd(h, "CONFIG SET maxmemory 0"));
	a = harness_wait_answer(h, NULL, first, HARNESS_WAIT_MS * 2);
	assert_string_equal(harness_jstr(a, "stdout"), "first\n");
	json_decref(a);
	a = harness_wait_answer(h, NULL, second, HARNESS_WAIT_MS * 2);
	assert_string_equal(harness_jstr(a, "stdout"), "second\n");
	json_decref(a);
	barrier(h, "oom-barrier");
	assert_int_equal(count_answers(h, first), 1);
	assert_int_equal(count_answers(h, second), 1);
	print_message("redis OOM: 2 items in, 2 answers, 0 duplicates\n");
	harness_stop_clean(h, pid);
	harness_pass(h);
}

/* The peak resident memory (VmHWM) of pid, in KiB. */
static long
peak_rss_kb(struct harness *h, pid_t pid)
{
	char	 path[64], *text, *p;
	long	 kb;

	snprintf(path, sizeof path, "/proc/%ld/status", (long)pid);
	if ((text = harness_read_file(path, NULL)) == NULL ||
	    (p = strstr(text, "VmHWM:")) == NULL)
		harness_fail(h, "no VmHWM in %s", path);
	kb = strtol(p + 6, NULL, 10);
	free(text);
	return (kb);
}

/*
 * A 200 MB item reaches a busy worker: the fetch script leaves it in
 * Redis and hands over its first 64 KiB, so the worker answers
 * item_too_large to its sender without ever holding it.
 */
static void
test_faults_huge_item_stays_in_redis(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*first = harness_id(h, "huge-first");
	const char	*id = harness_id(h, "huge");
	size_t		 size = 200u << 20, n;
	char		*body;
	json_t		*a;
	pid_t		 pid;
	long		 before, after;

	pid = busy_worker(h, first);
	before = peak_rss_kb(h, pid);
	body = malloc(size);
	assert_non_null(body);
	n = (size_t)snprintf(body, 512, "{\"id\":\"%s\",\"type\":\"EXEC\","
	    "\"reply_to\":\"%s\",\"args\":{\"command\":\"echo ", id,
	    h->reply);
	memset(body + n, 'x', size - n - 4);
	memcpy(body + size - 4, "\"}}", 3);
	harness_xadd(h, "normal", "item", body, size - 1);
	free(body);
	release_waiting(h);
	a = harness_wait_answer(h, NULL, id, HARNESS_WAIT_MS * 3);
	assert_string_equal(harness_jstr(a, "error.code"), "item_too_large");
	json_decref(a);
	after = peak_rss_kb(h, pid);
	print_message("200 MB item: answered item_too_large to its sender; "
	    "worker peak RSS %ld KiB before, %ld KiB after\n", before, after);
	assert_true(after - before < 32 * 1024);
	assert_int_equal(harness_pending(h, "normal"), 0);
	harness_stop_clean(h, pid);
	harness_pass(h);
}

/*
 * Commands as long as execve(2) takes run; longer ones are refused up
 * front with command_too_long (a 500 KiB one), never a spawn failure.
 */
static void
test_faults_long_commands(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*ok = harness_id(h, "long-ok");
	const char	*big = harness_id(h, "long-big");
	size_t		 n;
	char		*cmd;
	json_t		*a;
	pid_t		 pid;

	pid = harness_worker_start(h, NULL, NULL);
	n = 131071;
	cmd = malloc(n + 1);
	assert_non_null(cmd);
	memset(cmd, 'x', n);
	memcpy(cmd, ": ", 2);
	memcpy(cmd + n - 9, "; echo ok", 9);
	cmd[n] = '\0';
	harness_submit(h, "normal", ok, cmd, NULL);
	a = harness_wait_answer(h, NULL, ok, HARNESS_WAIT_MS);
	assert_string_equal(harness_jstr(a, "type"), "EXEC_RESULT");
	assert_string_equal(harness_jstr(a, "stdout"), "ok\n");
	json_decref(a);
	free(cmd);

	n = 500 * 1024;
	cmd = malloc(n + 1);
	assert_non_null(cmd);
	memset(cmd, 'x', n);
	memcpy(cmd, "echo ", 5);
	cmd[n] = '\0';
	harness_submit(h, "normal", big, cmd, NULL);
	a = harness_wait_answer(h, NULL, big, HARNESS_WAIT_MS);
	assert_string_equal(harness_jstr(a, "error.code"), "command_too_long");
	json_decref(a);
	free(cmd);
	print_message("long commands: 131071 bytes ran, 500 KiB refused "
	    "command_too_long\n");
	harness_stop_clean(h, pid);
	harness_pass(h);
}

/*
 * A worker dies (SIGKILL) while an item that may be retried runs and a
 * session is open. The worker that takes over kills what the dead one
 * left first: the retry finds the first run's lock free (no overlap),
 * and the lost session's process is gone when its callback comes.
 */
static void
test_faults_dead_worker_no_overlap(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "overlap");
	const char	*sid = harness_id(h, "overlap-session");
	json_t		*a;
	pid_t		 first, second;

	first = harness_worker_start(h, NULL, "--claim-idle", "1", NULL);
	harness_submit(h, "normal", id, "if [ -e first ]; then "
	    "flock -n lock echo free || echo overlap; else touch first; "
	    "exec 9>lock; flock 9; sleep 778''1; fi", "{\"retries\": 1}");
	harness_submit(h, "normal", sid, "sleep 7782",
	    "{\"background\": true}");
	harness_wait_running(h, "sleep 7781");	/* the sleep, not its shell */
	harness_wait_running(h, "sleep 7782");
	a = harness_wait_answer(h, NULL, sid, HARNESS_WAIT_MS);
	assert_string_equal(harness_jstr(a, "type"), "EXEC_STARTED");
	json_decref(a);
	/* Running before the first dies: its start-up sweep finds nothing. */
	second = harness_worker_start(h, NULL, "--claim-idle", "1", NULL);
	harness_worker_kill(h, first);
	assert_true(harness_count_procs("sleep 7781") >= 1);
	a = harness_wait_answer(h, NULL, id, HARNESS_WAIT_MS * 2);
	assert_string_equal(harness_jstr(a, "type"), "EXEC_RESULT");
	assert_string_equal(harness_jstr(a, "stdout"), "free\n");
	json_decref(a);
	a = harness_wait_callback(h, sid, HARNESS_WAIT_MS * 2);
	assert_string_equal(harness_jstr(a, "status"), "lost");
	json_decref(a);
	assert_int_equal(harness_wait_procs_gone("sleep 7781", 30000), 0);
	assert_int_equal(harness_wait_procs_gone("sleep 7782", 30000), 0);
	print_message("worker SIGKILL: 1 item in, 1 answer (the retry), 0 "
	    "overlaps; 1 session lost, its process killed\n");
	harness_stop_clean(h, second);
	harness_pass(h);
}


/*
 * A worker that Redis stops hearing from (frozen with SIGSTOP here, as a
 * partition would) has its session declared lost by another worker, with
 * the one callback. When it comes back it finds its lease taken, kills
 * the session, and sends no second callback.
 */
static void
test_faults_partitioned_worker_is_fenced(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*sid = harness_id(h, "fenced");
	json_t		*a;
	pid_t		 first, second;

	first = harness_worker_start(h, NULL, "--claim-idle", "1", NULL);
	harness_submit(h, "normal", sid, "sleep 7783",
	    "{\"background\": true}");
	a = harness_wait_answer(h, NULL, sid, HARNESS_WAIT_MS);
	assert_string_equal(harness_jstr(a, "type"), "EXEC_STARTED");
	json_decref(a);
	second = harness_worker_start(h, NULL, "--claim-idle", "1", NULL);
	assert_int_equal(kill(harness_worker_proc(h, first), SIGSTOP), 0);
	a = harness_wait_callback(h, sid, HARNESS_WAIT_MS * 2);
	assert_string_equal(harness_jstr(a, "status"), "lost");
	json_decref(a);
	assert_true(harness_count_procs("sleep 7783") >= 1);
	assert_int_equal(kill(harness_worker_proc(h, first), SIGCONT), 0);
	assert_int_equal(harness_wait_procs_gone("sleep 7783",
	    HARNESS_WAIT_MS), 0);
	/* Both workers are through: the first's answers went out. */
	harness_stop_clean(h, first);
	harness_stop_clean(h, second);
	assert_int_equal(count_callbacks(h, sid), 1);
	print_message("partitioned worker: 1 session, 1 callback (lost), "
	    "killed when the worker came back, 0 duplicates\n");
	harness_pass(h);
}

/*
 * Redis restarts empty while a session runs: the worker writes the
 * session back when it reconnects, so when that worker then dies the
 * session is still found and reported lost, once, and its process ends.
 */
static void
test_faults_session_survives_redis_restart(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*sid = harness_id(h, "remirror");
	redisReply	*r;
	json_t		*a;
	pid_t		 first, second;
	int		 i, found = 0;

	first = harness_worker_start(h, NULL, "--claim-idle", "1", NULL);
	harness_submit(h, "normal", sid, "sleep 7784",
	    "{\"background\": true}");
	a = harness_wait_answer(h, NULL, sid, HARNESS_WAIT_MS);
	assert_string_equal(harness_jstr(a, "type"), "EXEC_STARTED");
	json_decref(a);
	harness_redis_kill(h);
	harness_redis_start(h, NULL, NULL);
	for (i = 0; i < HARNESS_WAIT_MS / 20 && !found; i++) {
		r = harness_cmd(h, "SISMEMBER execq:running %s", sid);
		found = r->type == REDIS_REPLY_INTEGER && r->integer == 1;
		freeReplyObject(r);
		if (!found)
			harness_sleep_ms(20);
	}
	if (!found)
		harness_fail(h, "the session was not written back to Redis");
	harness_worker_kill(h, first);
	second = harness_worker_start(h, NULL, "--claim-idle", "1", NULL);
	a = harness_wait_callback(h, sid, HARNESS_WAIT_MS * 2);
	assert_string_equal(harness_jstr(a, "status"), "lost");
	json_decref(a);
	assert_int_equal(harness_wait_procs_gone("sleep 7784",
	    HARNESS_WAIT_MS), 0);
	harness_stop_clean(h, second);
	assert_int_equal(count_callbacks(h, sid), 1);
	print_message("redis restart + worker SIGKILL: 1 session, 1 callback "
	    "(lost), its process killed\n");
	harness_pass(h);
}

/* Writes text to path (created or truncated). */
static void
put_file(struct harness *h, const char *path, const char *text)
{
	int	fd;

	if ((fd = open(path, O_WRONLY|O_CREAT|O_TRUNC, 0644)) == -1 ||
	    write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		harness_fail(h, "%s: %m", path);
	close(fd);
}

/* Asserts path holds exactly text. */
static void
expect_file(struct harness *h, const char *path, const char *text)
{
	char	*got;

	if ((got = harness_read_file(path, NULL)) == NULL)
		harness_fail(h, "%s: cannot read", path);
	if (strcmp(got, text) != 0)
		harness_fail(h, "%s was changed: '%s'", path, got);
	free(got);
}

#define FORGED	"{\"event\":\"approved\",\"id\":\"forged\"}"

/*
 * Links planted in the log dir turn nothing: an item whose log is a
 * symlink is refused (log_unsafe) and the link's target is untouched; a
 * session whose log is swapped for a link is not read through it; an item
 * named "audit" writes its own log, not the audit log (in the state dir).
 */
static void
test_faults_planted_links(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "planted");
	const char	*sid = harness_id(h, "swapped");
	char		*marker, *link, *audit, *before, *args, *text;
	json_t		*a;
	pid_t		 pid;

	xasprintf(&marker, "%s/marker", h->dir);
	put_file(h, marker, "untouched\n");
	xasprintf(&link, "%s/%s.log", h->log_dir, id);
	assert_int_equal(symlink(marker, link), 0);
	pid = harness_worker_start(h, NULL, NULL);
	harness_submit(h, "normal", id, "echo forged", NULL);
	a = harness_wait_answer(h, NULL, id, HARNESS_WAIT_MS);
	assert_string_equal(harness_jstr(a, "error.code"), "log_unsafe");
	assert_non_null(strstr(harness_jstr(a, "error.message"),
	    "symbolic link"));
	json_decref(a);
	expect_file(h, marker, "untouched\n");
	free(link);

	/* A session's log swapped for a link after it started. */
	harness_submit(h, "normal", sid, "echo mine; sleep 7785",
	    "{\"background\": true}");
	a = harness_wait_answer(h, NULL, sid, HARNESS_WAIT_MS);
	assert_string_equal(harness_jstr(a, "type"), "EXEC_STARTED");
	json_decref(a);
	xasprintf(&link, "%s/%s.log", h->log_dir, sid);
	if (harness_wait_file(link, HARNESS_WAIT_MS) == -1)
		harness_fail(h, "no log for %s", sid);
	assert_int_equal(unlink(link), 0);
	assert_int_equal(symlink(marker, link), 0);
	xasprintf(&args, "{\"action\": \"log\", \"session_id\": \"%s\"}",
	    sid);
	a = harness_process(h, args, HARNESS_WAIT_MS);
	text = json_dumps(a, JSON_COMPACT);
	if (strstr(text, "untouched") != NULL)
		harness_fail(h, "the log was read through a planted link");
	free(text);
	json_decref(a);
	free(args);

	/* An item named like the worker's own file. */
	xasprintf(&audit, "%s/audit.log", h->state_dir);
	before = harness_read_file(audit, NULL);
	harness_submit(h, "normal", "audit", "echo '" FORGED "'", NULL);
	a = harness_wait_answer(h, NULL, "audit", HARNESS_WAIT_MS);
	assert_string_equal(harness_jstr(a, "type"), "EXEC_RESULT");
	json_decref(a);
	harness_stop_clean(h, pid);	/* the audit log is complete now */
	{
		char	*after = harness_read_file(audit, NULL);

		assert_non_null(after);
		/* Its command is audited; its output is no line of its own. */
		if (strncmp(after, FORGED, strlen(FORGED)) == 0 ||
		    strstr(after, "\n" FORGED) != NULL)
			harness_fail(h, "the item wrote the audit log");
		assert_true(before == NULL ||
		    strncmp(after, before, strlen(before)) == 0);
		free(after);
	}
	expect_file(h, marker, "untouched\n");
	print_message("planted links: 1 refused (log_unsafe), 1 swapped log "
	    "not read, item 'audit' kept out of the audit log\n");
	free(before);
	free(audit);
	free(link);
	free(marker);
	harness_pass(h);
}

/*
 * The log dir vanishes: it is made again at the next item. When it cannot
 * be (a file stands in its place), the worker answers that item
 * log_failed and takes no more until logs can be written again; then the
 * next item runs normally.
 */
static void
test_faults_log_dir_gone(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*first = harness_id(h, "gone-1");
	const char	*second = harness_id(h, "gone-2");
	const char	*third = harness_id(h, "gone-3");
	char		 cmd[PATH_MAX + 64];
	json_t		*a;
	pid_t		 pid;

	pid = harness_worker_start(h, NULL, NULL);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", h->log_dir);
	assert_int_equal(system(cmd), 0);
	harness_submit(h, "normal", first, "echo back", NULL);
	a = harness_wait_answer(h, NULL, first, HARNESS_WAIT_MS);
	assert_string_equal(harness_jstr(a, "stdout"), "back\n");
	json_decref(a);

	/* Now a file where the dir was: no log can be written. */
	assert_int_equal(system(cmd), 0);
	put_file(h, h->log_dir, "not a dir\n");
	harness_submit(h, "normal", second, "echo lost", NULL);
	a = harness_wait_answer(h, NULL, second, HARNESS_WAIT_MS);
	assert_string_equal(harness_jstr(a, "error.code"), "log_failed");
	json_decref(a);
	(void)wait_worker_log(h, 0, "not taking items");
	harness_submit(h, "normal", third, "echo resumed", NULL);
	assert_int_equal(unlink(h->log_dir), 0);
	a = harness_wait_answer(h, NULL, third, HARNESS_WAIT_MS);
	/* Not refused: it waited until logs could be written. */
	assert_string_equal(harness_jstr(a, "type"), "EXEC_RESULT");
	assert_string_equal(harness_jstr(a, "stdout"), "resumed\n");
	json_decref(a);
	harness_stop_clean(h, pid);
	print_message("log dir removed: made again; replaced by a file: 1 "
	    "item log_failed, the worker paused, the next item ran once it "
	    "could\n");
	harness_pass(h);
}

/*
 * The log dir on a 1 MiB file system that fills up: the item still runs
 * and its answer says the log is short (log_complete false, log_error);
 * a session's callback then takes its tail from memory.
 */
static void
test_faults_log_fs_full(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "full");
	const char	*sid = harness_id(h, "full-session");
	const char	*fill = "head -c 2000000 /dev/zero | tr '\\0' x; echo; "
			    "echo last-line";
	char		*small, *cmd;
	json_t		*a, *tail;
	pid_t		 pid;
	size_t		 i;
	int		 found = 0;

	xasprintf(&small, "%s/small", h->dir);
	assert_int_equal(mkdir(small, 0755), 0);
	xasprintf(&cmd, "mount -t tmpfs -o size=1m tmpfs '%s' 2>/dev/null",
	    small);
	if (system(cmd) != 0) {
		free(cmd);
		free(small);
		skip();
	}
	free(cmd);
	pid = harness_worker_start(h, NULL, "--log-dir", small, NULL);
	harness_submit(h, "normal", id, fill, NULL);
	a = harness_wait_answer(h, NULL, id, HARNESS_WAIT_MS);
	assert_string_equal(harness_jstr(a, "type"), "EXEC_RESULT");
	assert_int_equal(harness_jint(a, "exit_code"), 0);
	assert_int_equal(harness_jbool(a, "log_complete"), 0);
	assert_string_equal(harness_jstr(a, "log_error"),
	    "No space left on device");
	assert_non_null(strstr(harness_jstr(a, "stdout"), "last-line"));
	json_decref(a);

	harness_submit(h, "normal", sid, fill, "{\"background\": true}");
	a = harness_wait_callback(h, sid, HARNESS_WAIT_MS);
	assert_int_equal(harness_jbool(a, "log_complete"), 0);
	tail = json_object_get(a, "tail");
	for (i = 0; i < json_array_size(tail); i++)
		if (strcmp(json_string_value(json_array_get(tail, i)),
		    "last-line") == 0)
			found = 1;
	if (!found)
		harness_fail(h, "the callback's tail lost the last line");
	json_decref(a);
	harness_stop_clean(h, pid);
	xasprintf(&cmd, "umount -l '%s'", small);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	free(small);
	print_message("log fs full (1 MiB tmpfs): 1 item answered with "
	    "log_complete false, 1 session's tail from memory\n");
	harness_pass(h);
}

#define T(f)	cmocka_unit_test_setup_teardown(f, harness_setup, \
		    harness_teardown)

int
main(void)
{
	const struct CMUnitTest	tests[] = {
		T(test_faults_redis_restart_empty),
		T(test_faults_redis_restart_aof),
		T(test_faults_sigterm_redis_down_spools),
		T(test_faults_sigterm_nowhere_to_spool),
		T(test_faults_redis_oom_backs_off),
		T(test_faults_huge_item_stays_in_redis),
		T(test_faults_long_commands),
		T(test_faults_dead_worker_no_overlap),
		T(test_faults_partitioned_worker_is_fenced),
		T(test_faults_session_survives_redis_restart),
		T(test_faults_planted_links),
		T(test_faults_log_dir_gone),
		T(test_faults_log_fs_full),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
