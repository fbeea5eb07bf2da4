/*
 * PROCESS items (docs/PROTOCOL.md section 12) and the subcommands that are
 * one of them: send (write), keys (send-keys), kill, wait.
 *
 * A PROCESS item goes to the control stream q:<queue>:ctl, which any
 * worker reads and forwards to the session's owner; the PROCESS_RESULT or
 * ERROR comes back on a private reply queue, deleted when we are done.
 * An item nobody answered is withdrawn (XDEL): a kill or a keystroke that a
 * worker found minutes later would surprise whoever typed it.
 */

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hiredis/hiredis.h>
#include <jansson.h>

#include "cli/cli.h"
#include "logs/clock.h"
#include "queue/item.h"
#include "logs/xmalloc.h"
#include "queue/client.h"
#include "queue/keyspace.h"

#define EXECQ_WAIT_DEFAULT_S	3600
#define EXECQ_WAIT_CHUNK_MS	60000	/* the most one wait action takes */


/* The answers that end a PROCESS exchange. */
static const char * const execq_process_types[] = { "PROCESS_RESULT",
    "ERROR", NULL };

/* send options. */
struct execq_send_opts {
	struct execq_opts	 o;	/* first: set() casts */
	const char		*b64;	/* --b64 DATA */
	int			 eof;
};

static const struct option execq_send_longopts[] = {
	{ "eof",		no_argument,	   NULL, EXECQ_OPT_EOF },
	{ "b64",		required_argument, NULL, EXECQ_OPT_B64 },
	{ "queue",		required_argument, NULL, EXECQ_OPT_QUEUE },
	{ "redis",		required_argument, NULL, EXECQ_OPT_REDIS },
	{ "help",		no_argument,	   NULL, 'h' },
	{ NULL,			0,		   NULL, 0 }
};

/* kill options. */
struct execq_kill_opts {
	struct execq_opts	 o;	/* first: set() casts */
	char			 signal[32];	/* "TERM", or "" */
};

static const struct option execq_kill_longopts[] = {
	{ "signal",		required_argument, NULL, EXECQ_OPT_SIGNAL },
	{ "queue",		required_argument, NULL, EXECQ_OPT_QUEUE },
	{ "redis",		required_argument, NULL, EXECQ_OPT_REDIS },
	{ "help",		no_argument,	   NULL, 'h' },
	{ NULL,			0,		   NULL, 0 }
};

/* keys and cancel take only the shared options; wait also --timeout. */
static const struct option execq_keys_longopts[] = {
	{ "queue",		required_argument, NULL, EXECQ_OPT_QUEUE },
	{ "redis",		required_argument, NULL, EXECQ_OPT_REDIS },
	{ "help",		no_argument,	   NULL, 'h' },
	{ NULL,			0,		   NULL, 0 }
};

static const struct option execq_wait_longopts[] = {
	{ "timeout",		required_argument, NULL, EXECQ_OPT_TIMEOUT },
	{ "queue",		required_argument, NULL, EXECQ_OPT_QUEUE },
	{ "redis",		required_argument, NULL, EXECQ_OPT_REDIS },
	{ "help",		no_argument,	   NULL, 'h' },
	{ NULL,			0,		   NULL, 0 }
};

/* "SIGTERM" from 15, "TERM" from "TERM"; buf holds 32 bytes. */
const char *
execq_signal_name(const json_t *v, char *buf)
{
	const char	*name;

	if (json_is_string(v))
		return (json_string_value(v));
	if (!json_is_integer(v) || json_integer_value(v) <= 0 ||
	    json_integer_value(v) >= NSIG)
		return (NULL);
	if ((name = sigabbrev_np((int)json_integer_value(v))) == NULL)
		snprintf(buf, 32, "signal %d", (int)json_integer_value(v));
	else
		snprintf(buf, 32, "SIG%s", name);
	return (buf);
}

/* The fields of a PROCESS_RESULT: its "result" object if any, else it. */
json_t *
execq_process_result(json_t *root)
{
	json_t	*r;

	r = json_object_get(root, "result");
	return (json_is_object(r) ? r : root);
}

