/*
 * The integration test harness (see harness.h). It drives the real
 * execq-worker binary the way a deployment would: flags and environment
 * in, Redis streams and files out. Every wait polls against a deadline.
 */

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <hiredis/hiredis.h>
#include <jansson.h>

#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "logs/xmalloc.h"
#include "tests/integration/harness.h"

#define HARNESS_SHELL_MS	30000	/* a shell's start, one command */

#define HARNESS_READY_MS	10000	/* worker start to reading */
#define HARNESS_STOP_MS		10000	/* SIGTERM to exit */
#define HARNESS_CHUNK_MS	100	/* one XREAD BLOCK */
#define HARNESS_TAIL_BYTES	6000	/* worker stderr shown on failure */
#define HARNESS_DEFAULT_REPLY	"q:replies:normal"

extern char **environ;

static unsigned	harness_serial;

int64_t
harness_now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

void
harness_sleep_ms(int ms)
{
	struct timespec	ts;

	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (long)(ms % 1000) * 1000000;
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		/* nothing */;
}

/* Prints the last bytes of every worker's stderr. */
static void
harness_print_tails(struct harness *h)
{
	unsigned	 i;
	size_t		 len;
	char		*text, *start;

	for (i = 0; i < h->nw; i++) {
		text = harness_read_file(h->w[i].err_path, &len);
		if (text == NULL)
			continue;
		start = text;
		if (len > HARNESS_TAIL_BYTES) {
			start = text + len - HARNESS_TAIL_BYTES;
			if (strchr(start, '\n') != NULL)
				start = strchr(start, '\n') + 1;
		}
		fprintf(stderr, "---- worker %s (pid %ld) stderr, %s:\n%s"
		    "---- end of worker %s stderr\n", h->w[i].consumer,
		    (long)h->w[i].pid, len > HARNESS_TAIL_BYTES ? "tail" :
		    "all", start, h->w[i].consumer);
		free(text);
	}
}

void
harness_fail(struct harness *h, const char *fmt, ...)
{
	static char	msg[1024];	/* fail_msg longjmps: nothing to free */
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (h != NULL) {
		harness_print_tails(h);
		h->passed = 1;		/* already printed */
	}
	fail_msg("%s", msg);
	abort();			/* fail_msg does not return */
}

/*
 * Connects the sync client to the socket (quiet: no message). The reply
 * timeout only catches a Redis that hangs: a loaded machine can keep
 * Redis busy for seconds (a 200 MB entry, an AOF rewrite), which is slow,
 * not wrong.
 */
static redisContext *
harness_connect(const char *path, int quiet)
{
	redisContext	*c;
	struct timeval	 tv = { 60, 0 };

	c = redisConnectUnixWithTimeout(path, tv);
	if (c == NULL || c->err) {
		if (!quiet)
			fprintf(stderr, "harness: connect %s: %s\n", path,
			    c != NULL ? c->errstr : "out of memory");
		if (c != NULL)
			redisFree(c);
		return (NULL);
	}
	redisSetTimeout(c, tv);
	return (c);
}

void
harness_reconnect(struct harness *h)
{
	int64_t	deadline = harness_now_ms() + 30000;

	if (h->rc != NULL)
		redisFree(h->rc);
	h->rc = NULL;
	while ((h->rc = harness_connect(h->redis_path, 1)) == NULL) {
		if (harness_now_ms() > deadline)
			harness_fail(h, "cannot reconnect to %s",
			    h->redis_path);
		harness_sleep_ms(50);
	}
}

/* redisvCommand that fails the test when the connection breaks. */
static redisReply *
harness_vcmd_raw(struct harness *h, const char *fmt, va_list ap)
{
	redisReply	*r;

	r = redisvCommand(h->rc, fmt, ap);
	if (r == NULL)
		harness_fail(h, "redis: %s: %s", fmt, h->rc->errstr);
	return (r);
}

/* A command that may legitimately answer with an error. */
static redisReply *
harness_cmd_raw(struct harness *h, const char *fmt, ...)
{
	va_list		 ap;
	redisReply	*r;

	va_start(ap, fmt);
	r = harness_vcmd_raw(h, fmt, ap);
	va_end(ap);
	return (r);
}

redisReply *
harness_cmd(struct harness *h, const char *fmt, ...)
{
	va_list		 ap;
	redisReply	*r;

	va_start(ap, fmt);
	r = harness_vcmd_raw(h, fmt, ap);
	va_end(ap);
	if (r->type == REDIS_REPLY_ERROR)
		harness_fail(h, "redis: %s: %s", fmt, r->str);
	return (r);
}

/* Makes a directory under h->dir; the allocated path. */
static char *
harness_mkdir(struct harness *h, const char *name)
{
	char	*path;

	xasprintf(&path, "%s/%s", h->dir, name);
	if (mkdir(path, 0755) == -1) {
		fprintf(stderr, "harness: mkdir %s: %s\n", path,
		    strerror(errno));
		free(path);
		return (NULL);
	}
	return (path);
}

/* Remembers where the shared default reply stream ends now. */
static void
harness_snapshot_default(struct harness *h)
{
	redisReply	*r;

	r = harness_cmd(h, "XREVRANGE %s + - COUNT 1", HARNESS_DEFAULT_REPLY);
	if (r->type == REDIS_REPLY_ARRAY && r->elements == 1 &&
	    r->element[0]->type == REDIS_REPLY_ARRAY &&
	    r->element[0]->elements >= 1)
		json_object_set_new(h->cursors, HARNESS_DEFAULT_REPLY,
		    json_string(r->element[0]->element[0]->str));
	freeReplyObject(r);
}

/* Fills the fixture; -1 (printed) when the machine is not usable. */
static int
harness_init(struct harness *h, const char *url)
{
	const char	*build;
	char		*tmpl, *real;
	const char	*tmp;

	h->execute = 1;
	h->redis_path = xstrdup(url + strlen("unix://"));
	build = getenv("EXECQ_TEST_BUILD");
	xasprintf(&h->bin, "%s/execq-worker", build != NULL ? build : "build");
	if (access(h->bin, X_OK) == -1) {
		fprintf(stderr, "harness: %s: %s\n", h->bin, strerror(errno));
		return (-1);
	}
	if ((h->rc = harness_connect(h->redis_path, 0)) == NULL)
		return (-1);
	tmp = getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp";
	xasprintf(&tmpl, "%s/execq-test.XXXXXX", tmp);
	if (mkdtemp(tmpl) == NULL) {
		fprintf(stderr, "harness: mkdtemp: %s\n", strerror(errno));
		free(tmpl);
		return (-1);
	}
	real = realpath(tmpl, NULL);
	free(tmpl);
	if (real == NULL)
		return (-1);
	h->dir = real;
	if ((h->ws = harness_mkdir(h, "ws")) == NULL ||
	    (h->log_dir = harness_mkdir(h, "logs")) == NULL ||
	    (h->state_dir = harness_mkdir(h, "state")) == NULL)
		return (-1);
	xasprintf(&h->queue, "it%ld-%u", (long)getpid(), ++harness_serial);
	xasprintf(&h->reply, "%s.reply", h->queue);
	h->cursors = json_object();
	h->tokens = json_object();
	h->stash = json_object();
	h->ids = json_array();
	harness_snapshot_default(h);
	return (0);
}

