/*
 * execq workers: the fleet as the registry shows it. Every worker writes
 * its status to the hash execq:workers at each heartbeat; its lease key
 * execq:worker:<consumer> says whether it is alive (it expires
 * claim_idle_s after the last beat). A worker whose entry is there and
 * whose lease is gone either stopped ("stopped", said so on the way out)
 * or died ("dead").
 */

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>
#include <jansson.h>

#include "cli/cli.h"
#include "logs/clock.h"
#include "logs/xmalloc.h"
#include "queue/client.h"

#define EXECQ_WORKERS_COLUMNS	12

struct execq_workers_opts {
	struct execq_opts	 o;
	int			 json, prune, queue_given;
};

static const struct option execq_workers_longopts[] = {
	{ "json",	no_argument,	   NULL, EXECQ_OPT_JSON },
	{ "prune",	no_argument,	   NULL, EXECQ_OPT_PRUNE },
	{ "queue",	required_argument, NULL, EXECQ_OPT_QUEUE },
	{ "redis",	required_argument, NULL, EXECQ_OPT_REDIS },
	{ "help",	no_argument,	   NULL, 'h' },
	{ NULL,		0,		   NULL, 0 }
};

static const char *const execq_workers_headers[EXECQ_WORKERS_COLUMNS] = {
	"WORKER", "STATE", "HOST", "PID", "QUEUE", "VERSION", "SLOTS",
	"SESSIONS", "HELD", "UPTIME", "BEAT", "CONFINEMENT" };

/* workers --help. */
static void
execq_workers_usage(FILE *f)
{
	fputs("usage: execq workers [--json] [--queue Q] [--prune]\n"
	    "\n"
	    "Lists the workers that share this Redis, as each last said at\n"
	    "its heartbeat (every claim_idle_s/3, 10 s by default): state\n"
	    "(running, stopping; stopped: it shut down cleanly; dead: it\n"
	    "went silent), host, pid, queue, version, slots used/total, "
	    "sessions\n"
	    "running, commands held for approval, uptime, time since its\n"
	    "last heartbeat, and its confinement (all: every layer on; else\n"
	    "the layers that are off). Entries silent for a day go away.\n"
	    "\n"
	    "Options:\n"
	    "  --json          one JSON object per worker, with \"alive\"\n"
	    "  --queue Q       only the workers of queue Q\n"
	    "  --prune         forget the stopped and dead workers listed\n"
	    "  --redis URL     Redis address (see 'execq --help')\n"
	    "  -h, --help      show this help\n"
	    "\n"
	    "Exit status: 0; 125 if Redis failed; 2 on a usage error.\n", f);
}

static int
execq_workers_set(struct execq_opts *o, const char *cmd, int ch,
    const char *arg)
{
	struct execq_workers_opts	*wo = (struct execq_workers_opts *)o;

	switch (ch) {
	case EXECQ_OPT_JSON:
		wo->json = 1;
		return (0);
	case EXECQ_OPT_PRUNE:
		wo->prune = 1;
		return (0);
	case EXECQ_OPT_QUEUE:
		wo->queue_given = 1;
		break;
	}
	return (execq_opts_set(o, cmd, ch, arg));
}

/* Orders the list by queue, then host, then consumer. */
static int
execq_workers_cmp(const void *a, const void *b)
{
	const json_t	*x = *(json_t *const *)a, *y = *(json_t *const *)b;
	static const char *const keys[] = { "queue", "host", "consumer" };
	const char	*s, *t;
	size_t		 i;
	int		 c;

	for (i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		s = json_string_value(json_object_get(x, keys[i]));
		t = json_string_value(json_object_get(y, keys[i]));
		if ((c = strcmp(s != NULL ? s : "", t != NULL ? t : "")) != 0)
			return (c);
	}
	return (0);
}

/*
 * Every entry of execq:workers (of queue, unless NULL) with "alive" and
 * "state" set from the leases, sorted; NULL (said) if Redis failed.
 */
