// Operations: the server, its projectors' lag, every warehouse's status and storage (never a secret), imports.
import { grid, h, mount, when } from './dom.js';
import { api } from './api.js';
import { importsSection } from './imports.js';

export async function opsPage(main) {
  const [info, health, { warehouses }] = await Promise.all([
    api('/management/v1/info'), api('/health').catch((error) => ({ status: error.message, projectors: [] })), api('/management/v1/warehouse')]);
  const projectors = health.projectors || [];
  mount(main, h('h1', {}, 'Operations'),
    h('div', { class: 'cards' },
      h('div', { class: 'card' }, 'Server', h('b', {}, health.status)),
      h('div', { class: 'card' }, 'Database', h('b', {}, health.database || '?')),
      h('div', { class: 'card' }, 'Version', h('b', {}, info.version)),
      h('div', { class: 'card' }, 'Authorization', h('b', {}, info['authz-backend']))),
    h('h2', {}, 'Projectors and relay'),
    projectors.length ? grid(Object.keys(projectors[0]), projectors.map((p) => Object.values(p).map((v) => (typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v ?? '')))))
      : h('p', { class: 'muted' }, 'No asynchronous projectors report here.'),
    h('h2', {}, 'Warehouses'),
    grid(['Name', 'Status', 'Storage profile', 'Credential'], warehouses.map((w) => [w.name, h('span', { class: `badge ${w.status}` }, w.status),
      h('code', {}, JSON.stringify(w['storage-profile'])), w['storage-credential-type'] || 'none'])),
    await importsSection(warehouses),
    h('p', { class: 'muted' }, `Loaded ${when(Date.now())}`));
}