/* Checks the queue name and opens s on q:<queue>:ctl. */
int
execq_process_open(struct execq_session *s, struct execq_opts *o,
    const char *cmd)
{
	if (!execq_name_valid(o->queue))
		return (execq_usage_error(cmd, "bad queue name '%s': it must "
		    "match " EXECQ_NAME_RULE, o->queue));
	o->lane = KS_LANE_CTL;
	return (execq_session_open(s, o));
}

/* Says nobody answered, and withdraws the item (entry) from the stream. */
static void
execq_process_unanswered(struct execq_session *s, const char *entry,
    const char *action, long long wait_ms)
{
	redisReply	*r;

	execq_error("no answer to PROCESS %s from a worker on queue '%s' "
	    "within %lld s (is execq-worker running with this Redis and "
	    "queue?)", action, s->queue, (wait_ms + 999) / 1000);
	if ((r = execq_reply(s, "XDEL", client_item_del(s->c, s->item_key,
	    entry))) == NULL)
		return;
	if (r->type == REDIS_REPLY_INTEGER && r->integer == 1)
		execq_error("the item was withdrawn from %s", s->item_key);
	freeReplyObject(r);
}


/*
 * Who the caller is, in args: EXECQ_OPERATOR_TOKEN as operator_token; for
 * an action on one session EXECQ_TOKEN or the stored token of that
 * session; for list every stored token.
 */
static void
execq_process_tokens(json_t *args)
{
	const char	*sid, *tok, *env;
	json_t		*all;

	if ((env = getenv("EXECQ_OPERATOR_TOKEN")) != NULL && *env != '\0' &&
	    json_object_get(args, "operator_token") == NULL)
		json_object_set_new(args, "operator_token", json_string(env));
	if (json_object_get(args, "token") != NULL ||
	    json_object_get(args, "tokens") != NULL)
		return;
	sid = json_string_value(json_object_get(args, "session_id"));
	all = execq_tokens_load(sid, &tok);
	if ((env = getenv("EXECQ_TOKEN")) != NULL && *env != '\0') {
		tok = env;
		json_array_append_new(all, json_string(env));
	}
	if (sid != NULL) {
		if (tok != NULL)
			json_object_set_new(args, "token", json_string(tok));
		json_decref(all);
	} else
		json_object_set_new(args, "tokens", all);
}

/* Sends one PROCESS item and waits for its answer (see cli/cli.h). */
int
execq_process(struct execq_session *s, json_t *args, long long wait_ms,
    struct execq_answer *a)
{
	struct execq_want	 w = { NULL, execq_process_types, 1 };
	json_t			*root;
	const char		*type;
	char			*id, *text = NULL, *entry = NULL;
	int			 rc = EXECQ_EXIT_FAIL;

	if (s->reply == NULL)
		execq_session_private_reply(s);
	execq_process_tokens(args);
	w.id = id = execq_make_id(s);
	root = json_pack("{s:s, s:s, s:s, s:O}", "id", id, "type", "PROCESS",
	    "reply_to", s->reply, "args", args);
	if (root == NULL || (text = json_dumps(root, JSON_COMPACT)) == NULL) {
		execq_error("cannot build the PROCESS item");
		goto out;
	}
	if ((entry = execq_item_add(s, text)) == NULL)
		goto out;
	wait_ms += EXECQ_SLACK_MS;
	switch (execq_answer_wait(s, &w, wait_ms, a)) {
	case 1:
		type = json_string_value(json_object_get(a->root, "type"));
		if (strcmp(type, "ERROR") != 0)
			rc = 0;
		else {
			execq_print_error(a->root);
			execq_answer_release(a);
		}
		break;
	case 0:
		execq_process_unanswered(s, entry, json_string_value(
		    json_object_get(args, "action")), wait_ms);
		break;
	}
out:
	json_decref(root);
	free(entry);
	free(text);
	free(id);
	return (rc);
}

/*
 * The pattern of send, keys and kill: the operands are parsed, the args
 * built; send them on a new session and print nothing. args is consumed.
 */
