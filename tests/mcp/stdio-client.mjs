// The official MCP TypeScript SDK's client (@modelcontextprotocol/sdk,
// StdioClientTransport) drives `execq mcp` against a running worker:
// lists the tools, runs a foreground command, starts a PTY session,
// writes to it, polls it, waits for it, sees its callback, and sees a
// held command come back as held (then rejected, through `execq reject`),
// and another cancelled by the agent (process cancel).
//
// Run by tests/integration/test_mcp.c. Environment: CLI (the execq
// binary), EXECQ_MCP_NODE (the directory npm installed the SDK into),
// and the client's own: EXECQ_REDIS_URL, EXECQ_QUEUE. The worker must
// run at --tier read_only, so that `touch` is held. Prints
// "mcp stdio client: ok" and exits 0, or says what failed and exits 1.

import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import { writeSync } from 'node:fs';
import path from 'node:path';

const nodeDir = process.env.EXECQ_MCP_NODE;
const cli = process.env.CLI;
if (!nodeDir || !cli) {
	console.error('stdio-client: set CLI and EXECQ_MCP_NODE');
	process.exit(2);
}
const require = createRequire(path.join(path.resolve(nodeDir), 'package.json'));
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const { LoggingMessageNotificationSchema } = require('@modelcontextprotocol/sdk/types.js');

// JSON with the keys of every object sorted (the SDK reorders them).
function canon(v) {
	if (Array.isArray(v))
		return v.map(canon);
	if (v !== null && typeof v === 'object')
		return Object.fromEntries(Object.keys(v).sort().map(
		    (k) => [k, canon(v[k])]));
	return v;
}

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

const transport = new StdioClientTransport({
	command: cli,
	args: ['mcp'],
	env: process.env,
	stderr: 'inherit',
});
const client = new Client({ name: 'execq-test', version: '1.0.0' });
const notes = [];
client.setNotificationHandler(LoggingMessageNotificationSchema,
    (n) => { notes.push(n.params); });
await client.connect(transport);

check(client.getServerVersion()?.name === 'execq', 'initialize: serverInfo',
    client.getServerVersion());
check(client.getServerCapabilities()?.tools !== undefined &&
    client.getServerCapabilities()?.logging !== undefined,
    'initialize: tools and logging', client.getServerCapabilities());
await client.ping();
await client.setLoggingLevel('info');

// tools/list: the two tools of `execq tools`.
const tools = await client.listTools();
const names = tools.tools.map((t) => t.name).sort();
check(JSON.stringify(names) === '["exec","process"]', 'tools/list', names);
const want = JSON.parse(execFileSync(cli, ['tools', '--format', 'mcp']));
check(JSON.stringify(canon(want.tools)) === JSON.stringify(canon(tools.tools)),
    'tools/list is what execq tools prints');

// A foreground command.
let r = await client.callTool({ name: 'exec',
    arguments: { command: 'echo hello-mcp' } });
check(!r.isError && r.structuredContent?.type === 'EXEC_RESULT' &&
    r.structuredContent.exit_code === 0 &&
    r.structuredContent.stdout === 'hello-mcp\n', 'exec echo', r);
check(r.content[0].type === 'text' && r.content[0].text.includes('hello-mcp'),
    'exec echo: the output as text', r.content);
check(!('session_token' in r.structuredContent),
    'exec echo: no session_token shown');
const fg = r.structuredContent.id;

// The log of a foreground item, with the token the server kept.
r = await client.callTool({ name: 'process',
    arguments: { action: 'log', session_id: fg } });
check(!r.isError && r.structuredContent?.output === 'hello-mcp\n',
    'process log of the foreground item', r);

// A PTY session: write to it, poll it, wait for it.
r = await client.callTool({ name: 'exec', arguments: {
    command: 'read -r l; echo "you said: $l"', background: true, pty: true } });
check(!r.isError && r.structuredContent?.type === 'EXEC_STARTED' &&
    r.structuredContent.pty === true, 'exec background pty', r);
check(!('session_token' in r.structuredContent),
    'exec background: no session_token shown');
const sid = r.structuredContent.session_id;

r = await client.callTool({ name: 'process', arguments: { action: 'list' } });
check(!r.isError && r.structuredContent.sessions.some(
    (s) => s.session_id === sid), 'process list shows the session', r);

r = await client.callTool({ name: 'process', arguments: {
    action: 'write', session_id: sid, data: 'hello\r' } });
check(!r.isError && r.structuredContent?.written === 6, 'process write', r);

let out = '', offset = 0;
while (!out.includes('you said: hello')) {
	r = await client.callTool({ name: 'process', arguments: {
	    action: 'poll', session_id: sid, offset, timeout_s: 10 } });
	check(!r.isError && typeof r.structuredContent?.output === 'string',
	    'process poll', r);
	out += r.structuredContent.output;
	offset = r.structuredContent.next_offset;
	if (r.structuredContent.eof)
		break;
}
check(out.includes('you said: hello'), 'poll: the session\'s answer', out);

