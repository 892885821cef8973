// A person signing in to nexus serve's browser page through the issuer, in
// headless Chromium, as e2e/pagesignin_test.go drives it:
//
//   node signin.mjs BASE_URL ISSUER_URL ARTEFACTS_DIR USER
//
// It opens the page, is sent to the issuer (oidc-provider's
// devInteractions forms), signs in as USER and consents, lands back on
// the page, and runs a tool whose view draws the result. Then a page of
// another origin (the issuer's, same site) posts to /mcp with the cookie,
// and a second browser context, without the cookie, opens the page. It
// prints one JSON object of what happened; the Go test judges it.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { fill, launch, open, print, run, watch } from "./browser.mjs";

const [base, issuer, artefacts, user] = process.argv.slice(2);
mkdirSync(artefacts, { recursive: true });
const out = {};
const { browser, close } = await launch();
let seen;

// navigations records the main frame's document responses (redirects
// included): the way from the page to the issuer and back.
function navigations(page) {
  const list = [];
  page.on("response", (r) => {
    if (r.request().isNavigationRequest() && r.frame() === page.mainFrame()) list.push({ url: r.url(), status: r.status() });
  });
  return list;
}

// until waits for test to hold in the page, across the navigations that
// replace its document meanwhile.
async function until(page, test, what, timeout = 30000) {
  const end = Date.now() + timeout;
  while (Date.now() < end) {
    try {
      if (await page.evaluate(test)) return;
    } catch (e) { /* a navigation replaced the document: try again */ }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what} at ${page.url()}`);
}

// submit presses a form's button and waits for where it leads.
async function submit(page) {
  await Promise.all([page.waitForNavigation({ waitUntil: "load" }), page.click("button[type=submit]")]);
}

try {
  const page = await browser.newPage();
  await page.setViewport({ width: 840, height: 780, deviceScaleFactor: 1 });
  seen = await watch(page, [base, issuer]);
  out.navigations = navigations(page);

  await page.goto(base + "/", { waitUntil: "load" });
  out.loginAt = page.url();
  await page.waitForSelector("input[name=login]", { timeout: 15000 });
  await page.type("input[name=login]", user);
  await page.type("input[name=password]", "any");
  await submit(page);
  out.consentAt = page.url();
  await submit(page);
  await until(page, () => location.pathname === "/" && document.body && document.body.getAttribute("data-ready") === "true", "the signed-in page");
  out.landedAt = page.url();
  // What the issuer's forms asked for (their web fonts) is theirs: only
  // the page is judged from here on.
  out.atIssuer = { outside: seen.outside.splice(0), console: seen.console.splice(0), errors: seen.errors.splice(0) };
  out.documentCookie = await page.evaluate(() => document.cookie);
  out.cookies = (await page.cookies(base)).map((c) => ({ name: c.name, httpOnly: c.httpOnly, sameSite: c.sameSite, secure: c.secure, path: c.path, expires: c.expires }));
  out.tools = await page.$$eval("#list .item", (l) => l.map((b) => b.getAttribute("data-key")));
  await open(page, "tool:series");
  await fill(page, "n", "150");
  out.series = await run(page);
  await page.screenshot({ path: join(artefacts, "page-signed-in.png") });

  // Another origin of the same site (the issuer's), where the browser
  // does send the strict cookie: nexus must not honour it.
  const other = await browser.newPage();
  await other.goto(issuer + "/.well-known/openid-configuration");
  out.crossOrigin = await other.evaluate(async (mcp) => {
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "version", arguments: {} } });
    try {
      const r = await fetch(mcp, { method: "POST", mode: "no-cors", credentials: "include", headers: { "Content-Type": "text/plain" }, body });
      return r.type;
    } catch (e) {
      return "failed: " + e.message;
    }
  }, base + "/mcp");
  await other.close();

  // A second browser context has no cookie: the page sends it to sign in.
  const fresh = await browser.createBrowserContext();
  const second = await fresh.newPage();
  out.secondNavigations = navigations(second);
  await second.goto(base + "/", { waitUntil: "load" });
  out.secondAt = second.url();
  out.secondLoginForm = (await second.$("input[name=login]")) !== null;
  await fresh.close();
} catch (e) {
  out.fault = String(e && e.stack || e);
} finally {
  await close();
}
print(out, seen);
