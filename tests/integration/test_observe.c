/*
 * What operators see of a worker: the HTTP side door (GET /metrics,
 * GET /healthz) and the fleet registry behind 'execq workers'. Counters
 * are scraped before and after a known workload and must have moved by
 * exactly that much; /healthz must follow Redis going away and coming
 * back; a thousand malformed requests must leave the worker serving
 * (and running commands); 'execq workers' must tell live, stopped and
 * dead workers apart. Every wait has a deadline; nothing is timed.
 */

#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hiredis/hiredis.h>
#include <jansson.h>

#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "logs/xmalloc.h"
#include "queue/queue_int.h"
#include "tests/integration/harness.h"

#define HTTP_MS		10000	/* one request, answer included */
#define CLI_MS		10000
#define MALFORMED_N	1000

/* One HTTP exchange: the status (0: none came) and the body. */
struct http_reply {
	int	 status;
	char	*text;		/* the whole response, NUL-terminated */
	char	*body;		/* into text, or NULL */
};

/* A port nothing listens on now (the kernel's pick, released). */
/*
 * Sends len bytes of req to 127.0.0.1:port, closes our side, and reads
 * until the worker closes its side. A refused connection fails the test.
 */
static void
http_raw(struct harness *h, unsigned port, const char *req, size_t len,
    struct http_reply *r)
{
	struct sockaddr_in	 sa;
	struct pollfd		 pfd;
	size_t			 cap = 4096, n = 0;
	ssize_t			 k;
	int64_t			 end = harness_now_ms() + HTTP_MS;
	int			 fd;

	memset(r, 0, sizeof *r);
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_port = htons(port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    connect(fd, (struct sockaddr *)&sa, sizeof sa) == -1)
		harness_fail(h, "connect to port %u: %s", port,
		    strerror(errno));
	/* The worker may answer and close before it read everything. */
	(void)send(fd, req, len, MSG_NOSIGNAL);
	(void)shutdown(fd, SHUT_WR);
	r->text = xmalloc(cap);
	for (;;) {
		pfd.fd = fd;
		pfd.events = POLLIN;
		if (harness_now_ms() > end)
			harness_fail(h, "no end of the HTTP answer in %d ms",
			    HTTP_MS);
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		if (n + 1024 > cap)
			r->text = xrealloc(r->text, cap *= 2);
		if ((k = recv(fd, r->text + n, cap - n - 1, 0)) <= 0)
			break;		/* EOF, or reset after an error */
		n += k;
	}
	close(fd);
	r->text[n] = '\0';
	if (sscanf(r->text, "HTTP/1.%*d %d", &r->status) != 1)
		r->status = 0;
	if ((r->body = strstr(r->text, "\r\n\r\n")) != NULL)
		r->body += 4;
}

static void
http_release(struct http_reply *r)
{
	free(r->text);
	memset(r, 0, sizeof *r);
}

/* GET path (HTTP/1.0: the worker closes after answering). */
static void
http_get(struct harness *h, unsigned port, const char *path,
    struct http_reply *r)
{
	char	req[512];

	snprintf(req, sizeof req, "GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n",
	    path);
	http_raw(h, port, req, strlen(req), r);
}

/* Polls /healthz until it answers status; fails at the deadline. */
static void
wait_health(struct harness *h, unsigned port, int status, const char *needle)
{
	struct http_reply	r;
	int64_t			end = harness_now_ms() + 20000;

	for (;;) {
		http_get(h, port, "/healthz", &r);
		if (r.status == status && (needle == NULL || (r.body != NULL &&
		    strstr(r.body, needle) != NULL))) {
			http_release(&r);
			return;
		}
		if (harness_now_ms() > end)
			harness_fail(h, "/healthz never said %d (%s): %s",
			    status, needle != NULL ? needle : "", r.text);
		http_release(&r);
		harness_sleep_ms(50);
	}
}

/*
 * The value of one sample ("name" or "name{labels}", exactly as the
 * worker writes it) in a /metrics body; 0 when it is not there.
 */
static double
metric(const char *body, const char *series)
{
	const char	*p = body;
	size_t		 n = strlen(series);

	while ((p = strstr(p, series)) != NULL) {
		if ((p == body || p[-1] == '\n') && p[n] == ' ')
			return (strtod(p + n + 1, NULL));
		p += n;
	}
	return (0);
}

