/*
 * execq mcp: the MCP server over stdio or HTTP (docs/MCP.md), its
 * options and --help; cli/mcp.h says how it is made.
 */

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/cli.h"
#include "cli/mcp.h"
#include "logs/xmalloc.h"

/* mcp's own options, after the shared ones. */
enum {
	EXECQ_MCP_OPT_HTTP = EXECQ_OPT_NO_LIVE + 1,
	EXECQ_MCP_OPT_TOKEN_FILE,
};

static const struct option execq_mcp_longopts[] = {
	{ "queue",		required_argument, NULL, EXECQ_OPT_QUEUE },
	{ "redis",		required_argument, NULL, EXECQ_OPT_REDIS },
	{ "http",		required_argument, NULL, EXECQ_MCP_OPT_HTTP },
	{ "token-file",		required_argument, NULL,
	    EXECQ_MCP_OPT_TOKEN_FILE },
	{ "help",		no_argument,	   NULL, 'h' },
	{ NULL,			0,		   NULL, 0 }
};

/* mcp --help. */
static void
execq_mcp_usage(FILE *f)
{
	fputs("usage: execq mcp [--queue Q] [--redis URL]\n"
	    "       execq mcp --http ADDR:PORT [--token-file FILE]\n"
	    "           [--queue Q] [--redis URL]\n"
	    "\n"
	    "Serves the exec and process tools ('execq tools') to an agent as\n"
	    "a Model Context Protocol server on stdin and stdout: JSON-RPC\n"
	    "2.0, one message a line, protocol 2025-06-18 (2025-03-26 and\n"
	    "2024-11-05 too). An MCP client starts it as a stdio server; see\n"
	    "docs/MCP.md for its config.\n"
	    "\n"
	    "With --http, the same over MCP's streamable HTTP transport at\n"
	    "http://ADDR:PORT/mcp (ADDR an IPv4 address, a name, or [V6]):\n"
	    "POST one message, answered as application/json; initialize\n"
	    "gives an Mcp-Session-Id header that later requests send; DELETE\n"
	    "ends a session; GET opens a text/event-stream on which ended\n"
	    "sessions' callbacks come as notifications. The Host header must\n"
	    "name this server (127.0.0.1, localhost, [::1] or ADDR, with\n"
	    "PORT), an Origin header must be a loopback one: else 403. Off\n"
	    "loopback a bearer token is required, from --token-file or\n"
	    "$EXECQ_MCP_TOKEN; given, it is checked on loopback too.\n"
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
	    "  --http ADDR:PORT  serve streamable HTTP there, not stdio\n"
	    "  --token-file FILE  the bearer token, its first line\n"
	    "  -h, --help      show this help\n"
	    "\n"
	    "Nothing but JSON-RPC is written on stdout; messages go to\n"
	    "stderr. Exit status: 0 at the end of stdin (--http: on SIGINT\n"
	    "or SIGTERM); 1 if stdin or stdout failed, or it cannot listen;\n"
	    "2 on a usage error (a non-loopback --http without a token too).\n",
	    f);
}

/* --http and --token-file, kept for execq_cmd_mcp. */
static const char	*execq_mcp_http_addr;
static const char	*execq_mcp_token_file;

/* mcp's options, then the shared ones. */
static int
execq_mcp_set(struct execq_opts *o, const char *cmd, int ch,
    const char *arg)
{
	if (ch == EXECQ_MCP_OPT_HTTP)
		execq_mcp_http_addr = arg;
	else if (ch == EXECQ_MCP_OPT_TOKEN_FILE)
		execq_mcp_token_file = arg;
	else
		return (execq_opts_set(o, cmd, ch, arg));
	return (0);
}

/*
 * The bearer token: the first line of --token-file, else
 * $EXECQ_MCP_TOKEN; *token NULL if neither. 0, or -1 (said).
 */
static int
execq_mcp_token(char **token)
{
	const char	*env = getenv("EXECQ_MCP_TOKEN");
	char		*line = NULL;
	size_t		 cap = 0, len;
	ssize_t		 n;
	FILE		*f;

	*token = NULL;
	if (execq_mcp_token_file == NULL) {
		if (env != NULL && *env != '\0')
			*token = xstrdup(env);
		return (0);
	}
	if ((f = fopen(execq_mcp_token_file, "r")) == NULL) {
		execq_error("mcp: %s: %s", execq_mcp_token_file,
		    strerror(errno));
		return (-1);
	}
	n = getline(&line, &cap, f);
	fclose(f);
	len = n > 0 ? strcspn(line, "\r\n") : 0;
	if (len == 0) {
		execq_error("mcp: %s: no token on its first line",
		    execq_mcp_token_file);
		free(line);
		return (-1);
	}
	line[len] = '\0';
	*token = line;
	return (0);
}

/* execq mcp: serve stdin until it ends, or HTTP until a signal. */
int
execq_cmd_mcp(const char *redis, int argc, char **argv)
{
	struct execq_opts	 o;
	struct execq_mcp	 m;
	char			*cause, *token = NULL;
	int			 rc;

	execq_opts_init(&o, redis);
	if ((rc = execq_opts_getopt(&o, "mcp", argc, argv, "h",
	    execq_mcp_longopts, execq_mcp_set, execq_mcp_usage)) != 0) {
		rc = rc == 1 ? 0 : EXECQ_EXIT_USAGE;
		execq_opts_release(&o);
		return (rc);
	}
	if (optind < argc) {
		execq_opts_release(&o);
		return (execq_usage_error("mcp", "unexpected '%s'",
		    argv[optind]));
	}
	if (execq_mcp_token(&token) == -1) {
		execq_opts_release(&o);
		return (EXECQ_EXIT_USAGE);
	}
	if (execq_mcp_init(&m, o.redis, &cause) == -1) {
		execq_error("%s", cause);	/* a build gone wrong */
		free(cause);
		free(token);
		execq_mcp_release(&m);
		execq_opts_release(&o);
		return (1);
	}
	m.o.queue = o.queue;	/* --queue: borrowed from argv */
	if (execq_mcp_http_addr != NULL)
		rc = execq_mcp_http(&m, execq_mcp_http_addr, token);
	else
		rc = execq_mcp_serve(&m);
	free(token);
	execq_mcp_release(&m);
	execq_opts_release(&o);
	return (rc);
}
