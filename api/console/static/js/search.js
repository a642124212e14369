// The warehouse search box: tables and views by name from the server's `tabular_search` index (only what
// the user may see), each linked to its page. The index trails the log by a moment: a brand-new table may
// show up a little later.
import { h, mount } from './dom.js';
import { api } from './api.js';
import { href } from './tree.js';

const LIMIT = 50;

export function searchBox(warehouseId) {
  const results = h('ul', { 'data-section': 'search-results' });
  const status = h('span', { class: 'muted' });
  let asked = 0;
  const run = async (text) => {
    const q = text.trim();
    const mine = ++asked;  // a slower earlier answer must not overwrite a later one
    if (!q) { mount(results); status.textContent = ''; return; }
    try {
      const { tabulars } = await api(`/management/v1/warehouse/${warehouseId}/search`, { q, limit: LIMIT });
      if (mine !== asked) return;
      status.textContent = tabulars.length ? `${tabulars.length}${tabulars.length === LIMIT ? '+' : ''} found` : 'nothing found';
      mount(results, tabulars.map((t) => h('li', { 'data-kind': t.kind },
        h('span', { class: 'kind' }, t.kind),
        h('a', { href: (t.kind === 'view' ? href.view : href.table)(warehouseId, t.namespace, t.name) }, [...t.namespace, t.name].join('.')))));
    } catch (error) {
      if (mine === asked) mount(results, h('li', { class: 'error' }, error.message));
    }
  };
  let timer;
  const box = h('input', { type: 'search', name: 'q', placeholder: 'Search tables and views…', 'aria-label': 'Search tables and views',
    oninput: (e) => { clearTimeout(timer); timer = setTimeout(() => run(e.target.value), 250); } });
  const form = h('form', { class: 'row', role: 'search', onsubmit: (e) => { e.preventDefault(); clearTimeout(timer); run(box.value); } },
    box, h('button', { type: 'submit' }, 'Search'), status);
  return h('div', { class: 'search' }, form, results);
}
