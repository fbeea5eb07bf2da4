/*
 * The commands' own root (exec/nsroot.c) and the grants (exec/confine.c)
 * tried as a hostile agent would, against a real confined worker: grants
 * spelled so that they reach a hidden path, unix sockets of the host
 * under a read path, /proc and /dev of the new root, mount points left
 * behind. Hostile but harmless: markers in the test's own temp dir, the
 * worker under the harness's outer cgroup v1 pids limit.
 */

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>

#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <hiredis/hiredis.h>
#include <jansson.h>

#include "logs/xmalloc.h"
#include "tests/integration/harness.h"

#define WAIT_MS		30000

/* Starts a worker (--tier auto, --sandbox as given) under the outer limit. */
static pid_t
confined_worker(struct harness *h, const char *sandbox, const char *cfg)
{
	char	 tmp[PATH_MAX];
	pid_t	 pid;

	snprintf(tmp, sizeof tmp, "%s/cmdtmp", h->dir);
	pid = harness_worker_start(h, NULL, "--tmp-dir", tmp, "--tier",
	    "auto", "--sandbox", sandbox, cfg != NULL ? "--config" : NULL,
	    cfg, NULL);
	if (harness_outer_limit(h, pid) <= 0) {
		harness_worker_stop(h, pid);
		print_message("no outer cgroup v1 pids limit here: hostile "
		    "commands are not run\n");
		skip();
	}
	return (pid);
}

/* Runs command as a foreground item; its answer (EXEC_RESULT). */
static json_t *
run(struct harness *h, const char *name, const char *command)
{
	const char	*id = harness_id(h, name);
	json_t		*a;

	harness_submit(h, "normal", id, command, NULL);
	a = harness_wait_answer(h, NULL, id, WAIT_MS);
	if (strcmp(harness_jstr(a, "type") != NULL ? harness_jstr(a, "type") :
	    "", "EXEC_RESULT") != 0)
		harness_fail(h, "%s: no EXEC_RESULT: %s", name,
		    json_dumps(a, JSON_COMPACT));
	return (a);
}

/* stdout and stderr of an answer, joined (allocated). */
static char *
output(json_t *a)
{
	char	*s;

	xasprintf(&s, "%s%s", harness_jstr(a, "stdout") != NULL ?
	    harness_jstr(a, "stdout") : "", harness_jstr(a, "stderr") != NULL ?
	    harness_jstr(a, "stderr") : "");
	return (s);
}

/* execq approve REQUEST, as an approver would. */
static void
approve(struct harness *h, const char *request)
{
	struct harness_proc	 p;
	const char		*args[] = { "approve", request, "--by", "bob",
				    NULL };

	harness_cli(h, &p, NULL, WAIT_MS, args);
	if (harness_proc_exit(&p) != 0)
		harness_fail(h, "approve exited %d: %s", harness_proc_exit(&p),
		    p.err);
	harness_proc_release(&p);
}

/*
 * Submits command as name; it must be held with a grant_path. The
 * request id (allocated); *grant the grant_path (allocated) if wanted.
 */
static char *
held_for_grant(struct harness *h, const char *name, const char *command,
    char **grant)
{
	const char	*id = harness_id(h, name), *g;
	char		 lane[256], *request;
	json_t		*a;

	harness_submit(h, "normal", id, command, NULL);
	snprintf(lane, sizeof lane, "q:%s:high", h->reply);
	a = harness_wait_entry(h, lane, id, WAIT_MS);
	if ((g = harness_jstr(a, "grant_path")) == NULL)
		harness_fail(h, "%s: held without a grant_path: %s", name,
		    json_dumps(a, JSON_COMPACT));
	if (grant != NULL)
		*grant = xstrdup(g);
	request = xstrdup(harness_jstr(a, "request"));
	json_decref(a);
	return (request);
}

/* Entries of dir, sorted, joined by spaces (allocated). */
static char *
listing(const char *dir)
{
	char	*cmd, *out = NULL;
	FILE	*p;
	size_t	 cap = 0;

	xasprintf(&cmd, "ls -A '%s' 2>&1 | tr '\\n' ' '", dir);
	if ((p = popen(cmd, "r")) != NULL) {
		if (getline(&out, &cap, p) == -1) {
			free(out);
			out = xstrdup("");
		}
		pclose(p);
	}
	free(cmd);
	return (out != NULL ? out : xstrdup("?"));
}


