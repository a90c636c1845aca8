import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { CORE_SCHEMA, load, mergeTag } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

const APP_SERVICES = ['players', 'wallet', 'chests', 'collections', 'egress', 'store', 'gateway'] as const;
const INFRA_SERVICES = ['postgres', 'nats', 'redis'] as const;

// Only the parts of the Compose format these checks read; the rest passes through.
const EnvironmentSchema = z.union([z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])), z.array(z.string())]);
const ServiceSchema = z
  .object({
    image: z.string().optional(),
    build: z.union([z.string(), z.object({ context: z.string(), dockerfile: z.string().optional() }).passthrough()]).optional(),
    command: z.union([z.string(), z.array(z.string())]).optional(),
    environment: EnvironmentSchema.optional(),
    depends_on: z.union([z.array(z.string()), z.record(z.string(), z.object({ condition: z.string() }).passthrough())]).optional(),
    healthcheck: z
      .object({ test: z.union([z.string(), z.array(z.string())]).optional(), disable: z.boolean().optional() })
      .passthrough()
      .optional(),
    restart: z.string().optional(),
    ports: z.array(z.union([z.string(), z.number()])).optional(),
    volumes: z.array(z.string()).optional(),
  })
  .passthrough();
const ComposeSchema = z
  .object({ services: z.record(z.string(), ServiceSchema), volumes: z.record(z.string(), z.unknown()).optional() })
  .passthrough();

// Compose resolves YAML merge keys (<<), so the test loads the file the same way.
const compose = ComposeSchema.parse(load(read('docker-compose.yml'), { schema: CORE_SCHEMA.withTags(mergeTag) }));
const service = (name: string) => {
  const s = compose.services[name];
  if (!s) throw new Error(`docker-compose.yml has no service "${name}"`);
  return s;
};

/** A service's environment as a map, whatever form the file uses. */
function envOf(name: string): Record<string, string> {
  const env = service(name).environment ?? {};
  if (Array.isArray(env)) return Object.fromEntries(env.map((line) => [line.split('=')[0]!, line.slice(line.indexOf('=') + 1)]));
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, String(v ?? '')]));
}

/** Whether a .dockerignore pattern excludes a path of the build context (`*`, `?` and `**` as Docker reads them). */
function dockerignoreMatches(pattern: string, file: string): boolean {
  const source = pattern
    .replace(/^\/+|\/+$/g, '')
    .split(/(\*\*\/|\*\*|\*|\?)/)
    .map((part) => {
      if (part === '**/') return '(?:.*/)?';
      if (part === '**') return '.*';
      if (part === '*') return '[^/]*';
      if (part === '?') return '[^/]';
      return part.replace(/[.+^${}()|[\]\\]/g, '\\$&');
    })
    .join('');
  return new RegExp(`^${source}$`).test(file);
}

/** The Dockerfile's instructions, continuation lines joined, comments dropped. */
function dockerfileInstructions(): { keyword: string; args: string }[] {
  return read('Dockerfile')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => ({ keyword: l.split(/\s+/, 1)[0]!.toUpperCase(), args: l.slice(l.split(/\s+/, 1)[0]!.length).trim() }));
}

