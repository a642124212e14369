// Small DOM helpers: elements are built with textContent only, so catalog data is never parsed as HTML.
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on')) el.addEventListener(key.slice(2), value);
    else if (key === 'class') el.className = value;
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export function mount(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

export function grid(headers, rows, attrs = {}) {
  return h('table', { class: 'grid', ...attrs },
    h('thead', {}, h('tr', {}, headers.map((name) => h('th', {}, name)))),
    h('tbody', {}, rows.map((cells) => h('tr', {}, cells.map((cell) =>
      cell && cell.num !== undefined ? h('td', { class: 'num' }, cell.num) : h('td', {}, cell))))));
}

export function num(value) {
  return { num: value === undefined || value === null || value === '' ? '' : Number(value).toLocaleString('en-US') };
}

export function when(value) {
  if (value === undefined || value === null) return '';
  const date = typeof value === 'number' ? new Date(value) : new Date(String(value));
  return date.toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

export function bytes(value) {
  const n = Number(value || 0);
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0; let v = n;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i += 1; }
  return `${v.toFixed(i ? 1 : 0)} ${units[i]}`;
}

export function tabs(entries) {
  const body = h('div');
  const bar = h('div', { class: 'tabs', role: 'tablist' });
  const show = (index) => {
    [...bar.children].forEach((btn, i) => btn.classList.toggle('active', i === index));
    mount(body, entries[index][1]());
  };
  entries.forEach(([label], index) => bar.append(h('button', { type: 'button', 'data-tab': label, onclick: () => show(index) }, label)));
  show(0);
  return h('div', {}, bar, body);
}
