import { Agent, type Dispatcher } from 'undici';
import { onTestFinished } from 'vitest';
import { partnersAgentOptions } from '../../src/partners/http-transport.js';

/**
 * An HTTP pool for a test that builds a client by hand (tests of the client itself, of sync over its two ports),
 * closed when the test finishes. The product builds its one pool in `createApp`.
 */
export function testPool(): Dispatcher {
  const agent = new Agent(partnersAgentOptions());
  onTestFinished(() => agent.close());
  return agent;
}