static int
execq_process_once(struct execq_opts *o, const char *cmd, json_t *args)
{
	struct execq_session	s;
	struct execq_answer	a = { NULL, NULL, 0 };
	int			rc;

	memset(&s, 0, sizeof s);
	if ((rc = execq_process_open(&s, o, cmd)) == 0)
		rc = execq_process(&s, args, 0, &a);
	execq_answer_release(&a);
	execq_session_close(&s);
	json_decref(args);
	return (rc);
}

/* Checks a session id operand: 0, or -1 (said). */
static int
execq_check_session_id(const char *cmd, const char *id)
{
	if (execq_name_valid(id))
		return (0);
	execq_usage_error(cmd, "bad session id '%s': it must match "
	    EXECQ_NAME_RULE, id);
	return (-1);
}

/* send --help. */
static void
execq_send_usage(FILE *f)
{
	fputs("usage: execq send [--eof] ID TEXT\n"
	    "       execq send [--eof] --b64 DATA ID\n"
	    "       execq send --eof ID\n"
	    "\n"
	    "Writes TEXT, exactly (no newline is added), to the stdin or the\n"
	    "terminal of session ID. Put -- before a TEXT that starts with\n"
	    "'-'. TEXT that is not UTF-8 is sent as bytes.\n"
	    "\n"
	    "Options:\n"
	    "  --eof           then close the session's stdin (with a pty:\n"
	    "                  the terminal's EOF character)\n"
	    "  --b64 DATA      send the bytes DATA encodes in base64\n"
	    "  --queue Q       work queue (default: $EXECQ_QUEUE, else exec)\n"
	    "  --redis URL     Redis address (see 'execq --help')\n"
	    "  -h, --help      show this help\n"
	    "\n"
	    "Prints nothing. Exit status: 0 when written; 125 on an ERROR\n"
	    "(unknown_session, session_ended...), no answer or a Redis\n"
	    "failure; 2 on a usage error.\n", f);
}

/* send's own options. */
static int
execq_send_set(struct execq_opts *o, const char *cmd, int ch,
    const char *arg)
{
	struct execq_send_opts	*so = (struct execq_send_opts *)o;
	char			*bytes;
	size_t			 len;

	switch (ch) {
	case EXECQ_OPT_EOF:
		so->eof = 1;
		return (0);
	case EXECQ_OPT_B64:
		if (item_base64_decode(arg, strlen(arg), &bytes, &len) == -1) {
			execq_usage_error(cmd, "--b64 wants base64, not '%s'",
			    arg);
			return (-1);
		}
		free(bytes);
		so->b64 = arg;
		return (0);
	}
	return (execq_opts_set(o, cmd, ch, arg));
}

/* The write action's args for send's operands and flags. */
static json_t *
execq_send_args(const struct execq_send_opts *so, const char *id,
    const char *text)
{
	json_t	*args, *data;
	char	*b64;

	args = json_pack("{s:s, s:s}", "action", "write", "session_id", id);
	if (text != NULL && (data = json_string(text)) != NULL)
		json_object_set_new(args, "data", data);
	else if (text != NULL) {	/* not UTF-8: send the bytes */
		b64 = item_base64_encode(text, strlen(text), NULL);
		json_object_set_new(args, "data_b64", json_string(b64));
		free(b64);
	} else if (so->b64 != NULL)
		json_object_set_new(args, "data_b64", json_string(so->b64));
	if (so->eof)
		json_object_set_new(args, "eof", json_true());
	return (args);
}