/*
 * Approves name's request; its answer must be confine_failed saying why
 * and that nothing ran.
 */
static void
approved_refused(struct harness *h, const char *name, char *request,
    const char *why)
{
	const char	*id = harness_id(h, name), *msg;
	json_t		*a;

	approve(h, request);
	free(request);
	a = harness_wait_answer(h, NULL, id, WAIT_MS);
	msg = harness_jstr(a, "error.message");
	if (harness_jstr(a, "error.code") == NULL ||
	    strcmp(harness_jstr(a, "error.code"), "confine_failed") != 0 ||
	    msg == NULL || strstr(msg, why) == NULL ||
	    strstr(msg, "nothing ran") == NULL)
		harness_fail(h, "%s: want confine_failed saying \"%s\": %s",
		    name, why, json_dumps(a, JSON_COMPACT));
	json_decref(a);
}

/*
 * A grant spelled with "//" names a file in the worker's log directory,
 * which no command may see: approving it makes nothing there, runs
 * nothing and says why (only a plain absolute path is granted). The policy keeps the spelling of a word it
 * cannot check (here one whose braces would expand to too many names;
 * dash, the shell, expands no braces: tee writes that very name), and the hidden check compared strings: "<dir>//logs/f.."
 * was not inside "<dir>/logs", so the worker made the file in its log dir
 * and mounted it, writable, into the command's root.
 */
static void
test_nsroot_grant_double_slash_into_hidden(void **state)
{
	struct harness	*h = harness_fixture(state);
	char		*cmd, *rq, *grant, *after;
	int		 i;

	confined_worker(h, "hold", NULL);
	xasprintf(&cmd, "echo PWNED | tee %s//logs/forged", h->dir);
	for (i = 0; i < 16; i++) {
		rq = cmd;
		xasprintf(&cmd, "%s{a,b}", rq);
		free(rq);
	}
	rq = held_for_grant(h, "slash", cmd, &grant);
	if (strstr(grant, "//") == NULL)
		harness_fail(h, "the grant was resolved: %s", grant);
	approved_refused(h, "slash", rq, "not a plain absolute path");
	after = listing(h->log_dir);
	if (strstr(after, "forged") != NULL)
		harness_fail(h, "a file was made in the log dir: %s", after);
	free(after);
	free(grant);
	free(cmd);
	harness_pass(h);
}

/*
 * A grant on a file of the kernel's (a sysctl in /proc, outside the read
 * paths here) is refused even when approved: such a file is a control,
 * not data (core_pattern, sysrq-trigger), and uid 0 could write it
 * through the grant's mount. Were it let through, the command writes the
 * value back unchanged (harmless).
 */
static void
test_nsroot_grant_kernel_file_refused(void **state)
{
	struct harness	*h = harness_fixture(state);
	char		 cfg[PATH_MAX];
	char		*rq;

	snprintf(cfg, sizeof cfg, "%s/worker.json", h->dir);
	if (harness_write_file(cfg, "{\"read_paths\": [\"/usr\", \"/bin\", "
	    "\"/sbin\", \"/lib\", \"/lib64\", \"/etc\", \"/dev/null\", "
	    "\"/dev/urandom\"]}\n") == -1)
		harness_fail(h, "%s: %s", cfg, strerror(errno));
	confined_worker(h, "hold", cfg);
	rq = held_for_grant(h, "sysctl", "read v < /proc/sys/kernel/domainname"
	    "; echo \"$v\" > /proc/sys/kernel/domainname && echo WROTE", NULL);
	approved_refused(h, "sysctl", rq, "kernel");
	harness_pass(h);
}

/* Lines of /proc/<pid>/mountinfo: the mounts of pid's namespace. */
static int
mount_count(struct harness *h, pid_t pid)
{
	char	 path[64], *text, *p;
	int	 n = 0;

	snprintf(path, sizeof path, "/proc/%ld/mountinfo", (long)pid);
	if ((text = harness_read_file(path, NULL)) == NULL)
		harness_fail(h, "cannot read %s", path);
	for (p = text; (p = strchr(p, '\n')) != NULL; p++)
		n++;
	free(text);
	return (n);
}

/*
 * Nothing is left mounted by commands: the worker's namespace and the
 * commands' have as many mounts after 50 commands (approved grants of an
 * outside file among them, each mounted in a copy of the namespace) as
 * before; mount, umount, unshare and setns from a command are refused.
 */
