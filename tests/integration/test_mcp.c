/*
 * execq mcp, the MCP server on stdio, against a real redis-server and
 * the real worker: the official TypeScript SDK's client drives it
 * (tests/mcp/stdio-client.mjs: tools, a foreground command, a PTY
 * session written to, polled and waited for, a held command); raw
 * JSON-RPC lines drive it without Node; and a few thousand malformed
 * lines each get a JSON-RPC answer, the server exiting 0 at the end.
 * Over HTTP (--http 127.0.0.1:PORT): the SDK's streamable HTTP client
 * (tests/mcp/http-client.mjs), the official conformance suite, and curl
 * for the refusals (Host, Origin, session, token, bad JSON).
 * Every command is an echo, a read or a touch that is only held.
 */

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "logs/xmalloc.h"
#include "tests/integration/harness.h"

#define NODE_MS		120000
#define MCP_MS		60000
#define FUZZ_LINES	3000
#define NODE_DIR	"build/mcp-node"	/* make mcp-node */
#define SDK_FILE	"node_modules/@modelcontextprotocol/sdk/package.json"
#define CONF_FILE	"node_modules/@modelcontextprotocol/conformance/" \
			    "package.json"
/* The conformance suite's scenarios that fit a tools-only server. */
#define CONF_SCENARIOS	"server-initialize ping tools-list " \
			    "logging-set-level dns-rebinding-protection"

/* Fails the test showing what the program printed. */
static void __attribute__((noreturn))
proc_fail(struct harness *h, const struct harness_proc *p, const char *why)
{
	harness_fail(h, "%s; it exited %d; stdout: \"%.2000s\"; stderr: "
	    "\"%.2000s\"", why, harness_proc_exit(p),
	    p->out != NULL ? p->out : "", p->err != NULL ? p->err : "");
}

/* Fails unless the program exited 0 and no sanitizer spoke. */
static void
expect_clean(struct harness *h, const struct harness_proc *p)
{
	if (harness_proc_exit(p) != 0)
		proc_fail(h, p, "execq mcp should exit 0 at the end of stdin");
	if (strstr(p->err, "Sanitizer") != NULL ||
	    strstr(p->err, "runtime error") != NULL)
		proc_fail(h, p, "a sanitizer reported");
}

/* The SDK's client, driving execq mcp (skipped without node or SDK). */
static void
test_mcp_sdk_client(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct harness_proc	 p;
	const char		*probe[] = { "node", "--version", NULL };
	const char		*dir;
	char			 node[PATH_MAX], js[PATH_MAX], *sdk, *script;

	dir = getenv("EXECQ_MCP_NODE") != NULL ? getenv("EXECQ_MCP_NODE") :
	    NODE_DIR;
	xasprintf(&sdk, "%s/" SDK_FILE, dir);
	if (harness_run(h, probe, 10000) != 0 || access(sdk, R_OK) != 0 ||
	    realpath(dir, node) == NULL) {
		fprintf(stderr, "\n*** test_mcp: SKIPPED the MCP SDK client: "
		    "no node, or no %s (make mcp-node installs it from npm)"
		    " ***\n\n", sdk);
		free(sdk);
		skip();
	}
	free(sdk);
	if (realpath("tests/mcp/stdio-client.mjs", js) == NULL)
		harness_fail(h, "no tests/mcp/stdio-client.mjs here");
	/* read_only: touch is held; echo, read and cat run. */
	harness_worker_start(h, NULL, "--tier", "read_only", NULL);
	xasprintf(&script, "EXECQ_MCP_NODE='%s' exec node '%s'", node, js);
	harness_cli_sh(h, &p, NODE_MS, script);
	free(script);
	if (harness_proc_exit(&p) != 0 ||
	    strstr(p.out, "mcp stdio client: ok") == NULL)
		proc_fail(h, &p, "the SDK client failed");
	/* The server's stderr is the client's: leaks would show there. */
	if (strstr(p.err, "Sanitizer") != NULL ||
	    strstr(p.err, "runtime error") != NULL)
		proc_fail(h, &p, "a sanitizer reported in execq mcp");
	harness_proc_release(&p);
	harness_pass(h);
}

