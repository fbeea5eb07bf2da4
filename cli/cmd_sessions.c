/*
 * execq spawn, ps and callbacks: background sessions as the client sees
 * them (docs/PROTOCOL.md section 11).
 *
 * spawn sends an EXEC item with "background": true and prints the session
 * id from EXEC_STARTED. The item's reply_to is where the EXEC_CALLBACK will
 * go, long after execq has exited, so it is a stable queue: --reply-to, or
 * execq.<user>, which is also where 'execq callbacks' looks by default.
 *
 * ps reads the session mirror (execq:sessions, execq:session:<id>)
 * straight from Redis: no worker needs to be running to list them.
 */

#include <sys/ioctl.h>

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hiredis/hiredis.h>
#include <jansson.h>

#include "cli/cli.h"
#include "logs/clock.h"
#include "logs/xmalloc.h"
#include "queue/client.h"
#include "queue/keyspace.h"

#define EXECQ_PS_MAX		100	/* ps --limit's default */
#define EXECQ_PS_LIMIT_MAX	100000
#define EXECQ_PS_OPT_LIMIT	'n'	/* -n, --limit */
#define EXECQ_PS_COLUMNS	9
#define EXECQ_CB_BLOCK_MS	1000

static const struct option execq_spawn_longopts[] = {
	{ "pty",		no_argument,	   NULL, EXECQ_OPT_PTY },
	{ "shell",		no_argument,	   NULL, EXECQ_OPT_SHELL },
	{ "rows",		required_argument, NULL, EXECQ_OPT_ROWS },
	{ "cols",		required_argument, NULL, EXECQ_OPT_COLS },
	{ "reply-to",		required_argument, NULL, EXECQ_OPT_REPLY_TO },
	{ "timeout",		required_argument, NULL, EXECQ_OPT_TIMEOUT },
	{ "idle-timeout",	required_argument, NULL,
	    EXECQ_OPT_IDLE_TIMEOUT },
	{ "tail-lines",		required_argument, NULL,
	    EXECQ_OPT_TAIL_LINES },
	{ "keep",		no_argument,	   NULL, EXECQ_OPT_KEEP },
	{ "cwd",		required_argument, NULL, EXECQ_OPT_CWD },
	{ "tier",		required_argument, NULL, EXECQ_OPT_TIER },
	{ "env",		required_argument, NULL, EXECQ_OPT_ENV },
	{ "id",			required_argument, NULL, EXECQ_OPT_ID },
	{ "wait",		required_argument, NULL, EXECQ_OPT_WAIT },
	{ "queue",		required_argument, NULL, EXECQ_OPT_QUEUE },
	{ "redis",		required_argument, NULL, EXECQ_OPT_REDIS },
	{ "help",		no_argument,	   NULL, 'h' },
	{ NULL,			0,		   NULL, 0 }
};

/* ps options. */
struct execq_ps_opts {
	struct execq_opts	 o;	/* first: set() casts */
	int			 all;
	int			 json;
	long			 limit;	/* newest entries read */
};

static const struct option execq_ps_longopts[] = {
	{ "all",		no_argument,	   NULL, EXECQ_OPT_ALL },
	{ "limit",		required_argument, NULL, EXECQ_PS_OPT_LIMIT },
	{ "json",		no_argument,	   NULL, EXECQ_OPT_JSON },
	{ "queue",		required_argument, NULL, EXECQ_OPT_QUEUE },
	{ "redis",		required_argument, NULL, EXECQ_OPT_REDIS },
	{ "help",		no_argument,	   NULL, 'h' },
	{ NULL,			0,		   NULL, 0 }
};

/* callbacks options; o.queue is the reply queue here. */
struct execq_cb_opts {
	struct execq_opts	 o;	/* first: set() casts */
	long			 count;	/* 0: no limit */
	int			 from_start;
};

