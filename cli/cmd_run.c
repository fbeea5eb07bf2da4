/*
 * execq run and execq submit: one EXEC item, its answer shown (run) or
 * printed as JSON (submit).
 */

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>
#include <jansson.h>

#include "cli/cli.h"
#include "logs/display.h"
#include "logs/log.h"
#include "logs/xmalloc.h"
#include "queue/client.h"

/* run and submit share one table; run refuses submit's two extras. */
static const struct option execq_longopts[] = {
	{ "timeout",		required_argument, NULL, EXECQ_OPT_TIMEOUT },
	{ "cwd",		required_argument, NULL, EXECQ_OPT_CWD },
	{ "tier",		required_argument, NULL, EXECQ_OPT_TIER },
	{ "env",		required_argument, NULL, EXECQ_OPT_ENV },
	{ "queue",		required_argument, NULL, EXECQ_OPT_QUEUE },
	{ "priority",		required_argument, NULL, EXECQ_OPT_PRIORITY },
	{ "id",			required_argument, NULL, EXECQ_OPT_ID },
	{ "wait",		required_argument, NULL, EXECQ_OPT_WAIT },
	{ "retry",		required_argument, NULL, EXECQ_OPT_RETRY },
	{ "delay",		required_argument, NULL, EXECQ_OPT_DELAY },
	{ "redis",		required_argument, NULL, EXECQ_OPT_REDIS },
	{ "raw",		required_argument, NULL, EXECQ_OPT_RAW },
	{ "reply-default",	required_argument, NULL,
	    EXECQ_OPT_REPLY_DEFAULT },
	{ "help",		no_argument,	   NULL, 'h' },
	{ NULL,			0,		   NULL, 0 }
};

/* run: the shared table minus submit's extras, plus its own. */
static const struct option execq_run_longopts[] = {
	{ "timeout",		required_argument, NULL, EXECQ_OPT_TIMEOUT },
	{ "cwd",		required_argument, NULL, EXECQ_OPT_CWD },
	{ "tier",		required_argument, NULL, EXECQ_OPT_TIER },
	{ "env",		required_argument, NULL, EXECQ_OPT_ENV },
	{ "queue",		required_argument, NULL, EXECQ_OPT_QUEUE },
	{ "priority",		required_argument, NULL, EXECQ_OPT_PRIORITY },
	{ "id",			required_argument, NULL, EXECQ_OPT_ID },
	{ "wait",		required_argument, NULL, EXECQ_OPT_WAIT },
	{ "retry",		required_argument, NULL, EXECQ_OPT_RETRY },
	{ "delay",		required_argument, NULL, EXECQ_OPT_DELAY },
	{ "redis",		required_argument, NULL, EXECQ_OPT_REDIS },
	{ "id-file",		required_argument, NULL, EXECQ_OPT_ID_FILE },
	{ "verbose",		no_argument,	   NULL, 'v' },
	{ "no-live",		no_argument,	   NULL, EXECQ_OPT_NO_LIVE },
	{ "help",		no_argument,	   NULL, 'h' },
	{ NULL,			0,		   NULL, 0 }
};

/* run's options. */
struct execq_run_opts {
	struct execq_opts	 o;
	const char		*id_file;	/* --id-file */
	int			 verbose;	/* -v */
	int			 no_live;	/* --no-live */
};

/* What the live output showed so far, per fd (1, 2). */
struct execq_live {
	unsigned long long	 shown[3];	/* bytes written here */
	long long		 total[3];	/* from the end entry; -1 */
	int			 failed;	/* stdout or stderr is gone */
};

/*
 * Writes a JSON string's bytes (NULs included) to f: 0, or -1 (said); a
 * reader gone from stdout ends the client by SIGPIPE (execq_write_all).
 */
static int
execq_write_string(FILE *f, const json_t *v)
{
	if (!json_is_string(v))
		return (0);
	return (execq_write_all(f, json_string_value(v),
	    json_string_length(v)));
}

/* A field of a stream entry, or NULL. */
static const redisReply *
execq_live_field(const redisReply *f, const char *name)
{
	size_t	i;

	for (i = 0; i + 1 < f->elements; i += 2)
		if (f->element[i]->type == REDIS_REPLY_STRING &&
		    strcmp(f->element[i]->str, name) == 0 &&
		    f->element[i + 1]->type == REDIS_REPLY_STRING)
			return (f->element[i + 1]);
	return (NULL);
}

