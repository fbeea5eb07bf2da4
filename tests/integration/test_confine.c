/*
 * The kernel boundary around every command, tried as an attacker would,
 * against the real worker on this machine's kernel: writes and reads
 * outside the workspace by every route, the worker's and other commands'
 * files and processes, Redis by TCP and by its unix socket, DNS, the
 * kernel's namespace, mount and tracing calls, the limits on processes
 * and memory; then what the boundary lets through at once, and the
 * grants a human can give (network, a named outside path).
 *
 * Every attempt here is hostile but harmless: it aims at markers in the
 * test's own temp dir, the test's own Redis and processes. Each worker
 * runs under the harness's outer cgroup v1 pids limit, checked first.
 * Nothing here is a catastrophe, and none is ever run.
 */

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
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

#include "exec/mountinfo.h"
#include "logs/xmalloc.h"
#include "tests/integration/harness.h"

#define WAIT_MS		30000

/* Starts a worker and checks the outer limit it runs under. */
static pid_t
confined_worker(struct harness *h, const char *const *env, const char *a1,
    const char *a2, const char *a3, const char *a4)
{
	char	 tmp[PATH_MAX];
	pid_t	 pid;

	snprintf(tmp, sizeof tmp, "%s/cmdtmp", h->dir);
	pid = harness_worker_start(h, env, "--tmp-dir", tmp, a1, a2, a3, a4,
	    NULL);
	if (harness_outer_limit(h, pid) <= 0) {
		harness_worker_stop(h, pid);
		print_message("no outer cgroup v1 pids limit here: hostile "
		    "commands are not run\n");
		skip();
	}
	return (pid);
}

/* Writes text to dir/name. */
static void
put_file(struct harness *h, const char *dir, const char *name,
    const char *text)
{
	char	 path[PATH_MAX];
	FILE	*f;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	if ((f = fopen(path, "w")) == NULL)
		harness_fail(h, "%s: %s", path, strerror(errno));
	fputs(text, f);
	fclose(f);
}

/* Runs command as a foreground item; its answer (EXEC_RESULT). */
static json_t *
run(struct harness *h, const char *name, const char *command,
    const char *extra)
{
	const char	*id = harness_id(h, name);
	json_t		*a;

	harness_submit(h, "normal", id, command, extra);
	a = harness_wait_answer(h, NULL, id, WAIT_MS);
	if (strcmp(harness_jstr(a, "type") != NULL ? harness_jstr(a, "type") :
	    "", "EXEC_RESULT") != 0)
		harness_fail(h, "%s: no EXEC_RESULT: %s", name,
		    json_dumps(a, JSON_COMPACT));
	return (a);
}

/* stdout and stderr of an answer, joined. */
static char *
output(json_t *a)
{
	char	*s;

	xasprintf(&s, "%s%s", harness_jstr(a, "stdout") != NULL ?
	    harness_jstr(a, "stdout") : "", harness_jstr(a, "stderr") != NULL ?
	    harness_jstr(a, "stderr") : "");
	return (s);
}

/* Entries of dir, sorted by name, joined by spaces. */
static char *
listing(const char *dir)
{
	char	*cmd, *out = NULL;
	FILE	*p;
	size_t	 cap = 0;
	ssize_t	 n;

	xasprintf(&cmd, "ls -A '%s' 2>&1 | tr '\\n' ' '", dir);
	if ((p = popen(cmd, "r")) != NULL) {
		if ((n = getline(&out, &cap, p)) == -1) {
			free(out);
			out = xstrdup("");
		}
		pclose(p);
	}
	free(cmd);
	return (out != NULL ? out : xstrdup("?"));
}

/* Fails unless the JSON text of a has in and lacks out (either NULL). */
static void
json_has(struct harness *h, json_t *a, const char *in, const char *out)
{
	char	*text = json_dumps(a, JSON_COMPACT);

	if ((in != NULL && strstr(text, in) == NULL) ||
	    (out != NULL && strstr(text, out) != NULL))
		harness_fail(h, "want \"%s\" and no \"%s\" in %s",
		    in != NULL ? in : "", out != NULL ? out : "", text);
	free(text);
}

/* One attempt: a shell snippet that prints ESCAPED if it got through. */
struct attempt {
	const char	*name;
	const char	*cmd;
	const char	*forbidden;	/* also must not be in the output */
};

/*
 * Variables every attempt gets: O the outside dir (a marker dir beside
 * the workspace), L the log dir, C the worker's config file, W the
 * worker's pid, S a sibling session's pid, T the tmp root, SID the
 * sibling's id, P the Redis TCP port, R the Redis unix socket, A an
 * abstract unix socket the test listens on, N a sleep the test started
 * (no command's).
 */
