// The TypeScript SDK's OAuth client signing in to `nexus serve --auth-issuer`
// (e2e/oauth_test.go): discovery from nexus's 401 (protected-resource
// metadata, then the issuer's), dynamic client registration, authorization
// code with PKCE for the resource; this script plays the user at the
// issuer's sign-in and consent forms (oidc-provider's devInteractions).
// Then it lists and calls tools, is refused a tool that needs lab:admin
// (403 insufficient_scope), signs in again for that scope (the SDK's
// step-up), and calls it in the same session.
//
//   node oauth.mjs MCP_URL USER
//
// Prints one JSON object: what happened at each step, and every HTTP
// exchange the SDK made (method, URL, status, WWW-Authenticate).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';

const [mcpUrl, user] = process.argv.slice(2);
const redirectUrl = 'http://127.0.0.1:1/callback';
const trace = [];

// Every exchange the SDK makes goes through here, to be reported.
async function tracedFetch(url, init) {
  const res = await fetch(url, init);
  trace.push({ method: init?.method ?? 'GET', url: String(url), status: res.status, wwwAuthenticate: res.headers.get('www-authenticate') });
  return res;
}

// An OAuthClientProvider that keeps everything in memory; the authorization
// URL it is sent to is kept for signIn.
class MemoryProvider {
  constructor() {
    this.redirectUrl = redirectUrl;
    this.clientMetadata = {
      client_name: 'nexus e2e', redirect_uris: [redirectUrl], grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'], token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() { return this.info; }
  saveClientInformation(info) { this.info = info; }
  tokens() { return this.saved; }
  saveTokens(t) { this.saved = t; }
  saveCodeVerifier(v) { this.verifier = v; }
  codeVerifier() { return this.verifier; }
  redirectToAuthorization(url) { this.pending = url; }
}

// signIn plays the browser: it follows the issuer's redirects with a
// cookie jar, posts the sign-in form as user and the consent form, and
// returns the code the issuer sends to the redirect URI.
async function signIn(authorizationUrl) {
  const jar = new Map();
  let url = String(authorizationUrl);
  let form;
  for (let hop = 0; hop < 20; hop++) {
    const init = { redirect: 'manual', headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') } };
    if (form) {
      init.method = 'POST';
      init.headers['content-type'] = 'application/x-www-form-urlencoded';
      init.body = new URLSearchParams(form).toString();
      form = undefined;
    }
    const res = await fetch(url, init);
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = pair.indexOf('=');
      jar.set(pair.slice(0, i), pair.slice(i + 1));
    }
    const location = res.headers.get('location');
    if (location) {
      const next = new URL(location, url);
      if (next.href.startsWith(redirectUrl)) {
        const code = next.searchParams.get('code');
        if (!code) throw new Error(`the issuer redirected without a code: ${next.href}`);
        return code;
      }
      url = next.href;
      continue;
    }
    const page = await res.text();
    const prompt = /name="prompt" value="(\w+)"/.exec(page)?.[1];
    const action = /<form[^>]*action="([^"]+)"/.exec(page)?.[1];
    if (res.status !== 200 || !prompt || !action) {
      throw new Error(`unexpected page at ${url} (${res.status}): ${page.slice(0, 300)}`);
    }
    form = prompt === 'login' ? { prompt, login: user, password: 'any' } : { prompt };
    url = new URL(action.replace(/&amp;/g, '&'), url).href;
  }
  throw new Error('sign-in did not end at the redirect URI');
}

const out = { trace };
const provider = new MemoryProvider();
const transport = () => new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider, fetch: tracedFetch });

// 1. Unauthenticated: the SDK reads nexus's 401, discovers, registers and
// sends the user to the issuer.
let client = new Client({ name: 'nexus-e2e-oauth', version: '0' });
let t = transport();
try {
  await client.connect(t);
  throw new Error('connected without signing in');
} catch (e) {
  if (!(e instanceof UnauthorizedError)) throw e;
}
out.registeredClient = provider.info?.client_id ?? null;
out.authorizationUrl = String(provider.pending);
await t.finishAuth(await signIn(provider.pending));
out.firstScope = provider.saved?.scope ?? null;

// 2. Signed in: list and call tools through nexus.
client = new Client({ name: 'nexus-e2e-oauth', version: '0' });
t = transport();
await client.connect(t);
out.sessionId = t.sessionId ?? null;
out.tools = (await client.listTools()).tools.map((tool) => tool.name);
out.addInt = (await client.callTool({ name: 'addInt', arguments: { _1: 41 } })).content;

// 3. A tool that needs lab:admin: 403 insufficient_scope; the SDK asks
// for the scope, the user consents, and the call goes through in the same
// session with the new token.
provider.pending = undefined;
try {
  await client.callTool({ name: 'purge', arguments: {} });
  out.purgeWithoutScope = 'allowed';
} catch (e) {
  out.purgeWithoutScope = e instanceof UnauthorizedError ? 'step-up' : `error: ${e.message}`;
}
if (provider.pending) {
  out.stepUpScope = new URL(provider.pending).searchParams.get('scope');
  await t.finishAuth(await signIn(provider.pending));
  out.secondScope = provider.saved?.scope ?? null;
  out.purge = (await client.callTool({ name: 'purge', arguments: {} })).content;
  out.toolsAfter = (await client.listTools()).tools.map((tool) => tool.name);
  out.sameSession = t.sessionId === out.sessionId;
}
await client.close();
process.stdout.write(JSON.stringify(out) + '\n');
