import { describe, expect, it } from 'vitest';
import { closeAll, closeOnce } from '../src/close-all.js';

describe('closeAll', () => {
  it('runs every step though one fails, then throws every failure at once', async () => {
    const ran: string[] = [];
    const closing = closeAll(
      [
        () => ran.push('a'),
        () => {
          throw new Error('b broke');
        },
        async () => ran.push('c'),
      ],
      'the thing',
    );
    await expect(closing).rejects.toMatchObject({
      message: 'closing the thing failed',
      errors: [{ message: 'b broke' }],
    });
    expect(ran).toEqual(['a', 'c']);
  });
});

describe('closeOnce', () => {
  it('closes once, with the first call arguments; later calls get the same promise', async () => {
    const calls: number[] = [];
    const close = closeOnce(async (graceMs: number = 7) => {
      calls.push(graceMs);
    });
    const first = close(100);
    const second = close(5);
    expect(second).toBe(first);
    await first;
    expect(close()).toBe(first);
    expect(calls).toEqual([100]);
  });

  it('keeps a failed close failed rather than running it again', async () => {
    let runs = 0;
    const close = closeOnce(async () => {
      runs++;
      throw new Error('no');
    });
    await expect(close()).rejects.toThrow('no');
    await expect(close()).rejects.toThrow('no');
    expect(runs).toBe(1);
  });
});