/*
 * Runs execq mcp with stdin from the file name in h->dir, holding len
 * bytes of text (NULs too), on url (NULL: the test's Redis).
 */
static void
mcp_run(struct harness *h, struct harness_proc *p, const char *name,
    const char *text, size_t len, const char *url)
{
	char	*path, *script;
	FILE	*f;

	xasprintf(&path, "%s/%s", h->dir, name);
	if (len == (size_t)-1)
		len = strlen(text);
	if ((f = fopen(path, "w")) == NULL ||
	    fwrite(text, 1, len, f) != len || fclose(f) != 0)
		harness_fail(h, "cannot write %s", path);
	if (url != NULL)
		xasprintf(&script, "EXECQ_REDIS_URL='%s' exec \"$CLI\" mcp "
		    "< '%s'", url, path);
	else
		xasprintf(&script, "exec \"$CLI\" mcp < '%s'", path);
	harness_cli_sh(h, p, MCP_MS, script);
	free(script);
	free(path);
}

/* The answers, one JSON object a line, as an array. */
static json_t *
mcp_answers(struct harness *h, const struct harness_proc *p)
{
	json_t	*all, *o;
	char	*line, *nl, *copy;

	all = json_array();
	copy = xstrdup(p->out);
	for (line = copy; *line != '\0'; line = nl + 1) {
		if ((nl = strchr(line, '\n')) == NULL)
			proc_fail(h, p, "a line of stdout without a newline");
		*nl = '\0';
		if ((o = json_loads(line, 0, NULL)) == NULL ||
		    !json_is_object(o))
			proc_fail(h, p, "a line of stdout that is no JSON "
			    "object");
		json_array_append_new(all, o);
	}
	free(copy);
	return (all);
}

/* The answer to request id (a string), or fail. Borrowed. */
static json_t *
mcp_answer(struct harness *h, const struct harness_proc *p, json_t *all,
    const char *id)
{
	json_t	*o;
	size_t	 i;

	json_array_foreach(all, i, o) {
		if (harness_jstr(o, "id") != NULL &&
		    strcmp(harness_jstr(o, "id"), id) == 0)
			return (o);
	}
	proc_fail(h, p, "a request has no answer");
}

