// Headless Chromium for the view tests: Debian's /usr/bin/chromium (never a
// browser of puppeteer's own), a fresh profile, no network of its own, and
// every request the page makes recorded; one outside the origins a test
// allows is refused and counted as a fault.
import puppeteer from "puppeteer-core";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export async function launch() {
  const profile = mkdtempSync(join(tmpdir(), "nexus-views-chromium-"));
  const browser = await puppeteer.launch({
    executablePath: process.env.NEXUS_CHROMIUM || "/usr/bin/chromium",
    headless: true,
    userDataDir: profile,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
      "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage", "--font-render-hinting=none"],
  });
  const close = async () => {
    await browser.close().catch(() => {});
    rmSync(profile, { recursive: true, force: true });
  };
  return { browser, close };
}

// watch records what a page asks of the network and what its frames log:
// requests to an origin not in allowed are aborted and listed.
export async function watch(page, allowed) {
  const seen = { outside: [], console: [], errors: [] };
  await page.setRequestInterception(true);
  page.on("request", (req) => {
    const url = req.url();
    if (url.startsWith("data:") || url.startsWith("about:") || allowed.some((o) => url.startsWith(o))) {
      req.continue();
      return;
    }
    seen.outside.push(url);
    req.abort();
  });
  page.on("console", (m) => { if (m.type() === "error" || m.type() === "warn") seen.console.push(m.text()); });
  page.on("pageerror", (e) => seen.errors.push(String(e && e.message || e)));
  return seen;
}

// print writes what a script found as one JSON line, with what watch saw
// (nothing when the browser did not start), for the Go test to judge.
export function print(out, seen) {
  out.outside = seen ? seen.outside : [];
  out.console = seen ? seen.console : [];
  out.errors = seen ? seen.errors : [];
  process.stdout.write(JSON.stringify(out) + "\n");
}

// frameOf is the document of an iframe element.
export async function frameOf(handle) {
  const f = await handle.contentFrame();
  if (!f) throw new Error("the iframe has no document");
  return f;
}

// observe reads what a view drew (internal/views/src/view.js's DOM).
export async function observe(frame) {
  return frame.evaluate(() => {
    const q = (s) => document.querySelector(s);
    const attr = (s, a) => { const e = q(s); return e ? e.getAttribute(a) : null; };
    const text = (s) => { const e = q(s); return e ? e.textContent : null; };
    return {
      state: attr("#view", "data-state"),
      caption: text(".caption"),
      chartPoints: attr(".chart", "data-points"),
      chartMode: attr(".chart", "data-mode"),
      chartCanvases: document.querySelectorAll(".chart canvas").length,
      tableRows: q("table.rows") ? document.querySelectorAll("table.rows tbody tr").length : null,
      tableColumns: Array.from(document.querySelectorAll("table.rows thead th")).map((th) => th.textContent),
      heatmapCells: q(".heatmap") ? document.querySelectorAll(".heatmap rect.cell").length : null,
      recordFields: q("table.kv") ? document.querySelectorAll("table.kv > tbody > tr").length : null,
      record: text("table.kv"),
      tree: q(".tree") ? q(".tree").textContent : null,
      text: text("pre.text"),
      images: Array.from(document.querySelectorAll("figure img")).map((i) => ({ loaded: i.complete && i.naturalWidth > 0, width: i.naturalWidth })),
      error: text(".error"),
      theme: document.documentElement.getAttribute("data-theme"),
      background: getComputedStyle(document.body).backgroundColor,
    };
  });
}

// open opens an item of the page's list (a tool: "tool:NAME") and waits
// for its form.
export async function open(page, key) {
  await page.click(`#list .item[data-key="${key}"]`);
  await page.waitForSelector("#detail form.args");
}

// fill sets a form field, typed as a person would.
export async function fill(page, name, value) {
  const sel = `#detail [name="${name}"]`;
  await page.$eval(sel, (e) => { e.value = ""; });
  if (value !== "") await page.type(sel, value);
}

// run presses the form's button and waits for what the call showed: a
// view's frame, an error, or the form's own complaint.
export async function run(page) {
  await page.click("#detail button.run");
  await page.waitForSelector("#detail .result iframe.view, #detail .result .error, #detail ul.invalid li, #detail .result pre", { timeout: 30000 });
  const frameEl = await page.$("#detail .result iframe.view");
  if (!frameEl) return { error: await page.$eval("#detail", (d) => (d.querySelector(".result .error") || {}).textContent || null), invalid: await page.$$eval("#detail ul.invalid li", (l) => l.map((x) => x.textContent)) };
  const frame = await frameOf(frameEl);
  await frame.waitForSelector("#view[data-state]", { timeout: 15000 });
  await new Promise((r) => setTimeout(r, 300)); // the frame takes the view's size
  return { drawn: await observe(frame), frameHeight: await page.$eval("#detail iframe.view", (f) => f.getBoundingClientRect().height) };
}