static const struct attempt attempts[] = {
	/* Writes outside the workspace, by every route. */
	{ "w-redirect", "echo x > $O/w1 && echo ESCAPED", NULL },
	{ "w-touch", "touch $O/w2 && echo ESCAPED", NULL },
	{ "w-symlink", "touch link/w3 && echo ESCAPED", NULL },
	{ "w-dotdot", "touch link/../outside/w4 && echo ESCAPED", NULL },
	{ "w-env-C", "env -C $O touch w5 && echo ESCAPED", NULL },
	{ "w-cd-P", "cd -P link && touch w6 && echo ESCAPED", NULL },
	{ "w-glob", "touch ${O%/*}/outsid[e]/w7 && echo ESCAPED", NULL },
	{ "w-cp", "cp file.txt $O/w8 && echo ESCAPED", NULL },
	{ "w-tar-C", "tar cf t9.tar file.txt && tar -C $O -xf t9.tar && "
	  "echo ESCAPED", NULL },
	{ "w-tar-link", "python3 -c 'import tarfile, io; t = tarfile.open("
	  "\"t10.tar\", \"w\"); i = tarfile.TarInfo(\"link/w10\"); i.size = "
	  "1; t.addfile(i, io.BytesIO(b\"x\")); t.close()' && tar -xf t10.tar "
	  "&& test -e $O/w10 && echo ESCAPED", NULL },
	{ "w-git-init", "git init -q $O/repo && echo ESCAPED", NULL },
	{ "w-hardlink-out", "ln file.txt $O/w12 && echo ESCAPED", NULL },
	{ "w-rename-out", "echo y > f13 && mv f13 $O/w13 && echo ESCAPED",
	  NULL },
	{ "w-mkdir", "mkdir $O/w14 && echo ESCAPED", NULL },
	{ "w-mkfifo", "mkfifo $O/w15 && echo ESCAPED", NULL },
	{ "w-python", "python3 -c \"open('$O/w16', 'w').write('x')\" && "
	  "echo ESCAPED", NULL },
	{ "w-dd", "dd if=/dev/zero of=$O/w17 count=1 2>/dev/null && "
	  "echo ESCAPED", NULL },
	{ "w-tee", "echo x | tee $O/w18 >/dev/null && echo ESCAPED", NULL },
	{ "w-sed-i", "sed -i s/TOPSECRET/PWNED/ $O/secret.txt && echo ESCAPED",
	  NULL },
	{ "w-truncate", "truncate -s 0 $O/secret.txt && echo ESCAPED", NULL },
	{ "w-chmod", "chmod 777 $O/secret.txt && echo ESCAPED", NULL },
	{ "w-rm", "rm $O/secret.txt && echo ESCAPED", NULL },
	{ "w-symlink-out", "ln -s /etc $O/w23 && echo ESCAPED", NULL },
	{ "w-log-dir", "echo forged > $L/forged.log && echo ESCAPED", NULL },
	{ "w-audit-log", "echo '{\"event\":\"approved\"}' >> $D/audit.log && "
	  "echo ESCAPED", NULL },
	{ "w-other-tmp", "echo x > $T/$SID/w26 && echo ESCAPED", NULL },
	{ "w-hardlink-in", "ln $O/secret.txt stolen-link && echo ESCAPED",
	  NULL },
	/* A set-uid file of uid 0 in the workspace: root for the host. */
	{ "w-setuid-chmod", "cp /bin/true suid && chmod u+s suid; "
	  "test -u suid && echo ESCAPED", NULL },
	{ "w-setgid-chmod", "cp /bin/true sgid && chmod g+s sgid; "
	  "test -g sgid && echo ESCAPED", NULL },
	{ "w-setuid-open", "python3 -c 'import os; os.umask(0); os.close("
	  "os.open(\"suid2\", os.O_CREAT | os.O_WRONLY, 0o4755))'; "
	  "test -u suid2 && echo ESCAPED", NULL },
	{ "w-setuid-install", "install -m 4755 /bin/true suid3; "
	  "test -u suid3 && echo ESCAPED", NULL },
	/* Reads of what is not the command's. */
	{ "r-outside", "cat $O/secret.txt", "TOPSECRET" },
	{ "r-symlink", "cat link/secret.txt", "TOPSECRET" },
	{ "r-cp-L", "cp -rL link stolen && cat stolen/secret.txt", "TOPSECRET" },
	{ "r-grep-R", "grep -R TOPSECRET ${O%/*} 2>/dev/null", "TOPSECRET" },
	{ "r-audit", "cat $D/audit.log", "\"event\"" },
	{ "r-spool", "ls $D && echo ESCAPED", NULL },
	{ "r-other-log", "cat $L/*.log", "OTHERLOG" },
	{ "r-config", "cat $C", "max_procs" },
	{ "r-worker-environ", "cat /proc/$W/environ", "canary-4711" },
	{ "r-worker-cmdline", "cat /proc/$W/cmdline", "--redis" },
	{ "r-worker-proc", "ls /proc/$W/fd && echo ESCAPED", NULL },
	{ "r-sibling-environ", "cat /proc/$S/environ", "sibling-secret" },
	{ "r-sibling-tmp", "ls $T/$SID && echo ESCAPED", NULL },
	{ "r-shadow", "cat /etc/shadow", "root:" },
	{ "r-root-home", "ls /root && echo ESCAPED", NULL },
	{ "r-ps", "ps ax", "execq-worker" },
	/* Processes that are not its own. */
	{ "p-kill-worker", "kill -TERM $W && echo ESCAPED", NULL },
	{ "p-kill-sibling", "kill -TERM $S && echo ESCAPED", NULL },
	/* Another command's SysV IPC (its own namespace each). */
	{ "i-sysv-shm", "ipcs -m | grep -q ' 4321 ' && echo ESCAPED", NULL },
	{ "p-prlimit", "prlimit --pid $S --core=0:0 && echo ESCAPED", NULL },
	/* Another's priority and scheduling (nice and policy checked after). */
	{ "p-renice-sibling", "renice -n 19 -p $S && echo ESCAPED", NULL },
	{ "p-renice-outside", "renice -n 19 -p $N && echo ESCAPED", NULL },
	{ "p-chrt-sibling", "chrt -i -p 0 $S && echo ESCAPED", NULL },
	{ "p-chrt-outside", "chrt -i -p 0 $N && echo ESCAPED", NULL },
	{ "p-taskset-outside", "taskset -p 1 $N && echo ESCAPED", NULL },
	{ "p-ionice-outside", "ionice -c 3 -p $N && echo ESCAPED", NULL },
	/* A whole uid, one with no process: allowed, it would say ESRCH. */
	{ "p-prio-user", "python3 -c 'import ctypes; l = ctypes.CDLL(None, "
	  "use_errno=True); r = l.setpriority(2, 4242424, 5); "
	  "print(\"refused\" if r == -1 and ctypes.get_errno() == 1 else "
	  "\"ESCAPED\")'", NULL },
	{ "r-raw-device", "for d in /dev/zram0 /dev/vda /dev/sda /dev/loop0; "
	  "do head -c 1 $d >/dev/null 2>&1 && echo ESCAPED $d; done", NULL },
	{ "p-ptrace", "python3 -c 'import ctypes, sys; l = ctypes.CDLL(None, "
	  "use_errno=True); sys.exit(0 if l.ptrace(16, int(sys.argv[1]), 0, "
	  "0) == 0 else 1)' $S && echo ESCAPED", NULL },
	/* The kernel's own calls. */
	{ "k-caps", "grep -q '^CapEff:[[:space:]]*0*$' /proc/self/status || "
	  "echo ESCAPED", NULL },
	{ "k-mount", "mkdir -p m && mount -t tmpfs none m && echo ESCAPED",
	  NULL },
	{ "k-unshare-r", "unshare -r true && echo ESCAPED", NULL },
	{ "k-unshare-n", "unshare -n true && echo ESCAPED", NULL },
	{ "k-nsenter", "nsenter -t 1 -n true && echo ESCAPED", NULL },
	{ "k-chroot", "chroot / true && echo ESCAPED", NULL },
	{ "k-cgroup-v2", "echo $$ > /sys/fs/cgroup/unified/cgroup.procs && "
	  "echo ESCAPED", NULL },
	{ "k-cgroup-v1", "echo $$ > /sys/fs/cgroup/pids/cgroup.procs && "
	  "echo ESCAPED", NULL },
	{ "k-procfs", "echo 500 > /proc/self/oom_score_adj && echo ESCAPED",
	  NULL },
	{ "k-io-uring", "python3 -c 'import ctypes, sys; l = ctypes.CDLL("
	  "None); p = ctypes.create_string_buffer(120); sys.exit(0 if "
	  "l.syscall(425, 8, p) >= 0 else 1)' && echo ESCAPED", NULL },
	{ "k-bpf", "python3 -c 'import ctypes, sys; l = ctypes.CDLL(None); "
	  "a = ctypes.create_string_buffer(128); sys.exit(0 if "
	  "l.syscall(321, 0, a, 128) >= 0 else 1)' && echo ESCAPED", NULL },
	/* Redis, local services and the network. */
	{ "n-tcp-redis", "python3 -c 'import socket, sys; "
	  "socket.create_connection((\"127.0.0.1\", int(sys.argv[1])), 2)' "
	  "$P && echo ESCAPED", NULL },
	{ "n-dev-tcp", "bash -c \"exec 3<>/dev/tcp/127.0.0.1/$P\" && "
	  "echo ESCAPED", NULL },
	{ "n-unix-redis", "python3 -c 'import socket, sys; s = "
	  "socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])' $R && "
	  "echo ESCAPED", NULL },
	{ "n-redis-cli", "redis-cli -s $R ping", "PONG" },
	{ "n-abstract", "python3 -c 'import socket, sys; s = "
	  "socket.socket(socket.AF_UNIX); s.connect(\"\\0\" + sys.argv[1])' "
	  "$A && echo ESCAPED", NULL },
	{ "n-dns", "python3 -c 'import socket; "
	  "print(socket.getaddrinfo(\"example.com\", 80)[0][4])' && "
	  "echo ESCAPED", NULL },
	{ "n-udp", "python3 -c 'import socket; s = socket.socket("
	  "socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b\"x\", "
	  "(\"127.0.0.1\", 53))' && echo ESCAPED", NULL },
	{ "n-ipv6", "python3 -c 'import socket; socket.socket("
	  "socket.AF_INET6)' && echo ESCAPED", NULL },
	{ "n-netlink", "ip link set lo up && echo ESCAPED", NULL },
	{ "n-ping", "ping -c 1 -W 1 127.0.0.1 && echo ESCAPED", NULL },
};

#define NATTEMPTS	(sizeof attempts / sizeof attempts[0])

/* An abstract unix socket the test listens on; the fd. */
static int
abstract_listener(struct harness *h, const char *name)
{
	struct sockaddr_un	sun;
	socklen_t		len;
	int			fd;

	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path + 1, sizeof sun.sun_path - 1, "%s", name);
	len = offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name);
	if ((fd = socket(AF_UNIX, SOCK_STREAM|SOCK_CLOEXEC, 0)) == -1 ||
	    bind(fd, (struct sockaddr *)&sun, len) == -1 ||
	    listen(fd, 8) == -1)
		harness_fail(h, "abstract socket: %s", strerror(errno));
	return (fd);
}

