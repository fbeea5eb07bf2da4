/*
 * The command policy from the client's side: classify (local, no Redis,
 * the worker's own code and config), approvals, approve and reject.
 */

#include <errno.h>
#include <getopt.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>
#include <jansson.h>

#include "cli/cli.h"
#include "logs/clock.h"
#include "policy/classify.h"
#include "exec/cmdenv.h"
#include "policy/policyconf.h"
#include "logs/xmalloc.h"
#include "queue/client.h"

#define EXECQ_REQUEST_LEN	32
#define EXECQ_DECIDE_WAIT_S	5

extern char **environ;

/* classify's options. */
struct execq_classify_opts {
	struct execq_opts	 o;
	const char		*config, *workspace, *tier, *sandbox;
	const char		*command;	/* -c */
	int			 batch;
};

static const struct option execq_classify_longopts[] = {
	{ "config",	required_argument, NULL, 'f' },
	{ "workspace",	required_argument, NULL, 'w' },
	{ "cwd",	required_argument, NULL, EXECQ_OPT_CWD },
	{ "tier",	required_argument, NULL, 't' },
	{ "sandbox",	required_argument, NULL, 's' },
	{ "command",	required_argument, NULL, 'c' },
	{ "batch",	no_argument,	   NULL, 'b' },
	{ "help",	no_argument,	   NULL, 'h' },
	{ NULL,		0,		   NULL, 0 }
};

/* classify --help. */
static void
execq_classify_usage(FILE *f)
{
	fputs("usage: execq classify [options] -c COMMAND\n"
	    "       execq classify [options] --batch < commands.jsonl\n"
	    "\n"
	    "Says what the worker's command policy would do with a command,\n"
	    "without running anything: one JSON object with the risk\n"
	    "(read_only, write, unknown, destructive, blocked), the action\n"
	    "under the tier (run, hold, refuse), the rule that decided and\n"
	    "why, the path outside the workspace if any, and every simple\n"
	    "command found. --batch reads one JSON string per line (so a\n"
	    "command may hold newlines) and prints one verdict per line.\n"
	    "Needs no Redis; reads the worker's config like the worker does.\n"
	    "\n"
	    "Options:\n"
	    "  -c, --command CMD    the command to classify\n"
	    "  --batch              commands from stdin, one JSON string a "
	    "line\n"
	    "  --config FILE        the worker's config file (default: "
	    "$EXECQ_CONFIG)\n"
	    "  --workspace DIR      the workspace (default: as the worker: "
	    "$EXECQ_WORKSPACE,\n"
	    "                       the file's, else .)\n"
	    "  --cwd DIR            run from DIR inside the workspace "
	    "(default: its root)\n"
	    "  --tier TIER          read_only, read_write, confined or admin "
	    "(default: the\n"
	    "                       config's; auto is decided as read_only "
	    "here: a confined\n"
	    "                       worker decides as --tier confined)\n"
	    "  --sandbox MODE       hold, refuse or off (default: the "
	    "config's)\n"
	    "  -h, --help           show this help\n"
	    "\n"
	    "Exit status: 0; 1 if the config is bad or a --batch line is "
	    "not a JSON\nstring (its line says so); 2 on a usage error.\n", f);
}

/* classify's options. */
static int
execq_classify_set(struct execq_opts *o, const char *cmd, int ch,
    const char *arg)
{
	struct execq_classify_opts	*co = (struct execq_classify_opts *)o;

	switch (ch) {
	case 'f':
		co->config = arg;
		return (0);
	case 'w':
		co->workspace = arg;
		return (0);
	case 't':
		co->tier = arg;
		return (0);
	case 's':
		co->sandbox = arg;
		return (0);
	case 'c':
		co->command = arg;
		return (0);
	case 'b':
		co->batch = 1;
		return (0);
	}
	return (execq_opts_set(o, cmd, ch, arg));
}

/* Loads the policy's settings as the worker would, plus our flags. */
static int
execq_classify_config(const struct execq_classify_opts *co,
    struct policy_settings *ps)
{
	struct policy_settings	 over;
	char			*cause = NULL;

	memset(&over, 0, sizeof over);
	over.workspace = (char *)co->workspace;
	over.tier = (char *)co->tier;
	over.sandbox = (char *)co->sandbox;
	over.queue = NULL;	/* the file's, or $EXECQ_QUEUE */
	if (policyconf_settings_load(ps, co->config, environ, &over,
	    &cause) != 0) {
		execq_error("%s", cause != NULL ? cause : "bad config");
		free(cause);
		return (-1);
	}
	return (0);
}