/* Raw JSON-RPC lines, no Node: a command, a session waited for. */
static void
test_mcp_raw(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct harness_proc	 p;
	json_t			*all, *a;
	const char		*sid;
	char			*text;

	harness_worker_start(h, NULL, NULL);
	mcp_run(h, &p, "raw1.jsonl",
	    "{\"jsonrpc\":\"2.0\",\"id\":\"i\",\"method\":\"initialize\","
	    "\"params\":{\"protocolVersion\":\"2024-11-05\","
	    "\"capabilities\":{},\"clientInfo\":{\"name\":\"t\","
	    "\"version\":\"1\"}}}\n"
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
	    "{\"jsonrpc\":\"2.0\",\"id\":\"e\",\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"exec\",\"arguments\":{\"command\":"
	    "\"echo raw-out; echo raw-err >&2; exit 3\"}}}\n"
	    "{\"jsonrpc\":\"2.0\",\"id\":\"b\",\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"exec\",\"arguments\":{\"command\":"
	    "\"read -r l; echo got $l\",\"background\":true}}}\n", (size_t)-1,
	    NULL);
	expect_clean(h, &p);
	all = mcp_answers(h, &p);
	/* Initialize, and the two calls; nothing for the notification. */
	if (json_array_size(all) != 3)
		proc_fail(h, &p, "three answers expected");
	a = mcp_answer(h, &p, all, "i");
	if (harness_jstr(a, "result.protocolVersion") == NULL ||
	    strcmp(harness_jstr(a, "result.protocolVersion"), "2024-11-05"))
		proc_fail(h, &p, "initialize should speak the client's "
		    "2024-11-05");
	a = mcp_answer(h, &p, all, "e");
	if (harness_jbool(a, "result.isError") != 0 ||
	    harness_jint(a, "result.structuredContent.exit_code") != 3 ||
	    strstr(json_string_value(json_object_get(json_array_get(
	    harness_jget(a, "result.content"), 0), "text")),
	    "exit code 3\n--- stdout ---\nraw-out\n--- stderr ---\nraw-err")
	    == NULL)
		proc_fail(h, &p, "exec: exit code 3 with its output");
	if (harness_jget(a, "result.structuredContent.session_token") != NULL)
		proc_fail(h, &p, "the token is the server's, not the model's");
	a = mcp_answer(h, &p, all, "b");
	sid = harness_jstr(a, "result.structuredContent.session_id");
	if (sid == NULL || harness_jbool(a, "result.isError") != 0)
		proc_fail(h, &p, "exec background: a session id");
	/*
	 * Another server (another agent) has not its token: the session is
	 * not its own. The worker says forbidden.
	 */
	xasprintf(&text, "{\"jsonrpc\":\"2.0\",\"id\":\"w\",\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"process\",\"arguments\":"
	    "{\"action\":\"write\",\"session_id\":\"%s\",\"data\":\"x\\n\"}}}"
	    "\n", sid);
	json_incref(a);
	harness_proc_release(&p);
	mcp_run(h, &p, "raw2.jsonl", text, strlen(text), NULL);
	free(text);
	expect_clean(h, &p);
	json_decref(all);
	all = mcp_answers(h, &p);
	if (harness_jbool(mcp_answer(h, &p, all, "w"), "result.isError") != 1 ||
	    strcmp(harness_jstr(mcp_answer(h, &p, all, "w"),
	    "result.structuredContent.error.code"), "forbidden") != 0)
		proc_fail(h, &p, "another agent's write: forbidden");
	json_decref(all);
	harness_proc_release(&p);
	json_decref(a);		/* the session ends with the worker */
	harness_pass(h);
}

/*
 * The shell that starts execq mcp --http on 127.0.0.1:port (its own
 * environment before it: env, "" for none) in the background, its stderr
 * in h->dir/http.err, and waits until it says it listens. $PID is it,
 * $U its URL, C curl printing the status only. Allocated.
 */
static char *
http_start(struct harness *h, int port, const char *env)
{
	char	*sh;

	xasprintf(&sh, "set -u; U=http://127.0.0.1:%d/mcp; "
	    "C() { curl -s --noproxy '*' -o /dev/null -w '%%{http_code}' "
	    "\"$@\"; }; "
	    "%s \"$CLI\" mcp --http 127.0.0.1:%d 2>'%s/http.err' & PID=$!; "
	    "i=0; until grep -q 'serving MCP' '%s/http.err'; do "
	    "kill -0 $PID || { echo server-died; exit 1; }; "
	    "i=$((i+1)); [ $i -lt 600 ] || { echo never-listened; exit 1; }; "
	    "sleep 0.05; done; ", port, env, port, h->dir, h->dir);
	return (sh);
}

/* Fails unless p's stdout has the line want. */
static void
expect_line(struct harness *h, const struct harness_proc *p,
    const char *want)
{
	char	*line;

	xasprintf(&line, "\n%s\n", want);
	if (strstr(p->out, line) == NULL && strncmp(p->out, line + 1,
	    strlen(line + 1)) != 0)
		proc_fail(h, p, want);
	free(line);
}

/* Fails unless the server's stderr (h->dir/http.err) is clean. */
static void
expect_http_clean(struct harness *h, const struct harness_proc *p)
{
	char	*path, *err;

	xasprintf(&path, "%s/http.err", h->dir);
	if ((err = harness_read_file(path, NULL)) == NULL)
		harness_fail(h, "no %s", path);
	if (strstr(err, "Sanitizer") != NULL ||
	    strstr(err, "runtime error") != NULL)
		harness_fail(h, "a sanitizer reported in execq mcp --http: "
		    "%.2000s", err);
	free(err);
	free(path);
	expect_line(h, p, "exit=0");
}

