// The console's entry: configuration, login, and a router over the URL fragment.
import { h, mount } from './dom.js';
import { claims, completeLogin, login, setToken, token } from './auth.js';
import { ApiError } from './api.js';
import { highlight, renderTree } from './tree.js';
import { homePage, namespacePage, tablePage, viewPage, warehousePage } from './browse.js';
import { historyPage } from './history.js';
import { opsPage } from './ops.js';
import { importPage } from './imports.js';

const main = document.getElementById('main');
const tree = document.getElementById('tree');
const decode = (value) => decodeURIComponent(value).split('\x1f');

const ROUTES = [
  [/^#\/w\/([^/]+)\/t\/([^/]+)\/(.+)$/, (m) => tablePage(main, m[1], decode(m[2]), decodeURIComponent(m[3]))],
  [/^#\/w\/([^/]+)\/v\/([^/]+)\/(.+)$/, (m) => viewPage(main, m[1], decode(m[2]), decodeURIComponent(m[3]))],
  [/^#\/w\/([^/]+)\/n\/([^/]+)$/, (m) => namespacePage(main, m[1], decode(m[2]))],
  [/^#\/w\/([^/]+)\/import\/([^/]+)$/, (m) => importPage(main, m[1], m[2])],
  [/^#\/w\/([^/]+)$/, (m) => warehousePage(main, m[1])],
  [/^#\/history(?:\?(.*))?$/, (m) => historyPage(main, new URLSearchParams(m[1] || ''))],
  [/^#\/ops$/, () => opsPage(main)],
  [/^(#\/?)?$/, () => homePage(main)],
];

async function route() {
  const hash = location.hash;
  document.querySelectorAll('[data-nav]').forEach((a) => a.classList.toggle('active',
    a.dataset.nav === (hash.startsWith('#/history') ? 'history' : hash.startsWith('#/ops') || hash.includes('/import/') ? 'ops' : 'browse')));
  highlight(tree);
  delete main.dataset.loaded;  // set again once this page has rendered (tests wait for it)
  mount(main, h('p', { class: 'muted' }, 'Loading…'));
  const started = performance.now();
  try {
    const found = ROUTES.find(([pattern]) => pattern.test(hash));
    if (!found) { mount(main, h('div', { class: 'error' }, `No page at ${hash}`)); return; }
    await found[1](hash.match(found[0]));
    main.dataset.loaded = hash;
    main.dataset.ms = String(Math.round(performance.now() - started));
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) { setToken(null); location.reload(); return; }
    mount(main, h('div', { class: 'error' }, error.message));
    main.dataset.loaded = hash;
  }
}

function loginPage(config, problem) {
  tree.hidden = true;
  const paste = h('textarea', { rows: 4, style: 'width:100%', placeholder: 'or paste an access token' });
  mount(main, h('div', { class: 'login' }, h('h1', {}, 'Log in'),
    h('p', {}, 'This catalog authenticates with ', h('code', {}, config.issuer), '.'),
    problem ? h('div', { class: 'error' }, problem) : null,
    config['client-id'] ? h('p', {}, h('button', { type: 'button', id: 'login', onclick: () => login(config).catch((e) => loginPage(config, e.message)) }, 'Log in with the identity provider'))
      : h('p', { class: 'muted' }, 'No console client is configured (CATALOG_ES__UI__CLIENT_ID): paste a token.'),
    paste, h('p', {}, h('button', { type: 'button', onclick: () => { setToken(paste.value.trim()); location.reload(); } }, 'Use token'))));
}

async function start() {
  const config = await (await fetch('/ui/config.json')).json();
  if (config.auth === 'oidc') {
    try { await completeLogin(config); } catch (error) { loginPage(config, error.message); return; }
    if (!token()) { loginPage(config); return; }
    const who = claims();
    mount(document.getElementById('user'), who?.name || who?.sub || 'signed in', ' ',
      h('button', { class: 'link', type: 'button', onclick: () => { setToken(null); location.reload(); } }, 'log out'));
  }
  window.addEventListener('hashchange', route);
  renderTree(tree).then(() => highlight(tree), (error) => mount(tree, h('div', { class: 'error' }, error.message)));
  await route();
}

start();
