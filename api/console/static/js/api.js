// The catalog's JSON APIs with the user's token; errors carry the Iceberg envelope's message.
import { token } from './auth.js';

export class ApiError extends Error {
  constructor(status, message, type) { super(message); this.status = status; this.type = type; }
}

let project = localStorage.getItem('catalog-es.project') || null;
export function currentProject() { return project; }
export function setProject(id) {
  project = id;
  if (id) localStorage.setItem('catalog-es.project', id); else localStorage.removeItem('catalog-es.project');
}

// Snapshot ids are 64-bit: past 2^53 a JS number would round them, so those stay exact as strings.
function exact(key, value, context) {
  if (typeof value === 'number' && !Number.isSafeInteger(value) && context?.source && /^-?\d+$/.test(context.source)) return context.source;
  return value;
}

// `json`: a JSON body, sent with POST (the management API's listings that filter in a body, like task/list).
export async function api(path, params = {}, json = undefined) {
  const url = new URL(path, location.origin);
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined || value === null) continue;
    for (const item of [value].flat()) url.searchParams.append(key, item);
  }
  const headers = { Accept: 'application/json' };
  const bearer = token();
  if (bearer) headers.Authorization = `Bearer ${bearer}`;
  if (project && path.startsWith('/management/')) headers['x-project-id'] = project;
  const init = { headers };
  if (json !== undefined) Object.assign(init, { method: 'POST', body: JSON.stringify(json), headers: { ...headers, 'Content-Type': 'application/json' } });
  const response = await fetch(url, init);
  const text = await response.text();
  const body = text ? JSON.parse(text, exact) : null;
  if (!response.ok) {
    const error = body?.error || {};
    throw new ApiError(response.status, error.message || `${response.status} ${response.statusText}`, error.type);
  }
  return body;
}

// Every page of a paginated listing (Iceberg's pageToken / next-page-token).
export async function all(path, key, params = {}) {
  const items = [];
  let pageToken = '';
  for (;;) {
    const page = await api(path, { ...params, pageToken, pageSize: 1000 });
    items.push(...(page[key] || []));
    pageToken = page['next-page-token'];
    if (!pageToken) return items;
  }
}

export const SEP = '\x1f';
export const nsParam = (parts) => encodeURIComponent(parts.join(SEP));
export const catalog = (warehouse, path = '') => `/catalog/v1/${warehouse}${path}`;

export const listNamespaces = (warehouse, parent) =>
  all(catalog(warehouse, '/namespaces'), 'namespaces', parent && parent.length ? { parent: parent.join(SEP) } : {});
export const listTables = (warehouse, parts) => all(catalog(warehouse, `/namespaces/${nsParam(parts)}/tables`), 'identifiers');
export const listViews = (warehouse, parts) => all(catalog(warehouse, `/namespaces/${nsParam(parts)}/views`), 'identifiers');
export const loadTable = (warehouse, parts, name) =>
  api(catalog(warehouse, `/namespaces/${nsParam(parts)}/tables/${encodeURIComponent(name)}`));
export const loadView = (warehouse, parts, name) =>
  api(catalog(warehouse, `/namespaces/${nsParam(parts)}/views/${encodeURIComponent(name)}`));
export const loadNamespace = (warehouse, parts) => api(catalog(warehouse, `/namespaces/${nsParam(parts)}`));

// Events of the log matching `filter`, oldest first, every page after log position `after`.
export async function events(filter = {}, after = undefined) {
  const found = [];
  let pageToken = after ? String(after) : undefined;
  for (;;) {
    const page = await api('/management/v1/events', { ...filter, pageToken, pageSize: 1000 });
    found.push(...page.events);
    pageToken = page['next-page-token'];
    if (!pageToken) return found;
  }
}

// The log position `count` events before its head (the catalog projector's head, from /health): recent
// history without reading the whole log, which at 10k tables takes seconds.
export async function recentPosition(count) {
  const health = await api('/health');
  const head = (health.projectors || []).find((p) => p.projector === 'catalog')?.head || 0;
  return Math.max(0, head - count);
}