describe('docker-compose.yml', () => {
  it.each(APP_SERVICES)('runs %s from the Dockerfile with its own entry point', (name) => {
    const s = service(name);
    expect(s.build).toMatchObject({ context: '.', dockerfile: 'Dockerfile' });
    const command = Array.isArray(s.command) ? s.command.join(' ') : s.command;
    expect(command).toBe(`node services/${name}/dist/main.js`);
    // The entry point exists and its workspace builds src/ into dist/.
    expect(existsSync(path.join(ROOT, `services/${name}/src/main.ts`))).toBe(true);
    const build = JSON.parse(read(`services/${name}/tsconfig.build.json`));
    expect(build.compilerOptions).toMatchObject({ rootDir: 'src', outDir: 'dist' });
    expect(s.restart).toMatch(/^(always|unless-stopped|on-failure)/);
  });

  it.each(APP_SERVICES)('gives %s the Postgres, NATS and Redis URLs of the compose network', (name) => {
    const env = envOf(name);
    expect(env.DATABASE_URL).toMatch(/^postgres(ql)?:\/\/[^@]+@postgres:5432\/\w+$/);
    expect(env.NATS_URL).toBe('nats://nats:4222');
    expect(env.REDIS_URL).toBe('redis://redis:6379');
    // No demo key in the file: players generates one on the first start and logs it once.
    expect(env.CHESTS_DEMO_API_KEY).toBe('${CHESTS_DEMO_API_KEY:-}');
  });

  it.each(APP_SERVICES)('starts %s only once Postgres, NATS and Redis are healthy', (name) => {
    const deps = service(name).depends_on;
    expect(deps && !Array.isArray(deps)).toBe(true);
    for (const infra of INFRA_SERVICES) expect((deps as Record<string, { condition: string }>)[infra]?.condition).toBe('service_healthy');
  });

  it('starts players before the other services (it seeds the demo app)', () => {
    for (const name of APP_SERVICES.filter((n) => n !== 'players')) {
      expect((service(name).depends_on as Record<string, { condition: string }>).players?.condition).toBe('service_healthy');
    }
  });

  it.each(INFRA_SERVICES)('has a healthcheck for %s', (name) => {
    const test = service(name).healthcheck?.test;
    expect(Array.isArray(test) ? test.join(' ') : test).toBeTruthy();
    expect(service(name).restart).toBeTruthy();
  });

  it('runs Postgres 16, NATS with JetStream on a volume, and Redis', () => {
    expect(service('postgres').image).toMatch(/^postgres:16/);
    expect(service('redis').image).toMatch(/^redis:/);
    const nats = service('nats');
    expect(nats.image).toMatch(/^nats:/);
    const args = Array.isArray(nats.command) ? nats.command : (nats.command ?? '').split(/\s+/);
    expect(args).toContain('-js');
    const storeDir = args[args.indexOf('-sd') + 1];
    expect(storeDir).toBeTruthy();
    expect(nats.volumes?.some((v) => v.endsWith(`:${storeDir}`))).toBe(true);
    expect(service('nats').healthcheck?.test?.toString()).toContain('js-enabled-only=true');
  });

  it('publishes Postgres, NATS and Redis on 127.0.0.1 at their standard ports, for npm start on the host', () => {
    const published = (name: string) => service(name).ports?.map(String) ?? [];
    expect(published('postgres')).toEqual(['127.0.0.1:${POSTGRES_PORT:-5432}:5432']);
    expect(published('nats')).toEqual(['127.0.0.1:${NATS_PORT:-4222}:4222']);
    expect(published('redis')).toEqual(['127.0.0.1:${REDIS_PORT:-6379}:6379']);
    // npm start's default DATABASE_URL has no password.
    expect(envOf('postgres').POSTGRES_HOST_AUTH_METHOD).toBe('trust');
  });

  it('publishes the gateway on port 3000 of 127.0.0.1 (BIND_ADDRESS moves it) and checks its readiness', () => {
    const gateway = service('gateway');
    expect(gateway.ports?.map(String)).toContain('${BIND_ADDRESS:-127.0.0.1}:${GATEWAY_PORT:-3000}:3000');
    expect(envOf('gateway').PORT).toBe('3000');
    expect(envOf('gateway').HEALTHCHECK_URL).toBe('http://127.0.0.1:3000/readyz');
  });
});

