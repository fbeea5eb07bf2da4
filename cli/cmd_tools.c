/*
 * execq tools: prints the tool definitions an agent's model is given
 * (cli/tools.c), in the shape of one framework. Local: no Redis.
 */

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"

/* tools' options. */
struct execq_tools_opts {
	struct execq_opts	 o;
	enum execq_tools_format	 fmt;
};

static const struct option execq_tools_longopts[] = {
	{ "format",	required_argument, NULL, 'f' },
	{ "help",	no_argument,	   NULL, 'h' },
	{ NULL,		0,		   NULL, 0 }
};

/* tools --help. */
static void
execq_tools_usage(FILE *f)
{
	fputs("usage: execq tools [--format mcp|openai|anthropic]\n"
	    "\n"
	    "Prints the two tools an agent's model is given to use execq, as\n"
	    "JSON: exec (run a command, in the foreground or as a background\n"
	    "session, on a PTY or not) and process (list, poll, log, write,\n"
	    "send-keys, kill, wait, callbacks), each with its description\n"
	    "for the model and a JSON Schema (2020-12) of its input. The\n"
	    "same definitions in each framework's shape:\n"
	    "\n"
	    "  mcp        {\"tools\": [{name, description, inputSchema}]}, as\n"
	    "             an MCP server's tools/list answers (the default)\n"
	    "  openai     [{\"type\": \"function\", \"function\": {name,\n"
	    "             description, parameters}}], for the tools of a Chat\n"
	    "             Completions request\n"
	    "  anthropic  [{name, description, input_schema}], for the tools\n"
	    "             of a Messages request\n"
	    "\n"
	    "A call's input maps onto an EXEC or PROCESS item\n"
	    "(docs/TOOLS.md). Needs no Redis.\n"
	    "\n"
	    "Options:\n"
	    "  -f, --format F   mcp, openai or anthropic (default: mcp)\n"
	    "  -h, --help       show this help\n"
	    "\n"
	    "Exit status: 0; 1 if stdout cannot be written; 2 on a usage "
	    "error.\n", f);
}

/* tools' options. */
static int
execq_tools_set(struct execq_opts *o, const char *cmd, int ch,
    const char *arg)
{
	struct execq_tools_opts	*to = (struct execq_tools_opts *)o;

	if (ch != 'f')
		return (execq_opts_set(o, cmd, ch, arg));
	if (execq_tools_format_parse(arg, &to->fmt) == -1) {
		execq_usage_error(cmd, "--format must be mcp, openai or "
		    "anthropic, not '%s'", arg);
		return (-1);
	}
	return (0);
}

/* execq tools: the definitions on stdout. */
int
execq_cmd_tools(const char *redis, int argc, char **argv)
{
	struct execq_tools_opts	 to;
	char			*text, *cause;
	size_t			 len;
	int			 rc;

	execq_opts_init(&to.o, redis);
	to.fmt = EXECQ_TOOLS_MCP;
	if ((rc = execq_opts_getopt(&to.o, "tools", argc, argv, "hf:",
	    execq_tools_longopts, execq_tools_set,
	    execq_tools_usage)) != 0) {
		rc = rc == 1 ? 0 : EXECQ_EXIT_USAGE;
		goto out;
	}
	if (optind < argc) {
		rc = execq_usage_error("tools", "unexpected '%s'",
		    argv[optind]);
		goto out;
	}
	if ((text = execq_tools_text(to.fmt, &len, &cause)) == NULL) {
		execq_error("%s", cause);	/* a build gone wrong */
		free(cause);
		rc = 1;
		goto out;
	}
	rc = execq_write_all(stdout, text, len) == 0 ? 0 : 1;
	free(text);
out:
	execq_opts_release(&to.o);
	return (rc);
}