int
harness_setup(void **state)
{
	struct harness	*h;
	const char	*url;

	*state = NULL;
	url = getenv("EXECQ_TEST_REDIS_URL");
	if (url == NULL)
		return (0);	/* the test skips */
	if (strncmp(url, "unix://", 7) != 0) {
		fprintf(stderr, "harness: EXECQ_TEST_REDIS_URL must be "
		    "unix://PATH, got %s\n", url);
		return (-1);
	}
	h = xcalloc(1, sizeof *h);
	*state = h;
	if (harness_init(h, url) == -1) {
		harness_teardown(state);
		return (-1);
	}
	return (0);
}

/* nftw callback: removes one entry, children first. */
static int
harness_rm_cb(const char *path, const struct stat *sb, int type,
    struct FTW *ftw)
{
	(void)sb;
	(void)type;
	(void)ftw;
	if (remove(path) == -1)
		fprintf(stderr, "harness: remove %s: %s\n", path,
		    strerror(errno));
	return (0);
}

/* Teardown's stop: SIGTERM, a deadline, then SIGKILL. 0 if it exited 0. */
static int
harness_reap(pid_t pid)
{
	int64_t	deadline = harness_now_ms() + HARNESS_STOP_MS;
	int	status;

	kill(pid, SIGTERM);
	while (waitpid(pid, &status, WNOHANG) != pid) {
		if (harness_now_ms() > deadline) {
			fprintf(stderr, "harness: worker %ld ignores SIGTERM, "
			    "killing it\n", (long)pid);
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return (-1);
		}
		harness_sleep_ms(10);
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "harness: worker %ld ended with status 0x%x "
		    "on SIGTERM\n", (long)pid, status);
		return (-1);
	}
	return (0);
}

/* -1 if a sanitizer reported anything in a worker's stderr. */
static int
harness_check_sanitizers(struct harness *h)
{
	static const char	*marks[] = { "ERROR: AddressSanitizer",
				    "ERROR: LeakSanitizer", "runtime error:",
				    NULL };
	struct harness_worker	*w;
	unsigned		 i, j;
	char			*text;
	const char		*path;
	int			 rc = 0;

	for (i = 0; i < 2 * h->nw; i++) {
		w = &h->w[i % h->nw];
		path = i < h->nw ? w->err_path : w->log_path;
		if (path == NULL || (text = harness_read_file(path, NULL)) ==
		    NULL)
			continue;
		for (j = 0; marks[j] != NULL; j++) {
			if (strstr(text, marks[j]) != NULL) {
				fprintf(stderr, "harness: worker %s: %s\n",
				    w->consumer, marks[j]);
				rc = -1;
			}
		}
		free(text);
	}
	return (rc);
}

int
harness_teardown(void **state)
{
	struct harness	*h = *state;
	unsigned	 i;
	int		 rc = 0;

	if (h == NULL)
		return (0);
	/* Workers still running must stop cleanly too. */
	for (i = 0; i < h->nw; i++) {
		if (h->w[i].pid > 0 && harness_reap(h->w[i].pid) == -1)
			rc = -1;
		h->w[i].pid = -1;
	}
	if (harness_check_sanitizers(h) == -1)
		rc = -1;
	if (!h->passed || rc == -1 || getenv("EXECQ_TEST_VERBOSE") != NULL)
		harness_print_tails(h);
	for (i = 0; i < h->nw; i++) {
		free(h->w[i].consumer);
		free(h->w[i].err_path);
		free(h->w[i].log_path);
	}
	if (h->dir != NULL && getenv("EXECQ_TEST_KEEP") == NULL)
		nftw(h->dir, harness_rm_cb, 16, FTW_DEPTH|FTW_PHYS);
	if (h->rc != NULL)
		redisFree(h->rc);
	json_decref(h->cursors);
	json_decref(h->tokens);
	json_decref(h->stash);
	json_decref(h->ids);
	free(h->redis_path);
	free(h->bin);
	free(h->dir);
	free(h->ws);
	free(h->log_dir);
	free(h->state_dir);
	free(h->queue);
	free(h->reply);
	free(h);
	*state = NULL;
	return (rc);
}

const char *
harness_id(struct harness *h, const char *name)
{
	char	*id;
	json_t	*v;

	xasprintf(&id, "%s-%s", h->queue, name);
	v = json_string(id);
	free(id);
	json_array_append_new(h->ids, v);
	return (json_string_value(v));
}

void
harness_pass(struct harness *h)
{
	h->passed = 1;
}

/*
 * Our environment minus EXECQ_* and ENABLE_EXECUTE (the test decides
 * those), plus first (if not NULL) and then env. The array is allocated,
 * its strings are not.
 */
static char **
harness_scrubbed_env(const char *first, const char *const *env)
{
	char	**v;
	size_t	  n = 0, i;

	for (i = 0; environ[i] != NULL; i++)
		n++;
	for (i = 0; env != NULL && env[i] != NULL; i++)
		n++;
	v = xcalloc(n + 2, sizeof *v);
	n = 0;
	for (i = 0; environ[i] != NULL; i++) {
		if (strncmp(environ[i], "EXECQ_", 6) == 0 ||
		    strncmp(environ[i], "ENABLE_EXECUTE=", 15) == 0 ||
		    strncmp(environ[i], "XDG_STATE_HOME=", 15) == 0)
			continue;
		v[n++] = environ[i];
	}
	if (first != NULL)
		v[n++] = (char *)first;
	for (i = 0; env != NULL && env[i] != NULL; i++)
		v[n++] = (char *)env[i];
	v[n] = NULL;
	return (v);
}

/* The worker's environment: ours minus its settings, plus env. */
static char **
harness_worker_env(struct harness *h, const char *const *env)
{
	return (harness_scrubbed_env(h->execute ? "ENABLE_EXECUTE=1" : NULL,
	    env));
}

/* The worker's argv: the harness's flags, then the test's. */
static char **
harness_worker_argv(struct harness *h, struct harness_worker *w, va_list ap)
{
	const char	*base[] = { h->bin, "--redis", NULL, "--queue",
			    h->queue, "--workspace", h->ws, "--log-dir",
			    h->log_dir, "--state-dir", h->state_dir,
			    "--consumer", w->consumer, "-v",
			    "--tier", "admin", "--sandbox", "off" };
	const size_t	 nbase = sizeof base / sizeof base[0];
	char		**v, *url;
	const char	*s;
	size_t		 n;
	va_list		 aq;

	xasprintf(&url, "unix://%s", h->redis_path);
	base[2] = url;
	n = nbase;
	va_copy(aq, ap);
	while (va_arg(aq, const char *) != NULL)
		n++;
	va_end(aq);
	v = xcalloc(n + 1, sizeof *v);
	for (n = 0; n < nbase; n++)
		v[n] = xstrdup(base[n]);
	while ((s = va_arg(ap, const char *)) != NULL) {
		/* Its lines go there instead of stderr: read that too. */
		if (n > 0 && strcmp(v[n - 1], "--log-file") == 0) {
			free(w->log_path);
			w->log_path = xstrdup(s);
		}
		v[n++] = xstrdup(s);
	}
	v[n] = NULL;
	free(url);
	return (v);
}

/* 1 if reply (an XINFO array of field lists) has name == want. */
static int
harness_xinfo_has(const redisReply *r, const char *want)
{
	const redisReply	*e;
	size_t			 i, j;

	if (r->type != REDIS_REPLY_ARRAY)
		return (0);
	for (i = 0; i < r->elements; i++) {
		e = r->element[i];
		if (e->type != REDIS_REPLY_ARRAY)
			continue;
		for (j = 0; j + 1 < e->elements; j += 2) {
			if (e->element[j]->type == REDIS_REPLY_STRING &&
			    strcmp(e->element[j]->str, "name") == 0 &&
			    e->element[j + 1]->type == REDIS_REPLY_STRING &&
			    strcmp(e->element[j + 1]->str, want) == 0)
				return (1);
		}
	}
	return (0);
}

