// A real OpenID provider for the catalog-es tests: node-oidc-provider with the client-credentials grant
// and JWT access tokens for the resource "catalog-es".
// Usage: node provider.mjs <config.json>; config = {port, keys: [JWK with private parts], clients: [...],
// resource (an absolute URI), audience, scope, ttl}. Prints "listening <issuer>" once it serves.
import { readFileSync } from 'node:fs';
import Provider from 'oidc-provider';

const config = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const issuer = `http://127.0.0.1:${config.port}`;

// Optional: one public client for a browser (authorization code + PKCE S256), with the pages of
// devInteractions as its login and consent; config.console = {client_id, redirect_uri}.
const browserClients = config.console ? [{
  client_id: config.console.client_id,
  token_endpoint_auth_method: 'none',
  grant_types: ['authorization_code'],
  response_types: ['code'],
  redirect_uris: [config.console.redirect_uri],
  scope: config.scope,
}] : [];

const provider = new Provider(issuer, {
  clients: [...browserClients, ...config.clients.map((client) => ({
    client_id: client.client_id,
    client_secret: client.client_secret,
    grant_types: ['client_credentials'],
    response_types: [],
    redirect_uris: [],
    token_endpoint_auth_method: 'client_secret_post',
    scope: config.scope,
    roles: client.roles ?? [],
  }))],
  // The console calls the token endpoint from its own origin (another port): CORS for every client.
  clientBasedCORS: () => true,
  pkce: { required: () => true },
  extraClientMetadata: { properties: ['roles'] },
  jwks: { keys: config.keys },
  scopes: config.scope.split(' '),
  features: {
    devInteractions: { enabled: Boolean(config.console) },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => config.resource,
      useGrantedResource: () => true,
      getResourceServerInfo: () => ({
        scope: config.scope,
        audience: config.audience,
        accessTokenFormat: 'jwt',
        accessTokenTTL: config.ttl ?? 600,
      }),
    },
  },
  extraTokenClaims: (ctx, token) => {
    const client = token.client ?? ctx.oidc.client;
    return { roles: client?.roles ?? [], name: `Client ${client?.clientId}` };
  },
});

provider.listen(config.port, '127.0.0.1', () => {
  console.log(`listening ${issuer}`);
});