/* Field n (1-based, as in proc(5)) of /proc/<pid>/stat, allocated. */
static char *
stat_field(struct harness *h, pid_t pid, int n)
{
	char	 path[64], *text, *p, *f;
	int	 i;

	snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
	if ((text = harness_read_file(path, NULL)) == NULL ||
	    (p = strrchr(text, ')')) == NULL)
		harness_fail(h, "cannot read %s", path);
	p += 2;			/* field 3 */
	for (i = 3; i < n && p != NULL; i++)
		p = strchr(p, ' ') != NULL ? strchr(p, ' ') + 1 : NULL;
	if (p == NULL)
		harness_fail(h, "%s has no field %d", path, n);
	f = xstrndup(p, strcspn(p, " \n"));
	free(text);
	return (f);
}

/* pid's nice value and scheduling policy are the defaults still. */
static void
sched_untouched(struct harness *h, pid_t pid)
{
	char	*nice = stat_field(h, pid, 19), *policy = stat_field(h, pid, 41);

	if (strcmp(nice, "0") != 0 || strcmp(policy, "0") != 0)
		harness_fail(h, "pid %ld: nice %s, policy %s", (long)pid, nice,
		    policy);
	free(nice);
	free(policy);
}

/* A sleep of the test's own, not any command's; its pid. */
static pid_t
outside_sleep(struct harness *h)
{
	char	arg[32];
	pid_t	pid;

	snprintf(arg, sizeof arg, "120.%07ld", (long)getpid());
	if ((pid = fork()) == -1)
		harness_fail(h, "fork: %s", strerror(errno));
	if (pid == 0) {
		execlp("sleep", "sleep", arg, (char *)NULL);
		_exit(127);
	}
	return (pid);
}

/* At least 40 escapes, each failing, and nothing changed outside. */
static void
test_confine_escapes(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*env[] = { "EXECQ_TEST_CANARY=canary-4711", NULL };
	char		 out_dir[PATH_MAX], cfg[PATH_MAX], link[PATH_MAX];
	char		 abstract[64], *prefix, *cmd, *text, *list;
	const char	*sid, *port = getenv("EXECQ_TEST_REDIS_PORT");
	json_t		*a, *st;
	pid_t		 wpid, npid;
	size_t		 i;
	int		 afd;

	assert_true(NATTEMPTS >= 40);
	snprintf(out_dir, sizeof out_dir, "%s/outside", h->dir);
	assert_int_equal(mkdir(out_dir, 0755), 0);
	put_file(h, out_dir, "secret.txt", "TOPSECRET\n");
	put_file(h, h->ws, "file.txt", "inside\n");
	snprintf(link, sizeof link, "%s/link", h->ws);
	assert_int_equal(symlink(out_dir, link), 0);
	snprintf(cfg, sizeof cfg, "%s/worker.json", h->dir);
	put_file(h, h->dir, "worker.json", "{\"max_procs\": 16}\n");
	snprintf(abstract, sizeof abstract, "execq-test-%ld", (long)getpid());
	afd = abstract_listener(h, abstract);
	wpid = confined_worker(h, env, "--config", cfg, NULL, NULL);
	npid = outside_sleep(h);

	/* Another command's log, and a sibling session with a secret. */
	json_decref(run(h, "other", "echo OTHERLOG", NULL));
	sid = harness_id(h, "sibling");
	/* It makes a SysV segment of 4321 bytes first (i-sysv-shm). */
	harness_submit(h, "normal", sid, "ipcmk -M 4321 >/dev/null 2>&1; "
	    "touch ipc-made; sleep 120",
	    "{\"background\": true, \"env\": {\"SECRET\": \"sibling-secret\"}}");
	st = harness_wait_answer(h, NULL, sid, WAIT_MS);
	assert_string_equal(harness_jstr(st, "type"), "EXEC_STARTED");
	xasprintf(&cmd, "%s/ipc-made", h->ws);
	if (harness_wait_file(cmd, WAIT_MS) == -1)
		harness_fail(h, "the sibling never made its SysV segment");
	free(cmd);

	xasprintf(&prefix, "O=%s L=%s D=%s C=%s W=%ld S=%lld T=%s/cmdtmp "
	    "SID=%s P=%s R=%s A=%s N=%ld; ", out_dir, h->log_dir,
	    h->state_dir, cfg, (long)wpid,
	    (long long)harness_jint(st, "pid"), h->dir, sid,
	    port != NULL ? port : "6379", h->redis_path, abstract,
	    (long)npid);
	for (i = 0; i < NATTEMPTS; i++) {
		xasprintf(&cmd, "%s%s 2>&1", prefix, attempts[i].cmd);
		a = run(h, attempts[i].name, cmd, "{\"network\": false}");
		text = output(a);
		if (strstr(text, "ESCAPED") != NULL ||
		    (attempts[i].forbidden != NULL &&
		    strstr(text, attempts[i].forbidden) != NULL))
			harness_fail(h, "escape %s got through: %s\n%s",
			    attempts[i].name, attempts[i].cmd, text);
		free(text);
		free(cmd);
		json_decref(a);
	}

	/* Nothing changed outside, and everyone is still there. */
	list = listing(out_dir);
	assert_string_equal(list, "secret.txt ");
	free(list);
	text = harness_read_file(strcat(out_dir, "/secret.txt"), NULL);
	assert_string_equal(text, "TOPSECRET\n");
	free(text);
	assert_false(access(strcat(strcpy(link, h->log_dir), "/forged.log"),
	    F_OK) == 0);
	assert_true(harness_worker_alive(h, wpid));
	assert_int_equal(kill((pid_t)harness_jint(st, "pid"), 0), 0);
	/* Nobody's priority or scheduling changed; refused, not missed. */
	sched_untouched(h, (pid_t)harness_jint(st, "pid"));
	sched_untouched(h, npid);
	xasprintf(&cmd, "renice -n 19 -p %ld 2>&1", (long)npid);
	a = run(h, "renice-says", cmd, NULL);
	json_has(h, a, "Operation not permitted", NULL);
	json_decref(a);
	free(cmd);
	/* A command still sets its own: nice before the exec, chrt too. */
	a = run(h, "nice-self", "nice -n 5 nice && nice -n 5 true && "
	    "chrt -i 0 sh -c 'chrt -p $$' | grep -c SCHED_IDLE", NULL);
	assert_string_equal(harness_jstr(a, "stdout"), "5\n1\n");
	json_decref(a);
	kill(npid, SIGKILL);
	waitpid(npid, NULL, 0);
	json_decref(run(h, "barrier", "echo alive", NULL));
	close(afd);
	free(prefix);
	json_decref(st);
	harness_stop_clean(h, wpid);
	harness_pass(h);
}

/* A unix socket the test listens on at path (non-blocking); the fd. */
static int
path_listener(struct harness *h, const char *path)
{
	struct sockaddr_un	sun;
	int			fd;

	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof sun.sun_path, "%s", path);
	(void)unlink(path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM|SOCK_CLOEXEC|SOCK_NONBLOCK,
	    0)) == -1 || bind(fd, (struct sockaddr *)&sun, sizeof sun) == -1 ||
	    listen(fd, 8) == -1)
		harness_fail(h, "socket %s: %s", path, strerror(errno));
	return (fd);
}

/* Fails if anyone connected to the listener fd. */
static void
nobody_came(struct harness *h, int fd, const char *path)
{
	int	c;

	if ((c = accept(fd, NULL, NULL)) != -1)
		harness_fail(h, "a command connected to %s", path);
	assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
}

/*
 * Unix sockets of the host made after the worker started, or made again
 * (as a restarted Redis does), in the test's dir and under /tmp, are not
 * in a command's world: connecting finds nothing and the listeners see
 * no one; nothing of the host's /tmp is there; a socket a command makes
 * in its workspace still works.
 */
