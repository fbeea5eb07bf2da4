/*
 * execq run and execq submit: one EXEC item, its answer shown (run) or
 * printed as JSON (submit).
 */

#include <sys/random.h>
#include <sys/stat.h>
#include <sys/time.h>

#include <errno.h>
#include <getopt.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>
#include <jansson.h>

#include "cli/cli.h"
#include "logs/log.h"
#include "logs/xmalloc.h"
#include "queue/rurl.h"

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
	{ "redis",		required_argument, NULL, EXECQ_OPT_REDIS },
	{ "raw",		required_argument, NULL, EXECQ_OPT_RAW },
	{ "reply-default",	required_argument, NULL,
	    EXECQ_OPT_REPLY_DEFAULT },
	{ "help",		no_argument,	   NULL, 'h' },
	{ NULL,			0,		   NULL, 0 }
};

/* Writes a JSON string's bytes (NULs included) to f. */
static void
execq_write_string(FILE *f, const json_t *v)
{
	if (json_is_string(v))
		fwrite(json_string_value(v), 1, json_string_length(v), f);
}

/* Prints "execq: <code>: <message>" for an ERROR answer; returns 125. */
int
execq_print_error(const json_t *root)
{
	const json_t	*err;
	const char	*code, *msg;

	err = json_object_get(root, "error");
	code = json_string_value(json_object_get(err, "code"));
	msg = json_string_value(json_object_get(err, "message"));
	execq_error("%s: %s", code != NULL ? code : "error",
	    msg != NULL ? msg : "(no message)");
	return (EXECQ_EXIT_FAIL);
}

/* Replays an EXEC_RESULT on stdout and stderr; returns the exit code. */
static int
execq_print_result(const json_t *root)
{
	const json_t	*code;
	const char	*log_path;
	double		 duration_ms;

	execq_write_string(stdout, json_object_get(root, "stdout"));
	if (fflush(stdout) == EOF) {
		execq_error("stdout: %s", strerror(errno));
		return (EXECQ_EXIT_FAIL);
	}
	execq_write_string(stderr, json_object_get(root, "stderr"));
	if (json_is_true(json_object_get(root, "truncated"))) {
		log_path = json_string_value(json_object_get(root,
		    "log_path"));
		execq_error("output truncated; full log: %s",
		    log_path != NULL ? log_path : "(none)");
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

/* run --help. */
static void
execq_run_usage(FILE *f)
{
	fputs("usage: execq run [OPTIONS] [--] CMD [ARG...]\n"
	    "\n"
	    "Runs CMD on an execq-worker, replays its stdout and stderr here,\n"
	    "and exits with its exit status. One word is a shell command as\n"
	    "is (execq run 'ls | wc -l'); several words are quoted and\n"
	    "joined, so they run as that argv (execq run -- sh -c 'exit 3').\n"
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
	    "  --wait S        give up after S seconds "
	    "(default: timeout, else 30, + 30)\n"
	    "  --redis URL     Redis address (see 'execq --help')\n"
	    "  -h, --help      show this help\n"
	    "\n"
	    "Exit status: the command's; 124 if it timed out; 125 if execq\n"
	    "failed or the worker refused the item; 2 on a usage error.\n", f);
}

/* The answers that end a run. */
static const char * const execq_run_types[] = { "EXEC_RESULT", "ERROR",
    NULL };

/* execq run: submit, wait, replay the output, exit with the command's code. */
int
execq_cmd_run(const char *redis, int argc, char **argv)
{
	struct execq_opts	 o;
	struct execq_session	 s;
	struct execq_answer	 a = { NULL, NULL, 0 };
	const char		*type;
	int			 rc;

	execq_opts_init(&o, redis);
	memset(&s, 0, sizeof s);
	if ((rc = execq_opts_parse(&o, "run", argc, argv, execq_longopts,
	    NULL, execq_run_usage)) != 0) {
		rc = (rc == 1) ? 0 : EXECQ_EXIT_USAGE;
		goto out;
	}
	if (o.submit_only) {
		rc = execq_usage_error("run", "--raw and --reply-default are "
		    "submit options");
		goto out;
	}
	if (o.command == NULL) {
		rc = execq_usage_error("run", "no command given");
		goto out;
	}
	if ((rc = execq_session_open(&s, &o)) != 0 ||
	    (rc = execq_exchange_exec(&s, &o, execq_run_types, &a)) != 0)
		goto out;
	type = json_string_value(json_object_get(a.root, "type"));
	if (strcmp(type, "ERROR") == 0)
		rc = execq_print_error(a.root);
	else
		rc = execq_print_result(a.root);
out:
	execq_answer_release(&a);
	execq_session_close(&s);
	execq_opts_release(&o);
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
 * reply queue, from its newest entry before the XADD on.
 */
static int
execq_submit_raw(struct execq_session *s, struct execq_opts *o,
    struct execq_answer *a)
{
	struct execq_want	 w = { NULL, NULL, 1 };
	json_t			*root;
	const char		*reply;
	double			 timeout;
	int			 rc = EXECQ_EXIT_FAIL;

	root = json_loads(o->raw, 0, NULL);	/* NULL if not JSON */
	w.id = json_string_value(json_object_get(root, "id"));
	reply = json_string_value(json_object_get(root, "reply_to"));
	if (reply == NULL || !execq_name_valid(reply))
		reply = o->reply_default;
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
	if ((rc = execq_opts_parse(&o, "submit", argc, argv, execq_longopts,
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
	    o.env != NULL || o.timeout_s > 0)) {
		rc = execq_usage_error("submit", "--raw TEXT is sent as is: "
		    "--id, --cwd, --env and --timeout do not apply");
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
