// The TypeScript SDK's StreamableHTTPClientTransport against `nexus serve`
// (driven by e2e/http_tsclient_test.go). Usage: node ts-http-client.mjs URL MARKER
// It lists tools, calls a few, collects progress, cancels a long call with an
// AbortSignal, and prints what it saw as one JSON object; the Go test judges it.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, marker] = process.argv.slice(2);
const out = {};
const client = new Client({ name: "e2e-ts-sdk", version: "0" });
const transport = new StreamableHTTPClientTransport(new URL(url));
await client.connect(transport);
out.protocolVersion = transport.protocolVersion;
out.sessionId = transport.sessionId ?? null;
out.serverName = client.getServerVersion()?.name;

const tools = await client.listTools();
out.tools = tools.tools.map((t) => t.name);

const text = await client.callTool({ name: "test_simple_text", arguments: {} });
out.simpleText = text.content;

const failed = await client.callTool({ name: "test_error_handling", arguments: {} });
out.errorResult = { isError: failed.isError, text: failed.content?.[0]?.text };

const progress = [];
const counted = await client.callTool(
  { name: "slow_count", arguments: { _1: 3, _2: 10 } },
  undefined,
  { onprogress: (p) => progress.push(p.progress) },
);
out.slowCount = counted.content?.[0]?.text;
out.progress = progress;

// Cancel a long call: the SDK sends notifications/cancelled and aborts.
const abort = new AbortController();
const started = [];
const long = client.callTool(
  { name: "cancel_probe", arguments: { _1: marker } },
  undefined,
  { signal: abort.signal, onprogress: (p) => { started.push(p.progress); if (started.length === 2) abort.abort("e2e"); } },
);
try {
  await long;
  out.cancel = "completed";
} catch (err) {
  out.cancel = "aborted";
}

await transport.terminateSession();
await client.close();
process.stdout.write(JSON.stringify(out) + "\n");