/* One live entry: its data on our stdout or stderr, as it came. */
static void
execq_run_live_cb(const redisReply *f, void *arg)
{
	struct execq_live	*lv = arg;
	const redisReply	*data, *fdv, *off, *end;
	unsigned long long	 at, skip;
	json_t			*o;
	int			 fd;

	if ((end = execq_live_field(f, "end")) != NULL) {
		if ((o = json_loadb(end->str, end->len, 0, NULL)) != NULL) {
			lv->total[1] = json_integer_value(json_object_get(o,
			    "stdout_bytes"));
			lv->total[2] = json_integer_value(json_object_get(o,
			    "stderr_bytes"));
			json_decref(o);
		}
		return;
	}
	data = execq_live_field(f, "data");
	fdv = execq_live_field(f, "fd");
	off = execq_live_field(f, "offset");
	if (data == NULL || fdv == NULL || off == NULL)
		return;
	fd = strcmp(fdv->str, "2") == 0 ? 2 : 1;
	at = strtoull(off->str, NULL, 10);
	if (at + data->len <= lv->shown[fd] || at > lv->shown[fd])
		return;		/* seen, or after a gap the answer fills */
	skip = lv->shown[fd] - at;
	if (execq_write_all(fd == 2 ? stderr : stdout, data->str + skip,
	    data->len - skip) != 0)
		lv->failed = 1;
	lv->shown[fd] = at + data->len;
}

/*
 * Where an answer's stream was cut to output_cap: the marker
 * "\n[... N bytes omitted ...]\n" between the head and the tail. 1 with
 * the head's length, the marker's end and N; 0 if it was not cut.
 */
static int
execq_live_cut(const char *v, size_t len, size_t *head, size_t *tail,
    unsigned long long *omitted)
{
	const char	*p = v, *m;
	char		*end;

	while ((m = memmem(p, len - (p - v), "\n[... ", 6)) != NULL) {
		*omitted = strtoull(m + 6, &end, 10);
		if (end != m + 6 && strncmp(end, " bytes omitted ...]\n", 20) ==
		    0) {
			*head = m - v;
			*tail = end + 20 - v;
			return (1);
		}
		p = m + 1;
	}
	return (0);
}

/* What fd's stream missed, from the answer's text v of it. */
static int
execq_live_fill_fd(const struct execq_live *lv, int fd, const json_t *v,
    const char *log_path)
{
	FILE			*f = fd == 2 ? stderr : stdout;
	const char		*t = json_string_value(v);
	size_t			 len = json_string_length(v), head, tail;
	unsigned long long	 shown = lv->shown[fd], omitted, tail_at;
	char			*note, *path;
	int			 rc;

	if (!execq_live_cut(t, len, &head, &tail, &omitted) || shown < head)
		return (shown < len ? execq_write_all(f, t + shown,
		    len - shown) : 0);
	/* Past the head: the tail starts at head + omitted in the output. */
	tail_at = head + omitted;
	if (shown >= tail_at)
		return (shown - tail_at < len - tail ? execq_write_all(f,
		    t + tail + (shown - tail_at), len - tail -
		    (shown - tail_at)) : 0);
	path = display_str(log_path != NULL ? log_path : "(none)");
	xasprintf(&note, "\n[... %llu bytes not shown; the log has them: "
	    "%s ...]\n", tail_at - shown, path);
	rc = execq_write_all(f, note, strlen(note));
	free(note);
	free(path);
	return (rc == 0 ? execq_write_all(f, t + tail, len - tail) : rc);
}

/*
 * After the answer: what the live stream did not show, from the answer
 * (exact where the output was UTF-8; past output_cap only its tail).
 */
static int
execq_live_fill(const struct execq_live *lv, const json_t *root)
{
	static const char *const names[3] = { NULL, "stdout", "stderr" };
	const json_t	*v;
	const char	*log_path;
	int		 fd;

	log_path = json_string_value(json_object_get(root, "log_path"));
	for (fd = 1; fd <= 2; fd++) {
		v = json_object_get(root, names[fd]);
		if (!json_is_string(v) || (lv->total[fd] >= 0 &&
		    lv->shown[fd] >= (unsigned long long)lv->total[fd]))
			continue;
		if (execq_live_fill_fd(lv, fd, v, log_path) != 0)
			return (-1);
	}
	return (lv->failed ? -1 : 0);
}

