// Ansible-like truthiness for when/until/failed_when/changed_when and the and/or/not helpers.
const FALSY_WORDS = new Set(['false', 'no', 'off']);

export function truthy(v: unknown): boolean {
  if (v === undefined || v === null || v === false || v === 0 || v === '') return false;
  if (typeof v === 'number') return !Number.isNaN(v);
  if (typeof v === 'string') return !FALSY_WORDS.has(v.trim().toLowerCase()) && v.trim() !== '';
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype)
    return Object.keys(v).length > 0;
  return true;
}
