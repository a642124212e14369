// Browse pages: projects and warehouses, a warehouse, a namespace, a table, a view.
import { bytes, grid, h, mount, num, tabs, when } from './dom.js';
import { api, currentProject, events, recentPosition, listNamespaces, listTables, listViews, loadNamespace, loadTable, loadView, setProject } from './api.js';
import { href } from './tree.js';
import { namespaceNames, timeline } from './timeline.js';
import { schemaDiff, typeName } from './changes.js';
import { barChart, lineChart, perDay } from './charts.js';
import { searchBox } from './search.js';

const FILTER_SHOWN = 500;

function crumbs(warehouse, parts = [], last) {
  const links = [h('a', { href: '#/' }, 'Warehouses'), ' / ', h('a', { href: href.warehouse(warehouse.id) }, warehouse.name)];
  parts.forEach((_, i) => links.push(' / ', h('a', { href: href.namespace(warehouse.id, parts.slice(0, i + 1)) }, parts[i])));
  if (last) links.push(' / ', last);
  return h('div', { class: 'crumbs' }, links);
}

const warehouseCache = new Map();
async function warehouseOf(id) {
  if (!warehouseCache.has(id)) warehouseCache.set(id, await api(`/management/v1/warehouse/${id}`));
  return warehouseCache.get(id);
}

function kv(object) {
  const entries = Object.entries(object || {});
  return entries.length ? grid(['Key', 'Value'], entries.map(([k, v]) => [h('code', {}, k), typeof v === 'object' ? JSON.stringify(v) : String(v)]))
    : h('p', { class: 'muted' }, 'None.');
}

// A list of links with a filter box that narrows it as you type (client-side, over what the page loaded).
function filtered(label, items) {
  const list = h('ul');
  const count = h('span', { class: 'muted' });
  const render = (text) => {
    const needle = text.trim().toLowerCase();
    const hits = needle ? items.filter((item) => item.text.toLowerCase().includes(needle)) : items;
    count.textContent = `${hits.length.toLocaleString('en-US')} of ${items.length.toLocaleString('en-US')}`;
    mount(list, hits.slice(0, FILTER_SHOWN).map((item) => h('li', { 'data-kind': item.kind }, h('span', { class: 'kind' }, item.kind), h('a', { href: item.href }, item.text))),
      hits.length > FILTER_SHOWN ? h('li', { class: 'muted' }, `… ${hits.length - FILTER_SHOWN} more: narrow the filter`) : null);
  };
  const box = h('input', { type: 'search', placeholder: `Filter ${label}…`, 'aria-label': `Filter ${label}`, oninput: (e) => render(e.target.value) });
  render('');
  return h('div', {}, h('div', { class: 'row' }, box, count), list);
}

export async function homePage(main) {
  const [info, project] = await Promise.all([api('/management/v1/info'), api('/management/v1/project').catch(() => null)]);
  let projects = [];
  try { projects = (await api('/management/v1/project-list')).projects; } catch { projects = project ? [project] : []; }
  const { warehouses } = await api('/management/v1/warehouse');
  const picker = projects.length > 1 ? h('select', { 'aria-label': 'Project', onchange: (e) => { setProject(e.target.value); location.reload(); } },
    projects.map((p) => h('option', { value: p['project-id'], selected: p['project-id'] === (currentProject() || project?.['project-id']) }, p['project-name']))) : null;
  mount(main, h('h1', {}, 'Warehouses'),
    h('div', { class: 'row' }, h('span', {}, 'Project: ', h('b', {}, project?.['project-name'] || '—')), picker,
      h('span', { class: 'muted' }, `catalog-es ${info.version} · authorization: ${info['authz-backend']}`)),
    grid(['Warehouse', 'Status', 'Storage', 'Id'], warehouses.map((w) => [
      h('a', { href: href.warehouse(w.id) }, w.name), h('span', { class: `badge ${w.status}` }, w.status),
      `${w['storage-profile']?.type || ''} ${w['storage-profile']?.bucket || ''}`.trim(), h('code', {}, w.id)])));
}

