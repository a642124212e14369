// Login: with OIDC on, the authorization-code grant with PKCE against the server's own issuer; the access
// token lives in sessionStorage (this tab only) and is sent as a bearer token to the catalog's APIs.
const TOKEN = 'catalog-es.token';
const PENDING = 'catalog-es.pkce';

function base64url(bytes) {
  return btoa(String.fromCharCode(...new Uint8Array(bytes))).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function randomString() {
  return base64url(crypto.getRandomValues(new Uint8Array(32)));
}

async function discover(issuer) {
  const response = await fetch(`${issuer}/.well-known/openid-configuration`);
  if (!response.ok) throw new Error(`OpenID discovery at ${issuer} answered ${response.status}`);
  return response.json();
}

function redirectUri() {
  return `${location.origin}/ui`;
}

export function token() {
  return sessionStorage.getItem(TOKEN);
}

export function setToken(value) {
  if (value) sessionStorage.setItem(TOKEN, value); else sessionStorage.removeItem(TOKEN);
}

export async function login(config) {
  const provider = await discover(config.issuer);
  const verifier = randomString();
  const state = randomString();
  const challenge = base64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)));
  sessionStorage.setItem(PENDING, JSON.stringify({ verifier, state, hash: location.hash }));
  const params = new URLSearchParams({
    response_type: 'code', client_id: config['client-id'], redirect_uri: redirectUri(),
    scope: config.scope || 'openid', state, code_challenge: challenge, code_challenge_method: 'S256',
  });
  if (config.resource) params.set('resource', config.resource);
  location.assign(`${provider.authorization_endpoint}?${params}`);
}

// On the way back from the provider: exchange the code, forget it from the address bar.
export async function completeLogin(config) {
  const query = new URLSearchParams(location.search);
  if (!query.has('code') && !query.has('error')) return false;
  const pending = JSON.parse(sessionStorage.getItem(PENDING) || 'null');
  sessionStorage.removeItem(PENDING);
  history.replaceState(null, '', `/ui${pending?.hash || ''}`);
  if (query.has('error')) throw new Error(`Login failed: ${query.get('error_description') || query.get('error')}`);
  if (!pending || pending.state !== query.get('state')) throw new Error('Login failed: the state does not match');
  const provider = await discover(config.issuer);
  const body = new URLSearchParams({
    grant_type: 'authorization_code', code: query.get('code'), redirect_uri: redirectUri(),
    client_id: config['client-id'], code_verifier: pending.verifier,
  });
  if (config.resource) body.set('resource', config.resource);
  const response = await fetch(provider.token_endpoint, { method: 'POST', body });
  const answer = await response.json();
  if (!response.ok) throw new Error(`Token exchange failed: ${answer.error_description || answer.error || response.status}`);
  setToken(answer.access_token);
  return true;
}

export function claims() {
  const value = token();
  if (!value || value.split('.').length !== 3) return null;
  try { return JSON.parse(atob(value.split('.')[1].replace(/-/g, '+').replace(/_/g, '/'))); } catch { return null; }
}