/* execq send: write to a session. */
int
execq_cmd_send(const char *redis, int argc, char **argv)
{
	struct execq_send_opts	 so;
	const char		*id, *text;
	int			 rc, n;

	memset(&so, 0, sizeof so);
	execq_opts_init(&so.o, redis);
	if ((rc = execq_opts_getopt(&so.o, "send", argc, argv, "h",
	    execq_send_longopts, execq_send_set, execq_send_usage)) != 0) {
		rc = (rc == 1) ? 0 : EXECQ_EXIT_USAGE;
		goto out;
	}
	n = argc - optind;
	id = n >= 1 ? argv[optind] : NULL;
	text = n >= 2 ? argv[optind + 1] : NULL;
	if (n < 1 || n > 2)
		rc = execq_usage_error("send", n < 1 ? "no session id given" :
		    "too many operands: quote TEXT");
	else if (text != NULL && so.b64 != NULL)
		rc = execq_usage_error("send", "give TEXT or --b64 DATA, "
		    "not both");
	else if (text == NULL && so.b64 == NULL && !so.eof)
		rc = execq_usage_error("send", "nothing to send: give TEXT, "
		    "--b64 DATA or --eof");
	else if (execq_check_session_id("send", id) == -1)
		rc = EXECQ_EXIT_USAGE;
	else
		rc = execq_process_once(&so.o, "send",
		    execq_send_args(&so, id, text));
out:
	execq_opts_release(&so.o);
	return (rc);
}

/* keys --help. */
static void
execq_keys_usage(FILE *f)
{
	fputs("usage: execq keys ID KEY...\n"
	    "\n"
	    "Sends keys to session ID as tmux's send-keys does: a key name\n"
	    "(Enter, Tab, Escape, BSpace, Up, Down, Left, Right, Home, End,\n"
	    "PageUp, PageDown, F1-F12, C-c, M-x...) sends what a terminal\n"
	    "sends for it; any other word is sent as literal text. Example:\n"
	    "execq keys ID 'ls -l' Enter.\n"
	    "\n"
	    "Options:\n"
	    "  --queue Q       work queue (default: $EXECQ_QUEUE, else exec)\n"
	    "  --redis URL     Redis address (see 'execq --help')\n"
	    "  -h, --help      show this help\n"
	    "\n"
	    "Prints nothing. Exit status: 0 when written; 125 on an ERROR,\n"
	    "no answer or a Redis failure; 2 on a usage error.\n", f);
}

/* execq keys: send-keys to a session. */
int
execq_cmd_keys(const char *redis, int argc, char **argv)
{
	struct execq_opts	 o;
	json_t			*keys, *args;
	int			 rc, i;

	execq_opts_init(&o, redis);
	if ((rc = execq_opts_getopt(&o, "keys", argc, argv, "h",
	    execq_keys_longopts, NULL, execq_keys_usage)) != 0) {
		rc = (rc == 1) ? 0 : EXECQ_EXIT_USAGE;
		goto out;
	}
	if (argc - optind < 2) {
		rc = execq_usage_error("keys", argc - optind < 1 ?
		    "no session id given" : "no keys given");
		goto out;
	}
	if (execq_check_session_id("keys", argv[optind]) == -1) {
		rc = EXECQ_EXIT_USAGE;
		goto out;
	}
	keys = json_array();
	for (i = optind + 1; i < argc; i++) {
		if (json_array_append_new(keys, json_string(argv[i])) == -1) {
			json_decref(keys);
			rc = execq_usage_error("keys", "key '%s' is not valid "
			    "UTF-8", argv[i]);
			goto out;
		}
	}
	args = json_pack("{s:s, s:s, s:o}", "action", "send-keys",
	    "session_id", argv[optind], "keys", keys);
	rc = execq_process_once(&o, "keys", args);
out:
	execq_opts_release(&o);
	return (rc);
}

/* kill --help. */
static void
execq_kill_usage(FILE *f)
{
	fputs("usage: execq kill [--signal SIG] ID\n"
	    "\n"
	    "Signals the process tree of session ID. With TERM (the\n"
	    "default), the worker sends KILL after its kill_grace_s if\n"
	    "anything is left. The session then ends with status killed.\n"
	    "\n"
	    "Options:\n"
	    "  -s, --signal SIG  TERM, SIGINT, 9... (default TERM)\n"
	    "  --queue Q         work queue (default: $EXECQ_QUEUE, "
	    "else exec)\n"
	    "  --redis URL       Redis address (see 'execq --help')\n"
	    "  -h, --help        show this help\n"
	    "\n"
	    "Prints nothing. Exit status: 0 when signalled; 125 on an ERROR\n"
	    "(unknown_session, session_ended...), no answer or a Redis\n"
	    "failure; 2 on a usage error.\n", f);
}