/* The initialize request curl posts, as a shell word. */
#define HTTP_INIT	"'{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":" \
			    "\"initialize\",\"params\":{\"protocolVersion\":" \
			    "\"2025-06-18\",\"capabilities\":{}," \
			    "\"clientInfo\":{\"name\":\"c\",\"version\":" \
			    "\"1\"}}}'"
#define HTTP_PING	"'{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}'"

/*
 * curl at execq mcp --http: every refusal, a session's life, the token;
 * no Node, no worker needed (nothing reaches the queue).
 */
static void
test_mcp_http_curl(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct harness_proc	 p;
	char			*start, *script;
	int			 port = harness_free_port();

	start = http_start(h, port, "");
	xasprintf(&script, "%s"
	    /* A session: initialize gives its id; ping with it. */
	    "SID=$(curl -s --noproxy '*' -D - -o /dev/null $U -H "
	    "'Content-Type: application/json' -d " HTTP_INIT " | "
	    "tr -d '\\r' | sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: //p'); "
	    "echo sid=${#SID}; "
	    "echo ping=$(C $U -H \"Mcp-Session-Id: $SID\" -d " HTTP_PING "); "
	    "echo body=$(curl -s --noproxy '*' $U -H \"Mcp-Session-Id: $SID\" "
	    "-d " HTTP_PING "); "
	    "echo note=$(C $U -H \"Mcp-Session-Id: $SID\" -d "
	    "'{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}'"
	    "); "
	    "echo nosid=$(C $U -d " HTTP_PING "); "
	    "echo badsid=$(C $U -H 'Mcp-Session-Id: nope' -d " HTTP_PING
	    "); "
	    "echo host=$(C $U -H 'Host: evil.example:%d' -d " HTTP_INIT "); "
	    "echo origin=$(C $U -H 'Origin: http://evil.example' -d "
	    HTTP_INIT "); "
	    "echo origin_ok=$(C $U -H 'Origin: http://localhost:9' -d "
	    HTTP_INIT "); "
	    "echo parse=$(curl -s --noproxy '*' $U -d '{\"jsonrpc\":'); "
	    "echo get=$(C $U); "
	    "echo getacc=$(C $U -H \"Mcp-Session-Id: $SID\"); "
	    "echo path=$(C http://127.0.0.1:%d/other -d " HTTP_INIT "); "
	    "echo delete=$(C -X DELETE $U -H \"Mcp-Session-Id: $SID\"); "
	    "echo after=$(C $U -H \"Mcp-Session-Id: $SID\" -d " HTTP_PING
	    "); "
	    "kill $PID; wait $PID; echo exit=$?; "
	    /* Off loopback without a token: refused at start. */
	    "\"$CLI\" mcp --http 0.0.0.0:%d 2>/dev/null; echo open=$?; "
	    "EXECQ_MCP_TOKEN= \"$CLI\" mcp --http '[::]:%d' 2>/dev/null; "
	    "echo open6=$?; ", start, port, port, port, port);
	free(start);
	harness_cli_sh(h, &p, MCP_MS, script);
	free(script);
	expect_http_clean(h, &p);
	expect_line(h, &p, "sid=32");
	expect_line(h, &p, "ping=200");
	expect_line(h, &p, "body={\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}");
	expect_line(h, &p, "note=202");
	expect_line(h, &p, "nosid=400");
	expect_line(h, &p, "badsid=404");
	expect_line(h, &p, "host=403");
	expect_line(h, &p, "origin=403");
	expect_line(h, &p, "origin_ok=200");
	expect_line(h, &p, "parse={\"jsonrpc\":\"2.0\",\"id\":null,\"error\":"
	    "{\"code\":-32700,\"message\":\"parse error: not one JSON value "
	    "in UTF-8\"}}");
	expect_line(h, &p, "get=400");		/* no session */
	expect_line(h, &p, "getacc=406");	/* not an event stream */
	expect_line(h, &p, "path=404");
	expect_line(h, &p, "delete=200");
	expect_line(h, &p, "after=404");
	expect_line(h, &p, "open=2");
	expect_line(h, &p, "open6=2");
	harness_proc_release(&p);

	/* A token (on loopback too, once given): 401 without it. */
	port = harness_free_port();
	start = http_start(h, port, "EXECQ_MCP_TOKEN=s3cret");
	xasprintf(&script, "%s"
	    "echo none=$(C $U -d " HTTP_INIT "); "
	    "echo wrong=$(C $U -H 'Authorization: Bearer s3creT' -d "
	    HTTP_INIT "); "
	    "echo longer=$(C $U -H 'Authorization: Bearer s3cret2' -d "
	    HTTP_INIT "); "
	    "echo right=$(C $U -H 'Authorization: Bearer s3cret' -d "
	    HTTP_INIT "); "
	    "kill $PID; wait $PID; echo exit=$?; ", start);
	free(start);
	harness_cli_sh(h, &p, MCP_MS, script);
	free(script);
	expect_http_clean(h, &p);
	expect_line(h, &p, "none=401");
	expect_line(h, &p, "wrong=401");
	expect_line(h, &p, "longer=401");
	expect_line(h, &p, "right=200");
	harness_proc_release(&p);
	harness_pass(h);
}