describe('Dockerfile', () => {
  const instructions = dockerfileInstructions();
  const stages = instructions.filter((i) => i.keyword === 'FROM');
  const args = Object.fromEntries(
    instructions.filter((i) => i.keyword === 'ARG' && i.args.includes('=')).map((i) => [i.args.split('=')[0]!, i.args.split('=')[1]!]),
  );
  const imageOf = (from: string) => from.split(/\s+/)[0]!.replace(/^\$\{(\w+)\}$/, (_, name: string) => args[name] ?? name);

  it('is multi-stage, every stage on Node 22 LTS (bookworm-slim) or an earlier stage', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    const names = new Set(stages.map((s) => s.args.match(/\bAS\s+(\S+)/i)?.[1]));
    for (const s of stages) {
      const image = imageOf(s.args);
      expect(image === 'node:22-bookworm-slim' || names.has(image), image).toBe(true);
    }
  });

  it('installs with npm ci, builds TypeScript and drops dev dependencies', () => {
    const runs = instructions.filter((i) => i.keyword === 'RUN').map((i) => i.args);
    expect(runs.some((r) => r.includes('npm ci'))).toBe(true);
    expect(runs.some((r) => r.includes('npm run build'))).toBe(true);
    expect(runs.some((r) => r.includes('npm prune --omit=dev'))).toBe(true);
    expect(JSON.parse(read('package.json')).scripts.build).toContain('tsconfig.build.json');
  });

  it('runs as a non-root user in the final stage, with a healthcheck and the gateway as default command', () => {
    const lastFrom = instructions.lastIndexOf(stages[stages.length - 1]!);
    const final = instructions.slice(lastFrom);
    const users = final.filter((i) => i.keyword === 'USER').map((i) => i.args);
    expect(users.length).toBeGreaterThan(0);
    expect(users[users.length - 1]).not.toMatch(/^(root|0)(:|$)/);
    expect(final.some((i) => i.keyword === 'HEALTHCHECK')).toBe(true);
    expect(final.find((i) => i.keyword === 'CMD')?.args).toBe('["node", "services/gateway/dist/main.js"]');
  });

  it("copies every workspace's package.json before npm ci, so the install covers each one's dependencies", () => {
    const workspaces = (JSON.parse(read('package.json')) as { workspaces: string[] }).workspaces.flatMap((glob) => {
      const dir = glob.replace(/\/\*$/, '');
      return readdirSync(path.join(ROOT, dir))
        .map((name) => `${dir}/${name}`)
        .filter((w) => existsSync(path.join(ROOT, w, 'package.json')));
    });
    expect(workspaces).toContain('services/store');
    const ci = instructions.findIndex((i) => i.keyword === 'RUN' && i.args.includes('npm ci'));
    const copied = instructions
      .slice(0, ci)
      .filter((i) => i.keyword === 'COPY')
      .map((i) => i.args);
    for (const w of workspaces) expect(copied, w).toContain(`${w}/package.json ${w}/`);
  });

  it("keeps the store's pinned Apple root certificate in the build context and the image", () => {
    const asset = 'services/store/assets/AppleRootCA-G3.pem';
    expect(existsSync(path.join(ROOT, asset))).toBe(true);
    // No .dockerignore pattern matches the file or a folder above it.
    const patterns = read('.dockerignore')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#') && !l.startsWith('!'));
    const parts = asset.split('/');
    const paths = parts.map((_, i) => parts.slice(0, i + 1).join('/'));
    for (const p of patterns) for (const q of paths) expect(dockerignoreMatches(p, q), `${p} excludes ${q}`).toBe(false);
    expect(dockerignoreMatches('**/test', 'services/store/test')).toBe(true);
    // The build copies services/ whole, removes only sources, tests and build leftovers, and the
    // runtime stage takes services/ whole.
    expect(instructions.some((i) => i.keyword === 'COPY' && i.args === 'services services')).toBe(true);
    for (const run of instructions.filter((i) => i.keyword === 'RUN')) expect(run.args).not.toMatch(/assets|\.pem/);
    expect(instructions.some((i) => i.keyword === 'COPY' && /^--from=build .*\/app\/services services$/.test(i.args))).toBe(true);
  });

  it('keeps node_modules, dist and git out of the build context', () => {
    const ignored = read('.dockerignore')
      .split('\n')
      .map((l) => l.trim());
    for (const entry of ['**/node_modules', '**/dist', '.git']) expect(ignored).toContain(entry);
  });
});
