// An MCP Apps host built on ext-apps' AppBridge, as e2e/views_test.go
// drives it: node host.mjs MCP_URL ARTEFACTS_DIR CASES_JSON.
//
// The TypeScript SDK's Client, declaring the io.modelcontextprotocol/ui
// extension, lists nexus's tools, reads each case's view with
// resources/read and calls the tool. In headless Chromium, the view runs
// in a sandboxed frame under the specification's default CSP; AppBridge
// initializes it and sends it the call's input and result; a resource the
// view reads goes back through the bridge to nexus. The script then reads
// what the view drew, changes the host's theme, screenshots the frame
// and tears the view down. It prints one JSON object; the Go test judges it.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import * as esbuild from "esbuild";
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { frameOf, launch, observe, print, watch } from "./browser.mjs";

const [url, artefacts, casesJSON] = process.argv.slice(2);
const cases = JSON.parse(casesJSON);
const here = dirname(fileURLToPath(import.meta.url));
const UI = "io.modelcontextprotocol/ui";
// The specification's CSP for a view that declares no domains.
const CSP = "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; media-src 'self' data:; connect-src 'none'";

mkdirSync(artefacts, { recursive: true });
const out = { tools: {}, cases: [] };
const client = new Client({ name: "nexus-e2e-apps-host", version: "1" },
  { capabilities: { extensions: { [UI]: { mimeTypes: ["text/html;profile=mcp-app"] } } } });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
out.serverCapabilities = client.getServerCapabilities();
for (const t of (await client.listTools()).tools) out.tools[t.name] = t._meta?.ui?.resourceUri ?? null;

const bundle = await esbuild.build({
  entryPoints: [join(here, "host-entry.js")], bundle: true, write: false, format: "iife", platform: "browser", logLevel: "silent",
});
const { browser, close } = await launch();
let seen;
try {
  const page = await browser.newPage();
  await page.setViewport({ width: 760, height: 900, deviceScaleFactor: 1 });
  seen = await watch(page, []);
  await page.setContent("<!DOCTYPE html><html><body style=\"margin:0;background:#fff\"><div id=\"host\" style=\"padding:8px\"></div></body></html>");
  await page.addScriptTag({ content: bundle.outputFiles[0].text });
  await page.exposeFunction("nexusReadResource", (params) => client.readResource(params));
  const tools = (await client.listTools()).tools;
  for (const c of cases) {
    const rec = { tool: c.tool, name: c.name || c.tool };
    out.cases.push(rec);
    try {
      const tool = tools.find((t) => t.name === c.tool);
      const uri = tool?._meta?.ui?.resourceUri;
      rec.resourceUri = uri ?? null;
      if (!uri) continue;
      const read = await client.readResource({ uri });
      const view = read.contents[0];
      rec.mimeType = view.mimeType;
      rec.bytes = Buffer.byteLength(view.text);
      rec.hasURL = /https?:\/\//i.test(view.text);
      const result = await client.callTool({ name: c.tool, arguments: c.args });
      rec.isError = !!result.isError;
      rec.structured = result.structuredContent !== undefined;
      await page.evaluate(async (html, csp, tool, args, result) => {
        const host = document.getElementById("host");
        host.textContent = "";
        const frame = document.createElement("iframe");
        frame.setAttribute("sandbox", "allow-scripts");
        frame.style.cssText = "width:720px;height:80px;border:1px solid #ddd;display:block";
        frame.srcdoc = html.replace(/<head>/i, "<head><meta http-equiv=\"Content-Security-Policy\" content=\"" + csp + "\">");
        host.appendChild(frame);
        const { AppBridge, PostMessageTransport } = window.NexusHost;
        const sizes = [];
        const bridge = new AppBridge(null, { name: "nexus-e2e-host", version: "1" }, { serverResources: {}, logging: {} }, {
          hostContext: {
            theme: "light", displayMode: "inline", availableDisplayModes: ["inline"], platform: "web",
            containerDimensions: { maxHeight: 4000 }, toolInfo: { tool },
            styles: { variables: { "--color-background-primary": "rgb(255, 255, 255)", "--font-sans": "DejaVu Sans, sans-serif" } },
          },
        });
        bridge.onsizechange = ({ width, height }) => { sizes.push({ width, height }); if (height) frame.style.height = height + "px"; };
        bridge.onreadresource = (params) => window.nexusReadResource(params);
        const initialized = new Promise((resolve) => { bridge.oninitialized = resolve; });
        await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
        await Promise.race([initialized, new Promise((_, reject) => setTimeout(() => reject(new Error("the view never sent ui/notifications/initialized")), 15000))]);
        await bridge.sendToolInput({ arguments: args });
        await bridge.sendToolResult(result);
        window.nexusBridge = bridge;
        window.nexusSizes = sizes;
      }, view.text, CSP, tool, c.args, result);
      const frame = await frameOf(await page.$("iframe"));
      await frame.waitForSelector("#view[data-state]", { timeout: 15000 });
      if (c.images) await frame.waitForFunction(() => Array.from(document.querySelectorAll("figure img")).every((i) => i.complete && i.naturalWidth > 0) && document.querySelector("figure img"), { timeout: 15000 });
      await page.waitForFunction(() => window.nexusSizes.length > 0, { timeout: 5000 }).catch(() => {});
      await new Promise((r) => setTimeout(r, 250)); // the last size change lands
      rec.drawn = await observe(frame);
      rec.sizes = await page.evaluate(() => window.nexusSizes);
      rec.frameHeight = await page.$eval("iframe", (f) => f.getBoundingClientRect().height);
      await (await page.$("iframe")).screenshot({ path: join(artefacts, "host-" + rec.name + ".png") });
      if (c.table) {
        // Sort by a column, both ways; copy the rows as CSV.
        const column = (i) => frame.$$eval("table.rows tbody tr", (rows, i) => rows.map((r) => r.children[i].textContent), i);
        const at = (await frame.$$eval("table.rows thead th", (l) => l.map((th) => th.textContent))).indexOf(c.table);
        await frame.click(`table.rows thead th:nth-child(${at + 1})`);
        rec.ascending = await column(at);
        await frame.click(`table.rows thead th:nth-child(${at + 1})`);
        rec.descending = await column(at);
        await frame.click(".toolbar button");
        await frame.waitForFunction(() => document.querySelector(".toolbar .status").textContent !== "", { timeout: 5000 });
        rec.copied = await frame.evaluate(() => ({ status: document.querySelector(".toolbar .status").textContent, csv: (document.querySelector("textarea.csv") || {}).value || null }));
      }
      if (c.histogram) {
        await frame.click(".toolbar button:nth-child(2)");
        await frame.waitForSelector(".chart[data-mode=histogram]", { timeout: 5000 });
        rec.histogram = await observe(frame);
        await (await page.$("iframe")).screenshot({ path: join(artefacts, "host-" + rec.name + "-histogram.png") });
      }
      // The host's theme: dark, with a background of its own.
      await page.evaluate(() => window.nexusBridge.setHostContext({
        theme: "dark", styles: { variables: { "--color-background-primary": "rgb(1, 2, 3)" } },
      }));
      await frame.waitForFunction(() => document.documentElement.getAttribute("data-theme") === "dark", { timeout: 5000 }).catch(() => {});
      rec.dark = await observe(frame);
      rec.teardown = await page.evaluate(() => window.nexusBridge.teardownResource({}).then(() => "ok", (e) => String(e)));
    } catch (e) {
      rec.fault = String(e && e.stack || e);
    }
  }
} finally {
  await close();
  await client.close();
}
print(out, seen);
