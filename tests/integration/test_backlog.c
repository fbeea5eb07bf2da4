/*
 * The backlog in sight: a worker with one slot is kept busy by a command
 * that waits for a file the test makes; items pushed to two lanes wait
 * behind it, an entry of the delayed set and one of the dead-letter
 * stream are added by hand; `execq queues --json` and the worker's
 * /metrics must both show them (waiting, running, delayed, dead, an
 * oldest age above 0), and the counts must fall to 0 once the barrier is
 * gone. Every check polls with a deadline.
 */

#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <poll.h>
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

#define BACKLOG_MS	20000	/* each condition's deadline */

/* GET /metrics from 127.0.0.1:port: the whole response, allocated. */
static char *
backlog_scrape(struct harness *h, unsigned port)
{
	struct sockaddr_in	 sa;
	struct pollfd		 pfd;
	const char		*req = "GET /metrics HTTP/1.0\r\n\r\n";
	size_t			 cap = 65536, n = 0;
	ssize_t			 k;
	int64_t			 end = harness_now_ms() + BACKLOG_MS;
	char			*text;
	int			 fd;

	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_port = htons(port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    connect(fd, (struct sockaddr *)&sa, sizeof sa) == -1)
		harness_fail(h, "connect to port %u: %s", port,
		    strerror(errno));
	(void)send(fd, req, strlen(req), MSG_NOSIGNAL);
	text = xmalloc(cap);
	for (;;) {
		pfd.fd = fd;
		pfd.events = POLLIN;
		if (harness_now_ms() > end)
			harness_fail(h, "no end of /metrics");
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		if (n + 4096 > cap)
			text = xrealloc(text, cap *= 2);
		if ((k = recv(fd, text + n, cap - n - 1, 0)) <= 0)
			break;
		n += k;
	}
	close(fd);
	text[n] = '\0';
	return (text);
}

/* A sample's value in a /metrics text; -1 when it is not there. */
static double
backlog_metric(const char *text, const char *series)
{
	const char	*p = text;
	size_t		 n = strlen(series);

	while ((p = strstr(p, series)) != NULL) {
		if (p > text && p[-1] == '\n' && p[n] == ' ')
			return (strtod(p + n + 1, NULL));
		p += n;
	}
	return (-1);
}

/* The /metrics series of queue, lane (NULL: none) and state. */
static double
backlog_items(const char *text, const char *queue, const char *lane,
    const char *state)
{
	char	series[256];

	if (lane != NULL)
		snprintf(series, sizeof series, "execq_queue_items{queue=\"%s\","
		    "lane=\"%s\",state=\"%s\"}", queue, lane, state);
	else
		snprintf(series, sizeof series, "execq_queue_items{queue=\"%s\","
		    "state=\"%s\"}", queue, state);
	return (backlog_metric(text, series));
}

static double
backlog_age(const char *text, const char *queue, const char *lane)
{
	char	series[256];

	snprintf(series, sizeof series, "execq_queue_oldest_age_seconds{"
	    "queue=\"%s\",lane=\"%s\"}", queue, lane);
	return (backlog_metric(text, series));
}

/* execq queues --json --queue <ours>: the object. */
static json_t *
backlog_cli(struct harness *h)
{
	struct harness_proc	 p;
	const char		*args[] = { "queues", "--json", "--queue",
				    h->queue, NULL };
	json_t			*o;

	harness_cli(h, &p, NULL, BACKLOG_MS, args);
	if (harness_proc_exit(&p) != 0)
		harness_fail(h, "execq queues: exit %d: %s",
		    harness_proc_exit(&p), p.err);
	if ((o = json_loads(p.out, 0, NULL)) == NULL)
		harness_fail(h, "execq queues: not JSON: %s", p.out);
	harness_proc_release(&p);
	return (o);
}

/* The lane's member (waiting, running, oldest_age_s) in the CLI's JSON. */
static double
backlog_cli_lane(json_t *o, const char *lane, const char *key)
{
	json_t	*l;
	size_t	 i;

	json_array_foreach(json_object_get(o, "lanes"), i, l)
		if (strcmp(json_string_value(json_object_get(l, "lane")),
		    lane) == 0)
			return (json_number_value(json_object_get(l, key)));
	return (-1);
}

