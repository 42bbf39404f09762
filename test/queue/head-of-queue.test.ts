import { describe, expect, it } from 'vitest';
import { othersWaitingAtHead } from '../../src/queue/head-of-queue.js';

/** A queue whose waiting jobs are these tenants', counting the reads of its head. */
function queueOf(tenants: string[]) {
  const reads: [number, number][] = [];
  return {
    reads,
    tenants,
    async getWaiting(start: number, end: number) {
      reads.push([start, end]);
      return tenants.slice(start, end + 1).map((tenant) => ({ data: { tenant } }));
    },
  };
}
const keys: Record<string, string> = { a: 'k1', a2: 'k1', b: 'k2' };
const budgetOf = (tenant: string) => keys[tenant] ?? null;

describe('othersWaitingAtHead: the one fairness rule of the workers', () => {
  it('is true when another tenant on another key waits at the head', async () => {
    const othersWaiting = othersWaitingAtHead({ queue: queueOf(['a', 'b']), depth: 20, budgetOf });
    expect(await othersWaiting('a')).toBe(true);
    expect(await othersWaiting('b')).toBe(true);
  });
  it('is false when only the same tenant, or a tenant on the same key, waits', async () => {
    expect(await othersWaitingAtHead({ queue: queueOf(['a', 'a']), depth: 20, budgetOf })('a')).toBe(false);
    expect(await othersWaitingAtHead({ queue: queueOf(['a2']), depth: 20, budgetOf })('a')).toBe(false);
    expect(await othersWaitingAtHead({ queue: queueOf([]), depth: 20, budgetOf })('a')).toBe(false);
  });
  it('counts a job of a tenant no longer configured as another budget', async () => {
    expect(await othersWaitingAtHead({ queue: queueOf(['gone']), depth: 20, budgetOf })('a')).toBe(true);
  });
  it('reads only the first `depth` waiting jobs', async () => {
    const queue = queueOf(['a', 'a', 'b']);
    expect(await othersWaitingAtHead({ queue, depth: 2, budgetOf })('a')).toBe(false);
    expect(queue.reads).toEqual([[0, 1]]);
  });
  it('reads the head at most once per maxAgeMs', async () => {
    let t = 0;
    const queue = queueOf(['a']);
    const othersWaiting = othersWaitingAtHead({ queue, depth: 20, budgetOf, now: () => t });
    expect(await othersWaiting('a')).toBe(false);
    queue.tenants.push('b');
    t = 1000;
    expect(await othersWaiting('a')).toBe(false);
    t = 1001;
    expect(await othersWaiting('a')).toBe(true);
    expect(queue.reads).toHaveLength(2);
  });
});