static const struct option execq_cb_longopts[] = {
	{ "count",		required_argument, NULL, EXECQ_OPT_COUNT },
	{ "timeout",		required_argument, NULL, EXECQ_OPT_TIMEOUT },
	{ "from-start",		no_argument,	   NULL,
	    EXECQ_OPT_FROM_START },
	{ "queue",		required_argument, NULL, EXECQ_OPT_QUEUE },
	{ "redis",		required_argument, NULL, EXECQ_OPT_REDIS },
	{ "help",		no_argument,	   NULL, 'h' },
	{ NULL,			0,		   NULL, 0 }
};

/* Hash fields that are numbers; "" or a non-number stays as it is. */
static const char * const execq_int_fields[] = {
	"pid", "exit_code", "started_ms", "ended_ms", "duration_ms",
	"output_bytes", "rows", "cols", "signal", "last_activity_ms", NULL
};

/* Hash fields that are flags ("1" or "true"). */
static const char * const execq_bool_fields[] = {
	"pty", "keep", "waiting_input", NULL
};

/* spawn --help. */
static void
execq_spawn_usage(FILE *f)
{
	fputs("usage: execq spawn [OPTIONS] [--] CMD [ARG...]\n"
	    "       execq spawn --shell [OPTIONS] [--] [CMD...]\n"
	    "\n"
	    "Starts CMD as a background session on a worker and prints the\n"
	    "session id alone on a line once the worker says EXEC_STARTED.\n"
	    "CMD is one shell command, or words to quote, as for 'execq run'.\n"
	    "When the session ends, its EXEC_CALLBACK goes to the reply\n"
	    "queue, where 'execq callbacks' finds it.\n"
	    "\n"
	    "Options:\n"
	    "  --pty              run on a pseudo-terminal (for 'execq keys')\n"
	    "  --shell            a persistent shell: 'execq exec ID -- CMD'\n"
	    "                     runs commands in it, keeping cwd and\n"
	    "                     variables; CMD (optional) runs first\n"
	    "  --rows R, --cols C the terminal's size (default 24x80)\n"
	    "  --reply-to Q       where the callback goes "
	    "(default: execq.$USER)\n"
	    "  --timeout S        end the session after S seconds "
	    "(default: none)\n"
	    "  --idle-timeout S   end it after S seconds without output or\n"
	    "                     input (default: the worker's\n"
	    "                     session_idle_timeout_s, none unless set)\n"
	    "  --keep             not ended by the worker's default idle\n"
	    "                     timeout (its own --idle-timeout still is)\n"
	    "  --tail-lines N     lines of output in the callback, 0-100 "
	    "(default 5)\n"
	    "  --cwd DIR          working directory on the worker\n"
	    "  --tier TIER        read_only or read_write: lower the queue's "
	    "tier\n"
	    "  --env K=V          set an environment variable (repeatable)\n"
	    "  --id ID            session id (default: a new ULID)\n"
	    "  --wait S           give up waiting for EXEC_STARTED after S\n"
	    "                     seconds (default 30)\n"
	    "  --queue Q          work queue (default: $EXECQ_QUEUE, "
	    "else exec)\n"
	    "  --redis URL        Redis address (see 'execq --help')\n"
	    "  -h, --help         show this help\n"
	    "\n"
	    "A worker runs at most max_sessions sessions at once (half its\n"
	    "max_procs unless set); past that it refuses a new one with\n"
	    "ERROR too_many_sessions: end one ('execq ps' shows how long\n"
	    "each has been idle) and spawn again.\n"
	    "\n"
	    "Exit status: 0 once started; 125 if the worker refused it (the\n"
	    "ERROR is on stderr), no answer came or execq failed; 2 on a\n"
	    "usage error.\n", f);
}

