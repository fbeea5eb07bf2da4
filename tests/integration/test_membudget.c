/*
 * The Redis memory budget (issue 23, item 8) against a real Redis and the
 * worker binary: the worker samples INFO memory at its heartbeat, shows
 * used_memory and maxmemory on /metrics, and says once, in its log and
 * with a time-left gauge, that Redis fills within answer_ttl_s at the
 * rate memory grows. Memory is made to grow by the test (SET of big
 * values), and every wait polls until a deadline. And `execq ps` says
 * when it shows fewer sessions than the index holds (--limit).
 */

#include <sys/socket.h>
#include <sys/types.h>

#include <netinet/in.h>

#include <errno.h>
#include <poll.h>
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
#include "tests/integration/harness.h"

#define WAIT_MS		60000	/* two samples are 10 s apart at least */
#define BALLAST		(256 * 1024)	/* bytes per SET */

/* A command on the test's connection, its reply dropped. */
#define CMD(...)	freeReplyObject(harness_cmd(h, __VA_ARGS__))

/* The body of GET /metrics on 127.0.0.1:port (the caller frees it). */
static char *
get_metrics(struct harness *h, unsigned port)
{
	static const char	 req[] = "GET /metrics HTTP/1.0\r\n\r\n";
	struct sockaddr_in	 sa;
	size_t			 cap = 65536, n = 0;
	ssize_t			 k;
	char			*text, *body;
	int			 fd;

	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_port = htons(port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    connect(fd, (struct sockaddr *)&sa, sizeof sa) == -1)
		harness_fail(h, "connect to port %u: %s", port,
		    strerror(errno));
	(void)send(fd, req, sizeof req - 1, MSG_NOSIGNAL);
	text = xmalloc(cap);
	for (;;) {
		if (n + 4096 > cap)
			text = xrealloc(text, cap *= 2);
		if ((k = recv(fd, text + n, cap - n - 1, 0)) <= 0)
			break;
		n += k;
	}
	close(fd);
	text[n] = '\0';
	if ((body = strstr(text, "\r\n\r\n")) == NULL)
		harness_fail(h, "no HTTP answer: %s", text);
	body = xstrdup(body + 4);
	free(text);
	return (body);
}

/* Whether the body has a sample of name (without labels). */
static int
has_sample(const char *body, const char *name)
{
	const char	*p = body;
	size_t		 n = strlen(name);

	while ((p = strstr(p, name)) != NULL) {
		if ((p == body || p[-1] == '\n') && p[n] == ' ')
			return (1);
		p += n;
	}
	return (0);
}

/* Polls /metrics until it has a sample of name. */
static void
wait_sample(struct harness *h, unsigned port, const char *name)
{
	int64_t	 end = harness_now_ms() + WAIT_MS;
	char	*body;

	for (;;) {
		body = get_metrics(h, port);
		if (has_sample(body, name)) {
			free(body);
			return;
		}
		if (harness_now_ms() > end)
			harness_fail(h, "/metrics never had %s:\n%s", name,
			    body);
		free(body);
		harness_sleep_ms(100);
	}
}

/* used_memory from INFO memory on the test's own connection. */
static unsigned long long
used_memory(struct harness *h)
{
	struct redisReply	*r;
	unsigned long long	 used;
	const char		*p;

	r = harness_cmd(h, "INFO memory");
	if ((p = strstr(r->str, "used_memory:")) == NULL)
		harness_fail(h, "INFO memory without used_memory");
	used = strtoull(p + 12, NULL, 10);
	freeReplyObject(r);
	return (used);
}

/* Occurrences of needle in the worker's stderr. */
static int
stderr_count(struct harness *h, const char *needle)
{
	char		*text, *p;
	size_t		 len;
	int		 n = 0;

	if ((text = harness_read_file(h->w[0].err_path, &len)) == NULL)
		return (0);
	for (p = text; (p = strstr(p, needle)) != NULL; p++)
		n++;
	free(text);
	return (n);
}

/*
 * The gauges come with the first sample; with a maxmemory that growing
 * memory reaches within answer_ttl_s, one warning and the time left.
 */