export async function warehousePage(main, id) {
  const warehouse = await warehouseOf(id);
  const namespaces = await listNamespaces(id);
  mount(main, crumbs(warehouse), h('h1', {}, warehouse.name), searchBox(id),
    tabs([
      ['Namespaces', () => filtered('namespaces', namespaces.map((parts) => ({ kind: 'ns', text: parts.join('.'), href: href.namespace(id, parts) })))],
      ['Storage', () => h('div', {}, h('p', {}, 'Status: ', h('span', { class: `badge ${warehouse.status}` }, warehouse.status)),
        h('h2', {}, 'Storage profile'), kv(warehouse['storage-profile']),
        h('p', {}, 'Credential: ', warehouse['storage-credential-type'] || 'none', warehouse['storage-credential-fingerprint'] ? ` (fingerprint ${warehouse['storage-credential-fingerprint']})` : ''),
        h('h2', {}, 'Delete profile'), kv(warehouse['delete-profile']))],
      ['Permissions', () => permissions(`warehouse/${id}`)],
      ['History', () => lazy(async () => {
        const found = await events({ warehouse: id }, await recentPosition(2000));  // the last 2000 of the log
        return h('div', {}, barChart('Events per day', perDay(found.map((e) => e.time))), timeline(found, await namespaceNames(id)));
      })],
    ]));
}

// Who has what on the object and where it comes from (the object itself or a container above it).
function permissions(path) {
  return lazy(async () => {
    let found;
    try { found = (await api(`/management/v1/permissions/${path}/effective-assignments`)).assignments; } catch (error) {
      if (error.status === 403) return h('p', { class: 'muted' }, 'Reading permissions needs manage_grants or pass_grants here.');
      throw error;
    }
    return found.length ? grid(['Who', 'Privilege', 'Granted on', 'Origin id'], found.map((a) => [
      a.user ? h('span', {}, 'user ', h('code', {}, a.user)) : h('span', {}, 'role ', h('code', {}, a.role)),
      h('b', {}, a.type), a['origin-kind'] === path.split('/').slice(-2)[0] ? `${a['origin-kind']} (itself)` : `${a['origin-kind']} (inherited)`,
      h('code', {}, a['origin-id'])]), { 'data-section': 'permissions' })
      : h('p', { class: 'muted' }, 'No assignments: with authorization off everyone may do everything.');
  });
}

function lazy(load) {
  const box = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  load().then((el) => mount(box, el), (error) => mount(box, h('div', { class: 'error' }, error.message)));
  return box;
}

export async function namespacePage(main, id, parts) {
  const warehouse = await warehouseOf(id);
  const [props, children, tables, views] = await Promise.all([
    loadNamespace(id, parts), listNamespaces(id, parts), listTables(id, parts), listViews(id, parts)]);
  const items = [
    ...children.map((child) => ({ kind: 'ns', text: child[child.length - 1], href: href.namespace(id, child) })),
    ...tables.map((t) => ({ kind: 'table', text: t.name, href: href.table(id, parts, t.name) })),
    ...views.map((v) => ({ kind: 'view', text: v.name, href: href.view(id, parts, v.name) })),
  ];
  mount(main, crumbs(warehouse, parts.slice(0, -1), parts[parts.length - 1]), h('h1', {}, parts.join('.')),
    h('p', { class: 'muted' }, `${children.length} namespaces · ${tables.length} tables · ${views.length} views`),
    tabs([
      ['Contents', () => filtered('tables and views', items)],
      ['Properties', () => kv(props.properties)],
      ['Permissions', () => lazy(async () => {  // the namespace's id is in its events (its creation names it)
        const first = (await events({ warehouse: id, namespace: parts.join('\x1f'), pageSize: 1 }))[0];
        const nsId = first?.data?.['namespace-id'] ?? first?.data?.namespace_id;
        return nsId ? permissions(`namespace/${nsId}`) : h('p', { class: 'muted' }, 'No history names this namespace.');
      })],
      ['History', () => lazy(async () => timeline(await events({ warehouse: id, namespace: parts.join('\x1f') }), await namespaceNames(id)))],
    ]));
}