/* One verdict as JSON. */
static json_t *
execq_verdict_json(const struct policy_settings *c, const char *cmd,
    size_t len,
    const char *cwd)
{
	struct cls_verdict	 v;
	const char		*rule, *reason;
	enum cls_action		 act;
	json_t			*o, *cmds;
	size_t			 i;

	cls_classify(policyconf_policy(c->pc), cmd, len, cwd, &v);
	act = cls_decide(&v, c->tier_level, c->sandbox_mode, &rule, &reason);
	cmds = json_array();
	for (i = 0; i < v.ncmds; i++)
		json_array_append_new(cmds, json_pack("{s:s?, s:s, s:s?, s:s?}",
		    "command", v.cmds[i].text,
		    "risk", cls_risk_name(v.cmds[i].risk),
		    "rule", v.cmds[i].rule, "reason", v.cmds[i].reason));
	o = json_pack("{s:s, s:s, s:s?, s:s?, s:s, s:b, s:s?, s:o}",
	    "risk", cls_risk_name(v.risk),
	    "action", cls_action_name(act),
	    "rule", rule, "reason", reason,
	    "tier", cls_tier_name(c->tier_level),
	    "complete", v.complete,
	    "outside", v.outside,
	    "commands", cmds);
	cls_verdict_release(&v);
	return (o);
}

/* Prints o as one line and frees it; -1 (said) if stdout fails. */
static int
execq_print_line(json_t *o)
{
	char	*s;
	int	 r = 0;

	s = json_dumps(o, JSON_COMPACT|JSON_PRESERVE_ORDER|JSON_ENSURE_ASCII);
	json_decref(o);
	if (s == NULL || printf("%s\n", s) < 0)
		r = -1;
	free(s);
	return (r);
}

/* --batch: one JSON string per line in, one verdict per line out. */
static int
execq_classify_batch(const struct policy_settings *c, const char *cwd)
{
	json_error_t	 jerr;
	json_t		*line;
	char		*buf = NULL;
	size_t		 cap = 0;
	ssize_t		 n;
	long		 lineno = 0;
	int		 rc = 0;

	while ((n = getline(&buf, &cap, stdin)) != -1) {
		lineno++;
		line = json_loadb(buf, n, JSON_DECODE_ANY|JSON_ALLOW_NUL, &jerr);
		if (line == NULL || !json_is_string(line)) {
			execq_print_line(json_pack("{s:s, s:I}", "error",
			    line == NULL ? jerr.text : "not a JSON string",
			    "line", (json_int_t)lineno));
			json_decref(line);
			rc = 1;
			continue;
		}
		if (execq_print_line(execq_verdict_json(c,
		    json_string_value(line), json_string_length(line),
		    cwd)) != 0) {
			json_decref(line);
			rc = 1;
			break;
		}
		json_decref(line);
	}
	free(buf);
	if (fflush(stdout) == EOF) {
		execq_error("stdout: %s", strerror(errno));
		rc = 1;
	}
	return (rc);
}

/* execq classify: the policy's verdict, nothing run. */
int
execq_cmd_classify(const char *redis, int argc, char **argv)
{
	struct execq_classify_opts	 co;
	struct policy_settings		 c;
	enum errcode			 code;
	char				*cwd = NULL, *cause;
	int				 rc;

	memset(&co, 0, sizeof co);
	memset(&c, 0, sizeof c);
	execq_opts_init(&co.o, redis);
	if ((rc = execq_opts_getopt(&co.o, "classify", argc, argv, "hc:",
	    execq_classify_longopts, execq_classify_set,
	    execq_classify_usage)) != 0) {
		rc = rc == 1 ? 0 : EXECQ_EXIT_USAGE;
		goto out;
	}
	if (optind < argc || (co.command == NULL) == !co.batch) {
		rc = execq_usage_error("classify", optind < argc ?
		    "unexpected '%s' (quote the command after -c)" :
		    "give either -c COMMAND or --batch", argv[optind]);
		goto out;
	}
	rc = 1;
	if (execq_classify_config(&co, &c) != 0)
		goto out;
	if ((cwd = cmdenv_resolve_cwd(c.workspace, co.o.cwd, &code,
	    &cause)) == NULL) {
		execq_error("--cwd: %s", cause);
		free(cause);
		goto out;
	}
	if (co.batch)
		rc = execq_classify_batch(&c, cwd);
	else
		rc = execq_print_line(execq_verdict_json(&c, co.command,
		    strlen(co.command), cwd)) == 0 && fflush(stdout) == 0 ?
		    0 : 1;
out:
	free(cwd);
	policyconf_settings_release(&c);
	execq_opts_release(&co.o);
	return (rc);
}

