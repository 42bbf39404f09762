/** Keys that reach an object's prototype when a body is merged or assigned somewhere: refused at any depth. */
const POISON_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * The dot path of the first `__proto__`, `constructor` or `prototype` own key anywhere in a value, or null.
 * Iterative, so a deeply nested body cannot overflow the stack; JSON.parse makes `__proto__` an own key, which
 * `Object.keys` lists.
 */
export function poisonKeyIn(value: unknown): string | null {
  const stack: [unknown, string][] = [[value, '']];
  // A body built in code may share or cycle objects: each is looked at once.
  const seen = new WeakSet<object>();
  while (stack.length > 0) {
    const [v, path] = stack.pop() as [unknown, string];
    if (typeof v !== 'object' || v === null || seen.has(v)) continue;
    seen.add(v);
    if (Array.isArray(v)) {
      v.forEach((x, i) => {
        stack.push([x, `${path}[${i}]`]);
      });
      continue;
    }
    for (const k of Object.keys(v)) {
      const at = path === '' ? k : `${path}.${k}`;
      if (POISON_KEYS.has(k)) return at;
      stack.push([(v as Record<string, unknown>)[k], at]);
    }
  }
  return null;
}