/* spawn's own options, then those it shares with run. */
static int
execq_spawn_set(struct execq_opts *o, const char *cmd, int ch,
    const char *arg)
{
	switch (ch) {
	case EXECQ_OPT_PTY:
		o->pty = 1;
		return (0);
	case EXECQ_OPT_SHELL:
		o->shell = 1;
		return (0);
	case EXECQ_OPT_ROWS:
	case EXECQ_OPT_COLS:
		if (execq_parse_long(arg, 1, 1000, ch == EXECQ_OPT_ROWS ?
		    &o->rows : &o->cols) == 0)
			return (0);
		execq_usage_error(cmd, "--%s wants 1 to 1000, not '%s'",
		    ch == EXECQ_OPT_ROWS ? "rows" : "cols", arg);
		return (-1);
	case EXECQ_OPT_REPLY_TO:
		o->reply_to = arg;
		return (0);
	case EXECQ_OPT_KEEP:
		o->keep = 1;
		return (0);
	case EXECQ_OPT_IDLE_TIMEOUT:
		if (execq_parse_seconds(arg, &o->idle_timeout_s) == 0)
			return (0);
		execq_usage_error(cmd, "--idle-timeout wants a number of "
		    "seconds > 0, not '%s'", arg);
		return (-1);
	case EXECQ_OPT_TAIL_LINES:
		if (execq_parse_long(arg, 0, 100, &o->tail_lines) == 0)
			return (0);
		execq_usage_error(cmd, "--tail-lines wants 0 to 100, not '%s'",
		    arg);
		return (-1);
	}
	return (execq_opts_set(o, cmd, ch, arg));
}

/* The answers that end a spawn. */
static const char * const execq_spawn_types[] = { "EXEC_STARTED", "ERROR",
    NULL };

/* execq spawn: start a session, print its id. */
int
execq_cmd_spawn(const char *redis, int argc, char **argv)
{
	struct execq_opts	 o;
	struct execq_session	 s;
	struct execq_answer	 a = { NULL, NULL, 0 };
	const char		*type, *sid;
	int			 rc;

	execq_opts_init(&o, redis);
	memset(&s, 0, sizeof s);
	o.background = 1;
	if ((rc = execq_opts_parse(&o, "spawn", argc, argv, "+h",
	    execq_spawn_longopts, execq_spawn_set, execq_spawn_usage)) != 0) {
		rc = (rc == 1) ? 0 : EXECQ_EXIT_USAGE;
		goto out;
	}
	if (o.command == NULL && o.shell)
		o.command = xstrdup(":");	/* a shell with nothing to set up */
	if (o.command == NULL) {
		rc = execq_usage_error("spawn", "no command given");
		goto out;
	}
	if (o.shell && o.pty) {
		rc = execq_usage_error("spawn", "--shell runs without a pty");
		goto out;
	}
	if ((o.rows > 0 || o.cols > 0) && !o.pty) {
		rc = execq_usage_error("spawn", "--rows and --cols need --pty");
		goto out;
	}
	if ((rc = execq_session_open(&s, &o)) != 0 ||
	    (rc = execq_exchange_exec(&s, &o, execq_spawn_types, &a)) != 0)
		goto out;
	type = json_string_value(json_object_get(a.root, "type"));
	if (strcmp(type, "ERROR") == 0) {
		rc = execq_print_error(a.root);
		goto out;
	}
	sid = json_string_value(json_object_get(a.root, "session_id"));
	if (sid == NULL)	/* the session id is the item id */
		sid = json_string_value(json_object_get(a.root, "id"));
	if (json_is_string(json_object_get(a.root, "session_token")))
		execq_tokens_save(sid, json_string_value(json_object_get(
		    a.root, "session_token")));
	execq_line(stdout, "%s", sid);
	if (fflush(stdout) == EOF) {
		execq_error("stdout: %s", strerror(errno));
		rc = EXECQ_EXIT_FAIL;
	}
out:
	execq_answer_release(&a);
	execq_session_close(&s);
	execq_opts_release(&o);
	return (rc);
}

/* 1 if a session's status says it is over; unknown ones are live. */
int
execq_status_ended(const char *status)
{
	static const char * const	 ended[] = { "completed", "failed",
					    "timed_out", "killed", "lost",
					    "rejected", "expired", "cancelled",
					    NULL };
	const char * const		*p;

	if (status == NULL)
		return (0);
	for (p = ended; *p != NULL; p++) {
		if (strcmp(status, *p) == 0)
			return (1);
	}
	return (0);
}

