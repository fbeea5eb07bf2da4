/*
 * execq: the command-line client. It puts items on a worker's queues,
 * waits for the answers on a private reply queue and shows them.
 *
 *   execq [--redis URL] run [OPTIONS] [--] CMD [ARG...]
 *   execq [--redis URL] submit [OPTIONS] [--raw TEXT | [--] CMD [ARG...]]
 *   execq [--redis URL] spawn|ps|logs|send|keys|kill|wait|callbacks ...
 *   execq [--redis URL] workers|approvals|approve|reject ...
 *   execq classify|cleanup|tools [OPTIONS]
 *   execq [--redis URL] mcp [OPTIONS]
 *
 * This file: the table of subcommands, --help and main. cli/cli.h says
 * which file holds what.
 */

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "cli/cli.h"
#include "logs/log.h"
#include "logs/xmalloc.h"

static const struct option execq_global_longopts[] = {
	{ "redis",		required_argument, NULL, EXECQ_OPT_REDIS },
	{ "help",		no_argument,	   NULL, 'h' },
	{ "version",		no_argument,	   NULL, EXECQ_OPT_VERSION },
	{ NULL,			0,		   NULL, 0 }
};

/*
 * role: which of make run's Redis users a subcommand logs in as (cli/
 * clientconf.c): an agent's, which adds items and reads its own answers,
 * or an operator's, for what reads every session, the live output, the
 * requests and the fleet, or decides (ps, logs, workers, approvals,
 * approve, reject).
 */
#define A	EXECQ_ROLE_AGENT
#define O	EXECQ_ROLE_OPERATOR
static const struct execq_cmd {
	const char	*name;
	int		(*fn)(const char *redis, int argc, char **argv);
	const char	*role;
	const char	*summary;
} execq_cmds[] = {
	{ "run",	execq_cmd_run, A,
	    "run a command on a worker; replay its output and exit status" },
	{ "submit",	execq_cmd_submit, A,
	    "send one item and print the worker's answer as JSON" },
	{ "spawn",	execq_cmd_spawn, A,
	    "start a background session; print its id" },
	{ "ps",		execq_cmd_ps, O,
	    "list sessions (running ones; --all: recent ones too)" },
	{ "logs",	execq_cmd_logs, O,
	    "print a session's output; -f: follow it until it ends" },
	{ "send",	execq_cmd_send, A,
	    "write text (or bytes, or EOF) to a session's stdin" },
	{ "keys",	execq_cmd_keys, A,
	    "send key names (Enter, C-c, Up...) to a session's terminal" },
	{ "kill",	execq_cmd_kill, A,
	    "signal a session's process tree (default TERM)" },
	{ "wait",	execq_cmd_wait, A,
	    "wait for a session to end; print its final status as JSON" },
	{ "exec",	execq_cmd_exec, A,
	    "run a command in a shell session (spawn --shell): cwd kept" },
	{ "interrupt",	execq_cmd_interrupt, A,
	    "SIGINT to what a session runs (a shell's command: it goes on)" },
	{ "cancel",	execq_cmd_cancel, A,
	    "cancel an item before it runs (queued, delayed or held)" },
	{ "callbacks",	execq_cmd_callbacks, A,
	    "print EXEC_CALLBACKs as they arrive on a reply queue" },
	{ "cleanup",	execq_cmd_cleanup, A,
	    "remove finished items' old logs; never a running one's "
	    "(local)" },
	{ "classify",	execq_cmd_classify, A,
	    "what the command policy would do with a command (runs nothing)" },
	{ "workers",	execq_cmd_workers, O,
	    "list the workers on this Redis: state, load, confinement" },
	{ "queues",	execq_cmd_queues, O,
	    "a queue's backlog per lane: waiting, running, delayed, dead" },
	{ "dead",	execq_cmd_dead, O,
	    "list the dead letters; requeue or drop them" },
	{ "approvals",	execq_cmd_approvals, O,
	    "list the commands waiting for a human's approval" },
	{ "approve",	execq_cmd_approve, O,
	    "approve a held command: its worker runs it" },
	{ "reject",	execq_cmd_reject, O,
	    "reject a held command: its worker answers 'rejected'" },
	{ "tools",	execq_cmd_tools, A,
	    "print the exec and process tools for a model (MCP, OpenAI...)" },
	{ "mcp",	execq_cmd_mcp, A,
	    "serve those tools to an agent: an MCP server on stdin/stdout" },
};
#undef A
#undef O