/* What both views must show: busy (1) or drained (0). */
static int
backlog_cli_shows(json_t *o, int busy)
{
	if (busy)
		return (backlog_cli_lane(o, "normal", "running") == 1 &&
		    backlog_cli_lane(o, "normal", "waiting") == 0 &&
		    backlog_cli_lane(o, "high", "waiting") == 2 &&
		    backlog_cli_lane(o, "low", "waiting") == 3 &&
		    backlog_cli_lane(o, "high", "oldest_age_s") > 0 &&
		    backlog_cli_lane(o, "low", "oldest_age_s") > 0 &&
		    backlog_cli_lane(o, "normal", "oldest_age_s") == 0 &&
		    json_integer_value(json_object_get(o, "delayed")) == 1 &&
		    json_integer_value(json_object_get(o, "dead")) == 1);
	return (backlog_cli_lane(o, "normal", "running") == 0 &&
	    backlog_cli_lane(o, "high", "waiting") == 0 &&
	    backlog_cli_lane(o, "low", "waiting") == 0 &&
	    backlog_cli_lane(o, "high", "running") == 0 &&
	    backlog_cli_lane(o, "low", "running") == 0 &&
	    backlog_cli_lane(o, "high", "oldest_age_s") == 0);
}

static int
backlog_metrics_show(const char *t, const char *q, int busy)
{
	if (busy)
		return (backlog_items(t, q, "normal", "running") == 1 &&
		    backlog_items(t, q, "normal", "waiting") == 0 &&
		    backlog_items(t, q, "high", "waiting") == 2 &&
		    backlog_items(t, q, "low", "waiting") == 3 &&
		    backlog_items(t, q, "ctl", "waiting") == 0 &&
		    backlog_items(t, q, NULL, "delayed") == 1 &&
		    backlog_items(t, q, NULL, "dead") == 1 &&
		    backlog_age(t, q, "high") > 0 &&
		    backlog_age(t, q, "low") > 0 &&
		    backlog_age(t, q, "normal") == 0);
	return (backlog_items(t, q, "normal", "running") == 0 &&
	    backlog_items(t, q, "high", "waiting") == 0 &&
	    backlog_items(t, q, "low", "waiting") == 0 &&
	    backlog_items(t, q, "high", "running") == 0 &&
	    backlog_items(t, q, "low", "running") == 0 &&
	    backlog_age(t, q, "low") == 0);
}

/* Polls both views until they show busy (or drained); fails after. */
static void
backlog_wait(struct harness *h, unsigned port, int busy)
{
	int64_t	 end = harness_now_ms() + BACKLOG_MS;
	json_t	*o = NULL;
	char	*text = NULL, *dump;
	int	 cli_ok = 0, metrics_ok = 0;

	for (;;) {
		if (!cli_ok) {
			json_decref(o);
			o = backlog_cli(h);
			cli_ok = backlog_cli_shows(o, busy);
		}
		if (!metrics_ok) {
			free(text);
			text = backlog_scrape(h, port);
			metrics_ok = backlog_metrics_show(text, h->queue, busy);
		}
		if (cli_ok && metrics_ok)
			break;
		if (harness_now_ms() > end) {
			dump = json_dumps(o, 0);
			harness_fail(h, "never %s: execq queues %s; /metrics "
			    "%s", busy ? "busy" : "drained", dump,
			    strstr(text, "execq_queue_items") != NULL ?
			    strstr(text, "execq_queue_items") : text);
		}
		harness_sleep_ms(100);
	}
	json_decref(o);
	free(text);
}

static void
test_backlog_queues_and_metrics(void **state)
{
	struct harness	*h = harness_fixture(state);
	char		 addr[64], *go, *cmd, key[256], name[32];
	unsigned	 port = (unsigned)harness_free_port();
	redisReply	*r;
	int		 i;

	snprintf(addr, sizeof addr, "127.0.0.1:%u", port);
	harness_worker_start(h, NULL, "--max-procs", "1", "--http", addr,
	    (char *)NULL);
	xasprintf(&go, "%s/go", h->ws);
	xasprintf(&cmd, "while [ ! -e %s ]; do sleep 0.05; done", go);
	harness_submit(h, "normal", harness_id(h, "blocker"), cmd, NULL);
	harness_wait_running(h, go);	/* before the others: high goes first */
	for (i = 0; i < 2; i++) {
		snprintf(name, sizeof name, "high%d", i);
		harness_submit(h, "high", harness_id(h, name), "true", NULL);
	}
	for (i = 0; i < 3; i++) {
		snprintf(name, sizeof name, "low%d", i);
		harness_submit(h, "low", harness_id(h, name), "true", NULL);
	}
	snprintf(key, sizeof key, "q:%s:delayed", h->queue);
	r = harness_cmd(h, "ZADD %s 1 later", key);
	freeReplyObject(r);
	snprintf(key, sizeof key, "q:%s:dead", h->queue);
	r = harness_cmd(h, "XADD %s * item {}", key);
	freeReplyObject(r);

	backlog_wait(h, port, 1);
	if (harness_write_file(go, "") != 0)
		harness_fail(h, "write %s: %s", go, strerror(errno));
	backlog_wait(h, port, 0);
	free(go);
	free(cmd);
	harness_pass(h);
}

#define T(f)	cmocka_unit_test_setup_teardown(f, harness_setup, \
		    harness_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_backlog_queues_and_metrics),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