function fieldRows(fields, prefix = '') {
  const rows = [];
  for (const field of fields || []) {
    rows.push([num(field.id), h('code', {}, `${prefix}${field.name}`), h('code', {}, typeName(field.type)), field.required ? 'required' : 'optional', field.doc || '']);
    if (field.type && typeof field.type === 'object' && field.type.fields) rows.push(...fieldRows(field.type.fields, `${prefix}${field.name}.`));
  }
  return rows;
}

function schemaTable(schema) {
  return grid(['Id', 'Name', 'Type', '', 'Doc'], fieldRows(schema?.fields), { 'data-section': 'schema' });
}

function schemaDiffPicker(schemas) {
  if (schemas.length < 2) return h('p', { class: 'muted' }, 'Only one schema version.');
  const out = h('ul', { class: 'change' });
  const pick = (def) => h('select', { onchange: () => update() }, schemas.map((s) => h('option', { value: s['schema-id'], selected: s['schema-id'] === def }, `schema ${s['schema-id']}`)));
  const a = pick(schemas[schemas.length - 2]['schema-id']); const b = pick(schemas[schemas.length - 1]['schema-id']);
  const update = () => {
    const lines = schemaDiff(schemas.find((s) => String(s['schema-id']) === a.value), schemas.find((s) => String(s['schema-id']) === b.value));
    mount(out, lines.length ? lines.map((l) => h('li', { class: l.kind === 'add' ? 'add' : l.kind === 'del' ? 'del' : '' }, l.text)) : h('li', { class: 'muted' }, 'No difference.'));
  };
  update();
  return h('div', {}, h('div', { class: 'row' }, 'Compare', a, 'with', b), out);
}

function specTable(spec, schema) {
  const names = new Map((schema?.fields || []).map((f) => [f.id, f.name]));
  return h('div', {}, h('p', {}, `Spec ${spec?.['spec-id'] ?? ''}`), (spec?.fields || []).length
    ? grid(['Field id', 'Name', 'Source', 'Transform'], spec.fields.map((f) => [num(f['field-id']), f.name, names.get(f['source-id']) || f['source-id'], h('code', {}, f.transform)]))
    : h('p', { class: 'muted' }, 'Unpartitioned.'));
}

function sortTable(order, schema) {
  const names = new Map((schema?.fields || []).map((f) => [f.id, f.name]));
  return (order?.fields || []).length
    ? grid(['Source', 'Transform', 'Direction', 'Nulls'], order.fields.map((f) => [names.get(f['source-id']) || f['source-id'], h('code', {}, f.transform), f.direction, f['null-order']]))
    : h('p', { class: 'muted' }, 'Unsorted.');
}

function snapshotRows(metadata) {
  const snapshots = [...(metadata.snapshots || [])].sort((a, b) => a['timestamp-ms'] - b['timestamp-ms']);
  return grid(['Time', 'Snapshot', 'Parent', 'Operation', '+ files', '− files', '+ rows', '− rows', 'Total rows', 'Total size'],
    snapshots.map((s) => {
      const m = s.summary || {};
      return [when(s['timestamp-ms']), h('code', {}, String(s['snapshot-id'])), s['parent-snapshot-id'] ? h('code', {}, String(s['parent-snapshot-id'])) : '',
        m.operation || '', num(m['added-data-files']), num(m['deleted-data-files']), num(m['added-records']), num(m['deleted-records']),
        num(m['total-records']), m['total-files-size'] !== undefined ? bytes(m['total-files-size']) : ''];
    }), { 'data-section': 'snapshots' });
}

function sizeCharts(metadata, found) {
  const snapshots = [...(metadata.snapshots || [])].sort((a, b) => a['timestamp-ms'] - b['timestamp-ms']);
  const series = (key) => snapshots.filter((s) => s.summary?.[key] !== undefined).map((s) => ({ x: s['timestamp-ms'], y: Number(s.summary[key]) }));
  return h('div', { class: 'cards' },
    barChart('Commits per day', perDay(found.filter((e) => /committed|created/.test(e.type)).map((e) => e.time))),
    lineChart('Rows', series('total-records')), lineChart('Data files', series('total-data-files')),
    lineChart('Bytes', series('total-files-size'), bytes));
}