static void
test_confine_late_sockets_unreachable(void **state)
{
	struct harness	*h = harness_fixture(state);
	char		 late[PATH_MAX], again[PATH_MAX], tmp[PATH_MAX];
	char		 marker[PATH_MAX], *cmd, *text;
	int		 fds[3], fd, i;
	const char	*paths[3] = { late, again, tmp };
	json_t		*a;

	snprintf(late, sizeof late, "%s/late.sock", h->dir);
	snprintf(again, sizeof again, "%s/again.sock", h->dir);
	snprintf(tmp, sizeof tmp, "/tmp/execq-late-%ld.sock", (long)getpid());
	snprintf(marker, sizeof marker, "/tmp/execq-marker-%ld",
	    (long)getpid());
	assert_int_equal(harness_write_file(marker, "host\n"), 0);
	/* There at start (and masked by the old scan), then made again. */
	fd = path_listener(h, again);
	confined_worker(h, NULL, NULL, NULL, NULL, NULL);
	close(fd);
	for (i = 0; i < 3; i++)
		fds[i] = path_listener(h, paths[i]);

	xasprintf(&cmd, "for s in %s %s %s %s; do python3 -c 'import "
	    "socket, sys; s = socket.socket(socket.AF_UNIX); "
	    "s.connect(sys.argv[1]); print(\"CONNECTED\", sys.argv[1])' $s "
	    "2>/dev/null; done; for f in %s %s %s; do [ -e $f ] && "
	    "echo VISIBLE $f; done; python3 -c 'import socket; "
	    "l = socket.socket(socket.AF_UNIX); l.bind(\"own.sock\"); "
	    "l.listen(1); c = socket.socket(socket.AF_UNIX); "
	    "c.connect(\"own.sock\"); a, _ = l.accept(); c.sendall(b\"OWN-OK\"); "
	    "print(a.recv(6).decode())'; echo done", late, again, tmp,
	    h->redis_path, marker, h->log_dir, h->redis_path);
	a = run(h, "late", cmd, "{\"network\": false}");
	text = output(a);
	if (strstr(text, "CONNECTED") != NULL ||
	    strstr(text, "VISIBLE") != NULL || strstr(text, "OWN-OK\n") ==
	    NULL)
		harness_fail(h, "the host's sockets or /tmp reached: %s", text);
	free(text);
	json_decref(a);
	free(cmd);
	for (i = 0; i < 3; i++) {
		nobody_came(h, fds[i], paths[i]);
		close(fds[i]);
	}
	(void)unlink(tmp);
	(void)unlink(marker);
	harness_pass(h);
}

/*
 * A hidden file under a read path (here the worker's config file, in a
 * read path of its own) stays hidden when the host replaces it by a
 * rename, as a password change does /etc/shadow.
 */
static void
test_confine_hidden_stays_hidden_when_replaced(void **state)
{
	struct harness	*h = harness_fixture(state);
	char		 pub[PATH_MAX], cfg[PATH_MAX + 32], next[PATH_MAX + 32];
	char		*json, *cmd, *text;
	json_t		*a;
	int		 round;

	snprintf(pub, sizeof pub, "%s/pub", h->dir);
	assert_int_equal(mkdir(pub, 0755), 0);
	put_file(h, pub, "visible.txt", "PUBLIC\n");
	snprintf(cfg, sizeof cfg, "%s/worker.json", pub);
	snprintf(next, sizeof next, "%s/worker.json.new", pub);
	xasprintf(&json, "{\"read_paths\": [\"/usr\", \"/bin\", \"/sbin\", "
	    "\"/lib\", \"/lib64\", \"/etc\", \"/proc\", \"/dev/null\", "
	    "\"/dev/urandom\", \"/dev/tty\", \"%s\"]}\n", pub);
	assert_int_equal(harness_write_file(cfg, json), 0);
	confined_worker(h, NULL, "--config", cfg, NULL, NULL);
	xasprintf(&cmd, "cat %s/visible.txt; cat %s 2>&1", pub, cfg);
	for (round = 0; round < 2; round++) {
		/* The second time, after the host replaced it. */
		if (round == 1) {
			assert_int_equal(harness_write_file(next,
			    "REPLACED-SECRET\n"), 0);
			assert_int_equal(rename(next, cfg), 0);
		}
		a = run(h, round == 0 ? "before" : "after", cmd, NULL);
		text = output(a);
		if (strstr(text, "PUBLIC") == NULL ||
		    strstr(text, "read_paths") != NULL ||
		    strstr(text, "REPLACED-SECRET") != NULL)
			harness_fail(h, "round %d: %s", round, text);
		free(text);
		json_decref(a);
	}
	free(cmd);
	free(json);
	harness_pass(h);
}

/* Runs the worker with the harness's basic flags and these; its end. */
static void
worker_refuses(struct harness *h, const char *log_dir, const char *state_dir,
    const char *want)
{
	struct harness_proc	 p;
	char			*url;
	const char		*argv[16];

	xasprintf(&url, "unix://%s", h->redis_path);
	argv[0] = h->bin;
	argv[1] = "--redis";
	argv[2] = url;
	argv[3] = "--queue";
	argv[4] = h->queue;
	argv[5] = "--workspace";
	argv[6] = h->ws;
	argv[7] = "--log-dir";
	argv[8] = log_dir;
	argv[9] = "--state-dir";
	argv[10] = state_dir;
	argv[11] = "--tmp-dir";
	argv[12] = h->dir;
	argv[13] = NULL;
	harness_capture(h, argv, NULL, HARNESS_WAIT_MS, &p);
	if (harness_proc_exit(&p) != 1 || strstr(p.err, want) == NULL)
		harness_fail(h, "the worker did not refuse (exit %d): %s",
		    harness_proc_exit(&p), p.err);
	harness_proc_release(&p);
	free(url);
}

/*
 * Logs inside the workspace are refused at start-up: a command could plant
 * a link where its log goes, or read others'. So is a state dir (the
 * audit log, the spool) inside the workspace or the log dir, where an
 * item id could name its files.
 */
static void
test_confine_logs_inside_workspace_refused(void **state)
{
	struct harness	*h = harness_fixture(state);
	char		 logs[PATH_MAX], st[PATH_MAX];

	snprintf(logs, sizeof logs, "%s/.tmp/exec", h->ws);
	worker_refuses(h, logs, h->state_dir, "is inside the workspace");
	snprintf(st, sizeof st, "%s/.state", h->ws);
	worker_refuses(h, h->log_dir, st, "is inside the workspace");
	snprintf(st, sizeof st, "%s/state", h->log_dir);
	worker_refuses(h, h->log_dir, st, "is inside the log dir");
	worker_refuses(h, h->log_dir, h->log_dir, "is inside the log dir");
	harness_pass(h);
}

/* Answers, callbacks and the metadata say how a command was confined. */
static void
test_confine_answers_say_how(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*sid = harness_id(h, "session");
	json_t		*a, *c, *meta;
	char		*text;

	confined_worker(h, NULL, NULL, NULL, NULL, NULL);
	a = run(h, "fg", "echo $TMPDIR; echo $HOME; echo x > $TMPDIR/f && "
	    "cat $TMPDIR/f", NULL);
	c = harness_jget(a, "confinement");
	assert_non_null(c);
	assert_int_equal(harness_jbool(c, "confined"), 1);
	assert_true(harness_jint(c, "landlock") >= 1);
	assert_int_equal(harness_jbool(c, "seccomp"), 1);
	assert_int_equal(harness_jbool(c, "namespaces"), 1);
	assert_int_equal(harness_jbool(c, "network"), 0);
	assert_string_equal(harness_jstr(c, "privileges"), "dropped");
	assert_int_equal(harness_jint(c, "pids_max"), 512);
	assert_int_equal(harness_jint(c, "memory_max"), 2LL << 30);
	assert_int_equal(harness_jint(c, "pids_limit_hit"), 0);
	assert_int_equal(harness_jint(a, "exit_code"), 0);
	/* Its own tmp is its TMPDIR and HOME, writable, and gone after. */
	text = xstrdup(harness_jstr(a, "stdout"));
	assert_non_null(strstr(text, "/cmdtmp/"));
	assert_non_null(strstr(text, "\nx\n"));
	*strchr(text, '\n') = '\0';
	assert_int_equal(access(text, F_OK), -1);
	free(text);
	meta = harness_load_meta(h, harness_jstr(a, "id"));
	assert_int_equal(harness_jbool(meta, "confinement.confined"), 1);
	json_decref(meta);
	json_decref(a);

	harness_submit(h, "normal", sid, "echo hi", "{\"background\": true}");
	a = harness_wait_answer(h, NULL, sid, WAIT_MS);
	assert_string_equal(harness_jstr(a, "type"), "EXEC_STARTED");
	assert_int_equal(harness_jbool(a, "confinement.seccomp"), 1);
	json_decref(a);
	a = harness_wait_callback(h, sid, WAIT_MS);
	assert_int_equal(harness_jbool(a, "confinement.confined"), 1);
	assert_int_equal(harness_jint(a, "confinement.oom_kills"), 0);
	json_decref(a);
	harness_pass(h);
}