/*
 * 1 once the group exists on q:<queue>:normal and w is connected. The
 * group alone does not say so when an earlier worker of the test made it,
 * and Redis 7.0 lists a consumer only once it got an entry, so the
 * worker's own "read connection up" line (or its consumer) is the sign.
 */
static int
harness_worker_ready(struct harness *h, struct harness_worker *w)
{
	redisReply	*r;
	char		*text;
	int		 ready;

	r = harness_cmd_raw(h, "XINFO GROUPS q:%s:normal", h->queue);
	ready = harness_xinfo_has(r, "execq");
	freeReplyObject(r);
	if (!ready)
		return (0);
	r = harness_cmd_raw(h, "XINFO CONSUMERS q:%s:normal execq", h->queue);
	ready = harness_xinfo_has(r, w->consumer);
	freeReplyObject(r);
	if (ready)
		return (1);
	text = harness_read_file(w->log_path != NULL ? w->log_path :
	    w->err_path, NULL);
	ready = text != NULL && strstr(text, "read connection up") != NULL;
	free(text);
	return (ready);
}

/* The slot of a pid this harness started. */
static struct harness_worker *
harness_worker_find(struct harness *h, pid_t pid)
{
	unsigned	i;

	for (i = 0; i < h->nw; i++) {
		if (h->w[i].pid == pid && pid > 0)
			return (&h->w[i]);
	}
	harness_fail(h, "pid %ld is not a running worker of this test",
	    (long)pid);
}

/*
 * The outer cgroup v1 pids limit every worker of this test process starts
 * under (and so every command of theirs): made once, checked by the tests
 * that run hostile commands (harness_outer_limit), removed at exit.
 */
static char	*harness_pids_dir;	/* NULL: no v1 pids controller */
static int	 harness_pids_procs = -1;	/* its cgroup.procs */

/* atexit: the outer group goes once its members are gone. */
static void
harness_pids_remove(void)
{
	for (int i = 0; i < 200 && rmdir(harness_pids_dir) == -1 &&
	    errno == EBUSY; i++)
		usleep(10000);
}

/* This process's path in the v1 pids hierarchy ("N:pids:/path"), or NULL. */
static char *
harness_pids_self(void)
{
	FILE	*f;
	char	 line[4096], *p, *self = NULL;

	if ((f = fopen("/proc/self/cgroup", "re")) == NULL)
		return (NULL);
	while (self == NULL && fgets(line, sizeof line, f) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if ((p = strstr(line, ":pids:")) != NULL)
			self = xstrdup(p + 6);
	}
	fclose(f);
	return (self);
}

/* Makes the outer group once; quietly nothing without v1 pids. */
static void
harness_pids_setup(void)
{
	static int	 done;
	char		*self, path[PATH_MAX];
	int		 fd;

	if (done++)
		return;
	if (access("/sys/fs/cgroup/pids/cgroup.procs", W_OK) == -1 ||
	    (self = harness_pids_self()) == NULL)
		return;
	xasprintf(&harness_pids_dir, "/sys/fs/cgroup/pids%s/execq-test-%ld",
	    strcmp(self, "/") == 0 ? "" : self, (long)getpid());
	free(self);
	if (mkdir(harness_pids_dir, 0755) == -1 && errno != EEXIST)
		goto fail;
	snprintf(path, sizeof path, "%s/pids.max", harness_pids_dir);
	if ((fd = open(path, O_WRONLY|O_CLOEXEC)) == -1)
		goto fail;
	if (write(fd, "4096", 4) != 4) {
		close(fd);
		goto fail;
	}
	close(fd);
	snprintf(path, sizeof path, "%s/cgroup.procs", harness_pids_dir);
	if ((harness_pids_procs = open(path, O_WRONLY|O_CLOEXEC)) == -1)
		goto fail;
	atexit(harness_pids_remove);
	return;

fail:
	fprintf(stderr, "harness: outer pids limit %s: %s\n",
	    harness_pids_dir, strerror(errno));
	free(harness_pids_dir);
	harness_pids_dir = NULL;
}

long
harness_outer_limit(struct harness *h, pid_t pid)
{
	FILE	*f;
	char	 path[64], line[4096], *p, want[PATH_MAX];
	long	 max = -1;
	int	 in = 0;

	(void)h;
	if (harness_pids_dir == NULL)
		return (-1);
	/* /proc/<pid>/cgroup names the group below the mount point. */
	snprintf(want, sizeof want, "%s",
	    harness_pids_dir + strlen("/sys/fs/cgroup/pids"));
	snprintf(path, sizeof path, "/proc/%ld/cgroup", (long)pid);
	if ((f = fopen(path, "re")) == NULL)
		return (-1);
	while (fgets(line, sizeof line, f) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if ((p = strstr(line, ":pids:")) != NULL)
			in = strcmp(p + 6, want) == 0;
	}
	fclose(f);
	snprintf(path, sizeof path, "%s/pids.max", harness_pids_dir);
	if (in && (f = fopen(path, "re")) != NULL) {
		if (fscanf(f, "%ld", &max) != 1)
			max = -1;
		fclose(f);
	}
	return (max);
}

/* Runs between fork and exec: only async-signal-safe calls. */
static void __attribute__((noreturn))
harness_worker_child(const char *err_path, char **argv, char **envp)
{
	int	fd, null;

	/* First: whatever it starts is under the outer limit. */
	if (harness_pids_procs != -1 && write(harness_pids_procs, "0", 1) != 1)
		_exit(125);

	fd = open(err_path, O_WRONLY|O_CREAT|O_TRUNC, 0644);
	null = open("/dev/null", O_RDONLY);
	if (fd == -1 || null == -1 || dup2(null, 0) == -1 ||
	    dup2(fd, 1) == -1 || dup2(fd, 2) == -1)
		_exit(126);
	syscall(SYS_close_range, 3U, ~0U, 0U);
	execve(argv[0], argv, envp);
	_exit(127);
}

/* Forks the worker (harness_worker_start's first half). */
static struct harness_worker *
harness_worker_vlaunch(struct harness *h, const char *const *env, va_list ap)
{
	struct harness_worker	*w;
	char			**argv, **envp;
	size_t			  i;

	if (h->nw == HARNESS_MAX_WORKERS)
		harness_fail(h, "too many workers in one test");
	w = &h->w[h->nw++];
	w->pid = -1;
	xasprintf(&w->consumer, "%s-w%u", h->queue, h->nw);
	xasprintf(&w->err_path, "%s/%s.stderr", h->dir, w->consumer);
	argv = harness_worker_argv(h, w, ap);
	envp = harness_worker_env(h, env);
	harness_pids_setup();
	w->pid = fork();
	if (w->pid == 0)
		harness_worker_child(w->err_path, argv, envp);
	for (i = 0; argv[i] != NULL; i++)
		free(argv[i]);
	free(argv);
	free(envp);
	if (w->pid == -1)
		harness_fail(h, "fork: %s", strerror(errno));
	return (w);
}

pid_t
harness_worker_launch(struct harness *h, const char *const *env, ...)
{
	struct harness_worker	*w;
	va_list			 ap;

	va_start(ap, env);
	w = harness_worker_vlaunch(h, env, ap);
	va_end(ap);
	return (w->pid);
}