/* approvals, approve and reject's options. */
struct execq_decide_opts {
	struct execq_opts	 o;
	const char		*by, *reason;
	int			 json;
};

static const struct option execq_decide_longopts[] = {
	{ "by",		required_argument, NULL, 'b' },
	{ "reason",	required_argument, NULL, 'r' },
	{ "json",	no_argument,	   NULL, EXECQ_OPT_JSON },
	{ "wait",	required_argument, NULL, EXECQ_OPT_WAIT },
	{ "redis",	required_argument, NULL, EXECQ_OPT_REDIS },
	{ "help",	no_argument,	   NULL, 'h' },
	{ NULL,		0,		   NULL, 0 }
};

/* approvals --help. */
static void
execq_approvals_usage(FILE *f)
{
	fputs("usage: execq approvals [--json] [--redis URL]\n"
	    "\n"
	    "Lists the commands waiting for approval on every worker, oldest\n"
	    "first, under a header row: request id, EXPIRES IN (the time\n"
	    "left to decide; then the item answers approval_expired), risk,\n"
	    "the rule and reason that held it, the worker, cwd and the\n"
	    "command, then what an approval also covers or grants: the env\n"
	    "(a line a variable), network, the outside path made writable.\n"
	    "Control characters, escape sequences and bidi or invisible\n"
	    "characters are shown escaped (\\r, \\e[2K, \\u202e; a backslash\n"
	    "as \\\\), so what shows is what would run; --json has the bytes.\n"
	    "Approve or reject one with 'execq approve ID' or\n"
	    "'execq reject ID --reason TEXT' (a unique prefix of the id is\n"
	    "enough). A request whose worker has stopped is marked (worker\n"
	    "gone): it can no longer run.\n"
	    "\n"
	    "Options:\n"
	    "  --json          one APPROVAL_REQUEST object per line\n"
	    "  --redis URL     the Redis (default: $EXECQ_REDIS_URL, "
	    "./.tmp/run/redis.sock,\n"
	    "                  redis://127.0.0.1:6379)\n"
	    "  -h, --help      show this help\n"
	    "\n"
	    "Exit status: 0; 125 if Redis fails; 2 on a usage error.\n", f);
}

/* What approve and reject have in common, for --help. */
static void
execq_decide_usage_body(FILE *f)
{
	fputs("\n"
	    "Decides a held command (see 'execq approvals'; a unique prefix\n"
	    "of the request id is enough). The decision goes to the stream\n"
	    "execq:decisions, which only approvers may write (Redis ACL, see\n"
	    "docs/PROTOCOL.md); the worker that holds the command runs it\n"
	    "(approve) or answers 'rejected', and this waits until it has.\n"
	    "An approval covers exactly the command, cwd and env shown.\n"
	    "\n"
	    "Options:\n"
	    "  --by NAME        who decides (default: $EXECQ_APPROVER, the "
	    "Redis user,\n"
	    "                   else the login name)\n"
	    "  --reason TEXT    why (required to reject)\n"
	    "  --wait SECONDS   how long to wait for the worker (default 5)\n"
	    "  --redis URL      the Redis (as for execq run)\n"
	    "  -h, --help       show this help\n"
	    "\n"
	    "Exit status: 0 when the worker acted on this decision; 1 if the\n"
	    "request is unknown, expired, its worker is gone, or it was\n"
	    "decided otherwise (first decision wins); 124 if the worker did not\n"
	    "confirm in time; 125 if Redis refused (NOPERM: not an approver)\n"
	    "or failed; 2 on a usage error.\n", f);
}

/* approve --help. */
static void
execq_approve_usage(FILE *f)
{
	fputs("usage: execq approve ID [--by NAME] [--reason TEXT] "
	    "[--wait SECONDS]\n", f);
	execq_decide_usage_body(f);
}

/* reject --help. */
static void
execq_reject_usage(FILE *f)
{
	fputs("usage: execq reject ID --reason TEXT [--by NAME] "
	    "[--wait SECONDS]\n", f);
	execq_decide_usage_body(f);
}

