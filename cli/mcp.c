/*
 * execq mcp: JSON-RPC 2.0 on stdin and stdout, one message a line
 * (MCP's stdio transport): initialize, ping, tools/list, tools/call,
 * logging/setLevel, the errors of JSON-RPC, and the callbacks of ended
 * sessions as notifications/message. Nothing but JSON-RPC goes to
 * stdout; messages go to stderr.
 */

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cli/cli.h"
#include "cli/mcp.h"
#include "logs/xmalloc.h"

#define EXECQ_MCP_LINE_MAX	(16 * 1024 * 1024)
#define EXECQ_MCP_IDLE_MS	250	/* a look at the reply queue */

/* The versions a client may ask for that this server speaks. */
static const char *const execq_mcp_versions[] = { EXECQ_MCP_PROTOCOL,
    "2025-03-26", "2024-11-05", NULL };

/* logging/setLevel's levels, lowest first. */
static const char *const execq_mcp_levels[] = { "debug", "info",
    "notice", "warning", "error", "critical", "alert", "emergency", NULL };

static const char execq_mcp_instructions[] =
    "execq runs shell commands on a worker, confined to its workspace, "
    "through a Redis queue. Use exec to run a command (in the background "
    "for anything long or interactive) and process to follow, type into, "
    "wait for or stop what exec started. A command may be held for a "
    "human's approval: it then does not run until approved; never resend "
    "it, wait for it with process.";

/* 1 once stdout failed: the server stops. */
static int	execq_mcp_broken;

/* Writes msg (consumed) as one line on stdout. */
static void
execq_mcp_send(json_t *msg)
{
	char	*s;

	if (msg == NULL)
		return;
	if ((s = json_dumps(msg, JSON_COMPACT)) == NULL) {
		execq_error("mcp: an answer cannot be written as JSON");
		json_decref(msg);
		return;
	}
	json_decref(msg);
	if (execq_write_all(stdout, s, strlen(s)) != 0 ||
	    execq_write_all(stdout, "\n", 1) != 0)
		execq_mcp_broken = 1;
	free(s);
}

json_t *
execq_mcp_error(json_t *id, int code, const char *msg)
{
	return (json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0",
	    "id", id != NULL ? id : json_null(), "error", "code", code,
	    "message", msg));
}

/* {"jsonrpc": "2.0", "id": id, "result": result (consumed)}. */
static json_t *
execq_mcp_answer(json_t *id, json_t *result)
{
	return (json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id,
	    "result", result));
}

json_t *
execq_mcp_notification(json_t *callback)
{
	return (json_pack("{s:s, s:s, s:{s:s, s:s, s:O}}", "jsonrpc", "2.0",
	    "method", "notifications/message", "params", "level", "info",
	    "logger", "execq", "data", callback));
}

/* An ended session's callback, as notifications/message. */
static void
execq_mcp_notify_cb(struct execq_mcp *m, json_t *callback)
{
	if (m->level > EXECQ_MCP_LEVEL_INFO)
		return;
	execq_mcp_send(execq_mcp_notification(callback));
}

/* The index of s in a NULL-terminated list, or -1. */
static int
execq_mcp_find(const char *const *list, const char *s)
{
	int	i;

	for (i = 0; s != NULL && list[i] != NULL; i++) {
		if (strcmp(list[i], s) == 0)
			return (i);
	}
	return (-1);
}

int
execq_mcp_version_known(const char *v)
{
	return (execq_mcp_find(execq_mcp_versions, v) != -1);
}

/*
 * initialize: the client's version if this server speaks it, else the
 * newest this server speaks (the client then decides).
 */
