// The catalog's history: what happened lately, and the whole tree as it was at any instant (as-of replay).
import { grid, h, mount, when } from './dom.js';
import { api, events, recentPosition } from './api.js';
import { timeline } from './timeline.js';
import { barChart, perDay } from './charts.js';

function asOfTree(state, warehouseNames) {
  const byWarehouse = new Map();
  const entry = (w) => { if (!byWarehouse.has(w)) byWarehouse.set(w, new Map()); return byWarehouse.get(w); };
  for (const ns of state.namespaces) entry(ns['warehouse-id']).set(ns.namespace.join('.'), []);
  for (const [kind, list] of [['table', state.tables], ['view', state.views]]) {
    for (const t of list) {
      const ns = entry(t['warehouse-id']);
      const key = t.namespace.join('.');
      if (!ns.has(key)) ns.set(key, []);
      ns.get(key).push({ kind, t });
    }
  }
  if (!byWarehouse.size) return h('p', { class: 'muted' }, 'The catalog was empty then.');
  return h('ul', { class: 'asof-tree' }, [...byWarehouse].map(([w, namespaces]) => h('li', {}, h('span', { class: 'kind' }, 'wh'), warehouseNames.get(w) || w,
    h('ul', {}, [...namespaces].sort(([a], [b]) => a.localeCompare(b)).map(([ns, items]) => h('li', { 'data-kind': 'ns' }, h('span', { class: 'kind' }, 'ns'), ns,
      h('ul', {}, items.slice(0, SHOWN).map(({ kind, t }) => h('li', { 'data-kind': kind, 'data-name': t.name }, h('span', { class: 'kind' }, kind), t.name,
        t['current-snapshot-id'] ? h('span', { class: 'muted' }, ` · snapshot ${t['current-snapshot-id']}`) : '')),
        items.length > SHOWN ? h('li', { class: 'muted' }, `… ${items.length - SHOWN} more`) : null)))))));
}

const SHOWN = 200; // tables per namespace in the as-of tree
const RECENT = 1000; // events shown, and the slider's range
const toInput = (ms) => new Date(ms).toISOString().slice(0, 23);

export async function historyPage(main, params) {
  const since = params.get('since');
  const after = since ? undefined : await recentPosition(RECENT);
  const [found, { warehouses }] = await Promise.all([events(since ? { since } : {}, after), api('/management/v1/warehouse')]);
  const warehouseNames = new Map(warehouses.map((w) => [w.id, w.name]));
  const names = new Map();
  for (const e of found) if (e.data?.namespace && e.data.namespace_id) names.set(e.data.namespace_id, e.data.namespace.join('.'));
  const times = found.map((e) => Date.parse(e.time));
  const first = times.length ? Math.min(...times) : Date.now();
  const last = Date.now();
  const at = params.get('at') ? Date.parse(params.get('at')) : last;
  const picker = h('input', { type: 'datetime-local', step: '0.001', 'aria-label': 'As of', value: toInput(at) });
  const before = times.filter((t) => t <= at).length;
  const slider = h('input', { type: 'range', min: 0, max: Math.max(found.length, 1), value: before, 'aria-label': 'As of event' });
  const result = h('div');
  const show = async (at) => {
    mount(result, h('p', { class: 'muted' }, 'Replaying…'));
    try {
      const state = await api('/management/v1/as-of', { time: at.toISOString() });
      mount(result, h('p', { class: 'muted' }, `As of ${when(state.time)} (event ${state.position}): ${state.namespaces.length} namespaces, ${state.tables.length} tables, ${state.views.length} views`),
        asOfTree(state, warehouseNames));
    } catch (error) { mount(result, h('div', { class: 'error' }, error.message)); }
  };
  picker.addEventListener('change', () => { if (picker.value) show(new Date(`${picker.value}Z`)); });
  slider.addEventListener('input', () => {
    const i = Number(slider.value);
    const at = i >= found.length ? last : Date.parse(found[i].time) - 1;  // just before event i
    picker.value = toInput(at);
  });
  slider.addEventListener('change', () => picker.dispatchEvent(new Event('change')));
  mount(main, h('h1', {}, 'History'),
    h('h2', {}, 'The catalog as of'),
    h('div', { class: 'row' }, picker, h('span', { class: 'muted' }, 'UTC · or drag over the last events:')), slider, result,
    h('h2', {}, since ? `Events since ${when(since)}` : `The last ${found.length} events`), barChart('Events per day', perDay(found.map((e) => e.time))),
    grid(['First', 'Last', 'Events'], [[when(first), when(times.length ? Math.max(...times) : last), String(found.length)]]),
    timeline(found, names));
  // The replay reads the whole log (seconds at 10k tables): only on request, or for a linked instant.
  if (params.get('at')) await show(new Date(at));
  else mount(result, h('p', {}, h('button', { type: 'button', id: 'replay', onclick: () => picker.dispatchEvent(new Event('change')) }, 'Show the catalog as of this instant')));
}