pid_t
harness_worker_start(struct harness *h, const char *const *env, ...)
{
	struct harness_worker	*w;
	va_list			 ap;
	int64_t			 deadline;
	int			 status;

	va_start(ap, env);
	w = harness_worker_vlaunch(h, env, ap);
	va_end(ap);
	deadline = harness_now_ms() + HARNESS_READY_MS;
	while (!harness_worker_ready(h, w)) {
		if (waitpid(w->pid, &status, WNOHANG) == w->pid) {
			w->pid = -1;
			harness_fail(h, "worker %s exited during start-up "
			    "(status 0x%x)", w->consumer, status);
		}
		if (harness_now_ms() > deadline)
			harness_fail(h, "worker %s not reading q:%s:normal "
			    "after %d ms", w->consumer, h->queue,
			    HARNESS_READY_MS);
		harness_sleep_ms(10);
	}
	return (w->pid);
}

int
harness_worker_stop(struct harness *h, pid_t pid)
{
	struct harness_worker	*w = harness_worker_find(h, pid);
	int64_t			 deadline;
	int			 status;

	if (kill(pid, SIGTERM) == -1)
		harness_fail(h, "kill %ld: %s", (long)pid, strerror(errno));
	deadline = harness_now_ms() + HARNESS_STOP_MS;
	while (waitpid(pid, &status, WNOHANG) != pid) {
		if (harness_now_ms() > deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			w->pid = -1;
			harness_fail(h, "worker %s still running %d ms after "
			    "SIGTERM; killed", w->consumer, HARNESS_STOP_MS);
		}
		harness_sleep_ms(10);
	}
	w->pid = -1;
	return (status);
}

void
harness_worker_kill(struct harness *h, pid_t pid)
{
	struct harness_worker	*w = harness_worker_find(h, pid);
	struct pollfd		 pfd;
	pid_t			 child = harness_worker_proc(h, pid);
	int			 status;

	/*
	 * Under a holder (worker/holder.h) the worker is its child and dies
	 * by PR_SET_PDEATHSIG, an instant later: killed too, and waited for
	 * (its pidfd), so that it reads nothing once this returns.
	 */
	pfd.fd = -1;
	pfd.events = POLLIN;
	if (child != pid &&
	    (pfd.fd = (int)syscall(SYS_pidfd_open, child, 0)) != -1)
		kill(child, SIGKILL);
	kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		/* nothing */;
	if (pfd.fd != -1) {
		while (poll(&pfd, 1, -1) == -1 && errno == EINTR)
			/* nothing */;
		close(pfd.fd);
	}
	w->pid = -1;
}

pid_t
harness_worker_proc(struct harness *h, pid_t pid)
{
	char	 path[64], *kids, *comm, *p, *end;
	long	 kid;
	pid_t	 found = pid;

	(void)h;
	snprintf(path, sizeof path, "/proc/%ld/task/%ld/children", (long)pid,
	    (long)pid);
	if ((kids = harness_read_file(path, NULL)) == NULL)
		return (pid);
	for (p = kids; (kid = strtol(p, &end, 10)) > 0; p = end) {
		snprintf(path, sizeof path, "/proc/%ld/comm", kid);
		comm = harness_read_file(path, NULL);
		if (comm != NULL && strcmp(comm, "execq-worker\n") == 0)
			found = (pid_t)kid;
		free(comm);
	}
	free(kids);
	return (found);
}

pid_t
harness_wait_worker_proc(struct harness *h, pid_t holder, pid_t old,
    int timeout_ms)
{
	int64_t	deadline = harness_now_ms() + timeout_ms;
	pid_t	pid;

	while ((pid = harness_worker_proc(h, holder)) == old ||
	    pid == holder) {
		if (harness_now_ms() > deadline)
			harness_fail(h, "holder %ld started no worker after "
			    "%ld", (long)holder, (long)old);
		if (!harness_worker_alive(h, holder))
			harness_fail(h, "holder %ld exited", (long)holder);
		harness_sleep_ms(5);
	}
	return (pid);
}

int
harness_count_callbacks(struct harness *h, const char *id)
{
	char	*stream, *needle;
	int	 n;

	xasprintf(&stream, "q:%s:high", h->reply);
	xasprintf(&needle, "\"session_id\":\"%s\"", id);
	n = harness_count_entries(h, stream, needle);
	free(stream);
	free(needle);
	return (n);
}

int
harness_worker_alive(struct harness *h, pid_t pid)
{
	struct harness_worker	*w = harness_worker_find(h, pid);
	int			 status;

	if (waitpid(pid, &status, WNOHANG) == pid) {
		fprintf(stderr, "harness: worker %s exited, status 0x%x\n",
		    w->consumer, status);
		w->pid = -1;
		return (0);
	}
	return (1);
}

void
harness_xadd(struct harness *h, const char *lane, const char *field,
    const void *body, size_t len)
{
	redisReply	*r;
	char		*stream;

	xasprintf(&stream, "q:%s:%s", h->queue, lane);
	r = harness_cmd(h, "XADD %s * %s %b", stream, field, body, len);
	freeReplyObject(r);
	free(stream);
}

void
harness_submit_json(struct harness *h, const char *lane, const char *json)
{
	harness_xadd(h, lane, "item", json, strlen(json));
}

void
harness_submit(struct harness *h, const char *lane, const char *id,
    const char *command, const char *args_extra)
{
	json_t		*item, *args, *extra;
	json_error_t	 jerr;
	char		*text;

	args = json_pack("{s:s}", "command", command);
	if (args_extra != NULL) {
		extra = json_loads(args_extra, 0, &jerr);
		if (extra == NULL)
			harness_fail(h, "bad args_extra %s: %s", args_extra,
			    jerr.text);
		json_object_update(args, extra);
		json_decref(extra);
	}
	item = json_pack("{s:s, s:s, s:s, s:o}", "id", id, "type", "EXEC",
	    "reply_to", h->reply, "args", args);
	text = json_dumps(item, JSON_COMPACT);
	harness_submit_json(h, lane, text);
	free(text);
	json_decref(item);
}

/* 1 if answer a is the one wanted (id NULL: any). */
static int
harness_answer_matches(json_t *a, const char *id)
{
	const char	*got;

	if (id == NULL)
		return (1);
	got = json_string_value(json_object_get(a, "id"));
	return (got != NULL && strcmp(got, id) == 0);
}

/*
 * Takes a matching answer of type out of the stash, or NULL. Type NULL:
 * any but an EXEC_WAITING, a notice only the tests that look for it see.
 */
static json_t *
harness_unstash_typed(struct harness *h, const char *key, const char *id,
    const char *type)
{
	json_t		*list, *a;
	const char	*got;
	size_t		 i;

	if ((list = json_object_get(h->stash, key)) == NULL)
		return (NULL);
	json_array_foreach(list, i, a) {
		got = json_string_value(json_object_get(a, "type"));
		if (type != NULL && (got == NULL || strcmp(got, type) != 0))
			continue;
		if (type == NULL && got != NULL &&
		    strcmp(got, "EXEC_WAITING") == 0)
			continue;
		if (harness_answer_matches(a, id)) {
			json_incref(a);
			json_array_remove(list, i);
			return (a);
		}
	}
	return (NULL);
}

/* Takes a matching answer out of the stash, or NULL. */
static json_t *
harness_unstash(struct harness *h, const char *key, const char *id)
{
	return (harness_unstash_typed(h, key, id, NULL));
}