static json_t *
execq_mcp_initialize(struct execq_mcp *m, json_t *id, json_t *params)
{
	const char	*asked;

	(void)m;
	asked = json_string_value(json_object_get(params, "protocolVersion"));
	if (asked == NULL)
		return (execq_mcp_error(id, EXECQ_RPC_PARAMS, "initialize "
		    "needs params.protocolVersion, a string"));
	if (execq_mcp_find(execq_mcp_versions, asked) == -1)
		asked = EXECQ_MCP_PROTOCOL;
	return (execq_mcp_answer(id, json_pack("{s:s, s:{s:{s:b}, s:{}}, "
	    "s:{s:s, s:s, s:s}, s:s}", "protocolVersion", asked,
	    "capabilities", "tools", "listChanged", 0, "logging",
	    "serverInfo", "name", "execq", "title", "execq", "version",
	    EXECQ_VERSION, "instructions", execq_mcp_instructions)));
}

/* tools/call: a tool's result, or -32602 for a call that names none. */
static json_t *
execq_mcp_tools_call(struct execq_mcp *m, json_t *id, json_t *params)
{
	json_t		*args, *res;
	const char	*name;

	name = json_string_value(json_object_get(params, "name"));
	args = json_object_get(params, "arguments");
	if (name == NULL)
		return (execq_mcp_error(id, EXECQ_RPC_PARAMS, "tools/call "
		    "needs params.name, a string"));
	if (args != NULL && !json_is_object(args))
		return (execq_mcp_error(id, EXECQ_RPC_PARAMS, "tools/call: "
		    "params.arguments must be an object"));
	args = args != NULL ? json_incref(args) : json_object();
	if ((res = execq_mcp_call(m, name, args)) == NULL)
		res = execq_mcp_error(id, EXECQ_RPC_PARAMS, "unknown tool: "
		    "the tools are exec and process");
	else
		res = execq_mcp_answer(id, res);
	json_decref(args);
	return (res);
}

/* logging/setLevel: callbacks are sent at level info. */
static json_t *
execq_mcp_set_level(struct execq_mcp *m, json_t *id, json_t *params)
{
	int	i;

	i = execq_mcp_find(execq_mcp_levels, json_string_value(
	    json_object_get(params, "level")));
	if (i == -1)
		return (execq_mcp_error(id, EXECQ_RPC_PARAMS, "logging/"
		    "setLevel needs params.level: debug, info, notice, "
		    "warning, error, critical, alert or emergency"));
	m->level = i;
	return (execq_mcp_answer(id, json_object()));
}

/* A request (id set) to method, its params an object or NULL. */
static json_t *
execq_mcp_request(struct execq_mcp *m, json_t *id, const char *method,
    json_t *params)
{
	if (strcmp(method, "initialize") == 0)
		return (execq_mcp_initialize(m, id, params));
	if (strcmp(method, "ping") == 0)
		return (execq_mcp_answer(id, json_object()));
	if (strcmp(method, "tools/list") == 0)
		return (execq_mcp_answer(id, json_incref(m->tools)));
	if (strcmp(method, "tools/call") == 0)
		return (execq_mcp_tools_call(m, id, params));
	if (strcmp(method, "logging/setLevel") == 0)
		return (execq_mcp_set_level(m, id, params));
	return (execq_mcp_error(id, EXECQ_RPC_METHOD, "method not found"));
}

/*
 * One message. Answered: every request, and every message that is no
 * valid one (invalid request: "id": null when it has no usable id). Not
 * answered (NULL): notifications (no "id"), and responses (a client
 * answering us: we ask nothing).
 */
