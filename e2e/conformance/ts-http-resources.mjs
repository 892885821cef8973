// The TypeScript SDK's Client over StreamableHTTPClientTransport against
// `nexus serve`, for resources and prompts (driven by
// e2e/http_tsclient_resources_test.go). Usage:
//
//   node ts-http-resources.mjs EVERYTHING_URL PLOTS_URL WATCHED_FILE
//
// EVERYTHING_URL serves a copy of testdata/everything whose
// resources/watched.txt is WATCHED_FILE; PLOTS_URL serves testdata/plots.
// It reads resources (static, a template in Python, R and C++), follows an
// R function's resource_link to its PNG, subscribes to a file and edits it,
// gets prompts and completes arguments, and prints what it saw as one JSON
// object; the Go test judges it.
import { writeFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const [everythingURL, plotsURL, watched] = process.argv.slice(2);
const out = {};

async function connect(url) {
  const client = new Client({ name: "e2e-ts-resources", version: "0" });
  const transport = new StreamableHTTPClientTransport(new URL(url));
  await client.connect(transport);
  return { client, transport };
}

const first = (res) => res.contents?.[0] ?? null;

// completion is what the server completes a prompt's argument to.
async function completion(client, prompt, argument, value) {
  return (await client.complete({ ref: { type: "ref/prompt", name: prompt }, argument: { name: argument, value } })).completion;
}

// testdata/everything: static resources, a Python template, a subscription,
// prompts, a completion.
{
  const { client, transport } = await connect(everythingURL);
  out.protocolVersion = transport.protocolVersion;
  out.capabilities = client.getServerCapabilities();
  out.resources = (await client.listResources()).resources.map((r) => r.uri);
  out.templates = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
  out.staticText = first(await client.readResource({ uri: "test://static-text" }));
  out.staticBinary = first(await client.readResource({ uri: "test://static-binary" }));
  out.templateRead = first(await client.readResource({ uri: "test://template/9/data" }));

  const updated = [];
  let heard;
  const heardOnce = new Promise((resolve) => { heard = resolve; });
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    updated.push(n.params.uri);
    heard();
  });
  await client.subscribeResource({ uri: "test://watched-resource" });
  // The notification comes on the session's GET stream, which the client
  // opens after initialize: edit until it is heard (at most 10 times).
  for (let i = 0; i < 10 && updated.length === 0; i++) {
    writeFileSync(watched, `edited by the TypeScript client (${i})\n`);
    await Promise.race([heardOnce, new Promise((resolve) => setTimeout(resolve, 1500))]);
  }
  out.updated = updated;
  out.afterEdit = first(await client.readResource({ uri: "test://watched-resource" }));
  await client.unsubscribeResource({ uri: "test://watched-resource" });

  out.promptWithArgs = await client.getPrompt({ name: "test_prompt_with_arguments", arguments: { arg1: "one", arg2: "two" } });
  out.promptWithImage = await client.getPrompt({ name: "test_prompt_with_image" });
  try {
    await client.getPrompt({ name: "test_prompt_with_arguments", arguments: { arg1: "one" } });
    out.missingArgument = "no error";
  } catch (err) {
    out.missingArgument = { code: err.code, message: err.message };
  }
  out.complete = await completion(client, "test_prompt_with_arguments", "arg1", "he");
  await transport.terminateSession();
  await client.close();
}

// testdata/plots: templates in Python, R and C++, an R plot as a resource
// link read back as a blob, a completer.
{
  const { client, transport } = await connect(plotsURL);
  out.python = first(await client.readResource({ uri: "samples://control" }));
  out.r = first(await client.readResource({ uri: "stats://treated/summary" }));
  out.cpp = first(await client.readResource({ uri: "binom://52/5" }));
  const plotted = await client.callTool({ name: "plot_values", arguments: { values: [1, 4, 9, 16, 25], title: "squares from TypeScript" } });
  out.link = plotted.content?.[0] ?? null;
  if (out.link?.type === "resource_link") {
    const png = first(await client.readResource({ uri: out.link.uri }));
    out.plot = { uri: png?.uri, mimeType: png?.mimeType, head: png?.blob ? Buffer.from(png.blob, "base64").subarray(0, 8).toString("hex") : null };
  }
  out.completer = await completion(client, "plot_sample", "sample", "tr");
  await transport.terminateSession();
  await client.close();
}

process.stdout.write(JSON.stringify(out) + "\n");