/* An EXEC_RESULT's verdict: the exit code (its output is shown). */
static int
execq_result_code(const json_t *root)
{
	const json_t	*code;
	const char	*id;
	double		 duration_ms;

	if (json_is_true(json_object_get(root, "truncated"))) {
		id = json_string_value(json_object_get(root, "id"));
		execq_error("output truncated; the whole log: execq logs %s",
		    id != NULL ? id : "ID");
	}
	if (json_is_true(json_object_get(root, "timed_out"))) {
		duration_ms = json_number_value(json_object_get(root,
		    "duration_ms"));
		execq_error("timed out after %.1f s; the process tree was "
		    "killed", duration_ms / 1000);
		return (EXECQ_EXIT_TIMED_OUT);
	}
	code = json_object_get(root, "exit_code");
	if (!json_is_integer(code) || json_integer_value(code) < 0 ||
	    json_integer_value(code) > 255) {
		execq_error("bad answer from the worker: no exit_code 0-255");
		return (EXECQ_EXIT_FAIL);
	}
	return ((int)json_integer_value(code));
}

int
execq_print_result(const json_t *root)
{
	if (execq_write_string(stdout, json_object_get(root, "stdout")) == -1)
		return (EXECQ_EXIT_FAIL);
	(void)execq_write_string(stderr, json_object_get(root, "stderr"));
	return (execq_result_code(root));
}

/* run --help. */
static void
execq_run_usage(FILE *f)
{
	fputs("usage: execq run [OPTIONS] [--] CMD [ARG...]\n"
	    "\n"
	    "Runs CMD on an execq-worker, shows its stdout and stderr here as\n"
	    "it writes them, and exits with its exit status. One word is a\n"
	    "shell command as is (execq run 'ls | wc -l'); several words are\n"
	    "quoted and joined, so they run as that argv (execq run -- sh -c\n"
	    "'exit 3'). The output comes live through the stream\n"
	    "execq:out:<id>; the final answer fills in anything the stream\n"
	    "missed and decides the exit status. Its token is kept in the\n"
	    "token store, so 'execq logs ID' prints the whole log, past the\n"
	    "worker's output cap.\n"
	    "\n"
	    "Options:\n"
	    "  --timeout S     kill the command after S seconds "
	    "(default: the worker's)\n"
	    "  --cwd DIR       working directory on the worker\n"
	    "  --tier TIER     read_only or read_write: lower the queue's "
	    "tier\n"
	    "  --env K=V       set an environment variable (repeatable)\n"
	    "  --queue Q       work queue (default: $EXECQ_QUEUE, else exec)\n"
	    "  --priority P    high, normal or low (default: normal)\n"
	    "  --id ID         item id (default: a new ULID)\n"
	    "  --id-file FILE  write the item id to FILE (one line) once sent\n"
	    "  -v, --verbose   say the item id when sent and the log path at "
	    "the end\n"
	    "                  (on stderr)\n"
	    "  --no-live       no live output: all of stdout, then all of "
	    "stderr, at\n"
	    "                  the end\n"
	    "  --retry N       run it up to N times in all while it fails "
	    "(exit,\n"
	    "                  timeout, signal), with backoff (args.retry)\n"
	    "  --delay S       start it no sooner than S seconds from now\n"
	    "  --wait S        give up after S seconds "
	    "(default: timeout, else 30, + 30;\n"
	    "                  a delay or a retry's wait adds to it)\n"
	    "  --redis URL     Redis address (see 'execq --help')\n"
	    "  -h, --help      show this help\n"
	    "\n"
	    "Exit status: the command's; 124 if it timed out; 125 if execq\n"
	    "failed or the worker refused the item; 2 on a usage error.\n", f);
}

/* The answers that end a run. */
static const char * const execq_run_types[] = { "EXEC_RESULT", "ERROR",
    NULL };

/* run's own options; the rest are everyone's. */
static int
execq_run_set(struct execq_opts *o, const char *cmd, int ch, const char *arg)
{
	struct execq_run_opts	*ro = (struct execq_run_opts *)o;

	switch (ch) {
	case EXECQ_OPT_ID_FILE:
		ro->id_file = arg;
		return (0);
	case 'v':
		ro->verbose = 1;
		return (0);
	case EXECQ_OPT_NO_LIVE:
		ro->no_live = 1;
		return (0);
	}
	return (execq_opts_set(o, cmd, ch, arg));
}