/* The decide options. */
static int
execq_decide_set(struct execq_opts *o, const char *cmd, int ch,
    const char *arg)
{
	struct execq_decide_opts	*d = (struct execq_decide_opts *)o;

	switch (ch) {
	case 'b':
		d->by = arg;
		return (0);
	case 'r':
		d->reason = arg;
		return (0);
	case EXECQ_OPT_JSON:
		d->json = 1;
		return (0);
	}
	return (execq_opts_set(o, cmd, ch, arg));
}

/* The record of a request as JSON, or NULL (none, or said). */
static json_t *
execq_request_get(struct execq_session *s, const char *request)
{
	redisReply	*r;
	json_t		*o = NULL;

	r = execq_reply(s, "GET", client_approval_get(s->c, request));
	if (r == NULL)
		return (NULL);
	if (r->type == REDIS_REPLY_STRING)
		o = json_loadb(r->str, r->len, 0, NULL);
	freeReplyObject(r);
	return (o);
}

/* Pending request ids, oldest first; NULL (said). */
static redisReply *
execq_pending(struct execq_session *s)
{
	return (execq_reply(s, "ZRANGEBYSCORE", client_approvals_pending(s->c,
	    clock_wall_ms())));
}

/* A string member, or "". */
static const char *
execq_jstr(const json_t *o, const char *key)
{
	const char	*s = json_string_value(json_object_get(o, key));

	return (s != NULL ? s : "");
}

/* 1 if the request's worker still beats (0 if it is gone). */
static int
execq_worker_alive(struct execq_session *s, const json_t *o)
{
	redisReply	*r;
	int		 alive = 1;

	r = execq_reply(s, "EXISTS", client_worker_alive(s->c,
	    execq_jstr(o, "worker")));
	if (r != NULL && r->type == REDIS_REPLY_INTEGER)
		alive = r->integer == 1;
	if (r != NULL)
		freeReplyObject(r);
	return (alive);
}

/*
 * The column names above the first request: EXPIRES IN is the time left
 * to decide before the worker answers approval_expired. Below them, what
 * an approval covers and grants: the env (a line a variable), network,
 * and the outside path it would make writable.
 */
static void
execq_approvals_header(void)
{
	printf("%-32s  %10s  %-11s %-24s %s\n", "REQUEST", "EXPIRES IN",
	    "RISK", "RULE", "WORKER");
	printf("    REASON\n    cwd DIRECTORY\n    $ COMMAND\n"
	    "    [env NAME=VALUE] [grant network] [grant domain NAME]\n"
	    "    [grant write PATH]\n");
}

/*
 * One pending request, human-readable, under execq_approvals_header.
 * Every string in it is the agent's or a worker's, and every line is
 * escaped (execq_line), so what the terminal shows is what would run.
 */
static void
execq_approval_print(const json_t *o, long long now, int alive)
{
	const char	*name;
	json_t		*v;
	long long	 left;
	size_t		 i;

	left = (json_integer_value(json_object_get(o, "expires_ms")) - now) /
	    1000;
	execq_line(stdout, "%-32s  %6lldm%02llds  %-11s %-24s %s%s",
	    execq_jstr(o, "request"), left / 60, left % 60,
	    execq_jstr(o, "risk"), execq_jstr(o, "rule"),
	    execq_jstr(o, "worker"), alive ? "" : " (worker gone)");
	execq_line(stdout, "    %s", execq_jstr(o, "reason"));
	execq_line(stdout, "    cwd %s", execq_jstr(o, "cwd"));
	execq_line(stdout, "    $ %s", execq_jstr(o, "command"));
	json_object_foreach(json_object_get(o, "env"), name, v)
		execq_line(stdout, "    env %s=%s", name,
		    json_is_string(v) ? json_string_value(v) : "");
	if (json_is_true(json_object_get(o, "network")))
		execq_line(stdout, "    grant network");
	json_array_foreach(json_object_get(o, "network_domains"), i, v)
		execq_line(stdout, "    grant domain %s",
		    json_is_string(v) ? json_string_value(v) : "");
	if (json_is_string(json_object_get(o, "grant_path")))
		execq_line(stdout, "    grant write %s",
		    execq_jstr(o, "grant_path"));
}