/* The parsed "item" field of a stream entry [id, [f, v, ...]]. */
static json_t *
harness_entry_json(struct harness *h, const char *key, const redisReply *e)
{
	const redisReply	*f;
	json_t			*a;
	json_error_t		 jerr;
	size_t			 i;

	f = e->element[1];
	for (i = 0; f->type == REDIS_REPLY_ARRAY && i + 1 < f->elements;
	    i += 2) {
		if (strcmp(f->element[i]->str, "item") != 0)
			continue;
		a = json_loadb(f->element[i + 1]->str, f->element[i + 1]->len,
		    0, &jerr);
		if (a == NULL || !json_is_object(a))
			harness_fail(h, "%s %s: answer is not a JSON object: "
			    "%s: %.200s", key, e->element[0]->str, jerr.text,
			    f->element[i + 1]->str);
		/* A session's token, for the PROCESS items sent later. */
		if (json_is_string(json_object_get(a, "session_token")) &&
		    json_is_string(json_object_get(a, "session_id")))
			json_object_set(h->tokens, json_string_value(
			    json_object_get(a, "session_id")),
			    json_object_get(a, "session_token"));
		return (a);
	}
	harness_fail(h, "%s %s: entry has no item field", key,
	    e->element[0]->str);
}

/* One XREAD chunk: new answers go to the stash; 1 if any arrived. */
static int
harness_read_chunk(struct harness *h, const char *key, int block_ms)
{
	redisReply	*r, *entries;
	json_t		*list;
	const char	*cursor;
	size_t		 i;

	cursor = json_string_value(json_object_get(h->cursors, key));
	r = harness_cmd(h, "XREAD COUNT 100 BLOCK %d STREAMS %s %s",
	    block_ms, key, cursor != NULL ? cursor : "0-0");
	if (r->type != REDIS_REPLY_ARRAY || r->elements == 0) {
		freeReplyObject(r);
		return (0);
	}
	if ((list = json_object_get(h->stash, key)) == NULL) {
		list = json_array();
		json_object_set_new(h->stash, key, list);
	}
	entries = r->element[0]->element[1];
	for (i = 0; i < entries->elements; i++) {
		json_array_append_new(list,
		    harness_entry_json(h, key, entries->element[i]));
		json_object_set_new(h->cursors, key,
		    json_string(entries->element[i]->element[0]->str));
	}
	freeReplyObject(r);
	return (1);
}

json_t *
harness_wait_answer(struct harness *h, const char *reply_to, const char *id,
    int timeout_ms)
{
	json_t	*a;
	char	*key;
	int64_t	 start, left;

	xasprintf(&key, "q:%s:normal", reply_to != NULL ? reply_to : h->reply);
	start = harness_now_ms();
	for (;;) {
		if ((a = harness_unstash(h, key, id)) != NULL)
			break;
		left = start + timeout_ms - harness_now_ms();
		if (left <= 0)
			harness_fail(h, "no answer for id %s on %s within "
			    "%d ms", id != NULL ? id : "(any)", key,
			    timeout_ms);
		harness_read_chunk(h, key, left < HARNESS_CHUNK_MS ?
		    (int)left : HARNESS_CHUNK_MS);
	}
	free(key);
	return (a);
}

json_t *
harness_try_entry(struct harness *h, const char *stream, const char *id,
    int timeout_ms)
{
	return (harness_try_typed(h, stream, id, NULL, timeout_ms));
}

json_t *
harness_try_typed(struct harness *h, const char *stream, const char *id,
    const char *type, int timeout_ms)
{
	json_t	*a;
	int64_t	 deadline = harness_now_ms() + timeout_ms, left;
	int	 read_once = 0;

	for (;;) {
		if ((a = harness_unstash_typed(h, stream, id, type)) != NULL)
			return (a);
		left = deadline - harness_now_ms();
		if (left <= 0 && read_once)
			return (NULL);
		/* BLOCK 0 would wait for ever: block at least 1 ms. */
		if (left < 1)
			left = 1;
		harness_read_chunk(h, stream, left < HARNESS_CHUNK_MS ?
		    (int)left : HARNESS_CHUNK_MS);
		read_once = 1;
	}
}

json_t *
harness_wait_entry(struct harness *h, const char *stream, const char *id,
    int timeout_ms)
{
	json_t	*a;

	if ((a = harness_try_entry(h, stream, id, timeout_ms)) == NULL)
		harness_fail(h, "no entry for id %s on %s within %d ms",
		    id != NULL ? id : "(any)", stream, timeout_ms);
	return (a);
}

json_t *
harness_wait_callback(struct harness *h, const char *id, int timeout_ms)
{
	json_t	*a;
	char	*key;

	xasprintf(&key, "q:%s:high", h->reply);
	/* An EXEC_WAITING of the session stays for harness_try_typed. */
	if ((a = harness_try_typed(h, key, id, "EXEC_CALLBACK",
	    timeout_ms)) == NULL)
		harness_fail(h, "no EXEC_CALLBACK for id %s on %s within %d ms",
		    id != NULL ? id : "(any)", key, timeout_ms);
	free(key);
	return (a);
}

/*
 * The tokens this test was given, into PROCESS args that name none: the
 * session's for an action on one, all of them for list. A test that
 * means to send none writes "token": null.
 */
static void
harness_add_tokens(struct harness *h, json_t *args)
{
	const char	*sid, *key;
	json_t		*all, *v;

	if (json_object_get(args, "token") != NULL ||
	    json_object_get(args, "tokens") != NULL)
		return;
	sid = json_string_value(json_object_get(args, "session_id"));
	if (sid != NULL) {
		if ((v = json_object_get(h->tokens, sid)) != NULL)
			json_object_set(args, "token", v);
		return;
	}
	all = json_array();
	json_object_foreach(h->tokens, key, v)
		json_array_append(all, v);
	json_object_set_new(args, "tokens", all);
}

const char *
harness_submit_process(struct harness *h, const char *args)
{
	static unsigned	 serial;
	json_t		*item, *a;
	json_error_t	 jerr;
	const char	*id;
	char		 name[32], *text;

	if ((a = json_loads(args, 0, &jerr)) == NULL)
		harness_fail(h, "bad PROCESS args %s: %s", args, jerr.text);
	harness_add_tokens(h, a);
	snprintf(name, sizeof name, "p%u", ++serial);
	id = harness_id(h, name);
	item = json_pack("{s:s, s:s, s:s, s:o}", "id", id, "type", "PROCESS",
	    "reply_to", h->reply, "args", a);
	text = json_dumps(item, JSON_COMPACT);
	harness_submit_json(h, "ctl", text);
	free(text);
	json_decref(item);
	return (id);
}

json_t *
harness_process(struct harness *h, const char *args, int timeout_ms)
{
	return (harness_wait_answer(h, NULL, harness_submit_process(h, args),
	    timeout_ms));
}

void
harness_shell_start(struct harness *h, const char *id, const char *setup)
{
	json_t	*a;
	char	*s;

	harness_submit(h, "normal", id, setup, "{\"background\": true, "
	    "\"shell\": true}");
	a = harness_wait_answer(h, NULL, id, HARNESS_SHELL_MS);
	if (strcmp(harness_jstr(a, "type"), "EXEC_STARTED") != 0) {
		s = json_dumps(a, JSON_COMPACT);
		harness_fail(h, "shell %s: %s", id, s);
	}
	json_decref(a);
}

json_t *
harness_shell_exec(struct harness *h, const char *sid, const char *command,
    long timeout_ms)
{
	json_t	*args, *a;
	char	*text;

	args = json_pack("{s:s, s:s, s:s}", "action", "exec", "session_id",
	    sid, "command", command);
	if (timeout_ms > 0)
		json_object_set_new(args, "timeout_ms",
		    json_integer(timeout_ms));
	text = json_dumps(args, JSON_COMPACT);
	a = harness_process(h, text, HARNESS_SHELL_MS);
	free(text);
	json_decref(args);
	return (a);
}

