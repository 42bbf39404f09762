import { describe, expect, it } from 'vitest';
import { stopped, untilStopped } from '../../src/cli/stop-signal.js';

const listeners = () => ({ int: process.listenerCount('SIGINT'), term: process.listenerCount('SIGTERM') });

describe('untilStopped', () => {
  it('aborts the signal on SIGTERM, says which signal came, and removes its handlers once done', async () => {
    const before = listeners();
    const heard: string[] = [];
    const result = untilStopped(
      async (stop) => {
        expect(listeners()).toEqual({ int: before.int + 1, term: before.term + 1 });
        process.emit('SIGTERM', 'SIGTERM');
        await stopped(stop);
        return stop.aborted ? 'stopped' : 'running';
      },
      (sig) => heard.push(sig),
    );
    await expect(result).resolves.toBe('stopped');
    expect(heard).toEqual(['SIGTERM']);
    expect(listeners()).toEqual(before);
  });

  it('removes its handlers when the work fails, and leaves the signal alone when none came', async () => {
    const before = listeners();
    let seen: AbortSignal | null = null;
    await expect(
      untilStopped(async (stop) => {
        seen = stop;
        throw new Error('broke');
      }),
    ).rejects.toThrow('broke');
    expect((seen as AbortSignal | null)?.aborted).toBe(false);
    expect(listeners()).toEqual(before);
  });
});