/* The sum of every sample of a family (lines "name{...} v"). */
static double
metric_sum(const char *body, const char *name)
{
	const char	*p = body;
	size_t		 n = strlen(name);
	double		 sum = 0;

	while ((p = strstr(p, name)) != NULL) {
		if ((p == body || p[-1] == '\n') && p[n] == '{')
			sum += strtod(strchr(p, ' ') + 1, NULL);
		p += n;
	}
	return (sum);
}

/* Starts a worker with the side door on a free port; the port. */
static unsigned
start_with_http(struct harness *h)
{
	char		addr[64];
	unsigned	port = (unsigned)harness_free_port();

	snprintf(addr, sizeof addr, "127.0.0.1:%u", port);
	harness_worker_start(h, NULL, "--http", addr, (char *)NULL);
	wait_health(h, port, 200, "\"ok\"");
	return (port);
}

/*
 * The same, beating every second (claim_idle 3 s) and calling a command
 * Redis has not answered for 1 s a stall; state_dir: NULL for the
 * harness's.
 */
static unsigned
start_fast_beat(struct harness *h, const char *state_dir)
{
	char		addr[64];
	unsigned	port = (unsigned)harness_free_port();

	snprintf(addr, sizeof addr, "127.0.0.1:%u", port);
	harness_worker_start(h, NULL, "--http", addr, "--claim-idle", "3",
	    "--redis-timeout", "1", "--state-dir", state_dir != NULL ?
	    state_dir : h->state_dir, (char *)NULL);
	wait_health(h, port, 200, "\"ok\"");
	return (port);
}

/* The sample execq_health{reason="r"} of a fresh /metrics. */
static double
health_gauge(struct harness *h, unsigned port, const char *reason)
{
	struct http_reply	r;
	char			series[128];
	double			v;

	snprintf(series, sizeof series, "execq_health{reason=\"%s\"}",
	    reason);
	http_get(h, port, "/metrics", &r);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body, series));
	v = metric(r.body, series);
	http_release(&r);
	return (v);
}

/*
 * A small tmpfs of the test's own on dir (made), or -1 when this test
 * process may not mount (then the test is skipped).
 */
static int
tmpfs_mount(const char *dir)
{
	(void)mkdir(dir, 0755);
	return (mount("tmpfs", dir, "tmpfs", MS_NOSUID|MS_NODEV,
	    "size=256k"));
}

/* Fills the file system of dir until it takes no more: the file made. */
static char *
tmpfs_fill(struct harness *h, const char *dir)
{
	char	*path, buf[4096];
	int	 fd;

	xasprintf(&path, "%s/filler", dir);
	if ((fd = open(path, O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC, 0600)) == -1)
		harness_fail(h, "%s: %s", path, strerror(errno));
	memset(buf, 'x', sizeof buf);
	while (write(fd, buf, sizeof buf) > 0)
		;
	if (errno != ENOSPC)
		harness_fail(h, "filling %s: %s", dir, strerror(errno));
	close(fd);
	return (path);
}

/* /healthz 503 redis_stalled while Redis takes no writes, 200 after. */
static void
test_observe_healthz_redis_paused(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct http_reply	 r;
	unsigned		 port;

	int64_t			 end;

	port = start_fast_beat(h, NULL);
	freeReplyObject(harness_cmd(h, "CLIENT PAUSE 30000 WRITE"));
	wait_health(h, port, 503, "redis_stalled: Redis has not answered");
	assert_true(health_gauge(h, port, "redis_stalled") == 1);
	/* A stalled connection is dropped and made again... */
	end = harness_now_ms() + 20000;
	for (;;) {
		http_get(h, port, "/metrics", &r);
		if (metric(r.body, "execq_redis_reconnects_total") >= 1)
			break;
		if (harness_now_ms() > end)
			harness_fail(h, "no reconnect while Redis is paused");
		http_release(&r);
		harness_sleep_ms(50);
	}
	http_release(&r);
	/* ... and the new one is stalled too: still 503. */
	wait_health(h, port, 503, "redis_stalled: Redis has not answered");
	freeReplyObject(harness_cmd(h, "CLIENT UNPAUSE"));
	wait_health(h, port, 200, "\"ok\"");
	assert_true(health_gauge(h, port, "redis_stalled") == 0);
	harness_submit(h, "normal", harness_id(h, "after"), "echo back", NULL);
	json_decref(harness_wait_answer(h, NULL, harness_id(h, "after"),
	    HARNESS_WAIT_MS));
	harness_pass(h);
}