/* Text as a JSON string; bytes that are not UTF-8 become '?'. */
static json_t *
execq_json_text(const char *s, size_t len)
{
	json_t	*v;
	char	*copy;
	size_t	 i;

	if ((v = json_stringn(s, len)) != NULL)
		return (v);
	copy = xmalloc(len);
	for (i = 0; i < len; i++)
		copy[i] = ((unsigned char)s[i] < 0x80 && s[i] != '\0') ?
		    s[i] : '?';
	v = json_stringn(copy, len);
	free(copy);
	return (v);
}

/* One hash value as JSON: integers, pty and waiting_input typed, "" null. */
static json_t *
execq_session_value(const char *field, const redisReply *v)
{
	const char * const	*p;
	char			*end;
	long long		 n;

	if (v->len == 0)
		return (json_null());
	for (p = execq_bool_fields; *p != NULL; p++) {
		if (strcmp(field, *p) == 0)
			return (json_boolean(strcmp(v->str, "1") == 0 ||
			    strcmp(v->str, "true") == 0));
	}
	for (p = execq_int_fields; *p != NULL; p++) {
		if (strcmp(field, *p) != 0)
			continue;
		errno = 0;
		n = strtoll(v->str, &end, 10);
		if (errno == 0 && *end == '\0')
			return (json_integer(n));
	}
	return (execq_json_text(v->str, v->len));
}

/*
 * The execq:session:<id> hash (an HGETALL reply) as a JSON object with
 * session_id first; NULL if the hash is empty (expired) or not a hash.
 */
json_t *
execq_session_json(const char *id, const redisReply *r)
{
	json_t	*obj;
	size_t	 i;

	if (r == NULL || r->type != REDIS_REPLY_ARRAY || r->elements < 2)
		return (NULL);
	obj = json_pack("{s:s}", "session_id", id);
	for (i = 0; i + 1 < r->elements; i += 2) {
		if (r->element[i]->type != REDIS_REPLY_STRING ||
		    r->element[i + 1]->type != REDIS_REPLY_STRING)
			continue;
		json_object_set_new(obj, r->element[i]->str,
		    execq_session_value(r->element[i]->str,
		    r->element[i + 1]));
	}
	return (obj);
}

/* HGETALL execq:session:<id>: 0 with *out (NULL: none), or -1 (said). */
int
execq_session_get(struct execq_session *s, const char *id, json_t **out)
{
	redisReply	*r;

	if ((r = execq_reply(s, "HGETALL", client_session_get(s->c, id))) ==
	    NULL)
		return (-1);
	*out = execq_session_json(id, r);
	freeReplyObject(r);
	return (0);
}

/* ps --help. */
static void
execq_ps_usage(FILE *f)
{
	fputs("usage: execq ps [--all] [--json] [--limit N]\n"
	    "\n"
	    "Lists the running sessions and the items held for approval\n"
	    "(STATUS held), newest first, from the mirror the workers keep\n"
	    "in Redis (execq:sessions, execq:session:<id>), so every\n"
	    "worker's sessions on this Redis are shown, of any queue. Ended\n"
	    "sessions, and held items that were rejected, expired or\n"
	    "cancelled, stay there for the workers' session_ttl_s.\n"
	    "\n"
	    "Options:\n"
	    "  -a, --all       show the ended sessions too\n"
	    "  -n, --limit N   read the newest N entries of the index "
	    "(default 100,\n"
	    "                  at most 100000); when it holds more, a line "
	    "says\n"
	    "                  \"showing N of M sessions\" (on stderr with "
	    "--json)\n"
	    "  --json          one JSON object per session and line\n"
	    "  --queue Q       accepted as everywhere; the list is not per\n"
	    "                  queue\n"
	    "  --redis URL     Redis address (see 'execq --help')\n"
	    "  -h, --help      show this help\n"
	    "\n"
	    "AGE/DURATION is the age of a running session and the run time\n"
	    "of an ended one. IDLE is how long a running session has had\n"
	    "no output and no input (to within a second: the workers\n"
	    "mirror it once a second); a worker's session_idle_timeout_s\n"
	    "or the session's --idle-timeout ends it when IDLE reaches it.\n"
	    "WAITING is yes when the worker saw the session blocked\n"
	    "reading its terminal, '-' when it does not say. With --json,\n"
	    "idle_ms (null once ended) and keep (spawn --keep) are added\n"
	    "to the mirror's fields.\n"
	    "\n"
	    "Exit status: 0; 125 if Redis failed.\n", f);
}