static void
test_membudget_warns(void **state)
{
	struct harness	*h = harness_fixture(state);
	char		 addr[64], *ballast, *body;
	unsigned	 port = (unsigned)harness_free_port();
	int64_t		 end;
	int		 i;

	CMD("CONFIG SET maxmemory 0");
	snprintf(addr, sizeof addr, "127.0.0.1:%u", port);
	harness_worker_start(h, NULL, "--http", addr, "--claim-idle", "3",
	    (char *)NULL);
	wait_sample(h, port, "execq_redis_used_memory_bytes");
	body = get_metrics(h, port);
	assert_true(has_sample(body, "execq_redis_maxmemory_bytes"));
	assert_false(has_sample(body, "execq_redis_memory_full_eta_seconds"));
	free(body);

	/* Room for 64 MiB more, and memory that grows: it will be full. */
	CMD("CONFIG SET maxmemory %llu",
	    used_memory(h) + 64ULL * 1024 * 1024);
	ballast = xmalloc(BALLAST + 1);
	memset(ballast, 'x', BALLAST);
	ballast[BALLAST] = '\0';
	end = harness_now_ms() + WAIT_MS;
	for (i = 0; stderr_count(h, "redis memory: used_memory") == 0; i++) {
		if (harness_now_ms() > end || i > 200)
			harness_fail(h, "no warning after %d writes", i);
		CMD("SET %s:ballast:%d %s", h->queue, i,
		    ballast);
		harness_sleep_ms(200);
	}
	free(ballast);
	assert_int_equal(stderr_count(h, "answer_ttl_s 86400"), 1);
	wait_sample(h, port, "execq_redis_memory_full_eta_seconds");
	body = get_metrics(h, port);
	assert_true(has_sample(body,
	    "execq_redis_memory_growth_bytes_per_second"));
	free(body);
	for (; i >= 0; i--)
		CMD("DEL %s:ballast:%d", h->queue, i);
	CMD("CONFIG SET maxmemory 0");
	harness_pass(h);
}

/*
 * execq ps reads the newest --limit entries (100 by default) and says so
 * when the index holds more: on stdout under the table, on stderr with
 * --json (stdout stays one session per line).
 */
static void
test_membudget_ps_limit(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct harness_proc	 p;
	const char		*two[] = { "ps", "--limit", "2", NULL };
	const char		*all[] = { "ps", "-n", "10", NULL };
	const char		*json[] = { "ps", "--json", "--limit", "2",
				    NULL };
	const char		*bad[] = { "ps", "--limit", "0", NULL };
	const char		*id;
	char			 name[16];
	int			 i;

	for (i = 0; i < 5; i++) {
		snprintf(name, sizeof name, "ps%d", i);
		id = harness_id(h, name);
		CMD("ZADD execq:sessions %d %s", 1000 + i, id);
		CMD("HSET execq:session:%s session_id %s status running "
		    "command sleep pid 1 worker w started_ms 1", id, id);
	}
	harness_cli(h, &p, NULL, HARNESS_WAIT_MS, two);
	assert_int_equal(harness_proc_exit(&p), 0);
	assert_non_null(strstr(p.out, "showing 2 of 5 sessions"));
	assert_non_null(strstr(p.out, harness_id(h, "ps4")));
	assert_null(strstr(p.out, harness_id(h, "ps2")));
	harness_proc_release(&p);
	harness_cli(h, &p, NULL, HARNESS_WAIT_MS, all);
	assert_int_equal(harness_proc_exit(&p), 0);
	assert_null(strstr(p.out, "showing"));
	assert_non_null(strstr(p.out, harness_id(h, "ps0")));
	harness_proc_release(&p);
	harness_cli(h, &p, NULL, HARNESS_WAIT_MS, json);
	assert_int_equal(harness_proc_exit(&p), 0);
	assert_null(strstr(p.out, "showing"));
	assert_non_null(strstr(p.err, "showing 2 of 5 sessions"));
	for (i = 0; p.out[i] != '\0'; i += strcspn(p.out + i, "\n") + 1)
		assert_int_equal(p.out[i], '{');
	harness_proc_release(&p);
	harness_cli(h, &p, NULL, HARNESS_WAIT_MS, bad);
	assert_int_equal(harness_proc_exit(&p), 2);
	assert_non_null(strstr(p.err, "--limit wants 1 to 100000"));
	harness_proc_release(&p);
	harness_pass(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f)	cmocka_unit_test_setup_teardown(f, harness_setup, \
		    harness_teardown)
		T(test_membudget_warns),
		T(test_membudget_ps_limit),
#undef T
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