json_t *
harness_all_answers(struct harness *h, const char *reply_to)
{
	redisReply	*r;
	json_t		*all;
	char		*key;
	size_t		 i;

	xasprintf(&key, "q:%s:normal", reply_to != NULL ? reply_to : h->reply);
	r = harness_cmd(h, "XRANGE %s - +", key);
	all = json_array();
	for (i = 0; r->type == REDIS_REPLY_ARRAY && i < r->elements; i++)
		json_array_append_new(all,
		    harness_entry_json(h, key, r->element[i]));
	freeReplyObject(r);
	free(key);
	return (all);
}

int
harness_count_entries(struct harness *h, const char *stream,
    const char *needle)
{
	redisReply	*r, *f;
	size_t		 i, k;
	int		 n = 0;

	r = harness_cmd(h, "XRANGE %s - +", stream);
	for (i = 0; r->type == REDIS_REPLY_ARRAY && i < r->elements; i++) {
		if (r->element[i]->elements != 2)
			continue;
		f = r->element[i]->element[1];
		for (k = 0; k + 1 < f->elements; k += 2)
			if (strcmp(f->element[k]->str, "item") == 0 &&
			    strstr(f->element[k + 1]->str, needle) != NULL)
				n++;
	}
	freeReplyObject(r);
	return (n);
}

long long
harness_pending(struct harness *h, const char *lane)
{
	redisReply	*r;
	long long	 n;

	r = harness_cmd(h, "XPENDING q:%s:%s execq", h->queue, lane);
	if (r->type != REDIS_REPLY_ARRAY || r->elements < 1 ||
	    r->element[0]->type != REDIS_REPLY_INTEGER)
		harness_fail(h, "XPENDING q:%s:%s: unexpected reply",
		    h->queue, lane);
	n = r->element[0]->integer;
	freeReplyObject(r);
	return (n);
}

json_t *
harness_jget(json_t *o, const char *path)
{
	char		 name[128];
	const char	*dot;
	size_t		 len;

	while (o != NULL && *path != '\0') {
		dot = strchr(path, '.');
		len = dot != NULL ? (size_t)(dot - path) : strlen(path);
		if (len >= sizeof name)
			return (NULL);
		memcpy(name, path, len);
		name[len] = '\0';
		o = json_object_get(o, name);
		path += len + (dot != NULL);
	}
	return (o);
}

const char *
harness_jstr(json_t *o, const char *path)
{
	return (json_string_value(harness_jget(o, path)));
}

int64_t
harness_jint(json_t *o, const char *path)
{
	json_t	*v = harness_jget(o, path);

	return (json_is_integer(v) ? json_integer_value(v) : INT64_MIN);
}

int
harness_jbool(json_t *o, const char *path)
{
	json_t	*v = harness_jget(o, path);

	return (json_is_boolean(v) ? json_is_true(v) : -1);
}

/* Counts (and signals, sig != 0) processes whose cmdline contains s. */
static int
harness_procs(const char *s, int sig)
{
	DIR		*d;
	struct dirent	*de;
	char		 path[64], buf[4096];
	ssize_t		 n, i;
	int		 fd, found = 0;
	pid_t		 pid;

	if ((d = opendir("/proc")) == NULL)
		return (-1);
	while ((de = readdir(d)) != NULL) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = (pid_t)atol(de->d_name);
		if (pid == getpid())
			continue;
		snprintf(path, sizeof path, "/proc/%ld/cmdline", (long)pid);
		if ((fd = open(path, O_RDONLY|O_CLOEXEC)) == -1)
			continue;
		n = read(fd, buf, sizeof buf - 1);
		close(fd);
		if (n <= 0)
			continue;	/* a zombie or a kernel thread */
		for (i = 0; i < n; i++)
			if (buf[i] == '\0')
				buf[i] = ' ';
		buf[n] = '\0';
		if (strstr(buf, s) == NULL)
			continue;
		found++;
		if (sig != 0)
			kill(pid, sig);
	}
	closedir(d);
	return (found);
}

int
harness_count_procs(const char *s)
{
	return (harness_procs(s, 0));
}

int
harness_kill_procs(const char *s, int sig)
{
	return (harness_procs(s, sig));
}

int
harness_wait_procs_gone(const char *s, int timeout_ms)
{
	int64_t	deadline = harness_now_ms() + timeout_ms;
	int	n;

	while ((n = harness_count_procs(s)) > 0 &&
	    harness_now_ms() < deadline)
		harness_sleep_ms(20);
	return (n);
}

int
harness_wait_file(const char *path, int timeout_ms)
{
	int64_t	deadline = harness_now_ms() + timeout_ms;

	while (access(path, F_OK) == -1) {
		if (harness_now_ms() > deadline)
			return (-1);
		harness_sleep_ms(10);
	}
	return (0);
}

int
harness_ws_lines(struct harness *h, const char *name)
{
	char	*path, *text, *p;
	int	 n = 0;

	xasprintf(&path, "%s/%s", h->ws, name);
	if ((text = harness_read_file(path, NULL)) != NULL)
		for (p = text; *p != '\0'; p++)
			n += *p == '\n';
	free(text);
	free(path);
	return (n);
}

void
harness_wait_ws_lines(struct harness *h, const char *name, int n,
    int timeout_ms)
{
	int64_t	deadline = harness_now_ms() + timeout_ms;

	while (harness_ws_lines(h, name) < n) {
		if (harness_now_ms() > deadline)
			harness_fail(h, "%s has %d line(s), not %d", name,
			    harness_ws_lines(h, name), n);
		harness_sleep_ms(10);
	}
}

char *
harness_read_file(const char *path, size_t *len)
{
	char	*buf = NULL;
	size_t	 size = 0, used = 0;
	ssize_t	 n;
	int	 fd;

	if ((fd = open(path, O_RDONLY|O_CLOEXEC)) == -1)
		return (NULL);
	for (;;) {
		if (used + 1 >= size) {
			size = size == 0 ? 8192 : size * 2;
			buf = xrealloc(buf, size);
		}
		n = read(fd, buf + used, size - used - 1);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		used += n;
	}
	close(fd);
	if (n == -1) {
		free(buf);
		return (NULL);
	}
	buf[used] = '\0';
	if (len != NULL)
		*len = used;
	return (buf);
}

