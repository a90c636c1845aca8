import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type TestStack } from '../../../test/support/stack.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

describe('examples/game-client.ts', () => {
  let stack: TestStack;
  let baseUrl: string;
  beforeAll(async () => {
    stack = await startStack();
    baseUrl = await stack.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => stack?.close());

  it('registers, buys, opens and prints the collection, using only the client', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--conditions=development', 'examples/game-client.ts'], {
      cwd: ROOT,
      env: { ...process.env, CHESTS_URL: baseUrl, CHESTS_API_KEY: stack.apiKey },
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code, out).toBe(0);
    expect(out).toMatch(/^registered player-[0-9a-f]{8}@example\.com/m);
    expect(out).toMatch(/^bought a .+ for \d+ coins; [\d.]+ coins left$/m);
    expect(out).toMatch(/^opened it: .+\(.+\)/m);
    expect(out).toMatch(/^collection: [1-9]\d* different collectibles$/m);
  }, 60_000);
});