export async function tablePage(main, id, parts, name) {
  const warehouse = await warehouseOf(id);
  const loaded = await loadTable(id, parts, name);
  const m = loaded.metadata;
  const schema = (m.schemas || []).find((s) => s['schema-id'] === m['current-schema-id']);
  const spec = (m['partition-specs'] || []).find((s) => s['spec-id'] === m['default-spec-id']);
  const order = (m['sort-orders'] || []).find((s) => s['order-id'] === m['default-sort-order-id']);
  const current = (m.snapshots || []).find((s) => s['snapshot-id'] === m['current-snapshot-id']);
  const history = events({ table: m['table-uuid'] });
  mount(main, crumbs(warehouse, parts, name), h('h1', {}, `${parts.join('.')}.${name}`),
    h('div', { class: 'cards' },
      h('div', { class: 'card' }, 'Rows', h('b', {}, Number(current?.summary?.['total-records'] || 0).toLocaleString('en-US'))),
      h('div', { class: 'card' }, 'Data files', h('b', {}, current?.summary?.['total-data-files'] || '0')),
      h('div', { class: 'card' }, 'Size', h('b', {}, bytes(current?.summary?.['total-files-size']))),
      h('div', { class: 'card' }, 'Snapshots', h('b', {}, String((m.snapshots || []).length))),
      h('div', { class: 'card' }, 'Format', h('b', {}, `v${m['format-version']}`))),
    tabs([
      ['Schema', () => h('div', {}, h('p', { class: 'muted' }, `schema ${m['current-schema-id']}`), schemaTable(schema), h('h2', {}, 'Schema changes'), schemaDiffPicker(m.schemas || []))],
      ['Partitioning', () => h('div', {}, specTable(spec, schema), h('h2', {}, 'Sort order'), sortTable(order, schema))],
      ['Snapshots', () => h('div', {}, snapshotRows(m), h('h2', {}, 'Refs'),
        grid(['Ref', 'Type', 'Snapshot'], Object.entries(m.refs || {}).map(([ref, r]) => [ref, r.type, h('code', {}, String(r['snapshot-id']))])))],
      ['History', () => lazy(async () => timeline(await history, await namespaceNames(id)))],
      ['Charts', () => lazy(async () => sizeCharts(m, await history))],
      ['Properties', () => kv(m.properties)],
      ['Permissions', () => permissions(`warehouse/${id}/table/${m['table-uuid']}`)],
      ['Metadata', () => h('div', {}, kv({ location: m.location, 'metadata-location': loaded['metadata-location'], 'table-uuid': m['table-uuid'], 'last-updated': when(m['last-updated-ms']) }),
        h('h2', {}, 'Metadata log'), grid(['Time', 'File'], (m['metadata-log'] || []).map((e) => [when(e['timestamp-ms']), h('code', {}, e['metadata-file'])])))],
    ]));
}

export async function viewPage(main, id, parts, name) {
  const warehouse = await warehouseOf(id);
  const loaded = await loadView(id, parts, name);
  const m = loaded.metadata;
  const versions = [...(m.versions || [])].sort((a, b) => a['version-id'] - b['version-id']);
  const current = versions.find((v) => v['version-id'] === m['current-version-id']);
  const schema = (m.schemas || []).find((s) => s['schema-id'] === current?.['schema-id']);
  const sqlOf = (version) => (version?.representations || []).map((r) => h('div', {}, h('p', {}, h('span', { class: 'badge' }, r.dialect)), h('pre', {}, r.sql)));
  mount(main, crumbs(warehouse, parts, name), h('h1', {}, `${parts.join('.')}.${name}`), h('p', { class: 'muted' }, `view · version ${m['current-version-id']}`),
    tabs([
      ['SQL', () => h('div', { 'data-section': 'sql' }, sqlOf(current))],
      ['Schema', () => schemaTable(schema)],
      ['Versions', () => grid(['Version', 'Time', 'Schema', 'SQL'], versions.map((v) => [num(v['version-id']), when(v['timestamp-ms']), num(v['schema-id']), sqlOf(v)]))],
      ['History', () => lazy(async () => timeline(await events({ view: m['view-uuid'] }), await namespaceNames(id)))],
      ['Properties', () => kv(m.properties)],
      ['Permissions', () => permissions(`warehouse/${id}/view/${m['view-uuid']}`)],
    ]));
}
