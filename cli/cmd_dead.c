/*
 * execq dead: the dead letters of a queue (q:<queue>:dead), the items
 * no worker could run or that ran out of attempts, each with its last
 * answer; requeue sends one again (its id's claim and answer forgotten,
 * so it runs), drop forgets it. An operator's (the ACL gives agents no
 * access to the dead letters).
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
#include "logs/display.h"
#include "logs/xmalloc.h"
#include "queue/client.h"
#include "queue/rconn.h"

#define EXECQ_DEAD_COLUMNS	6

struct execq_dead_opts {
	struct execq_opts	 o;
	int			 json;
};

static const struct option execq_dead_longopts[] = {
	{ "json",	no_argument,	   NULL, EXECQ_OPT_JSON },
	{ "queue",	required_argument, NULL, EXECQ_OPT_QUEUE },
	{ "redis",	required_argument, NULL, EXECQ_OPT_REDIS },
	{ "help",	no_argument,	   NULL, 'h' },
	{ NULL,		0,		   NULL, 0 }
};

static const char *const execq_dead_headers[EXECQ_DEAD_COLUMNS] = {
	"LETTER", "AGE", "ID", "CODE", "LANE", "COMMAND" };

/* dead --help. */
static void
execq_dead_usage(FILE *f)
{
	fputs("usage: execq dead [--json] [--queue Q]\n"
	    "       execq dead requeue LETTER|ID ...\n"
	    "       execq dead drop LETTER|ID ...\n"
	    "\n"
	    "Lists the dead letters of queue Q (q:<Q>:dead): the items that\n"
	    "no worker can run (not JSON or not an item, refused by the\n"
	    "policy, too large, an approval that expired, a worker lost with\n"
	    "no retries left) and those whose retries ran out, oldest first,\n"
	    "each with its last answer: the letter's entry id, its age, the\n"
	    "item id, the answer's error code (or exit code), its lane, its\n"
	    "command. --json prints one object a line: letter, id, lane,\n"
	    "item (as sent) and answer.\n"
	    "\n"
	    "requeue puts each letter's item back on its lane as sent, as a\n"
	    "first attempt: its id's claim and answer are forgotten, so it\n"
	    "runs again. drop forgets letters. A letter is named by its entry\n"
	    "id or by its item id (every letter of that id).\n"
	    "\n"
	    "Options:\n"
	    "  --json          one JSON object per letter\n"
	    "  --queue Q       the queue (default exec)\n"
	    "  --redis URL     Redis address (see 'execq --help')\n"
	    "  -h, --help      show this help\n"
	    "\n"
	    "Exit status: 0; 1 if a letter named was not found or could not\n"
	    "be sent again; 125 if Redis failed; 2 on a usage error.\n", f);
}

static int
execq_dead_set(struct execq_opts *o, const char *cmd, int ch,
    const char *arg)
{
	struct execq_dead_opts	*d = (struct execq_dead_opts *)o;

	if (ch == EXECQ_OPT_JSON) {
		d->json = 1;
		return (0);
	}
	return (execq_opts_set(o, cmd, ch, arg));
}

/* A field of a letter (an XRANGE entry), or NULL. */
static const redisReply *
execq_dead_field(const redisReply *e, const char *name)
{
	const redisReply	*f = e->element[1];
	size_t			 i;

	for (i = 0; f->type == REDIS_REPLY_ARRAY && i + 1 < f->elements;
	    i += 2)
		if (f->element[i]->type == REDIS_REPLY_STRING &&
		    strcmp(f->element[i]->str, name) == 0 &&
		    f->element[i + 1]->type == REDIS_REPLY_STRING)
			return (f->element[i + 1]);
	return (NULL);
}

/* 1 if r is an XRANGE entry: [id, [fields]]. */
static int
execq_dead_entry_ok(const redisReply *e)
{
	return (e->type == REDIS_REPLY_ARRAY && e->elements == 2 &&
	    e->element[0]->type == REDIS_REPLY_STRING &&
	    e->element[1]->type == REDIS_REPLY_ARRAY);
}

/*
 * A field as a JSON string, or null. Bytes that are not UTF-8 (a letter
 * is whatever was sent) are shown escaped ("\\xff"): JSON holds no
 * other kind of string, and json_dumps() gives up on one.
 */
