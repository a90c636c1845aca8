import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { CONSOLE_CSS, CONSOLE_JS } from './assets.js';
import { paramOf } from './signed-in.js';

const require = createRequire(import.meta.url);
const PackageName = z.object({ name: z.string() }).catch({ name: '' });

/** A file of an installed package: its directory is found from its entry point (exports may hide the file itself). */
function vendor(pkg: string, file: string): Buffer {
  let dir = dirname(require.resolve(pkg));
  while (!existsSync(join(dir, 'package.json')) || PackageName.parse(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))).name !== pkg) {
    const up = dirname(dir);
    if (up === dir) throw new Error(`cannot find the package directory of ${pkg}`);
    dir = up;
  }
  return readFileSync(join(dir, file));
}

const CSS = 'text/css; charset=utf-8';
const JS = 'text/javascript; charset=utf-8';

/** Every asset the pages load, by name: vendor files from node_modules and our own script and styles. */
function loadAssets(): Map<string, { type: string; body: Buffer }> {
  return new Map([
    ['pico.min.css', { type: CSS, body: vendor('@picocss/pico', 'css/pico.min.css') }],
    ['htmx.min.js', { type: JS, body: vendor('htmx.org', 'dist/htmx.min.js') }],
    ['chart.umd.min.js', { type: JS, body: vendor('chart.js', 'dist/chart.umd.min.js') }],
    ['console.js', { type: JS, body: Buffer.from(CONSOLE_JS) }],
    ['console.css', { type: CSS, body: Buffer.from(CONSOLE_CSS) }],
  ]);
}

/** GET /console/assets/:name: the pages' scripts and styles, served by the gateway itself (no CDN), cached an hour. */
export function assetRoutes(app: FastifyInstance) {
  const assets = loadAssets();
  app.get('/assets/:name', async (request, reply) => {
    const asset = assets.get(paramOf(request, 'name'));
    if (!asset) return reply.code(404).type('text/plain').send('no such asset');
    return reply.type(asset.type).header('cache-control', 'public, max-age=3600').send(asset.body);
  });
}