static json_t *
execq_workers_fetch(struct execq_session *s, const char *queue)
{
	redisReply	*all, *r;
	json_t		*list, *o, **v;
	const char	*state;
	size_t		 i, n = 0;

	if ((all = execq_reply(s, "HGETALL", client_workers_get(s->c))) ==
	    NULL)
		return (NULL);
	v = xcalloc(all->elements / 2 + 1, sizeof *v);
	for (i = 0; i + 1 < all->elements; i += 2) {
		o = json_loadb(all->element[i + 1]->str,
		    all->element[i + 1]->len, 0, NULL);
		if (!json_is_object(o) || (queue != NULL && strcmp(queue,
		    json_string_value(json_object_get(o, "queue")) != NULL ?
		    json_string_value(json_object_get(o, "queue")) : "") != 0)) {
			json_decref(o);
			continue;
		}
		json_object_set_new(o, "consumer", json_stringn(
		    all->element[i]->str, all->element[i]->len));
		client_worker_alive_append(s->c, all->element[i]->str,
		    all->element[i]->len);
		v[n++] = o;
	}
	freeReplyObject(all);
	for (i = 0; i < n; i++) {
		if ((r = client_next_reply(s->c)) == NULL) {
			execq_error("Redis at %s: EXISTS: %s", s->display,
			    client_errstr(s->c));
			while (n > 0)
				json_decref(v[--n]);
			free(v);
			return (NULL);
		}
		state = json_string_value(json_object_get(v[i], "state"));
		if (r->type == REDIS_REPLY_INTEGER && r->integer == 1)
			json_object_set_new(v[i], "alive", json_true());
		else {
			json_object_set_new(v[i], "alive", json_false());
			if (state == NULL || strcmp(state, "stopped") != 0)
				json_object_set_new(v[i], "state",
				    json_string("dead"));
		}
		freeReplyObject(r);
	}
	qsort(v, n, sizeof *v, execq_workers_cmp);
	list = json_array();
	for (i = 0; i < n; i++)
		json_array_append_new(list, v[i]);
	free(v);
	return (list);
}

/* "all", or "off:" and the layers that are off; allocated. */
static char *
execq_workers_confinement(const json_t *o)
{
	const json_t	*layers = json_object_get(o, "confinement"), *on;
	const char	*name;
	char		*s = NULL, *t;

	json_object_foreach((json_t *)layers, name, on) {
		if (json_is_true(on))
			continue;
		xasprintf(&t, "%s%s%s", s != NULL ? s : "off: ",
		    s != NULL ? ", " : "", name);
		free(s);
		s = t;
	}
	if (s == NULL)
		s = xstrdup(json_is_true(json_object_get(o, "confined")) ?
		    "all" : "off");
	return (s);
}

/* A number member as text, "-" when missing. */
static char *
execq_workers_int(const json_t *o, const char *key)
{
	const json_t	*v = json_object_get(o, key);
	char		*s;

	if (!json_is_integer(v))
		return (xstrdup("-"));
	xasprintf(&s, "%lld", (long long)json_integer_value(v));
	return (s);
}

/* A string member, "-" when missing; allocated. */
static char *
execq_workers_str(const json_t *o, const char *key)
{
	const char	*v = json_string_value(json_object_get(o, key));

	return (xstrdup(v != NULL && *v != '\0' ? v : "-"));
}