/*
 * /healthz 503 redis_replica while the server is a replica (of a port
 * where nothing listens: it never syncs, so its data stays), 200 after.
 */
static void
test_observe_healthz_replica(void **state)
{
	struct harness	*h = harness_fixture(state);
	unsigned	 port, nobody;

	port = start_fast_beat(h, NULL);
	nobody = (unsigned)harness_free_port();
	freeReplyObject(harness_cmd(h, "REPLICAOF 127.0.0.1 %u", nobody));
	wait_health(h, port, 503, "\"redis_replica\"");
	assert_true(health_gauge(h, port, "redis_replica") == 1);
	freeReplyObject(harness_cmd(h, "REPLICAOF NO ONE"));
	wait_health(h, port, 200, "\"ok\"");
	assert_true(health_gauge(h, port, "redis_replica") == 0);
	harness_submit(h, "normal", harness_id(h, "after"), "echo back", NULL);
	json_decref(harness_wait_answer(h, NULL, harness_id(h, "after"),
	    HARNESS_WAIT_MS));
	harness_pass(h);
}

/*
 * --redis-wait-replicas 1 on a primary with no replica: the worker says
 * so, goes on without (items run and are answered), and /healthz shows
 * "redis_replicas":"short" with a 200: a fleet keeps working with its
 * replica down, and says what it lost.
 */
static void
test_observe_wait_replicas_short(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*id = harness_id(h, "norep");
	char		 addr[64];
	unsigned	 port = (unsigned)harness_free_port();
	json_t		*a;

	snprintf(addr, sizeof addr, "127.0.0.1:%u", port);
	harness_worker_start(h, NULL, "--http", addr, "--redis-wait-replicas",
	    "1", (char *)NULL);
	wait_health(h, port, 200, "\"redis_replicas\":\"short\"");
	harness_submit(h, "normal", id, "echo ran", NULL);
	a = harness_wait_answer(h, NULL, id, HARNESS_WAIT_MS);
	assert_string_equal(harness_jstr(a, "type"), "EXEC_RESULT");
	assert_string_equal(harness_jstr(a, "stdout"), "ran\n");
	json_decref(a);
	harness_pass(h);
}

/* /healthz 503 redis_refused while Redis is out of memory, 200 after. */
static void
test_observe_healthz_redis_oom(void **state)
{
	struct harness	*h = harness_fixture(state);
	unsigned	 port;

	port = start_fast_beat(h, NULL);
	freeReplyObject(harness_cmd(h, "CONFIG SET maxmemory-policy "
	    "noeviction"));
	freeReplyObject(harness_cmd(h, "CONFIG SET maxmemory 1"));
	wait_health(h, port, 503, "redis_refused: Redis refuses writes: OOM");
	freeReplyObject(harness_cmd(h, "CONFIG SET maxmemory 0"));
	wait_health(h, port, 200, "\"ok\"");
	assert_true(health_gauge(h, port, "redis_refused") == 0);
	harness_pass(h);
}

/* /healthz 503 log_dir while the log dir is full, 200 after. */
static void
test_observe_healthz_log_dir_full(void **state)
{
	struct harness	*h = harness_fixture(state);
	unsigned	 port;
	char		*filler;

	port = start_fast_beat(h, NULL);
	if (tmpfs_mount(h->log_dir) == -1) {
		print_message("cannot mount a tmpfs (%s): skipped\n",
		    strerror(errno));
		harness_pass(h);
		skip();
	}
	filler = tmpfs_fill(h, h->log_dir);
	wait_health(h, port, 503, "log_dir: the log dir cannot be written: "
	    "No space left on device");
	assert_true(health_gauge(h, port, "log_dir") == 1);
	if (unlink(filler) == -1)
		harness_fail(h, "unlink %s: %s", filler, strerror(errno));
	wait_health(h, port, 200, "\"ok\"");
	(void)umount2(h->log_dir, MNT_DETACH);
	free(filler);
	harness_pass(h);
}