static json_t *
execq_dead_json_str(const redisReply *v)
{
	json_t	*s;
	char	*shown;

	if (v == NULL)
		return (json_null());
	if ((s = json_stringn(v->str, v->len)) != NULL)
		return (s);
	shown = display_escape(v->str, v->len, 0, NULL);
	s = json_string(shown);
	free(shown);
	return (s);
}

/* One letter as a JSON object: letter, id, lane, item, answer. */
static json_t *
execq_dead_json(const redisReply *e)
{
	const redisReply	*item = execq_dead_field(e, "item");
	const redisReply	*ans = execq_dead_field(e, "answer");
	json_t			*o, *a;

	o = json_pack("{s:s, s:o, s:o}", "letter", e->element[0]->str,
	    "id", execq_dead_json_str(execq_dead_field(e, "id")),
	    "lane", execq_dead_json_str(execq_dead_field(e, "lane")));
	json_object_set_new(o, "item", execq_dead_json_str(item));
	a = ans != NULL ? json_loadb(ans->str, ans->len, 0, NULL) : NULL;
	json_object_set_new(o, "answer", a != NULL ? a : json_null());
	return (o);
}

/* The cells of one letter's row; allocated. */
static void
execq_dead_row(const redisReply *e, char **cells)
{
	json_t		*o = execq_dead_json(e), *item, *ans;
	const char	*cmd, *code;
	char		 buf[32];

	cells[0] = xstrdup(e->element[0]->str);
	execq_format_duration(clock_wall_ms() - strtoll(e->element[0]->str,
	    NULL, 10), buf, sizeof buf);
	cells[1] = xstrdup(buf);
	cells[2] = xstrdup(json_string_value(json_object_get(o, "id")) !=
	    NULL && *json_string_value(json_object_get(o, "id")) != '\0' ?
	    json_string_value(json_object_get(o, "id")) : "-");
	ans = json_object_get(o, "answer");
	code = json_string_value(json_object_get(json_object_get(ans,
	    "error"), "code"));
	if (code != NULL)
		cells[3] = xstrdup(code);
	else if (json_is_integer(json_object_get(ans, "exit_code")))
		xasprintf(&cells[3], "exit %lld", (long long)
		    json_integer_value(json_object_get(ans, "exit_code")));
	else
		cells[3] = xstrdup("-");
	cells[4] = xstrdup(json_string_value(json_object_get(o, "lane")) !=
	    NULL ? json_string_value(json_object_get(o, "lane")) : "-");
	item = json_loads(json_string_value(json_object_get(o, "item")) !=
	    NULL ? json_string_value(json_object_get(o, "item")) : "", 0,
	    NULL);
	cmd = json_string_value(json_object_get(json_object_get(item, "args"),
	    "command"));
	cells[5] = xstrdup(cmd != NULL ? cmd : "-");
	json_decref(item);
	json_decref(o);
}

/* Lists the letters. */
static int
execq_dead_list(struct execq_session *s, const struct execq_dead_opts *d)
{
	redisReply	*r;
	json_t		*o;
	char		**cells, *text;
	size_t		 i, n = 0;

	if ((r = execq_reply(s, "XRANGE", client_dead_list(s->c, d->o.queue,
	    0))) == NULL)
		return (EXECQ_EXIT_FAIL);
	cells = xcalloc(r->elements * EXECQ_DEAD_COLUMNS + 1, sizeof *cells);
	for (i = 0; i < r->elements; i++) {
		if (!execq_dead_entry_ok(r->element[i]))
			continue;
		if (d->json) {
			o = execq_dead_json(r->element[i]);
			/* Terminal controls as \u escapes, C1 ones too. */
			text = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII);
			if (text != NULL)
				printf("%s\n", text);
			free(text);
			json_decref(o);
			continue;
		}
		execq_dead_row(r->element[i], cells + n++ *
		    EXECQ_DEAD_COLUMNS);
	}
	if (!d->json && n == 0)
		execq_line(stdout, "no dead letters on queue %s", d->o.queue);
	else if (!d->json)
		execq_print_table(execq_dead_headers, EXECQ_DEAD_COLUMNS,
		    cells, n);
	for (i = 0; i < n * EXECQ_DEAD_COLUMNS; i++)
		free(cells[i]);
	free(cells);
	freeReplyObject(r);
	return (0);
}

