#ifndef EXECQ_CLI_MCP_H
#define EXECQ_CLI_MCP_H

/*
 * execq mcp: an MCP server (docs/MCP.md) on stdin and stdout, one agent's
 * door to the queue. Two files:
 *
 *   mcp_call.c  tools/call: the exec and process tools as items on the
 *               queue, the server's one reply queue read for answers,
 *               approval requests and callbacks; the session tokens
 *   mcp.c       JSON-RPC 2.0: a message's answer (initialize, ping,
 *               tools/list, tools/call (mcp_call.c), logging/setLevel,
 *               errors, notifications), and the stdio transport:
 *               newline-delimited stdin and stdout, its loop
 *   mcp_http.c  the streamable HTTP transport (--http): POST /mcp, one
 *               message a request, sessions, the Host, Origin and bearer
 *               token checks; the same answers as stdio
 *
 * Everything the server learns lives in struct execq_mcp, for the
 * server's lifetime; Redis is reached on the first tools/call only, so
 * every other method answers without it.
 */

#include <stddef.h>

#include "cli/cli.h"

struct execq_mcp;

/*
 * Told each EXEC_CALLBACK that came on the reply queue (borrowed), to
 * send it as a notifications/message (mcp.c).
 */
typedef void (*execq_mcp_callback_cb)(struct execq_mcp *,
    struct json_t *callback);

/* One server: one agent. */
struct execq_mcp {
	struct execq_opts	 o;		/* redis, queue: env, config */
	struct execq_session	 s;		/* s.c NULL until connected */
	int			 up;		/* s is open */
	char			*reply;		/* our reply queue, for life */
	char			*cursor;	/* q:<reply>:normal, read */
	char			*notice_cursor;	/* q:<reply>:high */
	struct json_t		*source;	/* cli/tools.json as written */
	struct json_t		*tools;		/* tools/list's answer */
	struct json_t		*tokens;	/* session id -> its token */
	struct json_t		*held;		/* item id -> APPROVAL_REQUEST,
						   until its answer is taken */
	struct json_t		*answers;	/* item id -> the answer of a
						   held item, not yet taken */
	struct json_t		*open;		/* session ids started, not
						   called back yet */
	struct json_t		*callbacks;	/* EXEC_CALLBACKs not yet given
						   to process callbacks */
	int			 level;		/* logging/setLevel's index */
	char			*why;		/* the last error said */
	execq_mcp_callback_cb	 callback_cb;
};

/* The protocol version this server speaks first. */
#define EXECQ_MCP_PROTOCOL	"2025-06-18"

/* JSON-RPC's error codes. */
#define EXECQ_RPC_PARSE		-32700
#define EXECQ_RPC_INVALID	-32600
#define EXECQ_RPC_METHOD	-32601
#define EXECQ_RPC_PARAMS	-32602
#define EXECQ_RPC_INTERNAL	-32603

/* What a message that does not parse is told. */
#define EXECQ_MCP_PARSE_MSG	"parse error: not one JSON value in UTF-8"

/* The levels of logging/setLevel, lowest first (RFC 5424's). */
#define EXECQ_MCP_LEVEL_INFO	1

/*
 * mcp_call.c. Sets m up (no Redis yet): 0, or -1 with an allocated
 * *cause (the built-in tools do not parse: a build gone wrong).
 */
int	 execq_mcp_init(struct execq_mcp *, const char *redis, char **cause);
/* Deletes the reply queue if connected, disconnects, frees. */
void	 execq_mcp_release(struct execq_mcp *);
/*
 * tools/call of tool name with arguments (an object, borrowed): the
 * CallToolResult (a new reference: content, structuredContent, isError),
 * or NULL if there is no such tool (a JSON-RPC error for the caller).
 */
struct json_t *execq_mcp_call(struct execq_mcp *, const char *name,
	    struct json_t *arguments);
/*
 * 1 if sessions of this server may still call back, or held items still
 * answer: the idle loop then looks at the reply queue now and then.
 */
int	 execq_mcp_watching(const struct execq_mcp *);
/*
 * Reads the reply queue once without waiting, if connected: callbacks
 * go to callback_cb. 0, or -1 if Redis failed (said; disconnected).
 */
int	 execq_mcp_poll(struct execq_mcp *);

/*
 * mcp.c. The answer to one parsed message (borrowed), a new reference,
 * or NULL if it wants none (a notification, a response).
 */
struct json_t *execq_mcp_handle(struct execq_mcp *, struct json_t *msg);
/* A JSON-RPC error answer to id (NULL: null), a new reference. */
struct json_t *execq_mcp_error(struct json_t *id, int code,
	    const char *msg);
/* A callback (borrowed) as a notifications/message, a new reference. */
struct json_t *execq_mcp_notification(struct json_t *callback);
/* 1 if this server speaks protocol version v. */
int	 execq_mcp_version_known(const char *v);
/* Serves stdin until EOF; 0, or 1 if stdin or stdout failed. */
int	 execq_mcp_serve(struct execq_mcp *);

/*
 * mcp_http.c. Serves streamable HTTP on addr ("HOST:PORT", "[V6]:PORT")
 * until SIGINT or SIGTERM; token: the bearer token required (NULL: none,
 * refused unless addr is loopback). 0, 1 if it cannot listen, 2 if addr
 * is not one or a token is missing (usage).
 */
int	 execq_mcp_http(struct execq_mcp *, const char *addr,
	    const char *token);

#endif