/* ps's own options. */
static int
execq_ps_set(struct execq_opts *o, const char *cmd, int ch, const char *arg)
{
	struct execq_ps_opts	*po = (struct execq_ps_opts *)o;

	switch (ch) {
	case 'a':
	case EXECQ_OPT_ALL:
		po->all = 1;
		return (0);
	case EXECQ_OPT_JSON:
		po->json = 1;
		return (0);
	case EXECQ_PS_OPT_LIMIT:
		if (execq_parse_long(arg, 1, EXECQ_PS_LIMIT_MAX,
		    &po->limit) == 0)
			return (0);
		execq_usage_error(cmd, "--limit wants 1 to %d, not '%s'",
		    EXECQ_PS_LIMIT_MAX, arg);
		return (-1);
	}
	return (execq_opts_set(o, cmd, ch, arg));
}

/* A JSON value as table text ("-" for none); allocated. */
static char *
execq_cell(const json_t *v)
{
	char	*s;

	if (json_is_string(v) && json_string_length(v) > 0)
		return (xstrdup(json_string_value(v)));
	if (json_is_integer(v)) {
		xasprintf(&s, "%lld", (long long)json_integer_value(v));
		return (s);
	}
	return (xstrdup("-"));
}

/* The AGE/DURATION cell of a session. */
static char *
execq_cell_time(const json_t *ses, int ended)
{
	const json_t	*start, *end;
	long long	 ms;
	char		 buf[32];

	start = json_object_get(ses, "started_ms");
	end = json_object_get(ses, "ended_ms");
	if (!json_is_integer(start))
		return (xstrdup("-"));
	if (ended && json_is_integer(end))
		ms = json_integer_value(end) - json_integer_value(start);
	else if (ended)
		return (xstrdup("-"));
	else
		ms = clock_wall_ms() - json_integer_value(start);
	execq_format_duration(ms, buf, sizeof buf);
	return (xstrdup(buf));
}

/* The IDLE cell: how long a running session has been quiet. */
static char *
execq_cell_idle(const json_t *ses, int ended)
{
	const json_t	*idle = json_object_get(ses, "idle_ms");
	char		 buf[32];

	if (ended || !json_is_integer(idle))
		return (xstrdup("-"));
	execq_format_duration(json_integer_value(idle), buf, sizeof buf);
	return (xstrdup(buf));
}

/* The WAITING cell: the mirror's waiting_input, where a worker sets it. */
static char *
execq_cell_waiting(const json_t *ses, int ended)
{
	const json_t	*w = json_object_get(ses, "waiting_input");

	if (ended || !json_is_boolean(w))
		return (xstrdup("-"));
	return (xstrdup(json_is_true(w) ? "yes" : "no"));
}

/*
 * What ps adds to the mirror's fields: idle_ms, the time since a running
 * session's last output or input (the mirror has it to within a second;
 * null when ended or not known), and keep (false when not set).
 */
static void
execq_ps_add_idle(json_t *ses)
{
	const json_t	*last = json_object_get(ses, "last_activity_ms");
	long long	 ms;

	if (json_object_get(ses, "keep") == NULL)
		json_object_set_new(ses, "keep", json_false());
	if (!json_is_integer(last) || execq_status_ended(json_string_value(
	    json_object_get(ses, "status")))) {
		json_object_set_new(ses, "idle_ms", json_null());
		return;
	}
	if ((ms = clock_wall_ms() - json_integer_value(last)) < 0)
		ms = 0;
	json_object_set_new(ses, "idle_ms", json_integer(ms));
}

static const char *const execq_ps_headers[EXECQ_PS_COLUMNS] = { "SESSION",
	"STATUS", "EXIT", "PID", "WORKER", "AGE/DURATION", "IDLE", "WAITING",
	"COMMAND" };

