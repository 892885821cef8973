// The TypeScript SDK's Client answering what nexus functions ask: it
// declares elicitation, sampling and roots, and handles elicitation/create,
// sampling/createMessage and roots/list, over stdio or Streamable HTTP
// (driven by e2e/talkback_ts_test.go). Usage:
//
//   node talkback.mjs VERSION CALLS stdio NEXUS TARGET   // runs `NEXUS mcp TARGET`
//   node talkback.mjs VERSION CALLS http URL
//
// VERSION is the protocolVersion the client's initialize offers (the SDK
// always offers its latest, 2025-11-25; another is written into the request
// as it goes out). CALLS is a JSON array of {"name", "arguments"}, made in
// order. It prints one JSON object with what it saw, and exits non-zero only
// when the client itself fails (connection, protocol).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

const [version, callsText, kind, ...where] = process.argv.slice(2);
if (!version || !callsText || !["stdio", "http"].includes(kind) || where.length !== (kind === "stdio" ? 2 : 1)) {
  console.error("usage: node talkback.mjs VERSION CALLS (stdio NEXUS TARGET | http URL)");
  process.exit(2);
}
const calls = JSON.parse(callsText);

let transport;
let stderr = "";
let negotiated = null;
if (kind === "stdio") {
  transport = new StdioClientTransport({ command: where[0], args: ["mcp", where[1]], stderr: "pipe" });
  transport.stderr?.on("data", (chunk) => { stderr = (stderr + chunk).slice(-4000); });
} else {
  transport = new StreamableHTTPClientTransport(new URL(where[0]));
}
// The client tells the transport the negotiated version this way (a stdio
// transport has no such method); record it on the way.
const setVersion = transport.setProtocolVersion?.bind(transport);
transport.setProtocolVersion = (v) => { negotiated = v; setVersion?.(v); };
const send = transport.send.bind(transport);
transport.send = (message, options) => {
  if (message.method === "initialize") {
    message = { ...message, params: { ...message.params, protocolVersion: version } };
  }
  return send(message, options);
};

const client = new Client(
  { name: "e2e-ts-talkback", version: "0" },
  { capabilities: { elicitation: {}, sampling: {}, roots: {} } },
);
// What the handlers were asked, for the Go test to judge.
const asked = { elicit: [], sample: [], roots: 0 };
client.setRequestHandler(ElicitRequestSchema, (req) => {
  asked.elicit.push({ message: req.params.message, properties: Object.keys(req.params.requestedSchema?.properties ?? {}) });
  return { action: "accept", content: { name: "Ada" } };
});
client.setRequestHandler(CreateMessageRequestSchema, (req) => {
  const first = req.params.messages[0]?.content;
  const prompt = first?.type === "text" ? first.text : null;
  asked.sample.push({ prompt, systemPrompt: req.params.systemPrompt ?? null, maxTokens: req.params.maxTokens });
  return {
    role: "assistant",
    model: "echo",
    content: { type: "text", text: "summary of " + (prompt ?? "").replace("Summarise in one line:\n\n", "") },
  };
});
client.setRequestHandler(ListRootsRequestSchema, () => {
  asked.roots++;
  return { roots: [{ uri: "file:///data/project", name: "project" }, { uri: "file:///home/ada" }] };
});

await client.connect(transport);
const out = { protocolVersion: negotiated, serverName: client.getServerVersion()?.name ?? null, results: [] };
for (const call of calls) {
  try {
    const res = await client.callTool(call, undefined, { timeout: 60000 });
    const first = res.content?.[0];
    out.results.push({ name: call.name, isError: res.isError === true, text: first?.type === "text" ? first.text : null });
  } catch (err) {
    // A JSON-RPC error or timeout: the Go test reports it against the call.
    out.results.push({ name: call.name, error: String(err) });
  }
}
out.asked = asked;
out.stderr = stderr;
if (kind === "http") {
  await transport.terminateSession();
}
await client.close();
console.log(JSON.stringify(out));