/* 1 if s looks like a stream entry id ("1764160000000-0"). */
static int
execq_dead_is_entry(const char *s)
{
	size_t	n = strspn(s, "0123456789");

	return (n > 0 && s[n] == '-' && s[n + 1] != '\0' &&
	    strspn(s + n + 1, "0123456789") == strlen(s + n + 1));
}

/* Acts (requeue or drop) on one letter by its entry id: 0, or 1 (said). */
static int
execq_dead_one(struct execq_session *s, const char *queue, int requeue,
    const char *entry, const char *name)
{
	redisReply	*r;
	long long	 v;

	r = requeue ? execq_reply(s, "EVAL", client_dead_requeue(s->c, queue,
	    entry)) : execq_reply(s, "XDEL", client_dead_drop(s->c, queue,
	    entry));
	if (r == NULL)
		return (EXECQ_EXIT_FAIL);
	v = r->type == REDIS_REPLY_INTEGER ? r->integer : 0;
	freeReplyObject(r);
	if (v == 1) {
		execq_line(stdout, "%s %s", requeue ? "requeued" : "dropped",
		    name);
		return (0);
	}
	execq_error("%s: %s", name, v == 0 ? "no such dead letter" :
	    "the letter holds no item to send again");
	return (1);
}

/* requeue or drop: each name an entry id, or an item id (all its). */
static int
execq_dead_act(struct execq_session *s, const char *queue, int requeue,
    int argc, char **argv)
{
	redisReply		*r;
	const redisReply	*id;
	int			 i, rc = 0, one, found;
	size_t			 k;

	for (i = 0; i < argc; i++) {
		if (execq_dead_is_entry(argv[i])) {
			if ((one = execq_dead_one(s, queue, requeue, argv[i],
			    argv[i])) == EXECQ_EXIT_FAIL)
				return (one);
			rc |= one;
			continue;
		}
		if ((r = execq_reply(s, "XRANGE", client_dead_list(s->c,
		    queue, 0))) == NULL)
			return (EXECQ_EXIT_FAIL);
		found = 0;
		for (k = 0; k < r->elements; k++) {
			if (!execq_dead_entry_ok(r->element[k]) ||
			    (id = execq_dead_field(r->element[k], "id")) ==
			    NULL || strcmp(id->str, argv[i]) != 0)
				continue;
			found = 1;
			if ((one = execq_dead_one(s, queue, requeue,
			    r->element[k]->element[0]->str, argv[i])) ==
			    EXECQ_EXIT_FAIL) {
				freeReplyObject(r);
				return (one);
			}
			rc |= one;
		}
		freeReplyObject(r);
		if (!found) {
			execq_error("%s: no dead letter of this id on queue %s",
			    argv[i], queue);
			rc = 1;
		}
	}
	return (rc);
}

/* execq dead: the dead letters. */
int
execq_cmd_dead(const char *redis, int argc, char **argv)
{
	struct execq_dead_opts	 d;
	struct execq_session	 s;
	const char		*verb = NULL;
	int			 rc;

	memset(&d, 0, sizeof d);
	memset(&s, 0, sizeof s);
	execq_opts_init(&d.o, redis);
	if ((rc = execq_opts_getopt(&d.o, "dead", argc, argv, "h",
	    execq_dead_longopts, execq_dead_set, execq_dead_usage)) != 0) {
		rc = rc == 1 ? 0 : EXECQ_EXIT_USAGE;
		goto out;
	}
	if (optind < argc) {
		verb = argv[optind++];
		if (strcmp(verb, "requeue") != 0 && strcmp(verb, "drop") != 0) {
			rc = execq_usage_error("dead", "unknown '%s': requeue "
			    "or drop", verb);
			goto out;
		}
		if (optind == argc) {
			rc = execq_usage_error("dead", "%s what? give letters "
			    "or item ids", verb);
			goto out;
		}
	}
	if ((rc = execq_session_open(&s, &d.o)) != 0)
		goto out;
	if (verb == NULL)
		rc = execq_dead_list(&s, &d);
	else
		rc = execq_dead_act(&s, d.o.queue, strcmp(verb, "requeue") ==
		    0, argc - optind, argv + optind);
	if (rc == 0 && fflush(stdout) == EOF) {
		execq_error("stdout: %s", strerror(errno));
		rc = EXECQ_EXIT_FAIL;
	}
out:
	execq_session_close(&s);
	execq_opts_release(&d.o);
	return (rc);
}