/*
 * A full state dir: /healthz 503 state_dir, a command whose audit line
 * cannot be written does not run (audit_failed, its marker never made,
 * /healthz 503 audit), and once there is room, 200 and the same id runs.
 */
static void
test_observe_audit_full_refuses_commands(void **state)
{
	struct harness	*h = harness_fixture(state);
	json_t		*a;
	unsigned	 port;
	char		*dir, *filler, *marker, *cmd, *text;

	xasprintf(&dir, "%s/small-state", h->dir);
	if (tmpfs_mount(dir) == -1) {
		print_message("cannot mount a tmpfs (%s): skipped\n",
		    strerror(errno));
		free(dir);
		harness_pass(h);
		skip();
	}
	port = start_fast_beat(h, dir);
	filler = tmpfs_fill(h, dir);
	wait_health(h, port, 503, "state_dir: the state dir cannot be "
	    "written: No space left on device");
	xasprintf(&marker, "%s/audit-ran", h->ws);
	xasprintf(&cmd, "touch %s", marker);
	harness_submit(h, "normal", harness_id(h, "au"), cmd, NULL);
	a = harness_wait_answer(h, NULL, harness_id(h, "au"), HARNESS_WAIT_MS);
	assert_string_equal(harness_jstr(a, "error.code"), "audit_failed");
	json_decref(a);
	/* Answered first, then looked for: it never ran. */
	assert_int_equal(access(marker, F_OK), -1);
	wait_health(h, port, 503, "audit: the audit log cannot be written");
	assert_true(health_gauge(h, port, "audit") == 1);
	if (unlink(filler) == -1)
		harness_fail(h, "unlink %s: %s", filler, strerror(errno));
	wait_health(h, port, 200, "\"ok\"");
	/* The claim was let go: the same id runs now, audited. */
	harness_submit(h, "normal", harness_id(h, "au"), cmd, NULL);
	a = harness_wait_answer(h, NULL, harness_id(h, "au"), HARNESS_WAIT_MS);
	assert_int_equal(harness_jint(a, "exit_code"), 0);
	json_decref(a);
	assert_int_equal(access(marker, F_OK), 0);
	harness_stop_clean(h, h->w[0].pid);
	xasprintf(&text, "%s/audit.log", dir);
	free(filler);
	filler = harness_read_file(text, NULL);
	assert_non_null(filler);
	assert_non_null(strstr(filler, harness_id(h, "au")));
	(void)umount2(dir, MNT_DETACH);
	free(text);
	free(filler);
	free(marker);
	free(cmd);
	free(dir);
	harness_pass(h);
}

/* The beat time Redis keeps for member m, in ms; -1 if none. */
static long long
beat_of(struct harness *h, const char *m)
{
	redisReply	*r;
	long long	 v = -1;

	r = harness_cmd(h, "ZSCORE execq:workers:beat %s", m);
	if (r->type == REDIS_REPLY_STRING)
		v = strtoll(r->str, NULL, 10);
	freeReplyObject(r);
	return (v);
}

/* Redis's clock, in ms. */
static long long
redis_now_ms(struct harness *h)
{
	redisReply	*r;
	long long	 v;

	r = harness_cmd(h, "TIME");
	v = strtoll(r->element[0]->str, NULL, 10) * 1000 +
	    strtoll(r->element[1]->str, NULL, 10) / 1000;
	freeReplyObject(r);
	return (v);
}

/*
 * The fleet registry keeps Redis's time: a worker whose clock is two days
 * ahead, or in 1970, neither prunes another worker's fresh entry nor
 * stores its own wrong time. (No clock is changed: the registry script
 * is handed the wrong time where the worker passes its own.)
 */