static void
test_nsroot_no_mounts_left(void **state)
{
	struct harness	*h = harness_fixture(state);
	char		 out[PATH_MAX], name[32], *cmd, *rq, *text, *first;
	int		 before, i;
	pid_t		 wpid;
	json_t		*a;

	snprintf(out, sizeof out, "%s/outside", h->dir);
	assert_int_equal(mkdir(out, 0755), 0);
	wpid = confined_worker(h, "hold", NULL);
	before = mount_count(h, wpid);
	a = run(h, "count0", "wc -l < /proc/self/mountinfo");
	first = xstrdup(harness_jstr(a, "stdout"));
	json_decref(a);
	for (i = 0; i < 50; i++) {
		snprintf(name, sizeof name, "c%d", i);
		if (i % 10 != 0) {
			json_decref(run(h, name, "echo done"));
			continue;
		}
		xasprintf(&cmd, "echo %d >> %s/granted", i, out);
		rq = held_for_grant(h, name, cmd, NULL);
		approve(h, rq);
		free(rq);
		a = harness_wait_answer(h, NULL, harness_id(h, name), WAIT_MS);
		if (harness_jint(a, "exit_code") != 0)
			harness_fail(h, "%s: %s", name, json_dumps(a, 0));
		json_decref(a);
		free(cmd);
	}
	a = run(h, "count1", "wc -l < /proc/self/mountinfo; python3 -c '"
	    "import ctypes; l = ctypes.CDLL(None, use_errno=True); "
	    "r = [l.mount(b\"none\", b\".\", b\"tmpfs\", 0, None), "
	    "l.umount2(b\"/tmp\", 2), l.unshare(0x20000), "
	    "l.setns(l.open(b\"/proc/self/ns/mnt\", 0), 0)]; "
	    "print(r, ctypes.get_errno())'");
	text = output(a);
	if (strncmp(text, first, strlen(first)) != 0 ||
	    strstr(text + strlen(first), "[-1, -1, -1, -1] 1\n") == NULL)
		harness_fail(h, "commands' mounts: %s then %s", first, text);
	assert_int_equal(mount_count(h, wpid), before);
	text = (free(text), harness_read_file(strcat(out, "/granted"), NULL));
	assert_string_equal(text, "0\n10\n20\n30\n40\n");
	free(text);
	free(first);
	json_decref(a);
	harness_pass(h);
}

/* dir and the directories below it that path names (mkdir -p, 0755). */
static void
mkdirs(struct harness *h, const char *path)
{
	char	buf[PATH_MAX], *p;

	snprintf(buf, sizeof buf, "%s", path);
	for (p = buf + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) == -1 && errno != EEXIST)
			harness_fail(h, "mkdir %s: %s", buf, strerror(errno));
		*p = '/';
	}
	if (mkdir(buf, 0755) == -1 && errno != EEXIST)
		harness_fail(h, "mkdir %s: %s", buf, strerror(errno));
}

/*
 * A unix socket of the given type the test binds at path, its directories
 * made (non-blocking; a stream one listens); the fd.
 */
static int
unix_server(struct harness *h, const char *path, int type)
{
	struct sockaddr_un	sun;
	char			dir[PATH_MAX];
	int			fd;

	snprintf(dir, sizeof dir, "%s", path);
	*strrchr(dir, '/') = '\0';
	mkdirs(h, dir);
	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	if (snprintf(sun.sun_path, sizeof sun.sun_path, "%s", path) >=
	    (int)sizeof sun.sun_path)
		harness_fail(h, "socket path too long: %s", path);
	(void)unlink(path);
	if ((fd = socket(AF_UNIX, type|SOCK_CLOEXEC|SOCK_NONBLOCK, 0)) == -1 ||
	    bind(fd, (struct sockaddr *)&sun, sizeof sun) == -1 ||
	    chmod(path, 0777) == -1 ||
	    (type == SOCK_STREAM && listen(fd, 8) == -1))
		harness_fail(h, "socket %s: %s", path, strerror(errno));
	return (fd);
}

