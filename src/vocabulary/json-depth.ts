/**
 * The dot path of the first value nested deeper than `max` levels, or null. Iterative, so a body nested thousands
 * deep cannot overflow the stack while it is measured.
 */
export function tooDeepAt(value: unknown, max: number): string | null {
  const stack: [unknown, string, number][] = [[value, '', 1]];
  const seen = new WeakSet<object>();
  while (stack.length > 0) {
    const [x, path, depth] = stack.pop() as [unknown, string, number];
    if (typeof x !== 'object' || x === null || seen.has(x)) continue;
    if (depth > max) return path;
    seen.add(x);
    for (const [k, child] of Object.entries(x)) {
      stack.push([child, Array.isArray(x) ? `${path}[${k}]` : path === '' ? k : `${path}.${k}`, depth + 1]);
    }
  }
  return null;
}
