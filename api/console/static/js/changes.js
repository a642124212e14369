// Readable changes from the event log: what each event did, in the words of the object it happened to.
const short = (type) => type.replace(/^io\.catalog-es\./, '').replace(/\.v\d+$/, '');

function fieldsById(schema) {
  const found = new Map();
  const walk = (fields, prefix) => {
    for (const field of fields || []) {
      const name = prefix ? `${prefix}.${field.name}` : field.name;
      found.set(field.id, { ...field, path: name });
      const type = field.type;
      if (type && typeof type === 'object') walk(type.fields || (type.element ? [] : []), name);
    }
  };
  walk(schema?.fields, '');
  return found;
}

export const typeName = (type) => (typeof type === 'string' ? type : type?.type || JSON.stringify(type));

// Fields added, dropped, renamed, retyped between two schemas (matched by field id).
export function schemaDiff(before, after) {
  const old = fieldsById(before);
  const now = fieldsById(after);
  const lines = [];
  for (const [id, field] of now) {
    const was = old.get(id);
    if (!was) lines.push({ kind: 'add', text: `column added: ${field.path} ${typeName(field.type)}${field.doc ? ` — ${field.doc}` : ''}` });
    else {
      if (was.path !== field.path) lines.push({ kind: 'mod', text: `column renamed: ${was.path} → ${field.path}` });
      if (typeName(was.type) !== typeName(field.type)) lines.push({ kind: 'mod', text: `column ${field.path}: ${typeName(was.type)} → ${typeName(field.type)}` });
      if (was.required !== field.required) lines.push({ kind: 'mod', text: `column ${field.path}: ${field.required ? 'required' : 'optional'}` });
      if ((was.doc || '') !== (field.doc || '')) lines.push({ kind: 'mod', text: `column ${field.path} doc: ${field.doc || '(none)'}` });
    }
  }
  for (const [id, field] of old) if (!now.has(id)) lines.push({ kind: 'del', text: `column dropped: ${field.path}` });
  return lines;
}

function count(summary, key) {
  const value = summary?.[key];
  return value === undefined ? null : Number(value).toLocaleString('en-US');
}

export function snapshotLine(snapshot) {
  const s = snapshot.summary || {};
  const parts = [`snapshot ${snapshot['snapshot-id']} appended (${s.operation || 'unknown'})`];
  const rows = [];
  if (count(s, 'added-records')) rows.push(`+${count(s, 'added-records')} rows`);
  if (count(s, 'deleted-records')) rows.push(`−${count(s, 'deleted-records')} rows`);
  if (count(s, 'added-data-files')) rows.push(`+${count(s, 'added-data-files')} files`);
  if (count(s, 'deleted-data-files')) rows.push(`−${count(s, 'deleted-data-files')} files`);
  if (count(s, 'total-records')) rows.push(`${count(s, 'total-records')} rows in total`);
  return `${parts[0]}${rows.length ? `: ${rows.join(', ')}` : ''}`;
}

