/*
 * execq queues: a queue's backlog as Redis shows it now, per lane (items
 * waiting, running, the oldest waiting one's age) and per queue (delayed
 * items, dead letters): the same read and numbers as the worker's
 * /metrics execq_queue_* gauges (queue/backlog.c).
 */

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/cli.h"
#include "logs/xmalloc.h"
#include "queue/backlog.h"
#include "queue/client.h"

#define EXECQ_QUEUES_COLUMNS	6

struct execq_queues_opts {
	struct execq_opts	 o;
	int			 json;
	const char		*agents;
};

static const struct option execq_queues_longopts[] = {
	{ "json",	no_argument,	   NULL, EXECQ_OPT_JSON },
	{ "queue",	required_argument, NULL, EXECQ_OPT_QUEUE },
	{ "agents",	required_argument, NULL, EXECQ_OPT_AGENTS },
	{ "redis",	required_argument, NULL, EXECQ_OPT_REDIS },
	{ "help",	no_argument,	   NULL, 'h' },
	{ NULL,		0,		   NULL, 0 }
};

static const char *const execq_queues_headers[EXECQ_QUEUES_COLUMNS] = {
	"QUEUE", "LANE", "WAITING", "RUNNING", "OLDEST", "DELAYED/DEAD" };

/* queues --help. */
static void
execq_queues_usage(FILE *f)
{
	fputs("usage: execq queues [--json] [--queue Q] [--agents NAMES]\n"
	    "\n"
	    "Shows a queue's backlog as Redis has it now: per lane (ctl,\n"
	    "high, normal, low, and each agent's), the items waiting (not\n"
	    "yet taken by a worker), running (taken, not yet answered) and\n"
	    "the age of the oldest waiting one (by Redis's clock); per\n"
	    "queue, the items delayed (q:<queue>:delayed) and the dead\n"
	    "letters (q:<queue>:dead). The worker's /metrics shows the same\n"
	    "as execq_queue_items and execq_queue_oldest_age_seconds.\n"
	    "\n"
	    "Options:\n"
	    "  --json          one JSON object: {\"queue\", \"lanes\": [{\"lane\",\n"
	    "                  \"waiting\", \"running\", \"oldest_age_s\"}...],\n"
	    "                  \"delayed\", \"dead\"}\n"
	    "  --queue Q       the queue (default: $EXECQ_QUEUE, else exec)\n"
	    "  --agents NAMES  also the lanes of these agents (the worker's\n"
	    "                  `agents` setting: names split by spaces or\n"
	    "                  commas)\n"
	    "  --redis URL     Redis address (see 'execq --help')\n"
	    "  -h, --help      show this help\n"
	    "\n"
	    "Exit status: 0; 125 if Redis failed; 2 on a usage error.\n", f);
}

static int
execq_queues_set(struct execq_opts *o, const char *cmd, int ch,
    const char *arg)
{
	struct execq_queues_opts	*qo = (struct execq_queues_opts *)o;

	switch (ch) {
	case EXECQ_OPT_JSON:
		qo->json = 1;
		return (0);
	case EXECQ_OPT_AGENTS:
		qo->agents = arg;
		return (0);
	}
	return (execq_opts_set(o, cmd, ch, arg));
}

/* An age in seconds for a person: "-" when nothing waits. */
static char *
execq_queues_age(double s)
{
	char	buf[32];

	if (s <= 0)
		return (xstrdup("-"));
	if (s < 10) {
		snprintf(buf, sizeof buf, "%.1fs", s);
		return (xstrdup(buf));
	}
	execq_format_duration((long long)(s * 1000), buf, sizeof buf);
	return (xstrdup(buf));
}

/* The table: a row per lane, then the queue's own (delayed/dead). */
static void
execq_queues_print(const struct backlog *b)
{
	const struct backlog_lane	*l;
	char				**cells, **row;
	size_t				 i, n = b->nlanes + 1;

	cells = xcalloc(n * EXECQ_QUEUES_COLUMNS + 1, sizeof *cells);
	for (i = 0; i < b->nlanes; i++) {
		l = &b->lanes[i];
		row = cells + i * EXECQ_QUEUES_COLUMNS;
		row[0] = xstrdup(b->queue);
		row[1] = xstrdup(l->name);
		xasprintf(&row[2], "%llu", l->waiting);
		xasprintf(&row[3], "%llu", l->running);
		row[4] = execq_queues_age(l->oldest_age_s);
		row[5] = xstrdup("-");
	}
	row = cells + b->nlanes * EXECQ_QUEUES_COLUMNS;
	row[0] = xstrdup(b->queue);
	row[1] = xstrdup("(queue)");
	row[2] = xstrdup("-");
	row[3] = xstrdup("-");
	row[4] = xstrdup("-");
	xasprintf(&row[5], "%llu/%llu", b->delayed, b->dead);
	execq_print_table(execq_queues_headers, EXECQ_QUEUES_COLUMNS, cells,
	    n);
	for (i = 0; i < n * EXECQ_QUEUES_COLUMNS; i++)
		free(cells[i]);
	free(cells);
}

/* execq queues: a queue's backlog. */
int
execq_cmd_queues(const char *redis, int argc, char **argv)
{
	struct execq_queues_opts	 qo;
	struct execq_session		 s;
	struct backlog			*b = NULL;
	json_t				*o;
	char				*text;
	int				 rc;

	memset(&qo, 0, sizeof qo);
	memset(&s, 0, sizeof s);
	execq_opts_init(&qo.o, redis);
	if ((rc = execq_opts_getopt(&qo.o, "queues", argc, argv, "h",
	    execq_queues_longopts, execq_queues_set,
	    execq_queues_usage)) != 0) {
		rc = rc == 1 ? 0 : EXECQ_EXIT_USAGE;
		goto out;
	}
	if (optind < argc) {
		rc = execq_usage_error("queues", "unexpected '%s'",
		    argv[optind]);
		goto out;
	}
	if ((rc = execq_session_open(&s, &qo.o)) != 0)
		goto out;
	rc = EXECQ_EXIT_FAIL;
	b = backlog_create(qo.o.queue, qo.agents);
	if (client_backlog_read(s.c, b) == -1) {
		execq_error("Redis at %s: %s", s.display, client_errstr(s.c));
		goto out;
	}
	if (b->failed) {
		execq_error("Redis at %s: %s", s.display, b->error);
		goto out;
	}
	if (qo.json) {
		o = backlog_to_json(b);
		if ((text = json_dumps(o, JSON_COMPACT)) == NULL)
			execq_error("out of memory (json)");
		else
			printf("%s\n", text);
		free(text);
		json_decref(o);
	} else
		execq_queues_print(b);
	if (fflush(stdout) == EOF) {
		execq_error("stdout: %s", strerror(errno));
		goto out;
	}
	rc = 0;
out:
	backlog_free(b);
	execq_session_close(&s);
	execq_opts_release(&qo.o);
	return (rc);
}
