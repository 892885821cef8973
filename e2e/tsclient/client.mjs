// A real MCP client for nexus's e2e tests: the TypeScript SDK's Client over
// StdioClientTransport. Usage:
//
//   node client.mjs NEXUS TARGET [PLAN]
//
// runs `NEXUS mcp TARGET`, lists its tools and carries out PLAN, a JSON
// object whose parts are all optional:
//
//   {"quick":    {"name": ..., "arguments": {...}},   // one call
//    "progress": {"name": ..., "arguments": {...}},   // a call with onprogress
//    "cancel":   {"name": ..., "arguments": {...}, "afterMs": 700, "onProgress": false, "settleMs": 0},
//                // aborted after afterMs, or at its first progress report when
//                // onProgress; then settleMs of quiet before going on
//    "after":    {"name": ..., "arguments": {...}},   // a call after the cancellation
//    "calls":    [{"name": ..., "arguments": {...}}, ...]}
//                // calls in turn, each result or error recorded: the SDK
//                // checks a result's structuredContent against the tool's
//                // outputSchema (from listTools) and throws when it does not
//                // match, so a result here is one the client accepted
//
// and prints one JSON object with what it saw. It exits non-zero only when
// the client itself fails (connection, protocol).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [nexus, target, planText] = process.argv.slice(2);
if (!nexus || !target) {
  console.error("usage: node client.mjs NEXUS TARGET [PLAN]");
  process.exit(2);
}
const plan = planText ? JSON.parse(planText) : {};

const transport = new StdioClientTransport({ command: nexus, args: ["mcp", target], stderr: "pipe" });
let stderr = "";
transport.stderr?.on("data", (chunk) => { stderr = (stderr + chunk).slice(-4000); });
// The client tells an HTTP transport the negotiated version this way; a
// stdio transport has no such method, so this one records it.
let negotiated = null;
transport.setProtocolVersion = (v) => { negotiated = v; };
const client = new Client({ name: "e2e-ts-sdk", version: "0" });
await client.connect(transport);

const out = {
  protocolVersion: negotiated,
  serverName: client.getServerVersion()?.name ?? null,
  capabilities: client.getServerCapabilities() ?? null,
};
const tools = await client.listTools();
out.tools = tools.tools.map((t) => t.name);

const summary = (res) => ({
  isError: res.isError === true,
  text: res.content?.[0]?.type === "text" ? res.content[0].text : null,
});

if (plan.quick) {
  out.quick = summary(await client.callTool(plan.quick));
}
if (plan.progress) {
  const values = [];
  const res = await client.callTool(plan.progress, undefined, {
    onprogress: (p) => values.push(p.progress),
  });
  out.progress = { values, ...summary(res) };
}
if (plan.cancel) {
  const abort = new AbortController();
  const started = Date.now();
  const options = { signal: abort.signal, timeout: 120000 };
  if (plan.cancel.onProgress) {
    // The first progress report says the function is running.
    options.onprogress = () => abort.abort("e2e cancels");
  } else {
    setTimeout(() => abort.abort("e2e cancels"), plan.cancel.afterMs ?? 700);
  }
  const call = client.callTool({ name: plan.cancel.name, arguments: plan.cancel.arguments }, undefined, options);
  try {
    const res = await call;
    out.cancel = { outcome: "completed", ...summary(res) };
  } catch (err) {
    out.cancel = { outcome: abort.signal.aborted ? "aborted" : "failed", error: String(err), ms: Date.now() - started };
  }
  await new Promise((resolve) => setTimeout(resolve, plan.cancel.settleMs ?? 0));
}
if (plan.after) {
  out.after = summary(await client.callTool(plan.after));
}
if (plan.calls) {
  out.calls = [];
  for (const call of plan.calls) {
    try {
      const res = await client.callTool(call);
      out.calls.push({ name: call.name, ...summary(res), structuredContent: res.structuredContent ?? null });
    } catch (err) {
      out.calls.push({ name: call.name, error: String(err) });
    }
  }
}
out.stderr = stderr;
await client.close();
console.log(JSON.stringify(out));