/*
 * A command's tmp dir is kept for the next command of its slot (its
 * Landlock ruleset with it): what the first leaves there, files, a
 * tree, its mode, is gone when the second starts in the same dir.
 */
static void
test_confine_tmp_kept_empty_for_the_next(void **state)
{
	struct harness	*h = harness_fixture(state);
	json_t		*a;
	char		*first, *second, *nl;

	confined_worker(h, NULL, "--max-procs", "1", NULL, NULL);
	a = run(h, "leave", "cd $TMPDIR && echo x > left && mkdir -p d/e && "
	    "echo y > d/e/f && ln -s /etc/passwd l && chmod 755 . && "
	    "stat -c %i .", NULL);
	assert_int_equal(harness_jint(a, "exit_code"), 0);
	first = xstrdup(harness_jstr(a, "stdout"));
	json_decref(a);
	a = run(h, "find", "cd $TMPDIR && ls -A | wc -l && stat -c %a . && "
	    "stat -c %i .", NULL);
	assert_int_equal(harness_jint(a, "exit_code"), 0);
	second = xstrdup(harness_jstr(a, "stdout"));
	json_decref(a);
	/* "0", "700", then the inode: the same dir, and nothing in it. */
	if ((nl = strchr(second, '\n')) == NULL || strncmp(second, "0\n700\n",
	    6) != 0)
		harness_fail(h, "the next command found: %s", second);
	if (strcmp(second + 6, first) != 0)
		print_message("not the same dir (%s, %s): a slot was made "
		    "anew\n", first, second + 6);
	free(first);
	free(second);
	harness_pass(h);
}

/*
 * A bounded forker meets pids.max; the worker does not notice. Its
 * <id>.json counts what its answer counts, and the next command in the
 * same slot (max_procs 1) counts from 0.
 */
static void
test_confine_forker_meets_pids_max(void **state)
{
	struct harness	*h = harness_fixture(state);
	json_t		*a, *meta;

	confined_worker(h, NULL, "--max-procs", "1", NULL, NULL);
	a = run(h, "forker", "n=0; for i in $(seq 600); do sleep 3 & "
	    "done 2>/dev/null; wait; echo forked", "{\"timeout_s\": 60}");
	if (harness_jint(a, "confinement.pids_limit_hit") <= 0)
		harness_fail(h, "600 forks were not limited: %s",
		    json_dumps(a, JSON_COMPACT));
	meta = harness_load_meta(h, harness_jstr(a, "id"));
	assert_int_equal(harness_jint(meta, "confinement.pids_limit_hit"),
	    harness_jint(a, "confinement.pids_limit_hit"));
	json_decref(meta);
	json_decref(a);
	a = run(h, "after", "echo alive", NULL);
	assert_string_equal(harness_jstr(a, "stdout"), "alive\n");
	assert_int_equal(harness_jint(a, "confinement.pids_limit_hit"), 0);
	json_decref(a);
	a = run(h, "again", "echo alive", NULL);
	assert_int_equal(harness_jint(a, "confinement.pids_limit_hit"), 0);
	json_decref(a);
	harness_pass(h);
}

/* 4 GiB against a 2 GiB limit: the OOM killer ends it, alone. */
static void
test_confine_memory_hog_killed_alone(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*sid = harness_id(h, "bystander");
	json_t		*a, *st;

	confined_worker(h, NULL, NULL, NULL, NULL, NULL);
	harness_submit(h, "normal", sid, "sleep 60", "{\"background\": true}");
	st = harness_wait_answer(h, NULL, sid, WAIT_MS);
	a = run(h, "hog", "python3 -c 'b = bytearray(4 << 30); print(len(b))'",
	    "{\"timeout_s\": 120}");
	assert_int_equal(harness_jint(a, "exit_code"), 137);
	assert_true(harness_jint(a, "confinement.oom_kills") >= 1);
	json_decref(a);
	a = harness_load_meta(h, harness_id(h, "hog"));
	assert_string_equal(harness_jstr(a, "killed_by"), "memory_limit");
	json_decref(a);
	/* Alone: the session beside it and the worker go on. */
	assert_int_equal(kill((pid_t)harness_jint(st, "pid"), 0), 0);
	a = run(h, "after", "echo alive", NULL);
	assert_string_equal(harness_jstr(a, "stdout"), "alive\n");
	json_decref(a);
	json_decref(st);
	harness_pass(h);
}

/*
 * The bytes charged to the worker's first leaf's v1 memory group
 * (max_procs 1: every command's), or -1 when there is none.
 */
static long long
slot_memory(pid_t wpid)
{
	struct mountinfo		 mi;
	const struct mountinfo_entry	*e;
	char				 path[PATH_MAX], *mnt = NULL, *text;
	char				*cg, *line;
	long long			 n = -1;

	if (mountinfo_open(&mi, NULL) == 0) {
		while (mnt == NULL && (e = mountinfo_next(&mi)) != NULL)
			if (strcmp(e->fstype, "cgroup") == 0 &&
			    mountinfo_has_opt(e->super_opts, "memory"))
				mnt = xstrdup(e->mount_point);
		mountinfo_close(&mi);
	}
	snprintf(path, sizeof path, "/proc/%ld/cgroup", (long)wpid);
	if (mnt == NULL || (cg = harness_read_file(path, NULL)) == NULL) {
		free(mnt);
		return (-1);
	}
	if ((line = strstr(cg, ":memory:")) != NULL) {
		line += strlen(":memory:");
		line[strcspn(line, "\n")] = '\0';
		snprintf(path, sizeof path, "%s%s/execq-%ld/0/"
		    "memory.usage_in_bytes", mnt, strcmp(line, "/") == 0 ? "" :
		    line, (long)wpid);
		if ((text = harness_read_file(path, NULL)) != NULL)
			n = strtoll(text, NULL, 10);
		free(text);
	}
	free(cg);
	free(mnt);
	return (n);
}

/*
 * Nothing of a command is left for the next in its slot: a tree 300
 * deep in its tmp (deeper than the old walk went) is removed, and the
 * 40 MiB it kept there and the 40 MiB it wrote in the workspace are no
 * longer charged to the slot's memory group when the next command runs;
 * that one, under a limit just above what it needs, is not OOM-killed.
 */