static void
test_observe_registry_uses_redis_clock(void **state)
{
	struct harness	*h = harness_fixture(state);
	const char	*other = harness_id(h, "other");
	const char	*skewed = harness_id(h, "skewed");
	const char	*clocks[2];
	char		 ahead[32];
	long long	 now, planted;
	redisReply	*r;
	int		 i;

	now = planted = redis_now_ms(h);
	snprintf(ahead, sizeof ahead, "%lld", now + 2 * 86400000LL);
	clocks[0] = ahead;
	clocks[1] = "1000";
	freeReplyObject(harness_cmd(h, "HSET execq:workers %s {}", other));
	freeReplyObject(harness_cmd(h, "ZADD execq:workers:beat %lld %s", now,
	    other));
	for (i = 0; i < 2; i++) {
		freeReplyObject(harness_cmd(h, "EVAL %s 2 execq:workers "
		    "execq:workers:beat %s {} %s 86400000", queue_status_lua,
		    skewed, clocks[i]));
		r = harness_cmd(h, "HEXISTS execq:workers %s", other);
		assert_int_equal(r->integer, 1);
		freeReplyObject(r);
		assert_true(beat_of(h, other) == planted);
		now = redis_now_ms(h);
		assert_true(beat_of(h, skewed) > now - 60000 &&
		    beat_of(h, skewed) <= now);
	}
	freeReplyObject(harness_cmd(h, "HDEL execq:workers %s %s", other,
	    skewed));
	freeReplyObject(harness_cmd(h, "ZREM execq:workers:beat %s %s", other,
	    skewed));
	harness_pass(h);
}

/* The deltas of a known workload, to the unit. */
static void
test_observe_metrics_count_a_workload(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct http_reply	 before, after;
	json_t			*a;
	const char		*sid;
	char			 name[32], bad[512];
	unsigned		 port;
	int			 i;

	port = start_with_http(h);
	http_get(h, port, "/metrics", &before);
	assert_int_equal(before.status, 200);
	assert_non_null(strstr(before.text, "Content-Type: text/plain; "
	    "version=0.0.4"));
	for (i = 0; i < 3; i++) {
		snprintf(name, sizeof name, "abc%d", i);
		harness_submit(h, "normal", harness_id(h, name), "printf abc",
		    NULL);
		json_decref(harness_wait_answer(h, NULL, harness_id(h, name),
		    HARNESS_WAIT_MS));
	}
	harness_submit(h, "normal", harness_id(h, "three"), "exit 3", NULL);
	a = harness_wait_answer(h, NULL, harness_id(h, "three"),
	    HARNESS_WAIT_MS);
	assert_int_equal(harness_jint(a, "exit_code"), 3);
	json_decref(a);
	/* Not an item (no command), but its answer can reach us. */
	snprintf(bad, sizeof bad, "{\"type\": \"EXEC\", \"id\": \"%s\", "
	    "\"reply_to\": \"%s\", \"args\": {}}", harness_id(h, "bad"),
	    h->reply);
	harness_submit_json(h, "normal", bad);
	a = harness_wait_answer(h, NULL, harness_id(h, "bad"),
	    HARNESS_WAIT_MS);
	assert_string_equal(harness_jstr(a, "error.code"), "missing_command");
	json_decref(a);
	harness_submit(h, "normal", harness_id(h, "ses"), "printf hello",
	    "{\"background\": true}");
	a = harness_wait_answer(h, NULL, harness_id(h, "ses"),
	    HARNESS_WAIT_MS);
	sid = harness_jstr(a, "session_id");
	assert_non_null(sid);
	json_decref(harness_wait_callback(h, sid, HARNESS_WAIT_MS));
	json_decref(a);
	json_decref(harness_process(h, "{\"action\": \"list\"}",
	    HARNESS_WAIT_MS));
	http_get(h, port, "/metrics", &after);
	assert_int_equal(after.status, 200);

#define DELTA(series) (metric(after.body, series) - metric(before.body, series))
	assert_true(DELTA("execq_items_received_total{type=\"EXEC\"}") == 5);
	assert_true(DELTA("execq_items_received_total{type=\"invalid\"}") == 1);
	assert_true(DELTA("execq_items_received_total{type=\"PROCESS\"}") == 1);
	assert_true(DELTA("execq_items_answered_total{type=\"EXEC\","
	    "code=\"ok\"}") == 5);
	assert_true(DELTA("execq_items_answered_total{type=\"invalid\","
	    "code=\"missing_command\"}") == 1);
	assert_true(DELTA("execq_items_answered_total{type=\"PROCESS\","
	    "code=\"ok\"}") == 1);
	assert_true(DELTA("execq_output_bytes_total{kind=\"foreground\"}") == 9);
	assert_true(DELTA("execq_output_bytes_total{kind=\"session\"}") == 5);
	assert_true(DELTA("execq_sessions_ended_total{status=\"completed\"}") ==
	    1);
	assert_true(DELTA("execq_callbacks_total") == 1);
	assert_true(DELTA("execq_spawn_latency_seconds_count") == 5);
	assert_true(DELTA("execq_answer_latency_seconds_count") == 7);
	assert_true(DELTA("execq_http_requests_total{path=\"/metrics\","
	    "status=\"200\"}") == 1);
	assert_true(metric_sum(after.body, "execq_policy_decisions_total") -
	    metric_sum(before.body, "execq_policy_decisions_total") == 5);
#undef DELTA
	assert_true(metric(after.body, "execq_redis_connected") == 1);
	assert_true(metric(after.body, "execq_commands_running") == 0);
	assert_true(metric(after.body, "execq_sessions{status=\"ended\"}") == 1);
	assert_true(metric(after.body, "process_resident_memory_bytes") > 0);
	assert_true(metric(after.body, "process_open_fds") > 0);
	http_release(&before);
	http_release(&after);
	harness_pass(h);
}