/* The cells of one worker's row; allocated. */
static void
execq_workers_row(const json_t *o, char **cells)
{
	long long	 now = clock_wall_ms(), started, beat;
	char		 buf[32];

	started = json_integer_value(json_object_get(o, "started_ms"));
	beat = json_integer_value(json_object_get(o, "beat_ms"));
	cells[0] = execq_workers_str(o, "consumer");
	cells[1] = execq_workers_str(o, "state");
	cells[2] = execq_workers_str(o, "host");
	cells[3] = execq_workers_int(o, "pid");
	cells[4] = execq_workers_str(o, "queue");
	cells[5] = execq_workers_str(o, "version");
	xasprintf(&cells[6], "%lld/%lld",
	    (long long)json_integer_value(json_object_get(o, "slots_used")),
	    (long long)json_integer_value(json_object_get(o, "slots_total")));
	cells[7] = execq_workers_int(o, "sessions_running");
	cells[8] = execq_workers_int(o, "approvals_parked");
	/* A live worker is up until now; another one was until its beat. */
	execq_format_duration((json_is_true(json_object_get(o, "alive")) ?
	    now : beat) - started, buf, sizeof buf);
	cells[9] = xstrdup(started > 0 ? buf : "-");
	execq_format_duration(now - beat, buf, sizeof buf);
	xasprintf(&cells[10], "%s ago", buf);
	cells[11] = execq_workers_confinement(o);
}

/* Prints the list as a table, or as JSON lines. */
static void
execq_workers_print(const json_t *list, int as_json)
{
	const json_t	*o;
	char		**cells, *text;
	size_t		 i, n = json_array_size(list);

	if (as_json) {
		json_array_foreach(list, i, o) {
			text = json_dumps(o, JSON_COMPACT);
			printf("%s\n", text);
			free(text);
		}
		return;
	}
	if (n == 0) {
		printf("no workers have registered with this Redis\n");
		return;
	}
	cells = xcalloc(n * EXECQ_WORKERS_COLUMNS + 1, sizeof *cells);
	json_array_foreach(list, i, o)
		execq_workers_row(o, cells + i * EXECQ_WORKERS_COLUMNS);
	execq_print_table(execq_workers_headers, EXECQ_WORKERS_COLUMNS, cells,
	    n);
	for (i = 0; i < n * EXECQ_WORKERS_COLUMNS; i++)
		free(cells[i]);
	free(cells);
}

/* --prune: forgets the listed workers that are not alive. */
static int
execq_workers_prune(struct execq_session *s, const json_t *list)
{
	const json_t	*o;
	const char	*c;
	redisReply	*r;
	size_t		 i;

	json_array_foreach(list, i, o) {
		if (json_is_true(json_object_get(o, "alive")))
			continue;
		c = json_string_value(json_object_get(o, "consumer"));
		if ((r = execq_reply(s, "HDEL", client_workers_del(s->c, c))) ==
		    NULL)
			return (-1);
		freeReplyObject(r);
		if ((r = execq_reply(s, "ZREM", client_workers_beat_del(s->c,
		    c))) == NULL)
			return (-1);
		freeReplyObject(r);
	}
	return (0);
}

/* execq workers: the fleet. */
int
execq_cmd_workers(const char *redis, int argc, char **argv)
{
	struct execq_workers_opts	 wo;
	struct execq_session		 s;
	json_t				*list = NULL;
	int				 rc;

	memset(&wo, 0, sizeof wo);
	memset(&s, 0, sizeof s);
	execq_opts_init(&wo.o, redis);
	if ((rc = execq_opts_getopt(&wo.o, "workers", argc, argv, "h",
	    execq_workers_longopts, execq_workers_set,
	    execq_workers_usage)) != 0) {
		rc = rc == 1 ? 0 : EXECQ_EXIT_USAGE;
		goto out;
	}
	if (optind < argc) {
		rc = execq_usage_error("workers", "unexpected '%s'",
		    argv[optind]);
		goto out;
	}
	if ((rc = execq_session_open(&s, &wo.o)) != 0)
		goto out;
	rc = EXECQ_EXIT_FAIL;
	if ((list = execq_workers_fetch(&s, wo.queue_given ? wo.o.queue :
	    NULL)) == NULL)
		goto out;
	execq_workers_print(list, wo.json);
	if (wo.prune && execq_workers_prune(&s, list) != 0)
		goto out;
	if (fflush(stdout) == EOF) {
		execq_error("stdout: %s", strerror(errno));
		goto out;
	}
	rc = 0;
out:
	json_decref(list);
	execq_session_close(&s);
	execq_opts_release(&wo.o);
	return (rc);
}