static void
test_confine_nothing_left_for_the_next(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*sid = harness_id(h, "next");
	json_t		*a;
	char		*tmp, *stop;
	struct stat	 sb;
	long long	 used;
	pid_t		 wpid;

	wpid = confined_worker(h, NULL, "--max-procs", "1", "--max-memory",
	    "96m");
	a = run(h, "deep", "echo $TMPDIR; w=$PWD; cd $TMPDIR && "
	    "for i in $(seq 300); do mkdir d && cd d || exit 1; done && "
	    "head -c 40M /dev/zero > f && cd \"$w\" && "
	    "head -c 40M /dev/zero > big.bin && echo made", NULL);
	tmp = xstrdup(harness_jstr(a, "stdout"));
	if (strstr(tmp, "\nmade\n") == NULL)
		harness_fail(h, "deep: %s", json_dumps(a, JSON_COMPACT));
	*strchr(tmp, '\n') = '\0';
	json_decref(a);
	xasprintf(&stop, "%s/big.bin", h->ws);
	assert_int_equal(stat(stop, &sb), 0);
	assert_int_equal(sb.st_size, 40 << 20);
	free(stop);

	/* The next command holds the only slot: the first one's is done. */
	xasprintf(&stop, "%s/stop", h->ws);
	harness_submit(h, "normal", sid, "while [ ! -e stop ]; do sleep 0.05; "
	    "done", "{\"background\": true}");
	a = harness_wait_answer(h, NULL, sid, WAIT_MS);
	assert_string_equal(harness_jstr(a, "type"), "EXEC_STARTED");
	json_decref(a);
	if (access(tmp, F_OK) == 0)
		harness_fail(h, "the 300-deep tmp %s is still there", tmp);
	used = slot_memory(wpid);
	print_message("slot 0 memory while the next runs: %lld bytes\n", used);
	if (used != -1 && used > (8LL << 20))
		harness_fail(h, "the next command starts with %lld bytes "
		    "charged", used);
	assert_int_equal(harness_write_file(stop, ""), 0);
	a = harness_wait_callback(h, sid, WAIT_MS);
	json_decref(a);

	a = run(h, "needs-64m", "python3 -c 'b = bytearray(64 << 20); "
	    "print(len(b))'", NULL);
	assert_int_equal(harness_jint(a, "exit_code"), 0);
	assert_int_equal(harness_jint(a, "confinement.oom_kills"), 0);
	json_decref(a);
	free(stop);
	free(tmp);
	harness_stop_clean(h, wpid);
	harness_pass(h);
}

/* TIOCSTI into its own PTY is refused (the kernel would type for it). */
static void
test_confine_no_tiocsti(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*sid = harness_id(h, "pty");
	json_t		*a;

	confined_worker(h, NULL, NULL, NULL, NULL, NULL);
	harness_submit(h, "normal", sid, "python3 -c 'import fcntl, termios; "
	    "fcntl.ioctl(0, termios.TIOCSTI, b\"x\"); print(\"ESCAPED\")'",
	    "{\"background\": true, \"pty\": true}");
	a = harness_wait_answer(h, NULL, sid, WAIT_MS);
	assert_string_equal(harness_jstr(a, "type"), "EXEC_STARTED");
	json_decref(a);
	a = harness_wait_callback(h, sid, WAIT_MS);
	assert_string_equal(harness_jstr(a, "status"), "failed");
	json_has(h, a, "Operation not permitted", "ESCAPED");
	json_decref(a);
	harness_pass(h);
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

/* The APPROVAL_REQUEST of id on the reply's high lane. */
static json_t *
request_of(struct harness *h, const char *id)
{
	char	lane[256];

	snprintf(lane, sizeof lane, "q:%s:high", h->reply);
	return (harness_wait_entry(h, lane, id, WAIT_MS));
}

/*
 * The default policy with every layer on: loops, interpreters and a PTY
 * REPL run at once, confined; destructive commands still wait.
 */
static void
test_confine_default_policy_runs_ordinary_work(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*repl = harness_id(h, "repl"), *rm = harness_id(h, "rm");
	const char	*text;
	json_t		*a;
	char		*out, *args;
	int		 i, sent;

	confined_worker(h, NULL, "--tier", "auto", "--sandbox", "hold");
	a = run(h, "loop", "for i in 1 2 3; do echo $i; done", NULL);
	assert_string_equal(harness_jstr(a, "stdout"), "1\n2\n3\n");
	json_decref(a);
	a = run(h, "python", "python3 -c 'print(6 * 7)'", NULL);
	assert_string_equal(harness_jstr(a, "stdout"), "42\n");
	json_decref(a);
	a = run(h, "etc", "head -c 4 /etc/os-release >/dev/null && echo read",
	    NULL);
	assert_string_equal(harness_jstr(a, "stdout"), "read\n");
	json_decref(a);

	harness_submit(h, "normal", repl, "python3 -q",
	    "{\"background\": true, \"pty\": true}");
	a = harness_wait_answer(h, NULL, repl, WAIT_MS);
	assert_string_equal(harness_jstr(a, "type"), "EXEC_STARTED");
	json_decref(a);
	/* Wait for the prompt, type, wait for the answer (10 s at most). */
	out = NULL;
	for (i = 0, sent = 0; i < 100 && out == NULL; i++) {
		xasprintf(&args, "{\"action\": \"log\", \"session_id\": "
		    "\"%s\"}", repl);
		a = harness_process(h, args, WAIT_MS);
		free(args);
		text = harness_jstr(a, "output");
		if (text != NULL && sent && strstr(text, "42") != NULL)
			out = xstrdup(text);
		if (text != NULL && !sent && strstr(text, ">>> ") != NULL) {
			xasprintf(&args, "{\"action\": \"send-keys\", "
			    "\"session_id\": \"%s\", \"keys\": [\"6*7\", "
			    "\"Enter\"]}", repl);
			json_decref(harness_process(h, args, WAIT_MS));
			free(args);
			sent = 1;
		}
		json_decref(a);
		if (out == NULL)
			harness_sleep_ms(100);
	}
	if (out == NULL)
		harness_fail(h, "the confined REPL never answered 42");
	free(out);

	harness_submit(h, "normal", rm, "rm -rf sub", NULL);
	a = request_of(h, rm);
	assert_string_equal(harness_jstr(a, "type"), "APPROVAL_REQUEST");
	assert_string_equal(harness_jstr(a, "risk"), "destructive");
	json_decref(a);
	/* A network tool waits for the grant it needs. */
	harness_submit(h, "normal", harness_id(h, "curl"),
	    "curl -s http://127.0.0.1:9/", NULL);
	a = request_of(h, harness_id(h, "curl"));
	assert_string_equal(harness_jstr(a, "risk"), "network");
	assert_string_equal(harness_jstr(a, "rule"), "network");
	assert_int_equal(harness_jbool(a, "network"), 1);
	json_decref(a);
	harness_pass(h);
}

/* Network is a grant: the queue's, or a human's for one item. */
static void
test_confine_network_is_a_grant(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*port = getenv("EXECQ_TEST_REDIS_PORT");
	const char	*id = harness_id(h, "asks");
	char		*cmd;
	json_t		*a;
	pid_t		 pid;

	if (port == NULL)
		skip();
	/* A PING to the test's Redis over TCP: PONG only with network. */
	xasprintf(&cmd, "python3 -c 'import socket, sys; s = "
	    "socket.create_connection((\"127.0.0.1\", int(sys.argv[1])), 5); "
	    "s.sendall(b\"PING\\r\\n\"); print(s.recv(16).decode().strip())' "
	    "%s", port);
	pid = confined_worker(h, NULL, "--network", NULL, NULL, NULL);
	a = run(h, "granted", cmd, NULL);
	assert_string_equal(harness_jstr(a, "stdout"), "+PONG\n");
	assert_int_equal(harness_jbool(a, "confinement.network"), 1);
	json_decref(a);
	harness_stop_clean(h, pid);

	confined_worker(h, NULL, "--tier", "auto", "--sandbox", "hold");
	a = run(h, "denied", cmd, NULL);
	assert_int_equal(harness_jbool(a, "confinement.network"), 0);
	json_has(h, a, "Operation not permitted", "PONG");
	json_decref(a);
	harness_submit(h, "normal", id, cmd, "{\"network\": true}");
	a = request_of(h, id);
	assert_int_equal(harness_jbool(a, "network"), 1);
	assert_string_equal(harness_jstr(a, "rule"), "network");
	approve(h, harness_jstr(a, "request"));
	json_decref(a);
	a = harness_wait_answer(h, NULL, id, WAIT_MS);
	assert_string_equal(harness_jstr(a, "stdout"), "+PONG\n");
	assert_int_equal(harness_jbool(a, "confinement.network"), 1);
	assert_string_equal(harness_jstr(a, "approval.by"), "bob");
	json_decref(a);
	free(cmd);
	harness_pass(h);
}

/* An approved outside path is opened for that command, and only that. */
static void
test_confine_approval_opens_the_named_path(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "outside");
	char		 dir[PATH_MAX], other[PATH_MAX], *cmd, *list;
	json_t		*a;

	snprintf(dir, sizeof dir, "%s/shared", h->dir);
	snprintf(other, sizeof other, "%s/other", h->dir);
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(mkdir(other, 0755), 0);
	confined_worker(h, NULL, "--tier", "auto", "--sandbox", "hold");
	/* The second path hides in a variable: the policy sees only one. */
	xasprintf(&cmd, "touch %s/granted.txt; o=%s/x.txt; touch $o; "
	    "chmod 700 $o", dir, other);
	harness_submit(h, "normal", id, cmd, NULL);
	a = request_of(h, id);
	assert_string_equal(harness_jstr(a, "rule"), "sandbox");
	assert_non_null(strstr(harness_jstr(a, "grant_path"), "granted.txt"));
	approve(h, harness_jstr(a, "request"));
	json_decref(a);
	a = harness_wait_answer(h, NULL, id, WAIT_MS);
	json_has(h, a, "cannot touch", NULL);
	json_decref(a);
	list = listing(dir);
	assert_string_equal(list, "granted.txt ");
	free(list);
	list = listing(other);
	assert_string_equal(list, "");
	free(list);
	free(cmd);
	harness_pass(h);
}

