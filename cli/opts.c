/*
 * execq: the options of run, submit and spawn, and the EXEC item they
 * make.
 */

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>
#include <jansson.h>

#include "cli/cli.h"
#include "logs/xmalloc.h"
#include "queue/keyspace.h"

/* Adds --env K=V to o->env; -1 (said) if it is not K=V or not UTF-8. */
static int
execq_opts_add_env(struct execq_opts *o, const char *cmd, const char *arg)
{
	const char	*eq;
	char		*key;
	int		 rc;

	if ((eq = strchr(arg, '=')) == NULL || eq == arg) {
		execq_usage_error(cmd, "--env wants NAME=VALUE, not '%s'", arg);
		return (-1);
	}
	if (o->env == NULL)
		o->env = json_object();
	key = xstrndup(arg, eq - arg);
	rc = json_object_set_new(o->env, key, json_string(eq + 1));
	free(key);
	if (rc == -1)
		execq_usage_error(cmd, "--env '%s' is not valid UTF-8", arg);
	return (rc);
}

/* Applies one parsed option; -1 (said) on a bad value. */
int
execq_opts_set(struct execq_opts *o, const char *cmd, int ch,
    const char *arg)
{
	switch (ch) {
	case EXECQ_OPT_TIMEOUT:
		if (execq_parse_seconds(arg, &o->timeout_s) == -1)
			goto bad;
		return (0);
	case EXECQ_OPT_WAIT:
		if (execq_parse_seconds(arg, &o->wait_s) == -1)
			goto bad;
		return (0);
	case EXECQ_OPT_RETRY:
		if (execq_parse_long(arg, 1, 25, &o->retry) == -1) {
			execq_usage_error(cmd, "--retry wants a number of "
			    "attempts from 1 to 25, not '%s'", arg);
			return (-1);
		}
		return (0);
	case EXECQ_OPT_DELAY:
		if (execq_parse_seconds(arg, &o->delay_s) == -1)
			goto bad;
		return (0);
	case EXECQ_OPT_ENV:
		return (execq_opts_add_env(o, cmd, arg));
	case EXECQ_OPT_CWD:
		o->cwd = arg;
		return (0);
	case EXECQ_OPT_TIER:
		o->tier = arg;
		return (0);
	case EXECQ_OPT_QUEUE:
		o->queue = arg;
		return (0);
	case EXECQ_OPT_PRIORITY:
		o->lane = arg;
		return (0);
	case EXECQ_OPT_ID:
		o->id = arg;
		return (0);
	case EXECQ_OPT_REDIS:
		o->redis = arg;
		return (0);
	case EXECQ_OPT_RAW:
		o->raw = arg;
		o->submit_only = 1;
		return (0);
	case EXECQ_OPT_REPLY_DEFAULT:
		o->reply_default = arg;
		o->submit_only = 1;
		return (0);
	}
bad:
	execq_usage_error(cmd, "%s wants a number of seconds > 0, not '%s'",
	    ch == EXECQ_OPT_WAIT ? "--wait" : ch == EXECQ_OPT_DELAY ?
	    "--delay" : "--timeout", arg);
	return (-1);
}

/* Checks names and combinations once every option is known. */
static int
execq_opts_check(struct execq_opts *o, const char *cmd)
{
	if (!execq_name_valid(o->queue))
		goto badname;
	if (strcmp(o->lane, KS_LANE_HIGH) != 0 &&
	    strcmp(o->lane, KS_LANE_NORMAL) != 0 &&
	    strcmp(o->lane, KS_LANE_LOW) != 0) {
		execq_usage_error(cmd, "--priority is high, normal or low, "
		    "not '%s'", o->lane);
		return (-1);
	}
	if (o->id != NULL && !execq_name_valid(o->id)) {
		execq_usage_error(cmd, "bad --id '%s': it must match "
		    EXECQ_NAME_RULE, o->id);
		return (-1);
	}
	if (o->reply_to != NULL && !execq_name_valid(o->reply_to)) {
		execq_usage_error(cmd, "bad --reply-to '%s': it must match "
		    EXECQ_NAME_RULE, o->reply_to);
		return (-1);
	}
	if (!execq_name_valid(o->reply_default)) {
		execq_usage_error(cmd, "bad --reply-default '%s'",
		    o->reply_default);
		return (-1);
	}
	if (o->command != NULL && *o->command == '\0') {
		execq_usage_error(cmd, "the command is empty");
		return (-1);
	}
	return (0);

badname:
	execq_usage_error(cmd, "bad queue name '%s': it must match "
	    EXECQ_NAME_RULE, o->queue);
	return (-1);
}

/* The options loop every subcommand shares (see cli/cli.h). */
int
execq_opts_getopt(struct execq_opts *o, const char *cmd, int argc,
    char **argv, const char *shortopts, const struct option *longopts,
    execq_opts_set_fn set, void (*usage)(FILE *))
{
	int	ch;

	if (set == NULL)
		set = execq_opts_set;
	optind = 0;	/* GNU: start over, argv[0] is the subcommand */
	while ((ch = getopt_long(argc, argv, shortopts, longopts,
	    NULL)) != -1) {
		if (ch == 'h') {
			usage(stdout);
			return (1);
		}
		if (ch == '?') {		/* getopt said why */
			execq_usage_hint(cmd);
			return (-1);
		}
		if (set(o, cmd, ch, optarg) == -1)
			return (-1);
	}
	return (0);
}