/* execq approvals: what waits for a human. */
int
execq_cmd_approvals(const char *redis, int argc, char **argv)
{
	struct execq_decide_opts	 d;
	struct execq_session		 s;
	redisReply			*ids = NULL;
	json_t				*o;
	long long			 now = clock_wall_ms();
	size_t				 i, shown = 0;
	int				 rc;

	memset(&d, 0, sizeof d);
	memset(&s, 0, sizeof s);
	execq_opts_init(&d.o, redis);
	if ((rc = execq_opts_getopt(&d.o, "approvals", argc, argv, "h",
	    execq_decide_longopts, execq_decide_set,
	    execq_approvals_usage)) != 0) {
		rc = rc == 1 ? 0 : EXECQ_EXIT_USAGE;
		goto out;
	}
	if (optind < argc) {
		rc = execq_usage_error("approvals", "unexpected '%s'",
		    argv[optind]);
		goto out;
	}
	if ((rc = execq_session_open(&s, &d.o)) != 0)
		goto out;
	rc = EXECQ_EXIT_FAIL;
	if ((ids = execq_pending(&s)) == NULL)
		goto out;
	for (i = 0; i < ids->elements; i++) {
		if ((o = execq_request_get(&s, ids->element[i]->str)) == NULL)
			continue;
		if (strcmp(execq_jstr(o, "state"), "pending") == 0) {
			if (!d.json && shown == 0)
				execq_approvals_header();
			shown++;
			if (d.json)
				execq_print_line(json_incref(o));
			else
				execq_approval_print(o, now,
				    execq_worker_alive(&s, o));
		}
		json_decref(o);
	}
	if (!d.json && shown == 0)
		printf("nothing waits for approval\n");
	rc = fflush(stdout) == 0 ? 0 : 1;
out:
	if (ids != NULL)
		freeReplyObject(ids);
	if (s.c != NULL)
		execq_session_close(&s);
	execq_opts_release(&d.o);
	return (rc);
}

/* The full request id for id or a unique prefix of a pending one. */
static char *
execq_request_resolve(struct execq_session *s, const char *id)
{
	redisReply	*ids;
	char		*found = NULL;
	size_t		 i, n = 0, len = strlen(id);

	if (len == EXECQ_REQUEST_LEN)
		return (xstrdup(id));
	if ((ids = execq_pending(s)) == NULL)
		return (NULL);
	for (i = 0; i < ids->elements; i++) {
		if (strncmp(ids->element[i]->str, id, len) != 0)
			continue;
		n++;
		free(found);
		found = xstrdup(ids->element[i]->str);
	}
	freeReplyObject(ids);
	if (n == 1)
		return (found);
	free(found);
	execq_error("%s: %s", id, n == 0 ? "no pending request has this id" :
	    "more than one pending request starts like this");
	return (NULL);
}

/* Who decides: --by, $EXECQ_APPROVER, the Redis user, the login. */
static char *
execq_approver(struct execq_session *s, const char *by)
{
	const char	*env = getenv("EXECQ_APPROVER");
	struct passwd	*pw;
	redisReply	*r;
	char		*name = NULL;

	if (by != NULL)
		return (xstrdup(by));
	if (env != NULL && *env != '\0')
		return (xstrdup(env));
	r = client_whoami(s->c);
	if (r != NULL && r->type == REDIS_REPLY_STRING &&
	    strcmp(r->str, "default") != 0)
		name = xstrdup(r->str);
	if (r != NULL)
		freeReplyObject(r);
	if (name == NULL && (pw = getpwuid(getuid())) != NULL)
		name = xstrdup(pw->pw_name);
	return (name != NULL ? name : xstrdup("unknown"));
}

/* Sends the decision: 0, or an exit code (said). */
static int
execq_decision_send(struct execq_session *s, int approve,
    const char *request, const char *by, const char *reason)
{
	redisReply	*r;
	json_t		*o;
	char		*text;
	int		 rc = 0;

	o = json_pack("{s:s, s:s, s:s, s:s?}", "type", approve ? "APPROVE" :
	    "REJECT", "request", request, "by", by, "reason", reason);
	text = json_dumps(o, JSON_COMPACT|JSON_PRESERVE_ORDER);
	json_decref(o);
	r = client_decision_add(s->c, text, strlen(text));
	free(text);
	if (r == NULL || r->type == REDIS_REPLY_ERROR) {
		execq_error("Redis at %s refused the decision: %s%s", s->display,
		    r != NULL ? r->str : client_errstr(s->c), r != NULL &&
		    strncmp(r->str, "NOPERM", 6) == 0 ? " (this Redis user may "
		    "not approve; see docs/PROTOCOL.md, Approvals)" : "");
		rc = EXECQ_EXIT_FAIL;
	}
	if (r != NULL)
		freeReplyObject(r);
	return (rc);
}

