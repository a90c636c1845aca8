import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type TestStack } from '../support/stack.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CLIENT = join(ROOT, 'packages/client');

/** Packs a package directory into `dest` and answers the tarball's path. */
async function pack(dir: string, dest: string, ...args: string[]): Promise<string> {
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', dest, ...args], { cwd: dir, maxBuffer: 16 << 20 });
  const [{ filename }] = JSON.parse(stdout.slice(stdout.indexOf('['))) as { filename: string }[];
  return join(dest, filename);
}

/** The installed packages `name` depends on, itself included, as the root node_modules has them. */
function dependencyClosure(name: string, seen = new Set<string>()): Set<string> {
  if (seen.has(name)) return seen;
  seen.add(name);
  const manifest = JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
  for (const dep of Object.keys(manifest.dependencies ?? {})) dependencyClosure(dep, seen);
  return seen;
}

/** What a game's code does with the installed package, run by plain node (no tsx, no conditions). */
const SCRIPT = `
import { ApiError, ChestClient, createChestClient, newIdempotencyKey } from '@ccs/client';
import { parseWebhook, verifyWebhook, WEBHOOK_SIGNATURE_HEADER } from '@ccs/client/webhooks';
const exported = { ApiError, ChestClient, createChestClient, newIdempotencyKey, parseWebhook, verifyWebhook };
for (const [name, value] of Object.entries(exported)) if (typeof value !== 'function') throw new Error(name + ' is not exported');
if (WEBHOOK_SIGNATURE_HEADER !== 'ccs-signature') throw new Error('webhooks constants missing');
if (process.env.CHESTS_URL) {
  const client = createChestClient({ baseUrl: process.env.CHESTS_URL, apiKey: process.env.CHESTS_API_KEY });
  await client.register('pack-' + newIdempotencyKey().slice(0, 8) + '@example.com', 'Str0ng!pass');
  const wooden = (await client.catalog({ filter: { name: 'Wooden Chest' } })).data[0];
  const [chest] = (await client.purchase(wooden.id, 'coins')).data;
  const opened = await client.open(chest.id, { idempotencyKey: newIdempotencyKey() });
  const golden = (await client.catalog({ filter: { name: 'Golden Chest' } })).data[0];
  const refused = await client.purchase(golden.id, 'coins').catch((e) => e);
  if (!(refused instanceof ApiError)) throw new Error('not an ApiError: ' + refused);
  console.log('opened ' + opened.data.collectibles.length + ' collectibles; refused ' + refused.status + ' ' + refused.code);
}
console.log('ok');
`;

/** A consumer's TypeScript, checked against the package's declarations (skipLibCheck off). */
const TYPED = `
import { createChestClient, ApiError, type Tokens } from '@ccs/client';
import { verifyWebhook, type WebhookEvent } from '@ccs/client/webhooks';
const client = createChestClient({ baseUrl: 'http://localhost:3000', apiKey: 'pk', retry: { attempts: 1, maxDelayMs: 1000 } });
export const tokens: Tokens | undefined = client.session;
export async function play(): Promise<string> {
  const name: string = (await client.catalog()).data[0]!.attributes.name ?? '';
  const opened = await client.openMany(['id'], { idempotencyKey: 'k' });
  const retryAfter: number | undefined = new ApiError(429, []).retryAfter;
  return name + opened.data.length + String(retryAfter) + String(verifyWebhook('s', undefined, '').ok);
}
export type Event = WebhookEvent['type'];
`;