/* --id-file: the id on one line; -1 (said) if it cannot be written. */
static int
execq_run_id_file(const char *path, const char *id)
{
	FILE	*f;

	if ((f = fopen(path, "we")) == NULL) {
		execq_error("--id-file %s: %s", path, strerror(errno));
		return (-1);
	}
	fprintf(f, "%s\n", id);
	if (fclose(f) != 0) {
		execq_error("--id-file %s: %s", path, strerror(errno));
		return (-1);
	}
	return (0);
}

/* Shows the answer: what the live stream missed, then the verdict. */
static int
execq_run_answer(struct execq_session *s, const struct execq_run_opts *ro,
    const struct execq_live *lv, const json_t *root)
{
	const char	*type, *log_path;
	int		 rc;

	type = json_string_value(json_object_get(root, "type"));
	if (strcmp(type, "ERROR") == 0)
		return (execq_print_error(root));
	/* Its token, for 'execq logs ID' later, as spawn keeps a session's. */
	if (json_is_string(json_object_get(root, "session_token")))
		execq_tokens_save(ro->o.id, json_string_value(json_object_get(
		    root, "session_token")));
	log_path = json_string_value(json_object_get(root, "log_path"));
	if (s->live_key == NULL) {
		rc = execq_print_result(root);
	} else {
		if (execq_live_drain(s) != 0 || execq_live_fill(lv, root) != 0)
			return (EXECQ_EXIT_FAIL);
		if (fflush(stdout) == EOF) {
			execq_error("stdout: %s", strerror(errno));
			return (EXECQ_EXIT_FAIL);
		}
		rc = execq_result_code(root);
	}
	/* After the output, so it is the last line a reader sees. */
	if (ro->verbose)
		execq_error("item %s: log %s", ro->o.id, log_path != NULL ?
		    log_path : "(none)");
	return (rc);
}

/* execq run: submit, show the output as it comes, exit with its code. */
int
execq_cmd_run(const char *redis, int argc, char **argv)
{
	struct execq_run_opts	 ro;
	struct execq_session	 s;
	struct execq_answer	 a = { NULL, NULL, 0 };
	struct execq_live	 lv;
	char			*id = NULL;
	int			 rc;

	memset(&ro, 0, sizeof ro);
	memset(&lv, 0, sizeof lv);
	lv.total[1] = lv.total[2] = -1;
	execq_opts_init(&ro.o, redis);
	memset(&s, 0, sizeof s);
	if ((rc = execq_opts_parse(&ro.o, "run", argc, argv, "+hv",
	    execq_run_longopts, execq_run_set, execq_run_usage)) != 0) {
		rc = (rc == 1) ? 0 : EXECQ_EXIT_USAGE;
		goto out;
	}
	if (ro.o.command == NULL) {
		rc = execq_usage_error("run", "no command given");
		goto out;
	}
	if ((rc = execq_session_open(&s, &ro.o)) != 0)
		goto out;
	if (ro.o.id == NULL)
		ro.o.id = id = execq_make_id(&s);
	if (!ro.no_live) {
		ro.o.stream = 1;
		s.live_key = client_out_key(s.c, ro.o.id);
		s.live_cursor = xstrdup("0");
		s.live_cb = execq_run_live_cb;
		s.live_arg = &lv;
	}
	if (ro.id_file != NULL && execq_run_id_file(ro.id_file, ro.o.id) != 0) {
		rc = EXECQ_EXIT_FAIL;
		goto out;
	}
	if (ro.verbose)
		execq_error("item %s on queue %s", ro.o.id, ro.o.queue);
	if ((rc = execq_exchange_exec(&s, &ro.o, execq_run_types, &a)) != 0)
		goto out;
	rc = execq_run_answer(&s, &ro, &lv, a.root);
out:
	execq_answer_release(&a);
	execq_session_close(&s);
	execq_opts_release(&ro.o);
	free(id);
	return (rc);
}