/* The nine cells of one session's row; allocated. */
static void
execq_ps_row(const json_t *ses, char **cells)
{
	const char	*status;
	int		 ended;

	status = json_string_value(json_object_get(ses, "status"));
	ended = execq_status_ended(status);
	cells[0] = execq_cell(json_object_get(ses, "session_id"));
	cells[1] = execq_cell(json_object_get(ses, "status"));
	cells[2] = ended ? execq_cell(json_object_get(ses, "exit_code")) :
	    xstrdup("-");
	cells[3] = execq_cell(json_object_get(ses, "pid"));
	cells[4] = execq_cell(json_object_get(ses, "worker"));
	cells[5] = execq_cell_time(ses, ended);
	cells[6] = execq_cell_idle(ses, ended);
	cells[7] = execq_cell_waiting(ses, ended);
	/* One line per session: the table escapes a newline as \n. */
	cells[8] = execq_cell(json_object_get(ses, "command"));
}

/*
 * The sessions, newest first: one ZREVRANGE, then the HGETALLs pipelined.
 * Ids whose hash expired are skipped. NULL (said) if Redis failed.
 */
static json_t *
execq_ps_fetch(struct execq_session *s, int all, long limit, size_t *nread)
{
	redisReply	*ids, *r;
	json_t		*list, *ses;
	size_t		 i;
	int		 failed = 0;

	ids = execq_reply(s, "ZREVRANGE", client_sessions_newest(s->c,
	    limit));
	if (ids == NULL)
		return (NULL);
	*nread = ids->type == REDIS_REPLY_ARRAY ? ids->elements : 0;
	list = json_array();
	for (i = 0; ids->type == REDIS_REPLY_ARRAY && i < ids->elements; i++)
		client_session_get_append(s->c, ids->element[i]->str,
		    ids->element[i]->len);
	for (i = 0; ids->type == REDIS_REPLY_ARRAY && i < ids->elements; i++) {
		if ((r = client_next_reply(s->c)) == NULL) {
			execq_error("Redis at %s: HGETALL: %s", s->display,
			    client_errstr(s->c));
			failed = 1;
			break;
		}
		ses = execq_session_json(ids->element[i]->str, r);
		freeReplyObject(r);
		if (ses != NULL)
			execq_ps_add_idle(ses);
		if (ses != NULL && (all || !execq_status_ended(
		    json_string_value(json_object_get(ses, "status")))))
			json_array_append(list, ses);
		json_decref(ses);
	}
	freeReplyObject(ids);
	if (failed) {
		json_decref(list);
		return (NULL);
	}
	return (list);
}

/* How many entries the index holds (ZCARD); -1 (said) if Redis failed. */
static long long
execq_ps_total(struct execq_session *s)
{
	redisReply	*r;
	long long	 n;

	if ((r = execq_reply(s, "ZCARD", client_sessions_count(s->c))) ==
	    NULL)
		return (-1);
	n = r->type == REDIS_REPLY_INTEGER ? r->integer : 0;
	freeReplyObject(r);
	return (n);
}

/* Prints the list as a table, or as JSON lines. */
static void
execq_ps_print(const json_t *list, int as_json)
{
	json_t	*ses;
	char	**cells, *text;
	size_t	 i, n;

	n = json_array_size(list);
	if (as_json) {
		json_array_foreach(list, i, ses) {
			text = json_dumps(ses, JSON_COMPACT);
			printf("%s\n", text);
			free(text);
		}
		return;
	}
	cells = xcalloc(n * EXECQ_PS_COLUMNS + 1, sizeof *cells);
	json_array_foreach(list, i, ses)
		execq_ps_row(ses, cells + i * EXECQ_PS_COLUMNS);
	execq_print_table(execq_ps_headers, EXECQ_PS_COLUMNS, cells, n);
	for (i = 0; i < n * EXECQ_PS_COLUMNS; i++)
		free(cells[i]);
	free(cells);
}