describe('@ccs/client as a package (npm pack, installed elsewhere)', () => {
  let work: string;
  let tarball: string;
  let stack: TestStack;
  let baseUrl: string;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'ccs-client-pack-'));
    [tarball, stack] = await Promise.all([pack(CLIENT, work), startStack()]);
    baseUrl = await stack.app.listen({ port: 0, host: '127.0.0.1' });
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('packs the built code, its declarations and a README, nothing of the build state', async () => {
    const { stdout } = await run('tar', ['-tzf', tarball]);
    const files = stdout.split('\n').filter(Boolean);
    for (const file of [
      'dist/index.js',
      'dist/index.d.ts',
      'dist/webhooks.js',
      'dist/webhooks.d.ts',
      'dist/schema.d.ts',
      'README.md',
      'package.json',
    ])
      expect(files).toContain(`package/${file}`);
    expect(files.filter((f) => f.endsWith('.tsbuildinfo') || f.includes('/test/'))).toEqual([]);
    const manifest = JSON.parse((await run('tar', ['-xOzf', tarball, 'package/package.json'])).stdout) as {
      version: string;
      private?: boolean;
      exports: Record<string, string | Record<string, string>>;
    };
    expect([manifest.version, manifest.private]).toEqual(['0.1.0', undefined]);
    // Every target of every condition is in the tarball (the development one too: bundlers in dev mode pick it).
    for (const target of Object.values(manifest.exports).flatMap((to) => (typeof to === 'string' ? [to] : Object.values(to))))
      expect(files).toContain(`package/${target.replace(/^\.\//, '')}`);
  });

  /** A new project (`"type": "module"`, or `"commonjs"` as `npm init -y` writes it) with the packed client installed offline. */
  async function projectWithClient(name: string, type: 'module' | 'commonjs'): Promise<string> {
    const project = join(work, name);
    const deps = await Promise.all(
      [...dependencyClosure('openapi-fetch')].map((dep) => pack(join(ROOT, 'node_modules', dep), work, '--ignore-scripts')),
    );
    await run('mkdir', ['-p', project]);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name, version: '1.0.0', private: true, type }));
    await run('npm', ['install', '--offline', '--no-audit', '--no-fund', tarball, ...deps], { cwd: project });
    return project;
  }

  it('installs offline into a new project, imports with plain node, registers and opens a chest, and type-checks', async () => {
    const project = await projectWithClient('game', 'module');

    writeFileSync(join(project, 'play.mjs'), SCRIPT);
    const bare = await run(process.execPath, ['play.mjs'], { cwd: project, env: { PATH: process.env.PATH } });
    expect(bare.stdout.trim()).toBe('ok');
    const live = await run(process.execPath, ['play.mjs'], {
      cwd: project,
      env: { PATH: process.env.PATH, CHESTS_URL: baseUrl, CHESTS_API_KEY: stack.apiKey },
    });
    expect(live.stdout).toMatch(/^opened [1-9]\d* collectibles; refused 422 price_unavailable\nok$/m);

    writeFileSync(join(project, 'play.ts'), TYPED);
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          target: 'ES2022',
          strict: true,
          noEmit: true,
          lib: ['ES2022', 'DOM'],
          types: [],
        },
        files: ['play.ts'],
      }),
    );
    const tsc = await run(join(ROOT, 'node_modules/.bin/tsc'), ['-p', '.', '--traceResolution'], { cwd: project, maxBuffer: 64 << 20 }).catch(
      (e: { stdout: string }) => e,
    );
    expect(tsc.stdout.split('\n').filter((l) => /error TS/.test(l))).toEqual([]);
    expect(tsc.stdout).toContain(
      `Module name '@ccs/client' was successfully resolved to '${join(project, 'node_modules/@ccs/client/dist/index.d.ts')}'`,
    );
  }, 120_000);

  it('in a CommonJS project ("type": "commonjs"), as its README says: import() loads it, require() on Node 20.19+, `import` in a .js file is refused', async () => {
    const project = await projectWithClient('cjs-game', 'commonjs');
    const node = (file: string) => run(process.execPath, [file], { cwd: project, env: { PATH: process.env.PATH } });
    writeFileSync(join(project, 'dynamic.cjs'), "import('@ccs/client').then((m) => console.log(typeof m.createChestClient));");
    expect((await node('dynamic.cjs')).stdout.trim()).toBe('function');
    writeFileSync(join(project, 'static.js'), "import { createChestClient } from '@ccs/client';\nconsole.log(typeof createChestClient);");
    const refused = (await node('static.js').catch((e: { stderr: string }) => e)) as { stderr?: string };
    expect(refused.stderr).toContain('set "type": "module" in the package.json');
    // Node loads ES modules from require() from 20.19 on (22.12 on the 22 line).
    const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
    if ((major === 20 && minor >= 19) || (major === 22 && minor >= 12) || major > 22) {
      writeFileSync(
        join(project, 'required.cjs'),
        "console.log(typeof require('@ccs/client').createChestClient, typeof require('@ccs/client/webhooks').verifyWebhook);",
      );
      expect((await node('required.cjs')).stdout.trim()).toBe('function function');
    }
  }, 120_000);
});