/* submit --help. */
static void
execq_submit_usage(FILE *f)
{
	fputs("usage: execq submit [OPTIONS] [--] CMD [ARG...]\n"
	    "       execq submit [OPTIONS] --raw TEXT\n"
	    "\n"
	    "Sends one EXEC item (CMD as for 'execq run') and prints the\n"
	    "worker's answer, EXEC_RESULT or ERROR, as one line of JSON.\n"
	    "\n"
	    "Options: those of 'execq run', and\n"
	    "  --raw TEXT          send TEXT verbatim as the item (to test\n"
	    "                      bad input); the answer is read from TEXT's\n"
	    "                      reply_to, else from the worker's default\n"
	    "                      reply queue\n"
	    "  --reply-default Q   the worker's default reply queue "
	    "(default: replies)\n"
	    "\n"
	    "Exit status: 0 if an answer came, even an ERROR; 125 if none\n"
	    "came or execq failed; 2 on a usage error.\n", f);
}

/*
 * submit --raw: the worker may not be able to read an id or reply_to from
 * TEXT, so read TEXT's reply_to if it has a usable one, else the default
 * reply queue, from its newest entry before the XADD on. Logged in as a
 * user, whose own lane the item goes to, that is the user's own:
 * <user>.<name>, else <user>.replies, as the worker answers.
 */
static int
execq_submit_raw(struct execq_session *s, struct execq_opts *o,
    struct execq_answer *a)
{
	struct execq_want	 w = { NULL, NULL, 1 };
	json_t			*root;
	const char		*reply;
	char			*mine = NULL;
	double			 timeout;
	int			 rc = EXECQ_EXIT_FAIL;
	size_t			 n = s->user != NULL ? strlen(s->user) : 0;

	root = json_loads(o->raw, 0, NULL);	/* NULL if not JSON */
	w.id = json_string_value(json_object_get(root, "id"));
	reply = json_string_value(json_object_get(root, "reply_to"));
	if (reply == NULL || !execq_name_valid(reply))
		reply = o->reply_default;
	if (s->user != NULL && (strncmp(reply, s->user, n) != 0 ||
	    reply[n] != '.')) {
		xasprintf(&mine, "%s.replies", s->user);
		reply = mine;
	}
	if (o->wait_s == 0) {
		timeout = json_number_value(json_object_get(json_object_get(
		    root, "args"), "timeout_s"));
		if (!(timeout > 0 && timeout <= EXECQ_MAX_SECONDS))
			timeout = EXECQ_TIMEOUT_S;
		o->wait_s = timeout + EXECQ_WAIT_SLACK_S;
	}
	if (execq_session_shared_reply(s, reply) == 0)
		rc = execq_exchange(s, o, o->raw, &w, a);
	json_decref(root);
	free(mine);
	return (rc);
}

/* execq submit: send one item, print the answer as received. */
int
execq_cmd_submit(const char *redis, int argc, char **argv)
{
	struct execq_opts	 o;
	struct execq_session	 s;
	struct execq_answer	 a = { NULL, NULL, 0 };
	int			 rc;

	execq_opts_init(&o, redis);
	memset(&s, 0, sizeof s);
	if ((rc = execq_opts_parse(&o, "submit", argc, argv, "+h", execq_longopts,
	    NULL, execq_submit_usage)) != 0) {
		rc = (rc == 1) ? 0 : EXECQ_EXIT_USAGE;
		goto out;
	}
	if ((o.raw == NULL) == (o.command == NULL)) {
		rc = execq_usage_error("submit", "give either a command or "
		    "--raw TEXT");
		goto out;
	}
	if (o.raw != NULL && (o.id != NULL || o.cwd != NULL ||
	    o.env != NULL || o.timeout_s > 0 || o.retry > 0 ||
	    o.delay_s > 0)) {
		rc = execq_usage_error("submit", "--raw TEXT is sent as is: "
		    "--id, --cwd, --env, --timeout, --retry and --delay do not "
		    "apply");
		goto out;
	}
	if ((rc = execq_session_open(&s, &o)) != 0)
		goto out;
	if (o.raw != NULL)
		rc = execq_submit_raw(&s, &o, &a);
	else
		rc = execq_exchange_exec(&s, &o, NULL, &a);
	if (rc == 0) {
		fwrite(a.text, 1, a.len, stdout);
		fputc('\n', stdout);
		if (fflush(stdout) == EOF) {
			execq_error("stdout: %s", strerror(errno));
			rc = EXECQ_EXIT_FAIL;
		}
	}
out:
	execq_answer_release(&a);
	execq_session_close(&s);
	execq_opts_release(&o);
	return (rc);
}