json_t *
execq_mcp_handle(struct execq_mcp *m, json_t *msg)
{
	json_t		*id, *method, *params;
	const char	*v;

	if (!json_is_object(msg))
		return (execq_mcp_error(NULL, EXECQ_RPC_INVALID, "invalid "
		    "request: a message is one JSON object (no batches)"));
	id = json_object_get(msg, "id");
	method = json_object_get(msg, "method");
	params = json_object_get(msg, "params");
	if (id != NULL && !json_is_string(id) && !json_is_integer(id) &&
	    !json_is_real(id) && !json_is_null(id))
		id = NULL;	/* not to be echoed */
	else if (method == NULL && id != NULL &&
	    (json_object_get(msg, "result") != NULL ||
	    json_object_get(msg, "error") != NULL))
		return (NULL);		/* a response */
	if (json_object_get(msg, "id") != NULL && id == NULL)
		return (execq_mcp_error(NULL, EXECQ_RPC_INVALID, "invalid "
		    "request: id must be a string or a number"));
	if ((v = json_string_value(json_object_get(msg, "jsonrpc"))) ==
	    NULL || strcmp(v, "2.0") != 0)
		return (execq_mcp_error(id, EXECQ_RPC_INVALID, "invalid "
		    "request: jsonrpc must be \"2.0\""));
	if (!json_is_string(method))
		return (execq_mcp_error(id, EXECQ_RPC_INVALID, "invalid "
		    "request: method must be a string"));
	if (id == NULL)
		return (NULL);	/* a notification: initialized, cancelled */
	if (params != NULL && !json_is_object(params))
		return (execq_mcp_error(id, EXECQ_RPC_PARAMS, "params must "
		    "be an object"));
	return (execq_mcp_request(m, id, json_string_value(method), params));
}

/* One line of stdin (no newline); blank lines are skipped. */
static void
execq_mcp_line(struct execq_mcp *m, const char *line, size_t len)
{
	json_error_t	 jerr;
	json_t		*msg;

	while (len > 0 && (line[len - 1] == ' ' || line[len - 1] == '\t' ||
	    line[len - 1] == '\r'))
		len--;
	if (len == 0)
		return;
	if (execq_mcp_watching(m))
		(void)execq_mcp_poll(m);
	if ((msg = json_loadb(line, len, 0, &jerr)) == NULL) {
		execq_mcp_send(execq_mcp_error(NULL, EXECQ_RPC_PARSE,
		    EXECQ_MCP_PARSE_MSG));
		return;
	}
	execq_mcp_send(execq_mcp_handle(m, msg));
	json_decref(msg);
}

/*
 * The lines of buf[0..*len): each whole one handled (or, skipping, the
 * rest of a line too long dropped), the partial last one moved to the
 * front.
 */
static void
execq_mcp_lines(struct execq_mcp *m, char *buf, size_t *len, int *skipping)
{
	char	*nl;
	size_t	 start = 0;

	while ((nl = memchr(buf + start, '\n', *len - start)) != NULL) {
		if (!*skipping)
			execq_mcp_line(m, buf + start, nl - (buf + start));
		*skipping = 0;
		start = nl - buf + 1;
	}
	memmove(buf, buf + start, *len - start);
	*len -= start;
}

int
execq_mcp_serve(struct execq_mcp *m)
{
	struct pollfd	 pfd;
	char		*buf;
	size_t		 len = 0, cap = 65536;
	ssize_t		 n;
	int		 skipping = 0, rc;

	m->callback_cb = execq_mcp_notify_cb;
	buf = xmalloc(cap);
	while (!execq_mcp_broken) {
		pfd.fd = STDIN_FILENO;
		pfd.events = POLLIN;
		rc = poll(&pfd, 1, execq_mcp_watching(m) ? EXECQ_MCP_IDLE_MS :
		    -1);
		if (rc == 0) {
			(void)execq_mcp_poll(m);
			continue;
		}
		if (rc == -1 && errno == EINTR)
			continue;
		if (len == cap && cap < EXECQ_MCP_LINE_MAX)
			buf = xrealloc(buf, cap *= 2);
		else if (len == cap) {
			execq_mcp_send(execq_mcp_error(NULL, EXECQ_RPC_PARSE,
			    "parse error: a line longer than 16 MiB"));
			skipping = 1;
			len = 0;
		}
		if (rc == -1 || (n = read(STDIN_FILENO, buf + len,
		    cap - len)) == -1) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			execq_error("mcp: stdin: %s", strerror(errno));
			free(buf);
			return (1);
		}
		if (n == 0)
			break;
		len += n;
		execq_mcp_lines(m, buf, &len, &skipping);
	}
	if (len > 0 && !skipping && !execq_mcp_broken)
		execq_mcp_line(m, buf, len);	/* no newline at the end */
	free(buf);
	return (execq_mcp_broken ? 1 : 0);
}
