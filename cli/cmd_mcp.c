/*
 * execq mcp: the MCP server over stdio (docs/MCP.md), its options and
 * --help; cli/mcp.h says how it is made.
 */

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include "cli/cli.h"
#include "cli/mcp.h"

static const struct option execq_mcp_longopts[] = {
	{ "queue",		required_argument, NULL, EXECQ_OPT_QUEUE },
	{ "redis",		required_argument, NULL, EXECQ_OPT_REDIS },
	{ "help",		no_argument,	   NULL, 'h' },
	{ NULL,			0,		   NULL, 0 }
};

/* mcp --help. */
static void
execq_mcp_usage(FILE *f)
{
	fputs("usage: execq mcp [--queue Q] [--redis URL]\n"
	    "\n"
	    "Serves the exec and process tools ('execq tools') to an agent as\n"
	    "a Model Context Protocol server on stdin and stdout: JSON-RPC\n"
	    "2.0, one message a line, protocol 2025-06-18 (2025-03-26 and\n"
	    "2024-11-05 too). An MCP client starts it as a stdio server; see\n"
	    "docs/MCP.md for its config.\n"
	    "\n"
	    "Each tool call becomes an item on the worker queue and its\n"
	    "answer the tool's result. One server is one agent: one reply\n"
	    "queue for its life (mcp.<host>.<pid>.<random>, after\n"
	    "<user>. with a Redis user), the session tokens kept in memory\n"
	    "and never shown to the model. A command held for approval\n"
	    "answers at once that it is held; process wait on its id waits\n"
	    "for its answer. Sessions' callbacks come as\n"
	    "notifications/message and through process callbacks.\n"
	    "\n"
	    "Redis is reached on the first tools/call, as every client\n"
	    "command reaches it (see 'execq --help'); initialize, ping,\n"
	    "tools/list and logging/setLevel answer without it.\n"
	    "\n"
	    "Options:\n"
	    "  --queue Q       work queue (default: $EXECQ_QUEUE, else exec)\n"
	    "  --redis URL     Redis address (see 'execq --help')\n"
	    "  -h, --help      show this help\n"
	    "\n"
	    "Nothing but JSON-RPC is written on stdout; messages go to\n"
	    "stderr. Exit status: 0 at the end of stdin; 1 if stdin or\n"
	    "stdout failed; 2 on a usage error.\n", f);
}

/* execq mcp: serve stdin until it ends. */
int
execq_cmd_mcp(const char *redis, int argc, char **argv)
{
	struct execq_opts	 o;
	struct execq_mcp	 m;
	char			*cause;
	int			 rc;

	execq_opts_init(&o, redis);
	if ((rc = execq_opts_getopt(&o, "mcp", argc, argv, "h",
	    execq_mcp_longopts, NULL, execq_mcp_usage)) != 0) {
		rc = rc == 1 ? 0 : EXECQ_EXIT_USAGE;
		execq_opts_release(&o);
		return (rc);
	}
	if (optind < argc) {
		execq_opts_release(&o);
		return (execq_usage_error("mcp", "unexpected '%s'",
		    argv[optind]));
	}
	if (execq_mcp_init(&m, o.redis, &cause) == -1) {
		execq_error("%s", cause);	/* a build gone wrong */
		free(cause);
		execq_mcp_release(&m);
		execq_opts_release(&o);
		return (1);
	}
	m.o.queue = o.queue;	/* --queue: borrowed from argv */
	rc = execq_mcp_serve(&m);
	execq_mcp_release(&m);
	execq_opts_release(&o);
	return (rc);
}