/*
 * The SDK's streamable HTTP client against a worker, then the official
 * conformance suite's scenarios (skipped without node or either
 * package).
 */
static void
test_mcp_http_sdk(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct harness_proc	 p;
	const char		*probe[] = { "node", "--version", NULL };
	const char		*dir;
	char			 node[PATH_MAX], js[PATH_MAX], *sdk, *conf;
	char			*start, *script;
	int			 port = harness_free_port();

	dir = getenv("EXECQ_MCP_NODE") != NULL ? getenv("EXECQ_MCP_NODE") :
	    NODE_DIR;
	xasprintf(&sdk, "%s/" SDK_FILE, dir);
	xasprintf(&conf, "%s/" CONF_FILE, dir);
	if (harness_run(h, probe, 10000) != 0 || access(sdk, R_OK) != 0 ||
	    access(conf, R_OK) != 0 || realpath(dir, node) == NULL) {
		fprintf(stderr, "\n*** test_mcp: SKIPPED the MCP SDK's HTTP "
		    "client and the conformance suite: no node, or no %s or "
		    "%s (make mcp-node installs them from npm) ***\n\n", sdk,
		    conf);
		free(sdk);
		free(conf);
		skip();
	}
	free(sdk);
	free(conf);
	if (realpath("tests/mcp/http-client.mjs", js) == NULL)
		harness_fail(h, "no tests/mcp/http-client.mjs here");
	harness_worker_start(h, NULL, NULL);
	start = http_start(h, port, "");
	xasprintf(&script, "%s"
	    "MCP_URL=$U EXECQ_MCP_NODE='%s' node '%s'; echo client=$?; "
	    "for s in " CONF_SCENARIOS "; do "
	    "npx --prefix '%s' --no-install conformance server --url $U "
	    "--scenario $s > '%s/conf.out' 2>&1; rc=$?; "
	    "grep -q ', 0 failed' '%s/conf.out' || rc=1; "
	    "[ $rc = 0 ] || cat '%s/conf.out'; echo conf-$s=$rc; done; "
	    "kill $PID; wait $PID; echo exit=$?; ", start, node, js, node,
	    h->dir, h->dir, h->dir);
	free(start);
	harness_cli_sh(h, &p, NODE_MS, script);
	free(script);
	expect_http_clean(h, &p);
	expect_line(h, &p, "mcp http client: ok");
	expect_line(h, &p, "client=0");
	expect_line(h, &p, "conf-server-initialize=0");
	expect_line(h, &p, "conf-ping=0");
	expect_line(h, &p, "conf-tools-list=0");
	expect_line(h, &p, "conf-logging-set-level=0");
	expect_line(h, &p, "conf-dns-rebinding-protection=0");
	harness_proc_release(&p);
	harness_pass(h);
}

/* A small deterministic generator (xorshift64). */
static uint64_t	fuzz_state = 0x9e3779b97f4a7c15ULL;

