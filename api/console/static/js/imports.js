// Imports (issue 32): the warehouses' import tasks, and one import's progress, refreshed until it ends.
import { grid, h, mount, num, when } from './dom.js';
import { api } from './api.js';

const ENDED = ['SUCCESS', 'FAILED', 'CANCELLED'];
const REFRESH_MS = 1000;
const importHref = (warehouse, task) => `#/w/${warehouse}/import/${task}`;

// The latest imports of every warehouse the user may manage (others are left out, not shown as errors).
export async function importsSection(warehouses) {
  const body = { 'queue-name': ['catalog_import'], 'page-size': 20 };
  const lists = await Promise.all(warehouses.map((w) =>
    api(`/management/v1/warehouse/${w.id}/task/list`, {}, body).then((page) => page.tasks.map((t) => [w, t]), () => [])));
  const rows = lists.flat();
  return h('div', {}, h('h2', {}, 'Imports'),
    rows.length ? grid(['Warehouse', 'Import', 'Status', 'Progress', 'Queued by', 'Created'], rows.map(([w, t]) => [
      w.name, h('a', { href: importHref(w.id, t['task-id']) }, t['task-id']), h('span', { class: `badge ${t.status.toLowerCase()}` }, t.status),
      `${Math.round(t.progress * 100)} %`, t['scheduled-by'], when(t['created-at'])]), { 'data-section': 'imports' })
      : h('p', { class: 'muted' }, 'No import was queued (POST /management/v1/warehouse/{id}/import).'));
}

function render(main, status) {
  const counts = Object.entries(status.counts || {});
  return mount(main, h('h1', {}, 'Import'),
    h('div', { class: 'cards' },
      h('div', { class: 'card' }, 'Source', h('b', {}, status.source)),
      h('div', { class: 'card' }, 'Status', h('b', { 'data-import-status': status.status }, status.status)),
      h('div', { class: 'card' }, 'Phase', h('b', {}, status.phase)),
      h('div', { class: 'card' }, 'Attempt', h('b', {}, status.attempt))),
    h('p', {}, h('progress', { value: status.done, max: Math.max(status.total, 1) }), ` ${status.done} of ${status.total} changes`),
    h('h2', {}, 'Changes'),
    counts.length ? grid(['Change', 'Count'], counts.map(([kind, count]) => [kind, num(count)]), { 'data-section': 'import-counts' })
      : h('p', { class: 'muted' }, 'None yet.'),
    status.unchanged !== null ? h('p', {}, `Unchanged: ${status.unchanged}`) : null,
    status['uncovered-count'] ? [h('h2', {}, `Locations the warehouse does not cover (${status['uncovered-count']})`),
      h('ul', { 'data-section': 'uncovered' }, status.uncovered.map((location) => h('li', {}, h('code', {}, location))))] : null,
    status.errors.length ? [h('h2', {}, 'Errors'), h('ul', {}, status.errors.map((message) => h('li', { 'data-error': '' }, message)))] : null,
    h('p', { class: 'muted' }, `Loaded ${when(Date.now())}`));
}

export async function importPage(main, warehouse, task) {
  const path = `/management/v1/warehouse/${warehouse}/import/${task}`;
  const shown = location.hash;
  let status = await api(path);
  render(main, status);
  const refresh = async () => {
    if (location.hash !== shown || ENDED.includes(status.status)) return;
    try { status = await api(path); render(main, status); } catch { /* the next refresh tries again */ }
    setTimeout(refresh, REFRESH_MS);
  };
  setTimeout(refresh, REFRESH_MS);
}