/*
 * Submits command as name; its request must name a grant_path ending in
 * tail. Returns the request id (allocated).
 */
static char *
held_for_grant(struct harness *h, const char *name, const char *command,
    const char *tail)
{
	const char	*id = harness_id(h, name), *g;
	json_t		*a;
	char		*request;

	harness_submit(h, "normal", id, command, NULL);
	a = request_of(h, id);
	g = harness_jstr(a, "grant_path");
	if (g == NULL || strlen(g) < strlen(tail) ||
	    strcmp(g + strlen(g) - strlen(tail), tail) != 0)
		harness_fail(h, "%s: want a grant_path ending in %s: %s", name,
		    tail, json_dumps(a, JSON_COMPACT));
	request = xstrdup(harness_jstr(a, "request"));
	json_decref(a);
	return (request);
}

/* Approves name's request; its answer must be confine_failed saying why. */
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

/* The text of dir/name, or "(none)" (allocated). */
static char *
text_of(const char *dir, const char *name)
{
	char	*path, *text;

	xasprintf(&path, "%s/%s", dir, name);
	text = harness_read_file(path, NULL);
	free(path);
	return (text != NULL ? text : xstrdup("(none)"));
}

/*
 * A grant is the one file the request named, as it was then: held for
 * paths the policy could not resolve (symlink loops: x, d/f, d/g), the
 * paths are swapped by a second command that runs at once (x for a
 * symlink to a file outside, the directory d for a symlink to a directory
 * outside, where f exists and g does not); approving them runs nothing,
 * says why, and leaves outside as it was.
 */
static void
test_confine_grant_swapped_after_request(void **state)
{
	struct harness	*h = harness_fixture(state);
	char		 out[PATH_MAX], path[PATH_MAX], *cmd, *list, *text;
	char		*rx, *rf, *rg;
	json_t		*a;

	snprintf(out, sizeof out, "%s/outside", h->dir);
	assert_int_equal(mkdir(out, 0755), 0);
	put_file(h, out, "marker", "MARKER\n");
	put_file(h, out, "f", "MARKER\n");
	snprintf(path, sizeof path, "%s/x", h->ws);
	assert_int_equal(symlink("x", path), 0);
	snprintf(path, sizeof path, "%s/d", h->ws);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof path, "%s/d/f", h->ws);
	assert_int_equal(symlink("f", path), 0);
	snprintf(path, sizeof path, "%s/d/g", h->ws);
	assert_int_equal(symlink("g", path), 0);
	confined_worker(h, NULL, "--tier", "auto", "--sandbox", "hold");

	rx = held_for_grant(h, "x", "echo PWNED > x", "/x");
	rf = held_for_grant(h, "f", "echo PWNED > d/f", "/d/f");
	rg = held_for_grant(h, "g", "echo PWNED > d/g", "/d/g");
	/* The outside paths hide in variables: this one runs at once. */
	xasprintf(&cmd, "o=%s; t=x; ln -sfn $o/marker $t && mv d d.old && "
	    "ln -s $o d", out);
	a = run(h, "swap", cmd, NULL);
	assert_int_equal(harness_jint(a, "exit_code"), 0);
	json_decref(a);
	free(cmd);

	approved_refused(h, "x", rx, "symbolic link");
	approved_refused(h, "f", rf, "symbolic link");
	approved_refused(h, "g", rg, "symbolic link");
	list = listing(out);
	assert_string_equal(list, "f marker ");
	free(list);
	text = text_of(out, "marker");
	assert_string_equal(text, "MARKER\n");
	free(text);
	text = text_of(out, "f");
	assert_string_equal(text, "MARKER\n");
	free(text);
	harness_pass(h);
}

/*
 * A grant that was a file and is another one, or a directory, by the
 * time it is approved: the file outside is swapped (renamed over, as
 * another process could) between the request and the approval.
 */
static void
test_confine_grant_changed_file(void **state)
{
	struct harness	*h = harness_fixture(state);
	char		 out[PATH_MAX], *from, *to, *cmd, *rq, *text;

	snprintf(out, sizeof out, "%s/outside", h->dir);
	assert_int_equal(mkdir(out, 0755), 0);
	put_file(h, out, "a.txt", "MARKER\n");
	put_file(h, out, "b.txt", "OTHER\n");
	confined_worker(h, NULL, "--tier", "auto", "--sandbox", "hold");
	xasprintf(&cmd, "echo PWNED > %s/a.txt", out);
	rq = held_for_grant(h, "a", cmd, "/a.txt");
	free(cmd);
	xasprintf(&from, "%s/b.txt", out);
	xasprintf(&to, "%s/a.txt", out);
	assert_int_equal(rename(from, to), 0);
	free(from);
	free(to);
	approved_refused(h, "a", rq, "changed since");
	text = text_of(out, "a.txt");
	assert_string_equal(text, "OTHER\n");
	free(text);
	harness_pass(h);
}

/*
 * A grant is a file, never a directory: a command that names a
 * directory outside (cp into it) is held for it, and approving it runs
 * nothing and says so; the directory stays empty.
 */
static void
test_confine_grant_never_a_directory(void **state)
{
	struct harness	*h = harness_fixture(state);
	char		 out[PATH_MAX], *cmd, *rq, *list;

	snprintf(out, sizeof out, "%s/outside", h->dir);
	assert_int_equal(mkdir(out, 0755), 0);
	put_file(h, h->ws, "file.txt", "x\n");
	confined_worker(h, NULL, "--tier", "auto", "--sandbox", "hold");
	xasprintf(&cmd, "cp file.txt %s", out);
	rq = held_for_grant(h, "dir", cmd, "/outside");
	free(cmd);
	approved_refused(h, "dir", rq, "a directory (only a file");
	list = listing(out);
	assert_string_equal(list, "");
	free(list);
	harness_pass(h);
}

/* An approved grant on a file that exists outside: written, as named. */
static void
test_confine_grant_existing_file(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "existing");
	char		 out[PATH_MAX], *cmd, *rq, *text;
	json_t		*a;

	snprintf(out, sizeof out, "%s/outside", h->dir);
	assert_int_equal(mkdir(out, 0755), 0);
	put_file(h, out, "existing.txt", "OLD\n");
	confined_worker(h, NULL, "--tier", "auto", "--sandbox", "hold");
	xasprintf(&cmd, "echo NEW > %s/existing.txt", out);
	rq = held_for_grant(h, "existing", cmd, "/existing.txt");
	free(cmd);
	approve(h, rq);
	free(rq);
	a = harness_wait_answer(h, NULL, id, WAIT_MS);
	assert_int_equal(harness_jint(a, "exit_code"), 0);
	json_decref(a);
	text = text_of(out, "existing.txt");
	assert_string_equal(text, "NEW\n");
	free(text);
	harness_pass(h);
}