int
harness_run(struct harness *h, const char *const *argv, int timeout_ms)
{
	int64_t	deadline = harness_now_ms() + timeout_ms;
	pid_t	pid;
	int	status, null;

	pid = fork();
	if (pid == -1)
		harness_fail(h, "fork: %s", strerror(errno));
	if (pid == 0) {
		null = open("/dev/null", O_RDWR);
		if (null == -1 || dup2(null, 0) == -1 || dup2(null, 1) == -1)
			_exit(126);
		syscall(SYS_close_range, 3U, ~0U, 0U);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	while (waitpid(pid, &status, WNOHANG) != pid) {
		if (harness_now_ms() > deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			harness_fail(h, "%s did not finish within %d ms",
			    argv[0], timeout_ms);
		}
		harness_sleep_ms(10);
	}
	return (status);
}

/* A growing, NUL-terminated copy of what one pipe carried. */
struct harness_buf {
	char	*s;
	size_t	 len;
	size_t	 size;
};

/* Reads what fd has into b: 0 at EOF or an error (fd closed), else 1. */
static int
harness_buf_read(struct harness_buf *b, int fd)
{
	ssize_t	n;

	if (b->size - b->len < 4096 + 1) {
		b->size *= 2;
		b->s = xrealloc(b->s, b->size);
	}
	n = read(fd, b->s + b->len, b->size - b->len - 1);
	if (n == -1 && (errno == EINTR || errno == EAGAIN))
		return (1);
	if (n <= 0) {
		close(fd);
		return (0);
	}
	b->len += n;
	b->s[b->len] = '\0';
	return (1);
}

/* argv joined by spaces into buf (size bytes), cut if it does not fit. */
static const char *
harness_argv_text(const char *const *argv, char *buf, size_t size)
{
	size_t	used = 0, i;
	int	n;

	buf[0] = '\0';
	for (i = 0; argv[i] != NULL && used + 1 < size; i++) {
		n = snprintf(buf + used, size - used, "%s%s", i > 0 ? " " : "",
		    argv[i]);
		if (n < 0)
			break;
		used += (size_t)n;
	}
	return (buf);
}

/* Runs between fork and exec: only async-signal-safe calls. */
static void __attribute__((noreturn))
harness_capture_child(const char *const *argv, const char *const *envp,
    int out, int err)
{
	int	null;

	setpgid(0, 0);
	null = open("/dev/null", O_RDONLY);
	if (null == -1 || dup2(null, 0) == -1 || dup2(out, 1) == -1 ||
	    dup2(err, 2) == -1)
		_exit(126);
	syscall(SYS_close_range, 3U, ~0U, 0U);
	if (envp != NULL)
		execvpe(argv[0], (char *const *)argv, (char *const *)envp);
	else
		execvp(argv[0], (char *const *)argv);
	_exit(127);
}

/* The deadline passed: kills the group, reaps, fails showing the output. */
static void __attribute__((noreturn))
harness_capture_expired(struct harness *h, const char *const *argv,
    pid_t pid, struct pollfd *pfd, struct harness_buf *buf, int timeout_ms)
{
	char	msg[1024], cmd[200];
	int	i;

	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) == -1 && errno == EINTR)
		/* nothing */;
	snprintf(msg, sizeof msg, "'%s' did not finish within %d ms; "
	    "stdout: \"%.300s\"; stderr: \"%.300s\"",
	    harness_argv_text(argv, cmd, sizeof cmd), timeout_ms, buf[0].s,
	    buf[1].s);
	for (i = 0; i < 2; i++) {
		if (pfd[i].fd != -1)
			close(pfd[i].fd);
		free(buf[i].s);
	}
	harness_fail(h, "%s", msg);
}

void
harness_capture(struct harness *h, const char *const *argv,
    const char *const *envp, int timeout_ms, struct harness_proc *p)
{
	struct harness_buf	 buf[2];
	struct pollfd		 pfd[2];
	int			 out[2], err[2], i;
	int64_t			 start, deadline, left;
	pid_t			 pid;

	memset(p, 0, sizeof *p);
	for (i = 0; i < 2; i++) {
		buf[i].size = 8192;
		buf[i].s = xcalloc(1, buf[i].size);
		buf[i].len = 0;
	}
	if (pipe2(out, O_CLOEXEC) == -1 || pipe2(err, O_CLOEXEC) == -1)
		harness_fail(h, "pipe2: %s", strerror(errno));
	start = harness_now_ms();
	deadline = start + timeout_ms;
	if ((pid = fork()) == -1)
		harness_fail(h, "fork: %s", strerror(errno));
	if (pid == 0)
		harness_capture_child(argv, envp, out[1], err[1]);
	setpgid(pid, pid);	/* as the child does: whichever runs first */
	close(out[1]);
	close(err[1]);
	pfd[0].fd = out[0];
	pfd[1].fd = err[0];
	while (pfd[0].fd != -1 || pfd[1].fd != -1) {
		if ((left = deadline - harness_now_ms()) <= 0)
			harness_capture_expired(h, argv, pid, pfd, buf,
			    timeout_ms);
		for (i = 0; i < 2; i++) {
			pfd[i].events = POLLIN;
			pfd[i].revents = 0;
		}
		if (poll(pfd, 2, (int)left) == -1 && errno != EINTR)
			harness_fail(h, "poll: %s", strerror(errno));
		for (i = 0; i < 2; i++) {
			if (pfd[i].fd != -1 && pfd[i].revents != 0 &&
			    !harness_buf_read(&buf[i], pfd[i].fd))
				pfd[i].fd = -1;
		}
	}
	while (waitpid(pid, &p->status, WNOHANG) != pid) {
		if (harness_now_ms() > deadline)
			harness_capture_expired(h, argv, pid, pfd, buf,
			    timeout_ms);
		harness_sleep_ms(5);
	}
	p->ms = harness_now_ms() - start;
	p->out = buf[0].s;
	p->out_len = buf[0].len;
	p->err = buf[1].s;
	p->err_len = buf[1].len;
}

void
harness_proc_release(struct harness_proc *p)
{
	free(p->out);
	free(p->err);
	memset(p, 0, sizeof *p);
}

int
harness_proc_exit(const struct harness_proc *p)
{
	if (WIFEXITED(p->status))
		return (WEXITSTATUS(p->status));
	if (WIFSIGNALED(p->status))
		return (128 + WTERMSIG(p->status));
	return (-1);
}