/* /healthz says 503 with the reason while Redis is gone, 200 after. */
static void
test_observe_healthz_follows_redis(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct http_reply	 r;
	unsigned		 port;

	port = start_with_http(h);
	harness_redis_kill(h);
	wait_health(h, port, 503, "\"redis\"");
	http_get(h, port, "/metrics", &r);
	assert_int_equal(r.status, 200);
	assert_true(metric(r.body, "execq_redis_connected") == 0);
	http_release(&r);
	harness_redis_start(h, NULL, NULL);
	wait_health(h, port, 200, "\"ok\"");
	http_get(h, port, "/metrics", &r);
	assert_true(metric(r.body, "execq_redis_reconnects_total") >= 1);
	http_release(&r);
	/* And it still works. */
	harness_submit(h, "normal", harness_id(h, "after"), "echo back", NULL);
	json_decref(harness_wait_answer(h, NULL, harness_id(h, "after"),
	    HARNESS_WAIT_MS));
	harness_pass(h);
}

/* One malformed request of kind i; the status it must get (0: any 4xx). */
static int
malformed(char *buf, size_t cap, int i, size_t *len)
{
	size_t	k;
	int	want = 0;

	switch (i % 10) {
	case 0:			/* binary noise */
		for (k = 0; k < 200 && k < cap; k++)
			buf[k] = (char)((i * 131 + k * 7919) & 0xff);
		*len = k;
		return (0);
	case 1:
		snprintf(buf, cap, "POST /metrics HTTP/1.1\r\nHost: x\r\n"
		    "Content-Length: 5\r\n\r\nhello");
		want = 405;
		break;
	case 2:
		snprintf(buf, cap, "GET /nope/%d HTTP/1.0\r\n\r\n", i);
		want = 404;
		break;
	case 3:
		snprintf(buf, cap, "GET metrics HTTP/1.0\r\n\r\n");
		break;
	case 4:			/* headers over the limit */
		k = (size_t)snprintf(buf, cap, "GET /metrics HTTP/1.1\r\nX: ");
		memset(buf + k, 'a', 20000);
		memcpy(buf + k + 20000, "\r\n\r\n", 5);
		*len = k + 20004;
		return (0);
	case 5:
		snprintf(buf, cap, "BREW /metrics HTCPCP/1.0\r\n\r\n");
		break;
	case 6:			/* cut short */
		snprintf(buf, cap, "GET /metr");
		break;
	case 7:
		snprintf(buf, cap, "GET /metrics HTTP/9.9\r\n\r\n");
		break;
	case 8:
		snprintf(buf, cap, "DELETE /healthz HTTP/1.0\r\n\r\n");
		want = 405;
		break;
	default:
		snprintf(buf, cap, "PUT /run?cmd=touch%%20pwned HTTP/1.0\r\n"
		    "Content-Length: 3\r\n\r\nabc");
		want = 405;
		break;
	}
	*len = strlen(buf);
	return (want);
}

/* A thousand bad requests: each gets a 4xx or a closed socket, never a
   5xx or a crash, and the worker serves and runs afterwards. */