/* --check-confinement, confine required and off. */
static void
test_confine_self_check(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct harness_proc	 p;
	const char		*check[] = { h->bin, "--check-confinement",
				    "--workspace", h->ws, "--log-dir",
				    h->log_dir, NULL };
	const char		*required[] = { h->bin, "--confine", "required",
				    "--cgroup", "off", "--workspace", h->ws,
				    "--log-dir", h->log_dir, "--redis",
				    "unix:///nonexistent", NULL };
	const char		*layers[] = { "landlock", "seccomp",
				    "namespaces", "privileges", "cgroup v2",
				    "cgroup v1 limits" };
	char			*line;
	json_t			*a;
	size_t			 i;

	harness_capture(h, check, NULL, WAIT_MS, &p);
	assert_int_equal(harness_proc_exit(&p), 0);
	for (i = 0; i < sizeof layers / sizeof layers[0]; i++) {
		xasprintf(&line, "%-18s on ", layers[i]);
		if (strstr(p.out, line) == NULL)
			harness_fail(h, "no '%s' in:\n%s", line, p.out);
		free(line);
	}
	harness_proc_release(&p);
	/* Without cgroups, required refuses to start. */
	harness_capture(h, required, NULL, WAIT_MS, &p);
	assert_int_equal(harness_proc_exit(&p), 1);
	assert_non_null(strstr(p.err, "confine is required"));
	harness_proc_release(&p);

	/* Off: nothing confined, and the strict default tier. */
	harness_worker_start(h, NULL, "--confine", "off", "--tier", "auto",
	    "--sandbox", "hold", NULL);
	a = run(h, "off", "ls", NULL);
	assert_int_equal(harness_jbool(a, "confinement.confined"), 0);
	json_decref(a);
	harness_submit(h, "normal", harness_id(h, "py"), "python3 -c 1", NULL);
	a = request_of(h, harness_id(h, "py"));
	assert_string_equal(harness_jstr(a, "risk"), "unknown");
	json_decref(a);
	harness_pass(h);
}

/*
 * The cgroup2 folder the probe's output names as its pool's parent
 * ("cgroup v2 on process trees in <base>/execq-<pid>"), or NULL if that
 * layer is off. Allocated.
 */
static char *
probe_cgroup_base(const char *out)
{
	const char	*key = "process trees in ";
	const char	*at;
	char		*base, *end;

	if ((at = strstr(out, "cgroup v2          on   ")) == NULL ||
	    (at = strstr(at, key)) == NULL)
		return (NULL);
	base = xstrdup(at + strlen(key));
	base[strcspn(base, "\n")] = '\0';
	if ((end = strrchr(base, '/')) == NULL) {
		free(base);
		return (NULL);
	}
	*end = '\0';
	return (base);
}

/*
 * --check-confinement is a probe: run in an empty dir with the default
 * workspace and a tmp dir that is not there, it makes neither; and a
 * dead worker's cgroup folder (execq-<pid> whose pid is no execq-worker,
 * here this test's own) beside its pool is still there after it.
 */
static void
test_confine_check_changes_nothing(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct harness_proc	 p;
	char			 bin[PATH_MAX], cwd[PATH_MAX], run[PATH_MAX];
	char			 tmp[PATH_MAX], tmp0[PATH_MAX], pool[PATH_MAX];
	char			 dead[PATH_MAX + 32], *base, *list;
	const char		*find[] = { bin, "--check-confinement",
				    "--workspace", h->ws, "--log-dir",
				    h->log_dir, "--tmp-dir", tmp0, NULL };
	const char		*probe[] = { bin, "--check-confinement",
				    "--tmp-dir", tmp, "--cgroup", pool, NULL };
	struct stat		 sb;

	assert_non_null(realpath(h->bin, bin));
	assert_non_null(getcwd(cwd, sizeof cwd));
	snprintf(run, sizeof run, "%s/probe-cwd", h->dir);
	snprintf(tmp, sizeof tmp, "%s/probe-tmp", h->dir);
	snprintf(tmp0, sizeof tmp0, "%s/cmdtmp", h->dir);
	assert_int_equal(mkdir(run, 0755), 0);
	/* Where this host's pools live; a folder of its own below that. */
	harness_capture(h, find, NULL, WAIT_MS, &p);
	base = probe_cgroup_base(p.out);
	harness_proc_release(&p);
	if (base == NULL)
		harness_fail(h, "no cgroup v2 layer here");
	snprintf(pool, sizeof pool, "%s/probe-test-%ld", base, (long)getpid());
	snprintf(dead, sizeof dead, "%s/execq-%ld", pool, (long)getpid());
	free(base);
	if (mkdir(pool, 0755) == -1 || mkdir(dead, 0755) == -1)
		harness_fail(h, "%s: %s", dead, strerror(errno));

	assert_int_equal(chdir(run), 0);
	harness_capture(h, probe, NULL, WAIT_MS, &p);
	assert_int_equal(chdir(cwd), 0);
	if (harness_proc_exit(&p) != 0 ||
	    strstr(p.out, "every layer is on") == NULL)
		harness_fail(h, "the probe: %s%s", p.out, p.err);
	harness_proc_release(&p);
	list = listing(run);
	assert_string_equal(list, "");
	free(list);
	assert_int_equal(stat(tmp, &sb), -1);
	if (stat(dead, &sb) != 0)
		harness_fail(h, "the probe swept %s", dead);
	assert_int_equal(rmdir(dead), 0);
	assert_int_equal(rmdir(pool), 0);
	harness_pass(h);
}

/* run_as: the command is another user, with its tmp its own. */
static void
test_confine_run_as(void **state)
{
	struct harness	*h = harness_fixture(state);
	json_t		*a;

	/* The user must be able to reach its workspace and tmp dir. */
	assert_int_equal(chmod(h->dir, 0711), 0);
	assert_int_equal(chown(h->ws, 65534, 65534), 0);
	confined_worker(h, NULL, "--run-as", "65534:65534", NULL, NULL);
	a = run(h, "who", "id -u; id -g; touch mine && stat -c %u mine; "
	    "echo x > $TMPDIR/t && cat $TMPDIR/t; grep CapEff /proc/self/status",
	    NULL);
	assert_string_equal(harness_jstr(a, "stdout"),
	    "65534\n65534\n65534\nx\nCapEff:\t0000000000000000\n");
	assert_int_equal(harness_jint(a, "exit_code"), 0);
	json_decref(a);
	harness_pass(h);
}

int
main(void)
{
#define T(name)	cmocka_unit_test_setup_teardown(name, harness_setup, \
	    harness_teardown)
	const struct CMUnitTest tests[] = {
		T(test_confine_escapes),
		T(test_confine_late_sockets_unreachable),
		T(test_confine_hidden_stays_hidden_when_replaced),
		T(test_confine_logs_inside_workspace_refused),
		T(test_confine_answers_say_how),
		T(test_confine_forker_meets_pids_max),
		T(test_confine_memory_hog_killed_alone),
		T(test_confine_nothing_left_for_the_next),
		T(test_confine_tmp_kept_empty_for_the_next),
		T(test_confine_no_tiocsti),
		T(test_confine_check_changes_nothing),
		T(test_confine_default_policy_runs_ordinary_work),
		T(test_confine_network_is_a_grant),
		T(test_confine_approval_opens_the_named_path),
		T(test_confine_grant_swapped_after_request),
		T(test_confine_grant_changed_file),
		T(test_confine_grant_never_a_directory),
		T(test_confine_grant_existing_file),
		T(test_confine_self_check),
		T(test_confine_run_as),
	};
#undef T

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