r = await client.callTool({ name: 'process', arguments: {
    action: 'wait', session_id: sid, timeout_s: 30 } });
check(!r.isError && r.structuredContent?.status === 'completed' &&
    r.structuredContent.exit_code === 0 &&
    r.structuredContent.tail.includes('you said: hello'), 'process wait', r);

// Its callback: through process callbacks, and as a notification sent
// before that answer (the server reads it, notifies, then answers).
let cbs = [];
for (let tries = 0; !cbs.some((c) => c.session_id === sid); tries++) {
	if (tries > 0)
		await new Promise((res) => setTimeout(res, 100));
	r = await client.callTool({ name: 'process',
	    arguments: { action: 'callbacks' } });
	if (r.isError || tries === 300)
		check(false, 'process callbacks: the session\'s callback', r);
	cbs = cbs.concat(r.structuredContent.callbacks);
}
check(true, 'process callbacks: the session\'s callback');
check(notes.some((n) => n.level === 'info' && n.logger === 'execq' &&
    n.data?.type === 'EXEC_CALLBACK' && n.data.session_id === sid),
    'notifications/message with the callback', notes);

// A held command: answered at once as held, not waited for.
r = await client.callTool({ name: 'exec',
    arguments: { command: 'touch made-by-mcp.txt' } });
check(!r.isError && r.structuredContent?.status === 'held' &&
    typeof r.structuredContent.request === 'string' &&
    r.structuredContent.session_id, 'exec of a held command: held', r);
const held = r.structuredContent.session_id, req = r.structuredContent.request;

r = await client.callTool({ name: 'process', arguments: {
    action: 'wait', session_id: held, timeout_s: 0.2 } });
check(!r.isError && r.structuredContent?.status === 'held',
    'process wait on a held command: still held', r);
r = await client.callTool({ name: 'process', arguments: {
    action: 'kill', session_id: held } });
check(r.isError && r.structuredContent?.status === 'held',
    'process kill on a held command: refused', r);

// A human rejects it; wait then gets the item's own answer.
execFileSync(cli, ['reject', req, '--reason', 'the MCP test says no'],
    { env: process.env, stdio: ['ignore', 'ignore', 'inherit'] });
r = await client.callTool({ name: 'process', arguments: {
    action: 'wait', session_id: held, timeout_s: 30 } });
check(r.isError && r.structuredContent?.type === 'ERROR' &&
    r.structuredContent.error.code === 'rejected',
    'process wait on a rejected command: its ERROR', r);

// A shell session: a variable set in one command, read in the next.
r = await client.callTool({ name: 'exec', arguments: {
    command: ':', background: true, shell: true } });
check(!r.isError && typeof r.structuredContent?.session_id === 'string',
    'a shell session', r);
const shell = r.structuredContent.session_id;
r = await client.callTool({ name: 'process', arguments: {
    action: 'exec', session_id: shell, command: 'SHX=kept' } });
check(!r.isError && r.structuredContent?.exit_code === 0,
    'process exec in it', r);
r = await client.callTool({ name: 'process', arguments: {
    action: 'exec', session_id: shell, command: 'echo "$SHX"' } });
check(!r.isError && r.structuredContent?.stdout === 'kept\n',
    'process exec: the variable kept', r);
r = await client.callTool({ name: 'process', arguments: {
    action: 'kill', session_id: shell } });

// A second held command, cancelled by the agent: it never runs.
r = await client.callTool({ name: 'exec',
    arguments: { command: 'touch never-by-mcp.txt' } });
check(!r.isError && r.structuredContent?.status === 'held',
    'exec of another held command: held', r);
const held2 = r.structuredContent.session_id;
r = await client.callTool({ name: 'process', arguments: {
    action: 'cancel', session_id: held2 } });
check(!r.isError && r.structuredContent?.cancelled === true &&
    r.structuredContent.state === 'held', 'process cancel of it', r);
r = await client.callTool({ name: 'process', arguments: {
    action: 'wait', session_id: held2, timeout_s: 30 } });
check(r.isError && r.structuredContent?.error?.code === 'cancelled',
    'process wait on the cancelled command: its ERROR', r);

// Bad calls: an unknown tool is a JSON-RPC error, a bad field an error result.
let threw = false;
try {
	await client.callTool({ name: 'nope', arguments: {} });
} catch (e) {
	threw = e.code === -32602;
}
check(threw, 'tools/call of an unknown tool: -32602');
r = await client.callTool({ name: 'exec',
    arguments: { command: 'echo x', token: 'stolen' } });
check(r.isError === true, 'exec with a field it has not: an error result', r);

await client.close();
say(1, 'mcp stdio client: ok');