/* execq --help: only the subcommands that exist. */
static void
execq_usage(FILE *f)
{
	size_t	i;

	fputs("usage: execq [--redis URL] COMMAND [OPTIONS] [ARGS]\n"
	    "\n"
	    "Runs shell commands on an execq-worker through a Redis queue.\n"
	    "\n"
	    "Commands:\n", f);
	for (i = 0; i < sizeof execq_cmds / sizeof execq_cmds[0]; i++)
		fprintf(f, "  %-9s  %s\n", execq_cmds[i].name,
		    execq_cmds[i].summary);
	fputs("\n"
	    "Options:\n"
	    "  --redis URL   redis://[[user]:password@]host[:port][/db],\n"
	    "                rediss://... (the same over TLS) or\n"
	    "                unix://[[user]:password@]/path[?db=N]\n"
	    "  -h, --help    show this help; 'execq COMMAND --help' for one\n"
	    "  -V, --version print the version\n"
	    "\n"
	    "Where Redis is, the first that says: --redis; $EXECQ_REDIS_URL;\n"
	    "redis_url in the client config file ($XDG_CONFIG_HOME/execq/\n"
	    "config, else ~/.config/execq/config; else /etc/execq/client.conf:\n"
	    "lines of 'key = value', keys redis_url and queue); the socket of\n"
	    "'make run' (" EXECQ_RUN_SOCKET ") here or in a parent directory;\n"
	    EXECQ_DEFAULT_URL ".\n"
	    "\n"
	    "rediss:// (TLS) verifies the server's certificate and its name\n"
	    "(the URL's host) against $EXECQ_REDIS_TLS_CA (a PEM file; else\n"
	    "the system's CAs); $EXECQ_REDIS_TLS_CERT and\n"
	    "$EXECQ_REDIS_TLS_KEY are a client certificate and its key;\n"
	    "$EXECQ_REDIS_TLS_SERVER_NAME, the certificate's name when it is\n"
	    "not the URL's host. The client config file's redis_tls_ca,\n"
	    "redis_tls_cert, redis_tls_key and redis_tls_server_name say the\n"
	    "same.\n"
	    "\n"
	    "Who it is there: the URL's user and password, unless\n"
	    "$EXECQ_REDIS_USER (or redis_user) and $EXECQ_REDIS_PASSWORD,\n"
	    "$EXECQ_REDIS_PASSWORD_FILE (or redis_password_file: the file's\n"
	    "first line) say. On make run's socket: its user 'agent', or\n"
	    "'operator' for ps, logs, workers, queues, approvals, approve and\nreject, "
	    "with the password in .tmp/run/redis-<user>.pass.\n"
	    "\n"
	    "Every command but cleanup, classify and tools also takes --redis\n"
	    "URL and --queue Q (the worker queue: $EXECQ_QUEUE, else queue in\n"
	    "the client config, else " EXECQ_DEFAULT_QUEUE "; for callbacks, "
	    "the reply queue:\nexecq.$USER).\n"
	    "\n"
	    "Session tokens: spawn and run keep each item's token in\n"
	    "$XDG_STATE_HOME/execq/tokens (else ~/.local/state/execq/tokens;\n"
	    "the newest 1000); logs, send, keys, kill and wait send it.\n"
	    "$EXECQ_TOKEN "
	    "overrides it; $EXECQ_OPERATOR_TOKEN acts as an operator (any\n"
	    "session).\n"
	    "\n"
	    "Exit status:\n"
	    "  0      success (run: the command's own exit status instead)\n"
	    "  1      cleanup: the log directory cannot be read; classify: a "
	    "bad\n"
	    "         config or --batch line; approve, reject: the request "
	    "is\n"
	    "         unknown, expired, gone or decided otherwise\n"
	    "  2      usage error; cleanup: no such log directory\n"
	    "  124    run: the command timed out; wait: the session is still\n"
	    "         running; callbacks: --timeout passed before --count\n"
	    "  125    execq failed: no Redis, no answer, or an ERROR answer\n"
	    "  130    logs -f, callbacks: interrupted (Ctrl-C)\n", f);
}

/* Global options, then the subcommand with argv[0] = "execq <name>". */
int
main(int argc, char **argv)
{
	const struct execq_cmd	*cmd = NULL;
	const char		*redis = NULL;
	char			 name[64];
	size_t			 i;
	int			 ch, rc;

	log_init("execq", LOG_LEVEL_WARN);	/* xmalloc's fatal() */
	/*
	 * A write to a reset Redis connection is an error, not our end; a
	 * write to stdout whose reader is gone still ends us by SIGPIPE
	 * (cli/util.c: execq_write_all, execq_error, execq_stdout_done).
	 */
	signal(SIGPIPE, SIG_IGN);
	while ((ch = getopt_long(argc, argv, "+hV", execq_global_longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'h':
			execq_usage(stdout);
			execq_stdout_done();
			return (0);
		case 'V':
		case EXECQ_OPT_VERSION:
			printf("execq %s\n", EXECQ_VERSION);
			return (0);
		case EXECQ_OPT_REDIS:
			redis = optarg;
			break;
		default:
			return (execq_usage_hint(NULL));
		}
	}
	if (optind >= argc)
		return (execq_usage_error(NULL, "no command given"));
	for (i = 0; i < sizeof execq_cmds / sizeof execq_cmds[0]; i++) {
		if (strcmp(argv[optind], execq_cmds[i].name) == 0)
			cmd = &execq_cmds[i];
	}
	if (cmd == NULL)
		return (execq_usage_error(NULL, "unknown command '%s'",
		    argv[optind]));
	execq_set_role(cmd->role);
	snprintf(name, sizeof name, "execq %s", cmd->name);
	argv[optind] = name;	/* getopt's messages say "execq run: ..." */
	rc = cmd->fn(redis, argc - optind, argv + optind);
	execq_stdout_done();	/* '| head': SIGPIPE, as a filter ends */
	return (rc);
}