/* Waits for the worker to act on it: 0, 1 (not as asked), 124. */
static int
execq_decision_wait(struct execq_session *s, const char *request,
    int approve, double wait_s)
{
	long long	 deadline = clock_mono_ms() + (long long)(wait_s * 1000);
	const char	*state;
	json_t		*o;
	int		 rc = EXECQ_EXIT_TIMED_OUT;

	do {
		if ((o = execq_request_get(s, request)) == NULL)
			return (EXECQ_EXIT_FAIL);
		state = execq_jstr(o, "state");
		if (strcmp(state, "pending") != 0) {
			execq_line(stdout, "%s: %s (item %s on %s)", request,
			    state, execq_jstr(o, "id"),
			    execq_jstr(o, "worker"));
			/* Another decision may have come first. */
			rc = strcmp(state, approve ? "approved" : "rejected") ==
			    0 ? 0 : 1;
			if (rc != 0)
				execq_error("%s: not %s: it was %s%s%s first",
				    request, approve ? "approved" : "rejected",
				    state, *execq_jstr(o, "decided_by") != '\0' ?
				    " by " : "", execq_jstr(o, "decided_by"));
			json_decref(o);
			return (rc);
		}
		json_decref(o);
		usleep(50000);
	} while (clock_mono_ms() < deadline);
	execq_error("%s: sent, but its worker has not confirmed it yet",
	    request);
	return (rc);
}

/* Checks the request is pending: 0, or 1 (said). */
static int
execq_request_pending(struct execq_session *s, const char *request)
{
	json_t		*o;
	const char	*state;
	int		 rc = 0;

	if ((o = execq_request_get(s, request)) == NULL) {
		execq_error("%s: no such request (or it is over a day old)",
		    request);
		return (1);
	}
	state = execq_jstr(o, "state");
	if (strcmp(state, "pending") != 0) {
		execq_error("%s: already %s%s%s", request, state,
		    *execq_jstr(o, "decided_by") != '\0' ? " by " : "",
		    execq_jstr(o, "decided_by"));
		rc = 1;
	} else if (json_integer_value(json_object_get(o, "expires_ms")) <=
	    clock_wall_ms()) {
		execq_error("%s: expired", request);
		rc = 1;
	} else if (!execq_worker_alive(s, o)) {
		execq_error("%s: its worker %s is gone (the item is answered "
		    "worker_lost)", request, execq_jstr(o, "worker"));
		rc = 1;
	}
	json_decref(o);
	return (rc);
}

/* approve and reject. */
static int
execq_decide(const char *redis, int argc, char **argv, int approve)
{
	const char		*cmd = approve ? "approve" : "reject";
	struct execq_decide_opts d;
	struct execq_session	 s;
	char			*request = NULL, *by = NULL;
	int			 rc;

	memset(&d, 0, sizeof d);
	memset(&s, 0, sizeof s);
	execq_opts_init(&d.o, redis);
	if ((rc = execq_opts_getopt(&d.o, cmd, argc, argv, "h",
	    execq_decide_longopts, execq_decide_set, approve ?
	    execq_approve_usage : execq_reject_usage)) != 0) {
		rc = rc == 1 ? 0 : EXECQ_EXIT_USAGE;
		goto out;
	}
	if (optind != argc - 1 || (!approve && d.reason == NULL)) {
		rc = execq_usage_error(cmd, optind != argc - 1 ?
		    "give one request id" : "reject needs --reason TEXT");
		goto out;
	}
	if ((rc = execq_session_open(&s, &d.o)) != 0)
		goto out;
	rc = 1;
	if ((request = execq_request_resolve(&s, argv[optind])) == NULL ||
	    execq_request_pending(&s, request) != 0)
		goto out;
	by = execq_approver(&s, d.by);
	if ((rc = execq_decision_send(&s, approve, request, by,
	    d.reason)) != 0)
		goto out;
	rc = execq_decision_wait(&s, request, approve, d.o.wait_s > 0 ?
	    d.o.wait_s :
	    EXECQ_DECIDE_WAIT_S);
out:
	free(request);
	free(by);
	if (s.c != NULL)
		execq_session_close(&s);
	execq_opts_release(&d.o);
	return (rc);
}

/* execq approve ID. */
int
execq_cmd_approve(const char *redis, int argc, char **argv)
{
	return (execq_decide(redis, argc, argv, 1));
}

/* execq reject ID --reason TEXT. */
int
execq_cmd_reject(const char *redis, int argc, char **argv)
{
	return (execq_decide(redis, argc, argv, 0));
}
