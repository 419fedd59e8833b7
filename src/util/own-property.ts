// Setting a key as an own data property whatever its name: `obj[k] = v` with k `__proto__`
// replaces obj's prototype instead (the key vanishes, and the value's keys show through
// inheritance). Data from inventories and imports may use any name.

export function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
}
