// nexus serve's browser page in headless Chromium, as e2e/views_test.go
// drives it: node page.mjs BASE_URL ARTEFACTS_DIR MODE [TOKEN].
//
// MODE "tools" opens every tool's form, runs a few (a chart, a table, a
// record, an error, a form left wrong) and switches the theme; MODE
// "catalog" browses the resources and prompts. With TOKEN, the page is
// opened as a browser user would, answering its Basic challenge. It
// prints one JSON object of what the page showed; the Go test judges it.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { fill, frameOf, launch, observe, open, print, run, watch } from "./browser.mjs";

const [base, artefacts, mode, token] = process.argv.slice(2);
mkdirSync(artefacts, { recursive: true });
const out = { mode };
const { browser, close } = await launch();
let seen;

async function shot(page, name) {
  await page.screenshot({ path: join(artefacts, "page-" + name + ".png") });
}

// call opens a tool's form, fills its fields (name: value, in order), runs
// it, and keeps a screenshot named shotName when one is given.
async function call(page, tool, fields, shotName) {
  await open(page, "tool:" + tool);
  for (const [name, value] of Object.entries(fields)) await fill(page, name, value);
  const result = await run(page);
  if (shotName) await shot(page, shotName);
  return result;
}

try {
  const page = await browser.newPage();
  await page.setViewport({ width: 840, height: 780, deviceScaleFactor: 1 });
  seen = await watch(page, [base]);
  if (token) await page.authenticate({ username: "e2e", password: token });
  const resp = await page.goto(base + "/", { waitUntil: "load" });
  out.status = resp.status();
  await page.waitForSelector("body[data-ready=true], #detail .error", { timeout: 30000 });
  out.program = await page.$eval("#program", (e) => e.textContent);
  out.failed = await page.$eval("#detail", (d) => (d.querySelector(".error") || {}).textContent || null);
  if (mode === "tools") {
    const keys = await page.$$eval("#list .item", (l) => l.map((b) => b.getAttribute("data-key")));
    out.forms = {};
    for (const key of keys) {
      await open(page, key);
      out.forms[key.replace(/^tool:/, "")] = await page.$$eval("#detail form.args .field", (l) => l.map((f) => f.getAttribute("data-field")));
    }
    out.series = await call(page, "series", { n: "150" }, "series");
    await page.click("#theme");
    const frame = await frameOf(await page.$("#detail iframe.view"));
    await frame.waitForFunction((t) => document.documentElement.getAttribute("data-theme") === t, { timeout: 5000 },
      await page.evaluate(() => document.documentElement.getAttribute("data-theme")));
    out.themed = { page: await page.evaluate(() => document.documentElement.getAttribute("data-theme")), view: (await observe(frame)).theme };
    await shot(page, "series-dark");
    await page.click("#theme");

    out.measurements = await call(page, "measurements", { n: "50" }, "measurements");
    out.grid = await call(page, "grid", { rows: "20", cols: "30" }, "grid");
    out.summary = await call(page, "summary", { values: "1, 2, 3\n10" });
    out.fail = await call(page, "fail", { message: "the tool's own words" }, "error");
    out.invalid = await call(page, "series", { n: "" });
    await fill(page, "n", "2.5");
    out.notWhole = await run(page);
    // A Real takes "Infinity" (docs/spec.md §4.5): a period that never repeats.
    await fill(page, "n", "5");
    await fill(page, "period", "Infinity");
    out.infinite = await run(page);
  } else {
    await page.click("nav [data-tab=resources]");
    out.resources = await page.$$eval("#list .item", (l) => l.map((b) => b.getAttribute("data-key")));
    await page.click(`#list .item[data-key="res:data://samples/README"]`);
    await page.click("#detail button.run");
    await page.waitForSelector("#detail .result pre.text");
    out.readme = await page.$eval("#detail .result pre.text", (e) => e.textContent);
    await page.click(`#list .item[data-key="res:figures://example"]`);
    await page.click("#detail button.run");
    await page.waitForFunction(() => { const i = document.querySelector("#detail .result img.media"); return i && i.complete && i.naturalWidth > 0; }, { timeout: 15000 });
    out.figureWidth = await page.$eval("#detail .result img.media", (i) => i.naturalWidth);
    await shot(page, "resource");
    await page.click(`#list .item[data-key="tpl:samples://{sample}"]`);
    await page.waitForSelector("#detail form.args");
    await fill(page, "sample", "control");
    await page.click("#detail button.run");
    await page.waitForSelector("#detail .result pre.text");
    out.template = await page.$eval("#detail .result pre.text", (e) => e.textContent);
    await page.click("nav [data-tab=prompts]");
    out.prompts = await page.$$eval("#list .item", (l) => l.map((b) => b.getAttribute("data-key")));
    await page.click(`#list .item[data-key="prompt:plot_sample"]`);
    await page.waitForSelector("#detail form.args");
    out.promptFields = await page.$$eval("#detail form.args .field", (l) => l.map((f) => f.getAttribute("data-field")));
    await fill(page, "sample", "control");
    await page.click("#detail button.run");
    await page.waitForSelector("#detail .result .message, #detail .result .error", { timeout: 30000 });
    out.messages = await page.$$eval("#detail .result .message", (l) => l.map((m) => m.textContent.slice(0, 200)));
    out.promptError = await page.$eval("#detail .result", (r) => (r.querySelector(".error") || {}).textContent || null);
    await shot(page, "prompt");
  }
} catch (e) {
  out.fault = String(e && e.stack || e);
} finally {
  await close();
}
print(out, seen);