/* Asserts the worker exits 0 on SIGTERM. */
void
harness_stop_clean(struct harness *h, pid_t pid)
{
	int	status;

	status = harness_worker_stop(h, pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		harness_fail(h, "worker exited with status 0x%x", status);
}

/* Waits until a process matching s runs (the command has started). */
void
harness_wait_running(struct harness *h, const char *s)
{
	int64_t	deadline = harness_now_ms() + 30000;

	while (harness_count_procs(s) == 0) {
		if (harness_now_ms() > deadline)
			harness_fail(h, "no process '%s' after 30 s", s);
		harness_sleep_ms(10);
	}
}

/* The fixture, or skip when scripts/with-redis.sh did not start a server. */
struct harness *
harness_fixture(void **state)
{
	if (*state == NULL)
		skip();
	return (*state);
}

/* The metadata <log_dir>/<id>.json. */
json_t *
harness_load_meta(struct harness *h, const char *id)
{
	json_error_t	 jerr;
	json_t		*m;
	char		*path;

	xasprintf(&path, "%s/%s.json", h->log_dir, id);
	m = json_load_file(path, 0, &jerr);
	if (m == NULL)
		harness_fail(h, "%s: %s", path, jerr.text);
	free(path);
	return (m);
}

/* The client binary: $EXECQ_TEST_BUILD/execq, else build/execq. */
const char *
harness_cli_path(struct harness *h)
{
	static char	 path[PATH_MAX];
	const char	*build = getenv("EXECQ_TEST_BUILD");

	snprintf(path, sizeof path, "%s/execq", build != NULL ? build :
	    "build");
	if (access(path, X_OK) == -1)
		harness_fail(h, "%s: %s", path, strerror(errno));
	return (path);
}

/*
 * The client's environment: ours minus EXECQ_* and ENABLE_EXECUTE, plus
 * EXECQ_REDIS_URL=url. The array is allocated, its strings are not.
 */
static const char **
harness_cli_env(struct harness *h, const char *url)
{
	static char	var[PATH_MAX + 32], state[PATH_MAX + 32];
	const char	*more[] = { state, NULL };

	snprintf(var, sizeof var, "EXECQ_REDIS_URL=%s", url);
	/* The client's token store, the test's own. */
	snprintf(state, sizeof state, "XDG_STATE_HOME=%s/cli-state", h->dir);
	return ((const char **)harness_scrubbed_env(var, more));
}

/*
 * Runs the client with args (NULL-terminated, after the binary) against
 * url (NULL: the test's Redis) and fills *p; fails after timeout_ms.
 */
void
harness_cli(struct harness *h, struct harness_proc *p, const char *url,
    int timeout_ms, const char *const *args)
{
	const char	*argv[HARNESS_CLI_MAX_ARGS + 2], **env;
	char		*test_url = NULL;
	size_t		 i;

	argv[0] = harness_cli_path(h);
	for (i = 0; args[i] != NULL; i++) {
		if (i == HARNESS_CLI_MAX_ARGS)
			harness_fail(h, "too many client arguments");
		argv[i + 1] = args[i];
	}
	argv[i + 1] = NULL;
	if (url == NULL) {
		xasprintf(&test_url, "unix://%s", h->redis_path);
		url = test_url;
	}
	env = harness_cli_env(h, url);
	free(test_url);
	harness_capture(h, argv, env, timeout_ms, p);
	free(env);
}

void
harness_cli_sh(struct harness *h, struct harness_proc *p, int timeout_ms,
    const char *script)
{
	const char	*argv[] = { "sh", "-c", script, NULL }, **env;
	char		*url, cli[PATH_MAX + 8], ws[PATH_MAX + 8], q[256];
	const char	**more;
	size_t		 n;

	xasprintf(&url, "unix://%s", h->redis_path);
	env = harness_cli_env(h, url);
	free(url);
	if (realpath(harness_cli_path(h), cli + 4) == NULL)
		harness_fail(h, "realpath %s: %s", harness_cli_path(h),
		    strerror(errno));
	memcpy(cli, "CLI=", 4);
	snprintf(ws, sizeof ws, "WS=%s", h->ws);
	snprintf(q, sizeof q, "EXECQ_QUEUE=%s", h->queue);
	for (n = 0; env[n] != NULL; n++)
		;
	more = xcalloc(n + 4, sizeof *more);
	memcpy(more, env, n * sizeof *more);
	more[n] = cli;
	more[n + 1] = ws;
	more[n + 2] = q;
	harness_capture(h, argv, more, timeout_ms, p);
	free(more);
	free(env);
}

int
harness_write_file(const char *path, const char *text)
{
	FILE	*f;
	int	 rc = 0;

	if ((f = fopen(path, "w")) == NULL)
		return (-1);
	if (fputs(text, f) == EOF)
		rc = -1;
	if (fclose(f) != 0)
		rc = -1;
	return (rc);
}

/* Kills the test's redis-server with SIGKILL and waits until it is gone. */
void
harness_redis_kill(struct harness *h)
{
	const char	*dir = getenv("EXECQ_TEST_REDIS_DIR");
	char		*path, *text;
	long		 pid;
	int		 i;

	xasprintf(&path, "%s/redis.pid", dir);
	if ((text = harness_read_file(path, NULL)) == NULL ||
	    (pid = strtol(text, NULL, 10)) <= 1)
		harness_fail(h, "no redis pid in %s", path);
	if (kill((pid_t)pid, SIGKILL) == -1)
		harness_fail(h, "kill redis %ld: %m", pid);
	for (i = 0; i < 1000 && kill((pid_t)pid, 0) == 0; i++)
		harness_sleep_ms(10);
	(void)unlink(path);
	(void)unlink(h->redis_path);
	free(text);
	free(path);
}

/* Waits until the server answers PING (not LOADING its data). */
static void
harness_redis_wait_loaded(struct harness *h)
{
	redisReply	*r;
	int		 i, ok;

	for (i = 0; i < 1000; i++) {
		r = redisCommand(h->rc, "PING");
		ok = r != NULL && r->type == REDIS_REPLY_STATUS;
		if (r != NULL)
			freeReplyObject(r);
		if (ok)
			return;
		harness_sleep_ms(10);
	}
	harness_fail(h, "redis-server did not finish loading");
}

/* Starts it again from its config, with extra "--name value" options. */
void
harness_redis_start(struct harness *h, const char *opt, const char *val)
{
	const char	*conf = getenv("EXECQ_TEST_REDIS_CONF");
	const char	*argv[] = { "redis-server", conf, opt, val, NULL };
	int		 status;

	status = harness_run(h, argv, 10000);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		harness_fail(h, "redis-server did not start again");
	if (harness_wait_file(h->redis_path, 10000) == -1)
		harness_fail(h, "redis-server has no socket");
	harness_reconnect(h);
	harness_redis_wait_loaded(h);
}

static void
harness_http_cb(struct evhttp_request *req, void *arg)
{
	struct evbuffer	*b = evbuffer_new();

	(void)arg;
	evbuffer_add_printf(b, "hello from the test host %s\n",
	    evhttp_request_get_uri(req));
	evhttp_send_reply(req, 200, "OK", b);
	evbuffer_free(b);
}

struct evhttp *
harness_http_bind(struct event_base *base, int *port)
{
	struct evhttp			*http;
	struct evhttp_bound_socket	*bs;
	struct sockaddr_in		 sin;
	socklen_t			 len = sizeof sin;

	if ((http = evhttp_new(base)) == NULL)
		return (NULL);
	evhttp_set_gencb(http, harness_http_cb, NULL);
	bs = evhttp_bind_socket_with_handle(http, "127.0.0.1", 0);
	if (bs == NULL || getsockname(evhttp_bound_socket_get_fd(bs),
	    (struct sockaddr *)&sin, &len) == -1) {
		evhttp_free(http);
		return (NULL);
	}
	*port = ntohs(sin.sin_port);
	return (http);
}

int
harness_free_port(void)
{
	struct sockaddr_in	sin;
	socklen_t		len = sizeof sin;
	int			fd, port = -1;

	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		fail_msg("free port: socket: %s", strerror(errno));
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sin, sizeof sin) == 0 &&
	    getsockname(fd, (struct sockaddr *)&sin, &len) == 0)
		port = ntohs(sin.sin_port);
	close(fd);
	if (port == -1)
		fail_msg("free port: %s", strerror(errno));
	return (port);
}

int
harness_tls_certs(const char *dir)
{
	char	*cmd;
	int	 rc;

	xasprintf(&cmd, "cd %s && exec >openssl.log 2>&1 && "
	    "printf '[srv]\\nsubjectAltName=DNS:localhost,IP:127.0.0.1\\n"
	    "extendedKeyUsage=serverAuth\\n[cli]\\n"
	    "extendedKeyUsage=clientAuth\\n' >ext.cnf && "
	    "key='-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes' && "
	    "openssl req -x509 -new $key -keyout ca.key -out ca.crt -days 2 "
	    "-subj /CN=execq-test-ca && "
	    "openssl req -x509 -new $key -keyout other.key -out other.crt "
	    "-days 2 -subj /CN=execq-test-other-ca && "
	    "openssl req -new $key -keyout srv.key -out srv.csr "
	    "-subj /CN=localhost && "
	    "openssl x509 -req -in srv.csr -CA ca.crt -CAkey ca.key "
	    "-CAcreateserial -out srv.crt -days 2 -extfile ext.cnf "
	    "-extensions srv && "
	    "openssl req -new $key -keyout cli.key -out cli.csr "
	    "-subj /CN=execq-test-client && "
	    "openssl x509 -req -in cli.csr -CA ca.crt -CAkey ca.key "
	    "-CAcreateserial -out cli.crt -days 2 -extfile ext.cnf "
	    "-extensions cli", dir);
	rc = system(cmd);
	free(cmd);
	if (rc == 0)
		return (0);
	xasprintf(&cmd, "cat %s/openssl.log >&2", dir);
	if (system(cmd) != 0) {
		/* the log is gone: nothing more to show */
	}
	free(cmd);
	return (-1);
}