static void
test_observe_malformed_requests(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct http_reply	 r;
	char			*buf, *pwned;
	size_t			 len;
	unsigned		 port;
	int			 i, want;

	port = start_with_http(h);
	buf = xmalloc(32768);
	for (i = 0; i < MALFORMED_N; i++) {
		want = malformed(buf, 32768, i, &len);
		http_raw(h, port, buf, len, &r);
		if (want != 0 && r.status != want)
			harness_fail(h, "request %d: want %d, got: %.200s", i,
			    want, r.text);
		if (r.status != 0 && (r.status < 400 || r.status > 499))
			harness_fail(h, "request %d: status %d: %.200s", i,
			    r.status, r.text);
		http_release(&r);
	}
	free(buf);
	assert_true(harness_worker_alive(h, h->w[0].pid));
	http_get(h, port, "/metrics", &r);
	assert_int_equal(r.status, 200);
	assert_true(metric(r.body, "execq_http_requests_total{path=\"other\","
	    "status=\"405\"}") >= MALFORMED_N / 10);
	http_release(&r);
	xasprintf(&pwned, "%s/pwned", h->ws);
	assert_int_equal(access(pwned, F_OK), -1);
	free(pwned);
	harness_submit(h, "normal", harness_id(h, "still"), "echo still",
	    NULL);
	json_decref(harness_wait_answer(h, NULL, harness_id(h, "still"),
	    HARNESS_WAIT_MS));
	harness_pass(h);
}

