// An authorization server for e2e/oauth_test.go: oidc-provider on loopback,
// configured as MCP's authorization spec expects of one (dynamic client
// registration, authorization code with PKCE, resource indicators with JWT
// access tokens for the resource asked for) plus client_credentials and
// introspection. The test drives sign-in through devInteractions' forms.
//
//   node provider.mjs KEYS_FILE [SCOPES]
//
// KEYS_FILE is a private JWKS (the test writes it, so it can sign tokens of
// its own with the issuer's key); the first key signs. SCOPES (default
// "mcp lab:admin") are the scopes a resource grants. It prints
// {"issuer": "http://127.0.0.1:PORT"} on one line once it listens.
// POST /__test/rotate reads KEYS_FILE again: a key rotation without a restart.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

import Provider from 'oidc-provider';

const [keysFile, scopeList = 'mcp lab:admin'] = process.argv.slice(2);

// Clients the test uses without registering: robot and robot2 get tokens
// with client_credentials (two subjects), opaque gets opaque ones, and nexus
// introspects.
const clients = [
  { client_id: 'robot', client_secret: 'robot-secret', grant_types: ['client_credentials'], redirect_uris: [], response_types: [], scope: scopeList },
  { client_id: 'robot2', client_secret: 'robot2-secret', grant_types: ['client_credentials'], redirect_uris: [], response_types: [], scope: scopeList },
  { client_id: 'opaque', client_secret: 'opaque-secret', grant_types: ['client_credentials'], redirect_uris: [], response_types: [], scope: scopeList },
  { client_id: 'nexus', client_secret: 'nexus-secret', grant_types: [], redirect_uris: [], response_types: [] },
];

function build(issuer) {
  const provider = new Provider(issuer, {
    jwks: JSON.parse(readFileSync(keysFile, 'utf8')),
    clients,
    scopes: ['openid', 'offline_access', ...scopeList.split(' ')],
    ttl: { ClientCredentials: 300 },
    findAccount: (ctx, id) => ({ accountId: id, claims: () => ({ sub: id }) }),
    cookies: { keys: ['e2e-only-cookie-key'] },
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: true },
      registration: { enabled: true },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      resourceIndicators: {
        enabled: true,
        // Every token is for the resource the client names (RFC 8707).
        defaultResource: (ctx, client, oneOf) => oneOf,
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx, resource, client) => ({
          scope: scopeList,
          audience: resource,
          accessTokenTTL: 300,
          accessTokenFormat: client.clientId === 'opaque' ? 'opaque' : 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
  });
  provider.proxy = false;
  return provider;
}

// registeredScopeless drops the scope a client asks for at registration:
// oidc-provider would bind the client to it, while an authorization server
// of a lab grants scopes per user, so that a client registered for "mcp"
// may later ask for "lab:admin" as well (the SDK's step-up after a 403).
async function registeredScopeless(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const body = JSON.parse(Buffer.concat(chunks).toString() || '{}');
  delete body.scope;
  req.body = body; // oidc-provider reads an already-read body from here
}

let provider;
const server = createServer(async (req, res) => {
  if (req.method === 'POST' && req.url === '/__test/rotate') {
    provider = build(provider.issuer);
    res.writeHead(204).end();
    return;
  }
  if (req.method === 'POST' && req.url === '/reg') {
    await registeredScopeless(req);
  }
  provider.callback()(req, res);
});
server.listen(0, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  provider = build(issuer);
  process.stdout.write(JSON.stringify({ issuer }) + '\n');
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