/* "KILL" from "9", "kill", "SIGKILL" or "sigkill"; -1 if no such signal. */
static int
execq_signal_parse(const char *arg, char *out, size_t len)
{
	const char	*name;
	char		 up[32];
	long		 n;
	size_t		 i;

	if (execq_parse_long(arg, 1, NSIG - 1, &n) == 0) {
		if ((name = sigabbrev_np((int)n)) == NULL)
			return (-1);
		snprintf(out, len, "%s", name);
		return (0);
	}
	for (i = 0; arg[i] != '\0' && i < sizeof up - 1; i++)
		up[i] = toupper((unsigned char)arg[i]);
	up[i] = '\0';
	name = strncmp(up, "SIG", 3) == 0 ? up + 3 : up;
	for (n = 1; n < NSIG; n++) {
		if (sigabbrev_np((int)n) != NULL &&
		    strcmp(sigabbrev_np((int)n), name) == 0) {
			snprintf(out, len, "%s", name);
			return (0);
		}
	}
	return (-1);
}

/* kill's own options. */
static int
execq_kill_set(struct execq_opts *o, const char *cmd, int ch,
    const char *arg)
{
	struct execq_kill_opts	*ko = (struct execq_kill_opts *)o;

	if (ch != 's' && ch != EXECQ_OPT_SIGNAL)
		return (execq_opts_set(o, cmd, ch, arg));
	if (execq_signal_parse(arg, ko->signal, sizeof ko->signal) == 0)
		return (0);
	execq_usage_error(cmd, "no such signal '%s'", arg);
	return (-1);
}

/* execq kill: signal a session. */
int
execq_cmd_kill(const char *redis, int argc, char **argv)
{
	struct execq_kill_opts	 ko;
	json_t			*args;
	int			 rc;

	memset(&ko, 0, sizeof ko);
	execq_opts_init(&ko.o, redis);
	if ((rc = execq_opts_getopt(&ko.o, "kill", argc, argv, "hs:",
	    execq_kill_longopts, execq_kill_set, execq_kill_usage)) != 0) {
		rc = (rc == 1) ? 0 : EXECQ_EXIT_USAGE;
		goto out;
	}
	if (argc - optind != 1) {
		rc = execq_usage_error("kill", argc - optind < 1 ?
		    "no session id given" : "one session id at a time");
		goto out;
	}
	if (execq_check_session_id("kill", argv[optind]) == -1) {
		rc = EXECQ_EXIT_USAGE;
		goto out;
	}
	args = json_pack("{s:s, s:s}", "action", "kill", "session_id",
	    argv[optind]);
	if (ko.signal[0] != '\0')
		json_object_set_new(args, "signal", json_string(ko.signal));
	rc = execq_process_once(&ko.o, "kill", args);
out:
	execq_opts_release(&ko.o);
	return (rc);
}

/* wait --help. */
static void
execq_wait_usage(FILE *f)
{
	fputs("usage: execq wait [--timeout S] ID\n"
	    "\n"
	    "Waits until session ID has ended, then prints its final status\n"
	    "(the callback's fields: status, exit_code, signal, killed_by,\n"
	    "tail, duration_ms...) as one line of JSON.\n"
	    "\n"
	    "Options:\n"
	    "  --timeout S     give up after S seconds (default 3600); the\n"
	    "                  status printed then says \"running\"\n"
	    "  --queue Q       work queue (default: $EXECQ_QUEUE, else exec)\n"
	    "  --redis URL     Redis address (see 'execq --help')\n"
	    "  -h, --help      show this help\n"
	    "\n"
	    "Exit status: 0 if the session ended, whatever its exit code;\n"
	    "124 if it was still running at the timeout; 125 on an ERROR\n"
	    "(unknown_session...), no answer or a Redis failure.\n", f);
}

