// The official MCP TypeScript SDK's client (@modelcontextprotocol/sdk,
// StreamableHTTPClientTransport) drives `execq mcp --http` against a
// running worker: initialize, ping, logging/setLevel, lists the tools,
// runs a foreground echo, starts a background one whose callback comes
// as notifications/message on the GET stream, and ends its session
// (DELETE).
//
// Run by tests/integration/test_mcp.c. Environment: MCP_URL (the
// server's http://127.0.0.1:PORT/mcp), EXECQ_MCP_NODE (the directory npm
// installed the SDK into). Prints "mcp http client: ok" and exits 0, or
// says what failed and exits 1.

import { createRequire } from 'node:module';
import { writeSync } from 'node:fs';
import path from 'node:path';

const nodeDir = process.env.EXECQ_MCP_NODE;
const url = process.env.MCP_URL;
if (!nodeDir || !url) {
	console.error('http-client: set MCP_URL and EXECQ_MCP_NODE');
	process.exit(2);
}
const require = createRequire(path.join(path.resolve(nodeDir), 'package.json'));
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } =
    require('@modelcontextprotocol/sdk/client/streamableHttp.js');
const { LoggingMessageNotificationSchema } =
    require('@modelcontextprotocol/sdk/types.js');

// Written at once: process.exit() would lose what console.log buffered.
function say(fd, text) {
	writeSync(fd, text + '\n');
}

function check(cond, what, got) {
	if (!cond) {
		say(2, `FAIL: ${what}` +
		    (got === undefined ? '' : `: ${JSON.stringify(got)}`));
		process.exit(1);
	}
	say(1, `ok: ${what}`);
}

const transport = new StreamableHTTPClientTransport(new URL(url));
const client = new Client({ name: 'execq-http-test', version: '1.0.0' });
await client.connect(transport);

check(client.getServerVersion()?.name === 'execq', 'initialize: serverInfo',
    client.getServerVersion());
check(typeof transport.sessionId === 'string' &&
    /^[0-9a-f]{32}$/.test(transport.sessionId), 'initialize: a session id',
    transport.sessionId);
await client.ping();
await client.setLoggingLevel('info');

const tools = await client.listTools();
const names = tools.tools.map((t) => t.name).sort();
check(JSON.stringify(names) === '["exec","process"]', 'tools/list', names);

const r = await client.callTool({ name: 'exec',
    arguments: { command: 'echo http-hello' } });
check(r.isError === false && r.structuredContent?.exit_code === 0 &&
    r.content[0].text.includes('http-hello'), 'exec echo', r);
check(r.structuredContent?.session_token === undefined,
    'the token stays with the server');

// A session's end comes as notifications/message on the GET stream.
let called = null;
client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
	if (n.params?.data?.type === 'EXEC_CALLBACK')
		called = n.params.data;
});
const bg = await client.callTool({ name: 'exec',
    arguments: { command: 'echo http-bg', background: true } });
const sid = bg.structuredContent?.session_id;
check(bg.isError === false && typeof sid === 'string',
    'a background session', bg);
for (let i = 0; i < 600 && called === null; i++)
	await new Promise((res) => setTimeout(res, 100));
check(called !== null && called.session_id === sid,
    'its callback as notifications/message on the stream', called);

const bad = await client.callTool({ name: 'nope', arguments: {} })
    .then(() => null, (e) => e);
check(bad !== null && bad.code === -32602, 'an unknown tool: -32602',
    bad?.message);

await transport.terminateSession();
check(transport.sessionId === undefined, 'DELETE ends the session');
await client.close();
say(1, 'mcp http client: ok');
process.exit(0);