/* 'execq workers --json' of this test's queue, one object per line. */
static json_t *
workers_json(struct harness *h)
{
	struct harness_proc	 p;
	const char		*args[] = { "workers", "--json", "--queue",
				    h->queue, NULL };
	json_t			*all, *o;
	char			*line, *save = NULL;

	harness_cli(h, &p, NULL, CLI_MS, args);
	if (harness_proc_exit(&p) != 0)
		harness_fail(h, "execq workers: %s", p.err);
	all = json_object();
	for (line = strtok_r(p.out, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if ((o = json_loads(line, 0, NULL)) == NULL)
			harness_fail(h, "not JSON: %s", line);
		json_object_set_new(all, harness_jstr(o, "consumer"), o);
	}
	harness_proc_release(&p);
	return (all);
}

/* The state 'execq workers' gives consumer c, polled until it is want. */
static json_t *
wait_worker_state(struct harness *h, const char *c, const char *want)
{
	json_t	*all, *o;
	int64_t	 end = harness_now_ms() + 20000;

	for (;;) {
		all = workers_json(h);
		o = json_object_get(all, c);
		if (o != NULL && strcmp(harness_jstr(o, "state"), want) == 0) {
			json_incref(o);
			json_decref(all);
			return (o);
		}
		if (harness_now_ms() > end)
			harness_fail(h, "worker %s never became %s", c, want);
		json_decref(all);
		harness_sleep_ms(100);
	}
}

/* Two live workers, one stopped, one killed: each shown as it is. */
static void
test_observe_workers_fleet(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct harness_proc	 p;
	const char		*table[] = { "workers", "--queue", h->queue,
				    NULL };
	const char		*prune[] = { "workers", "--prune", "--queue",
				    h->queue, NULL };
	json_t			*o, *all;
	pid_t			 live, other, stopped, killed;

	live = harness_worker_start(h, NULL, "--max-procs", "3", (char *)NULL);
	other = harness_worker_start(h, NULL, (char *)NULL);
	stopped = harness_worker_start(h, NULL, (char *)NULL);
	killed = harness_worker_start(h, NULL, "--claim-idle", "1",
	    (char *)NULL);
	o = wait_worker_state(h, h->w[0].consumer, "running");
	assert_int_equal(harness_jint(o, "pid"), live);
	assert_int_equal(harness_jint(o, "slots_total"), 3);
	assert_int_equal(harness_jbool(o, "alive"), 1);
	assert_non_null(harness_jstr(o, "host"));
	assert_non_null(harness_jget(o, "confinement"));
	json_decref(o);
	json_decref(wait_worker_state(h, h->w[1].consumer, "running"));
	harness_worker_kill(h, killed);
	harness_stop_clean(h, stopped);
	o = wait_worker_state(h, h->w[3].consumer, "dead");
	assert_int_equal(harness_jbool(o, "alive"), 0);
	json_decref(o);
	o = wait_worker_state(h, h->w[2].consumer, "stopped");
	assert_int_equal(harness_jbool(o, "alive"), 0);
	json_decref(o);
	harness_cli(h, &p, NULL, CLI_MS, table);
	assert_int_equal(harness_proc_exit(&p), 0);
	assert_non_null(strstr(p.out, "WORKER"));
	assert_non_null(strstr(p.out, h->w[0].consumer));
	assert_non_null(strstr(p.out, "dead"));
	assert_non_null(strstr(p.out, "stopped"));
	harness_proc_release(&p);
	harness_cli(h, &p, NULL, CLI_MS, prune);
	assert_int_equal(harness_proc_exit(&p), 0);
	harness_proc_release(&p);
	all = workers_json(h);
	assert_non_null(json_object_get(all, h->w[0].consumer));
	assert_non_null(json_object_get(all, h->w[1].consumer));
	assert_null(json_object_get(all, h->w[2].consumer));
	assert_null(json_object_get(all, h->w[3].consumer));
	json_decref(all);
	(void)other;
	harness_pass(h);
}

/* Waits until the file at path holds needle; fails at the deadline. */
static void
wait_in_file(struct harness *h, const char *path, const char *needle)
{
	int64_t	 end = harness_now_ms() + 20000;
	char	*text;

	for (;;) {
		text = harness_read_file(path, NULL);
		if (text != NULL && strstr(text, needle) != NULL) {
			free(text);
			return;
		}
		free(text);
		if (harness_now_ms() > end)
			harness_fail(h, "%s never held '%s'", path, needle);
		harness_sleep_ms(50);
	}
}

/* SIGHUP after logrotate moved them: the worker's log and audit.log are
   opened again, and new lines go to the new files. */
static void
test_observe_sighup_reopens_logs(void **state)
{
	struct harness	*h = harness_fixture(state);
	char		*log, *old_log, *audit, *old_audit, *text;
	pid_t		 pid;

	xasprintf(&log, "%s/worker.log", h->dir);
	xasprintf(&old_log, "%s/worker.log.1", h->dir);
	xasprintf(&audit, "%s/audit.log", h->state_dir);
	xasprintf(&old_audit, "%s/audit.log.1", h->state_dir);
	pid = harness_worker_start(h, NULL, "--log-file", log, (char *)NULL);
	wait_in_file(h, log, "connection up");
	harness_submit(h, "normal", harness_id(h, "before"), "echo before",
	    NULL);
	json_decref(harness_wait_answer(h, NULL, harness_id(h, "before"),
	    HARNESS_WAIT_MS));
	wait_in_file(h, audit, harness_id(h, "before"));
	assert_int_equal(rename(log, old_log), 0);
	assert_int_equal(rename(audit, old_audit), 0);
	assert_int_equal(kill(pid, SIGHUP), 0);
	wait_in_file(h, log, "SIGHUP: log files reopened");
	harness_submit(h, "normal", harness_id(h, "after"), "echo after", NULL);
	json_decref(harness_wait_answer(h, NULL, harness_id(h, "after"),
	    HARNESS_WAIT_MS));
	wait_in_file(h, audit, harness_id(h, "after"));
	wait_in_file(h, log, harness_id(h, "after"));
	text = harness_read_file(old_audit, NULL);
	assert_null(strstr(text, harness_id(h, "after")));
	free(text);
	text = harness_read_file(old_log, NULL);
	assert_null(strstr(text, "SIGHUP"));
	free(text);
	free(log);
	free(old_log);
	free(audit);
	free(old_audit);
	harness_pass(h);
}

#define T(f)	cmocka_unit_test_setup_teardown(f, harness_setup, \
		    harness_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_observe_metrics_count_a_workload),
		T(test_observe_healthz_follows_redis),
		T(test_observe_healthz_redis_paused),
		T(test_observe_healthz_replica),
		T(test_observe_wait_replicas_short),
		T(test_observe_healthz_redis_oom),
		T(test_observe_healthz_log_dir_full),
		T(test_observe_audit_full_refuses_commands),
		T(test_observe_registry_uses_redis_clock),
		T(test_observe_malformed_requests),
		T(test_observe_workers_fleet),
		T(test_observe_sighup_reopens_logs),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