/* Prints the status fields of a wait answer as one line of JSON. */
static int
execq_wait_print(json_t *root, const char *id)
{
	json_t	*res;
	char	*text;
	int	 rc;

	res = json_deep_copy(execq_process_result(root));
	if (execq_process_result(root) == root) {
		json_object_del(res, "type");	/* the item's, not the */
		json_object_del(res, "id");	/* session's */
		json_object_del(res, "action");
	}
	if (json_object_get(res, "session_id") == NULL)
		json_object_set_new(res, "session_id", json_string(id));
	text = json_dumps(res, JSON_COMPACT);
	rc = execq_write_all(stdout, text, strlen(text));
	if (rc == 0)
		rc = execq_write_all(stdout, "\n", 1);
	free(text);
	json_decref(res);
	return (rc == 0 ? 0 : EXECQ_EXIT_FAIL);
}

/* 1 if a wait answer says the session still runs. */
static int
execq_wait_running(json_t *root)
{
	json_t		*res;
	const char	*status;

	res = execq_process_result(root);
	status = json_string_value(json_object_get(res, "status"));
	return (json_is_true(json_object_get(res, "waited_out")) ||
	    (status != NULL && strcmp(status, "running") == 0));
}

/*
 * Sends wait actions of at most 60 s until the session ended or timeout_ms
 * passed: 0 or 124 with the last answer printed, else 125 (said).
 */
static int
execq_wait_loop(struct execq_session *s, const char *id,
    long long timeout_ms)
{
	struct execq_answer	 a = { NULL, NULL, 0 };
	json_t			*args;
	long long		 deadline, chunk;
	int			 rc;

	deadline = clock_mono_ms() + timeout_ms;
	for (;;) {
		if ((chunk = deadline - clock_mono_ms()) < 1)
			chunk = 1;	/* 0 could mean the worker's default */
		if (chunk > EXECQ_WAIT_CHUNK_MS)
			chunk = EXECQ_WAIT_CHUNK_MS;
		args = json_pack("{s:s, s:s, s:I}", "action", "wait",
		    "session_id", id, "timeout_ms", (json_int_t)chunk);
		rc = execq_process(s, args, chunk, &a);
		json_decref(args);
		if (rc != 0)
			return (rc);
		if (!execq_wait_running(a.root))
			break;
		if (clock_mono_ms() >= deadline) {
			rc = execq_wait_print(a.root, id);
			execq_answer_release(&a);
			if (rc == 0)
				execq_error("session %s is still running after "
				    "%g s", id, (double)timeout_ms / 1000);
			return (rc == 0 ? EXECQ_EXIT_TIMED_OUT : rc);
		}
		execq_answer_release(&a);
	}
	rc = execq_wait_print(a.root, id);
	execq_answer_release(&a);
	return (rc);
}

/* execq wait: wait for a session to end. */
int
execq_cmd_wait(const char *redis, int argc, char **argv)
{
	struct execq_opts	 o;
	struct execq_session	 s;
	int			 rc;

	execq_opts_init(&o, redis);
	memset(&s, 0, sizeof s);
	if ((rc = execq_opts_getopt(&o, "wait", argc, argv, "h",
	    execq_wait_longopts, NULL, execq_wait_usage)) != 0) {
		rc = (rc == 1) ? 0 : EXECQ_EXIT_USAGE;
		goto out;
	}
	if (argc - optind != 1) {
		rc = execq_usage_error("wait", argc - optind < 1 ?
		    "no session id given" : "one session id at a time");
		goto out;
	}
	if (execq_check_session_id("wait", argv[optind]) == -1) {
		rc = EXECQ_EXIT_USAGE;
		goto out;
	}
	if (o.timeout_s == 0)
		o.timeout_s = EXECQ_WAIT_DEFAULT_S;
	if ((rc = execq_process_open(&s, &o, "wait")) == 0)
		rc = execq_wait_loop(&s, argv[optind],
		    (long long)(o.timeout_s * 1000 + 0.5));
out:
	execq_session_close(&s);
	execq_opts_release(&o);
	return (rc);
}