static unsigned
fuzz_rand(unsigned n)
{
	fuzz_state ^= fuzz_state << 13;
	fuzz_state ^= fuzz_state >> 7;
	fuzz_state ^= fuzz_state << 17;
	return ((unsigned)(fuzz_state % n));
}

/* Well-formed requests the mutations start from; each has an "id". */
static const char *const fuzz_good[] = {
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}",
	"{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"initialize\","
	    "\"params\":{\"protocolVersion\":\"2025-06-18\","
	    "\"capabilities\":{},\"clientInfo\":{\"name\":\"f\","
	    "\"version\":\"0\"}}}",
	"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"logging/setLevel\","
	    "\"params\":{\"level\":\"debug\"}}",
	"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"exec\",\"arguments\":{\"command\":"
	    "\"echo fuzz\"}}}",
	"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"process\",\"arguments\":{\"action\":"
	    "\"poll\",\"session_id\":\"s1\"}}}",
	"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"process\",\"arguments\":{\"action\":"
	    "\"callbacks\"}}}",
	"{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"resources/list\"}",
};

/* Values of the wrong type, or odd, for id, method and params. */
static const char *const fuzz_odd[] = {
	"true", "false", "null", "{}", "[]", "[1,[2,[3]]]", "1.5", "-0",
	"1e308", "99999999999999999999999", "-9223372036854775808", "\"\"",
	"\"tools/call\"", "\"ping\"", "{\"name\":1}", "[\"exec\"]",
	"{\"name\":\"exec\",\"arguments\":[]}",
	"{\"name\":\"exec\",\"arguments\":{\"command\":5}}",
	"{\"name\":\"exec\",\"arguments\":{\"command\":\"\"}}",
	"{\"name\":\"process\",\"arguments\":{\"action\":7}}",
	"{\"name\":\"process\",\"arguments\":{\"action\":\"wait\","
	    "\"session_id\":[1]}}",
	"{\"name\":\"exec\",\"arguments\":{\"token\":\"x\"}}",
	"\"\\ud800\"", "\"\\u0000\"", "\"a\\u00e9\\ud83d\\ude00\"",
};

/* A line of fuzz into f: one request or not-a-request, never a
   notification or a response, so each gets one answer. */
static void
fuzz_line(FILE *f)
{
	const char	*g = fuzz_good[fuzz_rand(sizeof fuzz_good /
			    sizeof fuzz_good[0])];
	const char	*odd = fuzz_odd[fuzz_rand(sizeof fuzz_odd /
			    sizeof fuzz_odd[0])];
	size_t		 len = strlen(g), i, n;
	unsigned char	 c;

	switch (fuzz_rand(8)) {
	case 0:		/* truncated */
		fprintf(f, "%.*s\n", (int)(1 + fuzz_rand(len - 1)), g);
		break;
	case 1:		/* a member of the wrong type, the id kept */
		n = fuzz_rand(4);
		fprintf(f, "{\"jsonrpc\":%s,\"id\":%s,\"method\":%s,"
		    "\"params\":%s}\n", n == 3 ? odd : "\"2.0\"",
		    n == 0 ? odd : "7", n == 1 ? odd : "\"tools/call\"",
		    n == 2 ? odd : "{}");
		break;
	case 2:		/* a huge id */
		fputs("{\"jsonrpc\":\"2.0\",\"id\":\"", f);
		for (i = 0, n = 1 + fuzz_rand(70000); i < n; i++)
			fputc('a' + (int)(i % 26), f);
		fputs("\",\"method\":\"ping\"}\n", f);
		break;
	case 3:		/* nested arrays, shallow to deeper than jansson */
		n = 1 + fuzz_rand(4000);
		fputs("{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\","
		    "\"params\":", f);
		for (i = 0; i < n; i++)
			fputc('[', f);
		for (i = 0; i < n; i++)
			fputc(']', f);
		fputs("}\n", f);
		break;
	case 4:		/* a byte changed: invalid UTF-8 and the like */
		i = fuzz_rand(len);
		do
			c = (unsigned char)(0x80 + fuzz_rand(0x80));
		while (c == '\n');
		fprintf(f, "%.*s%c%s\n", (int)i, g, c, g + i + 1);
		break;
	case 5:		/* random bytes, not starting blank */
		fputc('!' + (int)fuzz_rand(90), f);
		for (i = 0, n = fuzz_rand(200); i < n; i++) {
			c = (unsigned char)fuzz_rand(256);
			fputc(c == '\n' ? 'x' : c, f);
		}
		fputc('\n', f);
		break;
	case 6:		/* not an object, or NULs only */
		n = fuzz_rand(3);
		if (n == 2)
			fwrite("\0\0\0\n", 1, 4, f);
		else
			fprintf(f, "%s\n", n == 1 ? "[{\"jsonrpc\":\"2.0\","
			    "\"id\":1,\"method\":\"ping\"}]" : "42");
		break;
	default:	/* a good one */
		fprintf(f, "%s\n", g);
	}
}

