// A timeline of events: when, who, what kind of change, and the change itself in words.
import { h, when } from './dom.js';
import { describe, shortType } from './changes.js';
import { events } from './api.js';

// Namespace ids → dotted names, from the log itself (so renames and grants read as names, not ids).
export async function namespaceNames(warehouse) {
  const created = await events({ warehouse, type: 'namespace.created' });
  return new Map(created.map((e) => [e.data.namespace_id, (e.data.namespace || []).join('.')]));
}

export function timeline(found, names = new Map(), { newestFirst = true } = {}) {
  const state = new Map();
  const items = found.map((event) => h('li', { 'data-type': shortType(event.type) },
    h('div', {}, h('b', {}, when(event.time)), ' · ', h('span', { class: 'badge' }, shortType(event.type)), ' · ',
      h('span', { class: 'muted' }, `by ${event.actor}`)),
    h('ul', { class: 'change' }, describe(event, state, names).map((line) =>
      h('li', { class: line.kind === 'add' ? 'add' : line.kind === 'del' ? 'del' : '' }, line.text)))));
  if (newestFirst) items.reverse();
  return found.length ? h('ol', { class: 'timeline' }, items) : h('p', { class: 'muted' }, 'No events.');
}