/* cancel --help. */
static void
execq_cancel_usage(FILE *f)
{
	fputs("usage: execq cancel ID\n"
	    "\n"
	    "Cancels item ID before it runs: one waiting in the queue, one\n"
	    "delayed (args.delay_ms, or between the attempts of a retry) or\n"
	    "one held for approval. It never runs, and its sender gets ERROR\n"
	    "cancelled (a queued item's, when a worker reaches it). An id\n"
	    "not sent yet is cancelled when it comes (within answer_ttl_s).\n"
	    "One that runs already is not: kill it ('execq kill ID').\n"
	    "Agents cancel their own ids; an operator's token, any.\n"
	    "\n"
	    "Options:\n"
	    "  --queue Q       work queue (default: $EXECQ_QUEUE, else exec)\n"
	    "  --redis URL     Redis address (see 'execq --help')\n"
	    "  -h, --help      show this help\n"
	    "\n"
	    "Prints what was cancelled, or why not. Exit status: 0 when\n"
	    "cancelled; 1 when it runs or ran already; 125 on an ERROR\n"
	    "(forbidden...), no answer or a Redis failure; 2 on a usage\n"
	    "error.\n", f);
}

/*
 * One PROCESS action on one id, the only operand, with the shared
 * options: 0 with its answer in *a, or an exit code (said).
 */
static int
execq_process_on_one(const char *redis, const char *cmd, int argc,
    char **argv, void (*usage)(FILE *), struct execq_answer *a)
{
	struct execq_opts	 o;
	struct execq_session	 s;
	json_t			*args = NULL;
	int			 rc;

	execq_opts_init(&o, redis);
	memset(&s, 0, sizeof s);
	if ((rc = execq_opts_getopt(&o, cmd, argc, argv, "h",
	    execq_keys_longopts, NULL, usage)) != 0) {
		rc = (rc == 1) ? -1 : EXECQ_EXIT_USAGE;
		goto out;
	}
	if (argc - optind != 1) {
		rc = execq_usage_error(cmd, argc - optind < 1 ?
		    "no id given" : "one id at a time");
		goto out;
	}
	if (execq_check_session_id(cmd, argv[optind]) == -1) {
		rc = EXECQ_EXIT_USAGE;
		goto out;
	}
	args = json_pack("{s:s, s:s}", "action", cmd, "session_id",
	    argv[optind]);
	if ((rc = execq_process_open(&s, &o, cmd)) == 0)
		rc = execq_process(&s, args, 0, a);
out:
	json_decref(args);
	execq_session_close(&s);
	execq_opts_release(&o);
	return (rc);
}

/* execq cancel: an item before it runs. */
int
execq_cmd_cancel(const char *redis, int argc, char **argv)
{
	struct execq_answer	 a = { NULL, NULL, 0 };
	const char		*state, *note, *id;
	int			 rc;

	if ((rc = execq_process_on_one(redis, "cancel", argc, argv,
	    execq_cancel_usage, &a)) != 0)
		return (rc == -1 ? 0 : rc);	/* -1: --help */
	id = json_string_value(json_object_get(a.root, "session_id"));
	state = json_string_value(json_object_get(a.root, "state"));
	note = json_string_value(json_object_get(a.root, "note"));
	if (json_is_true(json_object_get(a.root, "cancelled")))
		execq_line(stdout, "cancelled %s (it was %s)", id,
		    state != NULL ? state : "?");
	else {
		execq_line(stdout, "not cancelled: %s is %s%s%s", id,
		    state != NULL ? state : "?", note != NULL ? ": " : "",
		    note != NULL ? note : "");
		rc = 1;
	}
	execq_answer_release(&a);
	return (rc);
}

/* exec --help. */
static void
execq_exec_usage(FILE *f)
{
	fputs("usage: execq exec [--timeout S] ID [--] CMD [ARG...]\n"
	    "\n"
	    "Runs CMD in shell session ID ('execq spawn --shell'), with the\n"
	    "cwd and variables the commands before it left there, prints its\n"
	    "stdout and stderr, and exits with its exit status, as 'execq\n"
	    "run' does. One command at a time a session; the policy decides\n"
	    "on each as on an item (one it would hold is refused: run it with\n"
	    "'execq run'). Its stdin is empty.\n"
	    "\n"
	    "Options:\n"
	    "  --timeout S     interrupt it (SIGINT, then KILL after the\n"
	    "                  worker's kill_grace_s) after S seconds; the\n"
	    "                  shell goes on (default: the worker's timeout)\n"
	    "  --queue Q       work queue (default: $EXECQ_QUEUE, else exec)\n"
	    "  --redis URL     Redis address (see 'execq --help')\n"
	    "  -h, --help      show this help\n"
	    "\n"
	    "Exit status: the command's; 124 if it timed out; 125 on an ERROR\n"
	    "(session_busy, held, unknown_session...), no answer or a Redis\n"
	    "failure; 2 on a usage error.\n", f);
}