/* Malformed JSON-RPC: every line answered, exit 0, no Redis needed. */
static void
test_mcp_fuzz(void **state)
{
	struct harness		*h = harness_fixture(state);
	struct harness_proc	 p;
	json_t			*all, *o, *last;
	char			*text, *url;
	size_t			 len, i;
	FILE			*f;

	if ((f = open_memstream(&text, &len)) == NULL)
		harness_fail(h, "open_memstream");
	for (i = 0; i < FUZZ_LINES; i++)
		fuzz_line(f);
	/* A line past 16 MiB, then one that must still be answered. */
	fputs("{\"jsonrpc\":\"2.0\",\"id\":\"long\",\"method\":\"ping\","
	    "\"params\":{\"x\":\"", f);
	for (i = 0; i < 17 * 1024 * 1024 / 64; i++)
		fputs("0123456789abcdef0123456789abcdef0123456789abcdef"
		    "0123456789abcdef", f);
	fputs("\"}}\n{\"jsonrpc\":\"2.0\",\"id\":\"last\",\"method\":"
	    "\"ping\"}", f);	/* no newline: EOF ends it */
	fclose(f);
	/* Nobody listens there: tools/call fails, never reaches a worker. */
	xasprintf(&url, "redis://127.0.0.1:%d", harness_free_port());
	mcp_run(h, &p, "fuzz.jsonl", text, len, url);
	free(url);
	free(text);
	expect_clean(h, &p);
	all = mcp_answers(h, &p);
	if (json_array_size(all) != FUZZ_LINES + 2)
		proc_fail(h, &p, "one answer per line expected");
	json_array_foreach(all, i, o) {
		if (harness_jstr(o, "jsonrpc") == NULL ||
		    strcmp(harness_jstr(o, "jsonrpc"), "2.0") != 0 ||
		    json_object_get(o, "id") == NULL ||
		    (json_object_get(o, "result") == NULL) ==
		    (json_object_get(o, "error") == NULL))
			proc_fail(h, &p, "an answer that is no JSON-RPC "
			    "response");
		if (json_object_get(o, "error") != NULL &&
		    !json_is_integer(harness_jget(o, "error.code")))
			proc_fail(h, &p, "an error without a code");
	}
	o = json_array_get(all, FUZZ_LINES);
	if (harness_jint(o, "error.code") != -32700)
		proc_fail(h, &p, "a line past 16 MiB: a parse error");
	last = json_array_get(all, FUZZ_LINES + 1);
	if (harness_jstr(last, "id") == NULL ||
	    strcmp(harness_jstr(last, "id"), "last") != 0 ||
	    !json_is_object(json_object_get(last, "result")))
		proc_fail(h, &p, "the last ping should be answered");
	json_decref(all);
	harness_proc_release(&p);
	harness_pass(h);
}

int
main(void)
{
#define T(f)	cmocka_unit_test_setup_teardown(f, harness_setup, \
		    harness_teardown)
	const struct CMUnitTest tests[] = {
		T(test_mcp_fuzz),
		T(test_mcp_raw),
		T(test_mcp_sdk_client),
		T(test_mcp_http_curl),
		T(test_mcp_http_sdk),
	};
#undef T

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