/* Parses options and command words: 0, 1 after --help, -1 (said) if bad. */
int
execq_opts_parse(struct execq_opts *o, const char *cmd, int argc,
    char **argv, const char *shortopts, const struct option *longopts,
    execq_opts_set_fn set, void (*usage)(FILE *))
{
	int	rc;

	if ((rc = execq_opts_getopt(o, cmd, argc, argv, shortopts, longopts,
	    set, usage)) != 0)
		return (rc);
	if (optind < argc)
		o->command = execq_join_command(argc - optind, argv + optind);
	if (o->wait_s == 0 && o->background)	/* EXEC_STARTED is at once */
		o->wait_s = EXECQ_SPAWN_WAIT_S;
	else if (o->wait_s == 0 && o->raw == NULL)	/* raw: submit_raw */
		o->wait_s = (o->timeout_s > 0 ? o->timeout_s :
		    EXECQ_TIMEOUT_S) + EXECQ_WAIT_SLACK_S;
	return (execq_opts_check(o, cmd));
}

/* Defaults for every subcommand; redis is the global --redis, if any. */
void
execq_opts_init(struct execq_opts *o, const char *redis)
{
	const char	*queue;
	char		*from;

	memset(o, 0, sizeof *o);
	o->redis = redis;
	queue = getenv("EXECQ_QUEUE");
	if (queue == NULL || *queue == '\0') {
		o->conf_queue = execq_conf_get("queue", &from);
		free(from);
		queue = o->conf_queue;
	}
	o->queue = queue != NULL ? queue : EXECQ_DEFAULT_QUEUE;
	o->lane = KS_LANE_NORMAL;
	o->reply_default = EXECQ_DEFAULT_REPLIES;
	o->tail_lines = -1;
}

/* Frees what parsing allocated. */
void
execq_opts_release(struct execq_opts *o)
{
	json_decref(o->env);
	free(o->command);
	free(o->conf_queue);
	memset(o, 0, sizeof *o);
}

/* Seconds as JSON: an integer when whole, so the item reads naturally. */
static json_t *
execq_json_seconds(double v)
{
	long long	whole;

	whole = (long long)v;
	return (whole == v ? json_integer(whole) : json_real(v));
}

/* A session's extra EXEC arguments (PROTOCOL.md section 11). */
static void
execq_item_session_args(const struct execq_opts *o, json_t *args)
{
	json_object_set_new(args, "background", json_true());
	if (o->shell)
		json_object_set_new(args, "shell", json_true());
	if (o->pty)
		json_object_set_new(args, "pty", json_true());
	if (o->rows > 0)
		json_object_set_new(args, "rows", json_integer(o->rows));
	if (o->cols > 0)
		json_object_set_new(args, "cols", json_integer(o->cols));
	if (o->idle_timeout_s > 0)
		json_object_set_new(args, "idle_timeout_s",
		    execq_json_seconds(o->idle_timeout_s));
	if (o->keep)
		json_object_set_new(args, "keep", json_true());
	if (o->tail_lines >= 0)
		json_object_set_new(args, "tail_lines",
		    json_integer(o->tail_lines));
}

/* The EXEC item as compact JSON, or NULL (said) if a string is not UTF-8. */
char *
execq_item_json(const struct execq_opts *o, const char *id,
    const char *reply)
{
	json_t		*args, *root = NULL;
	char		*text = NULL;

	if ((args = json_pack("{s:s}", "command", o->command)) == NULL)
		goto out;
	if (o->cwd != NULL &&
	    json_object_set_new(args, "cwd", json_string(o->cwd)) == -1)
		goto out;
	if (o->tier != NULL &&
	    json_object_set_new(args, "tier", json_string(o->tier)) == -1)
		goto out;
	if (o->timeout_s > 0)
		json_object_set_new(args, "timeout_s",
		    execq_json_seconds(o->timeout_s));
	if (o->background)
		execq_item_session_args(o, args);
	if (o->stream)
		json_object_set_new(args, "stream", json_true());
	if (o->retry > 0)
		json_object_set_new(args, "retry", json_pack("{s:I}",
		    "max_attempts", (json_int_t)o->retry));
	if (o->delay_s > 0)
		json_object_set_new(args, "delay_ms", json_integer(
		    (json_int_t)(o->delay_s * 1000 + 0.5)));
	if (o->env != NULL)
		json_object_set(args, "env", o->env);
	root = json_pack("{s:s, s:s, s:s, s:O}", "id", id, "type", "EXEC",
	    "reply_to", reply, "args", args);
	if (root != NULL)
		text = json_dumps(root, JSON_COMPACT);
out:
	if (text == NULL)
		execq_error("the command or --cwd is not valid UTF-8");
	json_decref(args);
	json_decref(root);
	return (text);
}
