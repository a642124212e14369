// Inline SVG charts drawn here (no library): a step line over time and bars per day.
const NS = 'http://www.w3.org/2000/svg';

function svg(tag, attrs = {}, text) {
  const el = document.createElementNS(NS, tag);
  for (const [key, value] of Object.entries(attrs)) el.setAttribute(key, String(value));
  if (text !== undefined) el.textContent = text;
  return el;
}

function frame(title, width, height) {
  const root = svg('svg', { class: 'chart', width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': title });
  root.append(svg('text', { x: 8, y: 14 }, title));
  return root;
}

const PAD = { left: 56, right: 12, top: 24, bottom: 22 };

// `points`: [{x: epoch ms, y: number}], drawn as a step line (a value holds until the next snapshot).
export function lineChart(title, points, format = (v) => Number(v).toLocaleString('en-US'), width = 520, height = 180) {
  const root = frame(title, width, height);
  if (!points.length) { root.append(svg('text', { x: width / 2 - 30, y: height / 2 }, 'no data')); return root; }
  const xs = points.map((p) => p.x); const ys = points.map((p) => p.y);
  const [x0, x1] = [Math.min(...xs), Math.max(...xs) === Math.min(...xs) ? Math.min(...xs) + 1 : Math.max(...xs)];
  const y1 = Math.max(...ys, 1);
  const sx = (x) => PAD.left + ((x - x0) / (x1 - x0)) * (width - PAD.left - PAD.right);
  const sy = (y) => height - PAD.bottom - (y / y1) * (height - PAD.top - PAD.bottom);
  let d = `M${sx(points[0].x)},${sy(points[0].y)}`;
  for (const p of points.slice(1)) d += ` H${sx(p.x)} V${sy(p.y)}`;
  root.append(svg('line', { x1: PAD.left, y1: sy(0), x2: width - PAD.right, y2: sy(0), stroke: '#dde1e8' }));
  root.append(svg('path', { d, fill: 'none', stroke: '#2457c5', 'stroke-width': 2 }));
  for (const p of points) root.append(svg('circle', { cx: sx(p.x), cy: sy(p.y), r: 3, fill: '#2457c5' }, undefined));
  root.append(svg('text', { x: 4, y: sy(y1) + 4 }, format(y1)));
  root.append(svg('text', { x: 4, y: sy(0) }, format(0)));
  root.append(svg('text', { x: PAD.left, y: height - 6 }, new Date(x0).toISOString().slice(0, 16).replace('T', ' ')));
  root.append(svg('text', { x: width - PAD.right, y: height - 6, 'text-anchor': 'end' }, new Date(x1).toISOString().slice(0, 16).replace('T', ' ')));
  return root;
}

// `bars`: [{label, value}] in order, e.g. commits per day.
export function barChart(title, bars, width = 520, height = 180) {
  const root = frame(title, width, height);
  if (!bars.length) { root.append(svg('text', { x: width / 2 - 30, y: height / 2 }, 'no data')); return root; }
  const top = Math.max(...bars.map((b) => b.value), 1);
  const slot = Math.min((width - PAD.left - PAD.right) / bars.length, 48);
  bars.forEach((bar, i) => {
    const barHeight = (bar.value / top) * (height - PAD.top - PAD.bottom);
    const x = PAD.left + i * slot + slot * 0.15;
    const rect = svg('rect', { x, y: height - PAD.bottom - barHeight, width: Math.max(slot * 0.7, 1), height: barHeight, fill: '#2457c5' });
    rect.append(svg('title', {}, `${bar.label}: ${bar.value}`));
    root.append(rect);
  });
  root.append(svg('text', { x: 4, y: PAD.top + 8 }, String(top)));
  root.append(svg('text', { x: PAD.left, y: height - 6 }, bars[0].label));
  if (bars.length > 1) root.append(svg('text', { x: width - PAD.right, y: height - 6, 'text-anchor': 'end' }, bars[bars.length - 1].label));
  return root;
}

export function perDay(times) {
  const counts = new Map();
  for (const time of times) {
    const day = new Date(time).toISOString().slice(0, 10);
    counts.set(day, (counts.get(day) || 0) + 1);
  }
  return [...counts.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([label, value]) => ({ label, value }));
}