// The lines describing one event; `state` carries the last schema seen per object across the timeline.
export function describe(event, state = new Map(), names = new Map()) {
  const data = event.data || {};
  const type = short(event.type);
  const [kind, verb] = type.split('.');
  const key = data.table_id || data.view_id || data.namespace_id || data.warehouse_id;
  const lines = [];
  const schemaOf = (metadata) => (metadata?.schemas || []).find((s) => s['schema-id'] === metadata['current-schema-id']);
  if ((kind === 'table' || kind === 'view') && (verb === 'created' || verb === 'registered')) {
    const ns = names.get(data.namespace_id);
    lines.push({ kind: 'add', text: `${kind} ${verb}: ${ns ? `${ns}.` : ''}${data.name}` });
    const schema = schemaOf(data.metadata);
    if (schema) {
      lines.push({ kind: 'mod', text: `${schema.fields.length} columns: ${schema.fields.map((f) => f.name).join(', ')}` });
      state.set(key, schema);
    }
    for (const snapshot of data.metadata?.snapshots || []) lines.push({ kind: 'add', text: snapshotLine(snapshot) });
  } else if (verb === 'committed') {
    const snapshots = new Map((data.metadata?.snapshots || []).map((s) => [s['snapshot-id'], s]));
    for (const update of data.updates || []) {
      const action = update.action;
      if (action === 'add-snapshot') lines.push({ kind: 'add', text: snapshotLine(snapshots.get(update.snapshot['snapshot-id']) || update.snapshot) });
      else if (action === 'add-schema') {
        const after = schemaOf(data.metadata) || update.schema;
        for (const line of schemaDiff(state.get(key), after)) lines.push(line);
        state.set(key, after);
      } else if (action === 'set-properties') {
        for (const [name, value] of Object.entries(update.updates || {})) lines.push({ kind: 'mod', text: `property set: ${name} = ${value}` });
      } else if (action === 'remove-properties') {
        for (const name of update.removals || []) lines.push({ kind: 'del', text: `property removed: ${name}` });
      } else if (action === 'set-snapshot-ref') {
        lines.push({ kind: 'mod', text: `${update.type || 'branch'} ${update['ref-name']} → snapshot ${update['snapshot-id']}` });
      } else if (action === 'remove-snapshots') {
        lines.push({ kind: 'del', text: `snapshots expired: ${(update['snapshot-ids'] || []).join(', ')}` });
      } else if (action === 'add-view-version') {
        const version = update['view-version'] || {};
        for (const rep of version.representations || []) lines.push({ kind: 'mod', text: `version ${version['version-id']} (${rep.dialect}): ${rep.sql}` });
      } else if (!['set-current-schema', 'set-current-view-version', 'add-spec', 'set-default-spec', 'add-sort-order', 'set-default-sort-order', 'assign-uuid', 'upgrade-format-version', 'set-statistics', 'set-location'].includes(action)) {
        lines.push({ kind: 'mod', text: action });
      } else if (action === 'set-location') lines.push({ kind: 'mod', text: `location: ${update.location}` });
    }
    if (!lines.length) lines.push({ kind: 'mod', text: 'metadata committed' });
  } else if (verb === 'renamed') {
    const from = data.from_name ?? data.old_name;
    const to = data.name ?? data.new_name;
    const fromNs = names.get(data.from_namespace_id);
    const toNs = names.get(data.namespace_id);
    const moved = data.from_namespace_id && data.from_namespace_id !== data.namespace_id;
    lines.push({ kind: 'mod', text: `renamed ${fromNs && moved ? `${fromNs}.` : ''}${from} → ${toNs && moved ? `${toNs}.` : ''}${to}` });
  } else if (verb === 'dropped' || verb === 'deleted') {
    lines.push({ kind: 'del', text: `${kind} ${verb}${data.purge_requested ? ' (purge requested)' : ''}` });
  } else if (kind === 'namespace' && verb === 'created') {
    lines.push({ kind: 'add', text: `namespace created: ${(data.namespace || []).join('.')}` });
  } else if (kind === 'namespace') {
    for (const [name, value] of Object.entries(data.updated || {})) lines.push({ kind: 'mod', text: `property set: ${name} = ${value}` });
    for (const name of data.removed || []) lines.push({ kind: 'del', text: `property removed: ${name}` });
    if (!lines.length) lines.push({ kind: 'mod', text: type });
  } else if (kind === 'privilege') {
    const target = names.get(data.object_id) || data.object_id;
    lines.push({ kind: verb === 'granted' ? 'add' : 'del', text: `${data.privilege} ${verb} ${verb === 'granted' ? 'to' : 'from'} ${data.principal} on ${data.object_kind} ${target}` });
  } else if (kind === 'maintenance-job') {
    const figures = Object.entries(data.metrics || {}).filter(([, value]) => typeof value === 'number')
      .map(([name, value]) => `${name} ${Number(value).toLocaleString('en-US')}`);
    const text = verb === 'started'
      ? `maintenance started: ${data.policy_type} (attempt ${data.attempt}, by ${data.trigger?.kind || 'trigger'})`
      : `maintenance ${data.outcome}: ${data.policy_type}${figures.length ? ` — ${figures.join(', ')}` : ''}${data.error ? ` — ${data.error}` : ''}`;
    lines.push({ kind: data.outcome === 'failed' ? 'del' : 'mod', text });
  } else if (kind === 'warehouse' && verb === 'created') {
    lines.push({ kind: 'add', text: `warehouse created: ${data.name}` });
  } else {
    lines.push({ kind: 'mod', text: type });
  }
  return lines;
}

export { short as shortType };