/* execq exec: a command in a shell session. */
int
execq_cmd_exec(const char *redis, int argc, char **argv)
{
	struct execq_opts	 o;
	struct execq_session	 s;
	struct execq_answer	 a = { NULL, NULL, 0 };
	json_t			*args = NULL;
	char			*command = NULL;
	const char		*sid;
	int			 rc;

	execq_opts_init(&o, redis);
	memset(&s, 0, sizeof s);
	if ((rc = execq_opts_getopt(&o, "exec", argc, argv, "+h",
	    execq_wait_longopts, NULL, execq_exec_usage)) != 0) {
		rc = (rc == 1) ? 0 : EXECQ_EXIT_USAGE;
		goto out;
	}
	if (argc - optind < 2) {
		rc = execq_usage_error("exec", argc - optind < 1 ?
		    "no session id given" : "no command given");
		goto out;
	}
	sid = argv[optind++];
	if (strcmp(argv[optind], "--") == 0)
		optind++;
	if (optind == argc) {
		rc = execq_usage_error("exec", "no command given");
		goto out;
	}
	if (execq_check_session_id("exec", sid) == -1) {
		rc = EXECQ_EXIT_USAGE;
		goto out;
	}
	command = execq_join_command(argc - optind, argv + optind);
	args = json_pack("{s:s, s:s, s:s}", "action", "exec", "session_id",
	    sid, "command", command);
	if (o.timeout_s > 0)
		json_object_set_new(args, "timeout_ms", json_integer(
		    (json_int_t)(o.timeout_s * 1000 + 0.999)));
	if ((rc = execq_process_open(&s, &o, "exec")) != 0 ||
	    (rc = execq_process(&s, args, (long long)((o.timeout_s > 0 ?
	    o.timeout_s : EXECQ_TIMEOUT_S) * 1000) + EXECQ_SLACK_MS,
	    &a)) != 0)
		goto out;
	rc = execq_print_result(a.root);
out:
	json_decref(args);
	free(command);
	execq_answer_release(&a);
	execq_session_close(&s);
	execq_opts_release(&o);
	return (rc);
}

/* interrupt --help. */
static void
execq_interrupt_usage(FILE *f)
{
	fputs("usage: execq interrupt ID\n"
	    "\n"
	    "Sends SIGINT to what session ID runs now: a shell session's\n"
	    "command (the shell goes on), a terminal's foreground (^C), or\n"
	    "the session's processes.\n"
	    "\n"
	    "Options:\n"
	    "  --queue Q       work queue (default: $EXECQ_QUEUE, else exec)\n"
	    "  --redis URL     Redis address (see 'execq --help')\n"
	    "  -h, --help      show this help\n"
	    "\n"
	    "Prints nothing. Exit status: 0 when something was interrupted;\n"
	    "1 when nothing ran; 125 on an ERROR, no answer or a Redis\n"
	    "failure; 2 on a usage error.\n", f);
}

/* execq interrupt: SIGINT to what a session runs. */
int
execq_cmd_interrupt(const char *redis, int argc, char **argv)
{
	struct execq_answer	 a = { NULL, NULL, 0 };
	int			 rc;

	if ((rc = execq_process_on_one(redis, "interrupt", argc, argv,
	    execq_interrupt_usage, &a)) != 0)
		return (rc == -1 ? 0 : rc);	/* -1: --help */
	rc = json_is_true(json_object_get(a.root, "interrupted")) ? 0 : 1;
	execq_answer_release(&a);
	return (rc);
}