/* Fails if anyone connected to the stream server fd or sent it a byte. */
static void
nothing_arrived(struct harness *h, int fd, int type, const char *path)
{
	char	buf[64];
	ssize_t	n;
	int	c;

	if (type == SOCK_STREAM && (c = accept(fd, NULL, NULL)) != -1) {
		n = read(c, buf, sizeof buf - 1);
		buf[n > 0 ? n : 0] = '\0';
		harness_fail(h, "a command connected to %s and sent \"%s\"",
		    path, buf);
	}
	if (type == SOCK_DGRAM && (n = recv(fd, buf, sizeof buf - 1, 0)) !=
	    -1) {
		buf[n > 0 ? n : 0] = '\0';
		harness_fail(h, "a command sent \"%s\" to %s", buf, path);
	}
	assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
}

/*
 * Unix sockets of the host under a read path, five levels down (below
 * what the start-up scan looked at), one there when the worker started,
 * others made after: a service's socket (Docker, a database, another
 * instance's Redis) under /opt or /srv. A read-only bind mount does not
 * stop connect(); the command must find each refused (a stream socket by
 * connect, a datagram one by sendto from a socketpair) and the test's
 * servers must see nothing.
 */
static void
test_nsroot_deep_and_late_sockets_unreachable(void **state)
{
	struct harness	*h = harness_fixture(state);
	char		 srv[PATH_MAX], cfg[PATH_MAX], *json, *cmd, *text;
	char		 paths[3][PATH_MAX + 32];
	const int	 types[3] = { SOCK_STREAM, SOCK_STREAM, SOCK_DGRAM };
	int		 fds[3], i;
	json_t		*a;

	snprintf(srv, sizeof srv, "%s/srv", h->dir);
	snprintf(paths[0], sizeof paths[0], "%s/a/b/c/d/e/early.sock", srv);
	snprintf(paths[1], sizeof paths[1], "%s/f/g/h/i/j/late.sock", srv);
	snprintf(paths[2], sizeof paths[2], "%s/f/g/h/i/k/late.dgram", srv);
	snprintf(cfg, sizeof cfg, "%s/worker.json", h->dir);
	xasprintf(&json, "{\"read_paths\": [\"/usr\", \"/bin\", \"/sbin\", "
	    "\"/lib\", \"/lib64\", \"/etc\", \"/dev/null\", \"/dev/zero\", "
	    "\"/dev/urandom\", \"%s\"]}\n", srv);
	if (harness_write_file(cfg, json) == -1)
		harness_fail(h, "%s: %s", cfg, strerror(errno));
	free(json);
	fds[0] = unix_server(h, paths[0], types[0]);
	confined_worker(h, "hold", cfg);
	for (i = 1; i < 3; i++)
		fds[i] = unix_server(h, paths[i], types[i]);

	xasprintf(&cmd, "python3 -c 'import socket, sys\n"
	    "for p in sys.argv[1:]:\n"
	    "    try:\n"
	    "        if p.endswith(\".dgram\"):\n"
	    "            s, _ = socket.socketpair(socket.AF_UNIX, "
	    "socket.SOCK_DGRAM)\n"
	    "            s.sendto(b\"MARKER\", p)\n"
	    "        else:\n"
	    "            s = socket.socket(socket.AF_UNIX)\n"
	    "            s.connect(p)\n"
	    "            s.sendall(b\"MARKER\")\n"
	    "        print(\"CONNECTED\", p)\n"
	    "    except OSError as e:\n"
	    "        print(\"REFUSED\", p, e.errno)\n"
	    "' %s %s %s", paths[0], paths[1], paths[2]);
	a = run(h, "deep", cmd);
	text = output(a);
	if (strstr(text, "CONNECTED") != NULL)
		harness_fail(h, "a host socket under a read path was reached: "
		    "%s", text);
	for (i = 0; i < 3; i++) {
		xasprintf(&json, "REFUSED %s ", paths[i]);
		if (strstr(text, json) == NULL)
			harness_fail(h, "no refusal for %s: %s", paths[i],
			    text);
		free(json);
	}
	for (i = 0; i < 3; i++) {
		nothing_arrived(h, fds[i], types[i], paths[i]);
		close(fds[i]);
	}
	free(text);
	free(cmd);
	json_decref(a);
	harness_pass(h);
}

int
main(void)
{
#define T(f)	cmocka_unit_test_setup_teardown(f, harness_setup, \
		    harness_teardown)
	const struct CMUnitTest tests[] = {
		T(test_nsroot_grant_double_slash_into_hidden),
		T(test_nsroot_grant_kernel_file_refused),
		T(test_nsroot_no_mounts_left),
		T(test_nsroot_deep_and_late_sockets_unreachable),
	};
#undef T

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
