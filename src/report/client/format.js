// @ts-check
// Small helpers shared by the report page's parts: element building (text only, never HTML
// from data), durations, colours.

/** Outcome colours, close to ansible-playbook's: green ok, yellow changed, red failed. */
const COLORS = {
  ok: '#2f9e44',
  changed: '#e8a90c',
  failed: '#e03131',
  unreachable: '#9c36b5',
  skipped: '#74c0fc',
  rescued: '#f76707',
  ignored: '#adb5bd',
  interrupted: '#495057',
  unfinished: '#495057',
};

/** Host state colours for the gutter and badges. */
const STATE_COLORS = { ok: '#2f9e44', failed: '#e03131', unreachable: '#9c36b5', unfinished: '#495057' };

/**
 * An element with attributes and children; strings become text nodes, so nothing from the
 * journal is ever parsed as HTML.
 * @param {string} tag
 * @param {Record<string, string | number | boolean | undefined>} [attrs]
 * @param {Array<Node | string | undefined | null | false>} [children]
 * @returns {HTMLElement}
 */
function el(tag, attrs, children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === false) continue;
    if (k === 'text') e.textContent = String(v);
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children || []) if (c !== undefined && c !== null && c !== false) e.append(c);
  return e;
}

/** @param {string} id */
function byId(id) {
  const e = document.getElementById(id);
  if (!e) throw new Error(`missing #${id}`);
  return e;
}

/**
 * 0.3s, 12.4s, 3m 05s, 1h 02m.
 * @param {number} ms
 */
function fmtDuration(ms) {
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const s = Math.round(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** @param {number} ms epoch */
function fmtTime(ms) {
  return new Date(ms).toISOString().replace('T', ' ').slice(0, 19) + ' UTC';
}

/**
 * A status badge.
 * @param {string} status
 * @param {string} [label]
 */
function badge(status, label) {
  return el('span', { class: `badge s-${status}`, text: label || status });
}