/* execq ps: list sessions. */
int
execq_cmd_ps(const char *redis, int argc, char **argv)
{
	struct execq_ps_opts	 po;
	struct execq_session	 s;
	json_t			*list = NULL;
	long long		 total;
	size_t			 nread = 0;
	int			 rc;

	memset(&po, 0, sizeof po);
	execq_opts_init(&po.o, redis);
	po.limit = EXECQ_PS_MAX;
	memset(&s, 0, sizeof s);
	if ((rc = execq_opts_getopt(&po.o, "ps", argc, argv, "han:",
	    execq_ps_longopts, execq_ps_set, execq_ps_usage)) != 0) {
		rc = (rc == 1) ? 0 : EXECQ_EXIT_USAGE;
		goto out;
	}
	if (optind < argc) {
		rc = execq_usage_error("ps", "unexpected '%s'", argv[optind]);
		goto out;
	}
	if ((rc = execq_session_open(&s, &po.o)) != 0)
		goto out;
	if ((list = execq_ps_fetch(&s, po.all, po.limit, &nread)) == NULL ||
	    (total = execq_ps_total(&s)) < 0) {
		rc = EXECQ_EXIT_FAIL;
		goto out;
	}
	execq_ps_print(list, po.json);
	if ((long long)nread < total)
		fprintf(po.json ? stderr : stdout, "showing %zu of %lld "
		    "sessions, the newest (--limit N for more)\n", nread,
		    total);
	if (fflush(stdout) == EOF) {
		execq_error("stdout: %s", strerror(errno));
		rc = EXECQ_EXIT_FAIL;
	}
out:
	json_decref(list);
	execq_session_close(&s);
	execq_opts_release(&po.o);
	return (rc);
}

/* callbacks --help. */
static void
execq_cb_usage(FILE *f)
{
	fputs("usage: execq callbacks [--queue Q] [--count N] [--timeout S]\n"
	    "                       [--from-start]\n"
	    "\n"
	    "Prints each EXEC_CALLBACK arriving on q:<Q>:high as one line of\n"
	    "JSON, as it comes. Sessions started with 'execq spawn' send\n"
	    "theirs to execq.$USER unless --reply-to said otherwise.\n"
	    "\n"
	    "Options:\n"
	    "  --queue Q       the reply queue (default: execq.$USER)\n"
	    "  --count N       stop after N callbacks\n"
	    "  --timeout S     stop after S seconds without a callback\n"
	    "  --from-start    also print the callbacks already there\n"
	    "                  (default: only new ones)\n"
	    "  --redis URL     Redis address (see 'execq --help')\n"
	    "  -h, --help      show this help\n"
	    "\n"
	    "Exit status: 0 once N were printed (without --count: when\n"
	    "--timeout passed after at least one); 124 when --timeout passed\n"
	    "first; 125 if Redis failed; 130 on Ctrl-C.\n", f);
}

/* callbacks' own options. */
static int
execq_cb_set(struct execq_opts *o, const char *cmd, int ch, const char *arg)
{
	struct execq_cb_opts	*co = (struct execq_cb_opts *)o;

	switch (ch) {
	case EXECQ_OPT_COUNT:
		if (execq_parse_long(arg, 1, 1000000000, &co->count) == 0)
			return (0);
		execq_usage_error(cmd, "--count wants a number > 0, not '%s'",
		    arg);
		return (-1);
	case EXECQ_OPT_FROM_START:
		co->from_start = 1;
		return (0);
	}
	return (execq_opts_set(o, cmd, ch, arg));
}

/* Prints the EXEC_CALLBACKs among entries; returns how many. -1 (said). */
static long
execq_cb_print(const redisReply *entries, char **cursor, long left)
{
	const redisReply	*e, *v;
	json_t			*root;
	const char		*type;
	size_t			 i;
	long			 n = 0;

	for (i = 0; i < entries->elements && (left == 0 || n < left); i++) {
		e = entries->element[i];
		if (execq_entry_id(e) == NULL)
			continue;
		free(*cursor);
		*cursor = xstrdup(execq_entry_id(e));
		if ((v = execq_entry_field(e, "item")) == NULL)
			continue;
		root = json_loadb(v->str, v->len, 0, NULL);
		type = json_string_value(json_object_get(root, "type"));
		if (type != NULL && strcmp(type, "EXEC_CALLBACK") == 0) {
			if (execq_write_all(stdout, v->str, v->len) == -1 ||
			    execq_write_all(stdout, "\n", 1) == -1) {
				json_decref(root);
				return (-1);
			}
			n++;
		}
		json_decref(root);
	}
	return (n);
}

