// The sidebar: warehouses → namespaces (nested) → tables and views, each level loaded when opened.
import { h, mount } from './dom.js';
import { api, listNamespaces, listTables, listViews, nsParam } from './api.js';

const SHOWN = 200; // past this many children a node links to its page, where they can be filtered

export const href = {
  warehouse: (w) => `#/w/${w}`,
  namespace: (w, parts) => `#/w/${w}/n/${nsParam(parts)}`,
  table: (w, parts, name) => `#/w/${w}/t/${nsParam(parts)}/${encodeURIComponent(name)}`,
  view: (w, parts, name) => `#/w/${w}/v/${nsParam(parts)}/${encodeURIComponent(name)}`,
};

function node(label, kind, link, load) {
  const children = h('ul', { hidden: true });
  let loaded = false;
  const toggle = h('span', { class: 'toggle', role: 'button', 'aria-label': `expand ${label}` }, load ? '▸' : '');
  const open = async () => {
    if (!load) return;
    children.hidden = !children.hidden;
    toggle.textContent = children.hidden ? '▸' : '▾';
    if (!loaded) {
      loaded = true;
      mount(children, h('li', { class: 'muted' }, 'loading…'));
      try { mount(children, await load()); } catch (error) { mount(children, h('li', { class: 'error' }, error.message)); }
    }
  };
  toggle.addEventListener('click', open);
  const li = h('li', { 'data-kind': kind, 'data-name': label }, toggle, h('span', { class: 'kind' }, kind), h('a', { href: link }, label), children);
  li.open = open;
  return li;
}

function capped(items, more) {
  return items.length > SHOWN ? [...items.slice(0, SHOWN), h('li', {}, h('a', { href: more }, `… ${items.length - SHOWN} more`))] : items;
}

function namespaceNode(warehouse, parts) {
  return node(parts[parts.length - 1], 'ns', href.namespace(warehouse, parts), async () => {
    const [children, tables, views] = await Promise.all([
      listNamespaces(warehouse, parts), listTables(warehouse, parts), listViews(warehouse, parts)]);
    return capped([
      ...children.map((child) => namespaceNode(warehouse, child)),
      ...tables.map((t) => node(t.name, 'table', href.table(warehouse, parts, t.name))),
      ...views.map((v) => node(v.name, 'view', href.view(warehouse, parts, v.name))),
    ], href.namespace(warehouse, parts));
  });
}

export async function renderTree(el) {
  const { warehouses } = await api('/management/v1/warehouse');
  mount(el, h('ul', {}, warehouses.map((w) => node(w.name, 'wh', href.warehouse(w.id), async () =>
    capped((await listNamespaces(w.id)).map((parts) => namespaceNode(w.id, parts)), href.warehouse(w.id))))));
  const first = el.querySelector('li');
  if (warehouses.length === 1 && first) await first.open();
}

export function highlight(el) {
  for (const a of el.querySelectorAll('a')) a.classList.toggle('current', a.getAttribute('href') === location.hash);
}