/*
 * Follows q:<queue>:high from cursor: 0 once count were printed, 124 when
 * timeout_ms passed without one, 125 (said) if Redis or stdout failed.
 */
static int
execq_cb_follow(struct execq_session *s, const char *key, char **cursor,
    long count, long long timeout_ms)
{
	redisReply	*r;
	const char	*from;
	long long	 deadline = 0, left;
	long		 printed = 0, n;

	if (timeout_ms > 0)
		deadline = clock_mono_ms() + timeout_ms;
	for (;;) {
		left = EXECQ_CB_BLOCK_MS;
		if (deadline != 0 && (left = deadline - clock_mono_ms()) <= 0)
			break;
		if (left > EXECQ_CB_BLOCK_MS)
			left = EXECQ_CB_BLOCK_MS;
		from = *cursor;
		r = execq_reply(s, "XREAD", client_xread(s->c, 100, left, 1,
		    &key, &from));
		if (r == NULL)
			return (EXECQ_EXIT_FAIL);
		n = 0;
		if (execq_xread_entries(r) != NULL)
			n = execq_cb_print(execq_xread_entries(r), cursor,
			    count > 0 ? count - printed : 0);
		freeReplyObject(r);
		if (n == -1)
			return (EXECQ_EXIT_FAIL);
		if (n > 0 && timeout_ms > 0)	/* S seconds with none */
			deadline = clock_mono_ms() + timeout_ms;
		if ((printed += n) > 0 && printed == count)
			return (0);
	}
	return (count == 0 && printed > 0 ? 0 : EXECQ_EXIT_TIMED_OUT);
}

/* execq callbacks: print EXEC_CALLBACKs as they come. */
int
execq_cmd_callbacks(const char *redis, int argc, char **argv)
{
	struct execq_cb_opts	 co;
	struct execq_session	 s;
	char			*queue = NULL, *key = NULL, *cursor = NULL;
	int			 rc;

	memset(&co, 0, sizeof co);
	execq_opts_init(&co.o, redis);
	co.o.queue = NULL;	/* not $EXECQ_QUEUE: that is the work queue */
	memset(&s, 0, sizeof s);
	if ((rc = execq_opts_getopt(&co.o, "callbacks", argc, argv, "h",
	    execq_cb_longopts, execq_cb_set, execq_cb_usage)) != 0) {
		rc = (rc == 1) ? 0 : EXECQ_EXIT_USAGE;
		goto out;
	}
	queue = co.o.queue != NULL ? xstrdup(co.o.queue) :
	    execq_user_reply(co.o.redis);
	if (optind < argc || !execq_name_valid(queue)) {
		rc = optind < argc ? execq_usage_error("callbacks",
		    "unexpected '%s'", argv[optind]) :
		    execq_usage_error("callbacks", "bad queue name '%s': it "
		    "must match " EXECQ_NAME_RULE, queue);
		goto out;
	}
	co.o.queue = queue;
	if ((rc = execq_session_open(&s, &co.o)) != 0)
		goto out;
	key = client_lane_key(s.c, queue, KS_LANE_HIGH);
	cursor = co.from_start ? xstrdup("0") : execq_stream_last_id(&s, key);
	if (cursor == NULL) {
		rc = EXECQ_EXIT_FAIL;
		goto out;
	}
	execq_quiet_sigint();
	rc = execq_cb_follow(&s, key, &cursor, co.count,
	    (long long)(co.o.timeout_s * 1000 + 0.5));
out:
	free(cursor);
	free(key);
	execq_session_close(&s);
	free(queue);
	execq_opts_release(&co.o);
	return (rc);
}
