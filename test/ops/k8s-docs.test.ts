/**
 * The Kubernetes commands the docs give, held to the manifests they apply (no cluster here: what
 * can be checked without one). docs/guide.md repeats docs/deploy.md's dev-cluster block as it is;
 * each path (dev cluster, production) creates the namespace the overlay uses before the Secret
 * in it, and the Secret before the overlay, with the name the workloads read and every key they
 * need; the image built is the one the overlay runs; and every kubectl command of deploy.md,
 * guide.md and operations.md names files, namespaces, Deployments, containers, Services, ports and
 * HPAs that exist in the overlay `kubectl kustomize` renders.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { load } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { generateSecrets } from '../../scripts/generate-secrets.js';
import { EnvVar, find, KService, OVERLAYS, SERVICES } from '../support/k8s-manifests.js';
import { forEachContainer, kustomizeUnavailable, renderKustomization, type K8sObject } from '../support/kustomize.js';
import { blocksUnder, commandsOf, inlineCommands, optionOf, ROOT, shellBlocks, type ShellCommand } from '../support/shell-docs.js';

const skipped = kustomizeUnavailable ? ` (skipped: ${kustomizeUnavailable})` : '';

const renders = new Map<string, K8sObject[]>();
/** What `kubectl kustomize <dir>` prints for a directory a doc applies (rendered once). */
function render(dir: string): K8sObject[] {
  if (!renders.has(dir)) renders.set(dir, renderKustomization(path.join(ROOT, dir)));
  return renders.get(dir)!;
}

/** The namespace an overlay puts everything in: its one Namespace object, which every other object names. */
function namespaceOf(objs: K8sObject[]): K8sObject {
  const namespaces = objs.filter((o) => o.kind === 'Namespace');
  expect(namespaces).toHaveLength(1);
  for (const o of objs.filter((x) => x.kind !== 'Namespace'))
    expect(o.metadata.namespace, `${o.kind}/${o.metadata.name}`).toBe(namespaces[0]!.metadata.name);
  return namespaces[0]!;
}

/** The Secret keys the workloads of a render read: name → key → whether some reader needs it (not `optional`). */
function secretKeysRead(objs: K8sObject[]): Map<string, Map<string, boolean>> {
  const secrets = new Map<string, Map<string, boolean>>();
  for (const o of objs)
    forEachContainer(o, (c) => {
      for (const e of EnvVar.array().parse(c.env ?? [])) {
        const ref = e.valueFrom?.secretKeyRef;
        if (!ref) continue;
        const keys = secrets.get(ref.name) ?? new Map<string, boolean>();
        keys.set(ref.key, Boolean(keys.get(ref.key)) || !ref.optional);
        secrets.set(ref.name, keys);
      }
    });
  return secrets;
}

const isKubectl = (c: ShellCommand, ...words: string[]) => c.argv[0] === 'kubectl' && words.every((w) => c.argv.includes(w));

/** The keys of an env file the commands write: `generate-secrets.ts --out <file>`, then `echo "K=…" >> <file>`. */
function keysWritten(commands: ShellCommand[], file: string, before: number): Set<string> {
  const keys = new Set<string>();
  for (const c of commands.slice(0, before)) {
    if (c.argv[0] === 'npx' && c.argv.includes('scripts/generate-secrets.ts') && optionOf(c.argv, '--out') === file) {
      const flags = c.argv
        .slice(c.argv.indexOf('scripts/generate-secrets.ts') + 1)
        .filter((a, i, all) => a.startsWith('--') || all[i - 1] !== '--out');
      expect(
        flags.every((f) => ['--dev-cluster', '--out'].includes(f)),
        c.source,
      ).toBe(true);
      for (const line of generateSecrets({ devCluster: flags.includes('--dev-cluster') }).split('\n')) {
        if (/^[A-Z_]+=/.test(line)) keys.add(line.slice(0, line.indexOf('=')));
      }
    }
    if (c.argv[0] === 'echo' && c.argv.at(-2) === '>>' && c.argv.at(-1) === file) keys.add(c.argv[1]!.slice(0, c.argv[1]!.indexOf('=')));
  }
  return keys;
}

/**
 * One path to a running overlay: the namespace (created, or applied from the overlay's own
 * namespace.yaml) before the Secret, the Secret in it with the name and every key the workloads
 * need, then the overlay.
 */
function checkPath(commands: ShellCommand[], overlayDir: string, opts: { onlyKeysRead?: boolean } = {}): void {
  const objs = render(overlayDir);
  const namespace = namespaceOf(objs);
  const ns = namespace.metadata.name;
  const createsNamespace = (c: ShellCommand) => {
    if (isKubectl(c, 'create', 'namespace')) return c.argv.at(-1) === ns;
    const file = isKubectl(c, 'apply') ? optionOf(c.argv, '-f') : undefined;
    if (!file) return false;
    const obj = load(readFileSync(path.join(ROOT, file), 'utf8')) as K8sObject;
    return obj.kind === 'Namespace' && isDeepStrictEqual(obj.metadata, namespace.metadata);
  };
  const nsStep = commands.findIndex(createsNamespace);
  const secretStep = commands.findIndex((c) => isKubectl(c, 'create', 'secret', 'generic'));
  const applyStep = commands.findIndex((c) => isKubectl(c, 'apply') && optionOf(c.argv, '-k') === overlayDir);
  expect(nsStep, `the namespace ${ns} is created`).toBeGreaterThanOrEqual(0);
  expect(secretStep, 'then the Secret, in it').toBeGreaterThan(nsStep);
  expect(applyStep, 'then the overlay').toBeGreaterThan(secretStep);

  const secret = commands[secretStep]!;
  expect(optionOf(secret.argv, '-n', '--namespace'), secret.source).toBe(ns);
  const read = secretKeysRead(objs);
  const name = secret.argv[secret.argv.indexOf('generic') + 1]!;
  expect([...read.keys()], 'the Secrets the workloads read').toEqual([name]);
  const file = optionOf(secret.argv, '--from-env-file');
  expect(file, secret.source).toBeTruthy();
  const written = keysWritten(commands, file!, secretStep);
  const needed = [...read.get(name)!].filter(([, required]) => required).map(([key]) => key);
  expect(
    needed.filter((k) => !written.has(k)),
    `keys the workloads need that ${file} lacks`,
  ).toEqual([]);
  // Nothing written that no workload reads (a misspelt key would go unnoticed otherwise). In
  // production the NATS servers are the Helm chart's, with their own Secret: the admin's password
  // is written but read there.
  if (opts.onlyKeysRead)
    expect(
      [...written].filter((k) => !read.get(name)!.has(k)),
      `keys of ${file} nothing reads`,
    ).toEqual([]);
}

const DEV = OVERLAYS.dev;
const PRODUCTION = OVERLAYS.production;
const devBlock = () => {
  const blocks = blocksUnder('docs/deploy.md', 'A dev cluster (kind or minikube)');
  expect(blocks).toHaveLength(1);
  return blocks[0]!.text;
};

describe.skipIf(kustomizeUnavailable)(`the Kubernetes commands of the docs${skipped}`, () => {
  it("docs/guide.md's Kubernetes section gives the dev cluster docs/deploy.md's path, as it is", () => {
    const guide = blocksUnder('docs/guide.md', 'Deploying to Kubernetes').map((b) => b.text);
    expect(guide).toContain(devBlock());
    // And no other kubectl path beside it.
    for (const text of guide.filter((t) => t !== devBlock()))
      expect(
        commandsOf(text).some((c) => c.argv[0] === 'kubectl'),
        text,
      ).toBe(false);
  });

  it('the dev cluster: the namespace, then the Secret with every key the overlay reads, then the overlay', () => {
    checkPath(commandsOf(devBlock()), DEV, { onlyKeysRead: true });
  });

  it('production: the namespace, then the Secret with every key the overlay reads, then the overlay', () => {
    const secrets = blocksUnder('docs/deploy.md', 'Configuration and secrets');
    expect(secrets).toHaveLength(1);
    const apply = inlineCommands('docs/deploy.md', 'kubectl apply -k').filter((c) => c.endsWith(PRODUCTION));
    expect(apply.length).toBeGreaterThan(0);
    checkPath(commandsOf(`${secrets[0]!.text}\n${apply[0]}`), PRODUCTION);
  });

  it('builds and loads into the dev cluster the image its overlay runs', () => {
    const commands = commandsOf(devBlock());
    const built = commands.find((c) => c.argv[0] === 'docker' && c.argv[1] === 'build');
    expect(built?.argv.at(-1)).toBe('.');
    expect(existsSync(path.join(ROOT, 'Dockerfile'))).toBe(true);
    const tag = optionOf(built!.argv, '-t');
    // Every service's Deployment runs it (the infrastructure runs its upstream images).
    for (const name of SERVICES) forEachContainer(find(render(DEV), 'Deployment', name)!, (c) => expect(c.image, name).toBe(tag));
    const loaded = commands.filter((c) => (c.argv[0] === 'kind' && c.argv[1] === 'load') || (c.argv[0] === 'minikube' && c.argv[1] === 'image'));
    expect(loaded.length).toBeGreaterThan(0);
    for (const c of loaded) expect(c.argv, c.source).toContain(tag);
    // The minikube alternative is a comment of the block.
    expect(devBlock()).toContain(`minikube image load ${tag}`);
  });

  it("reads the demo app's API key from the line players logs as it creates it", () => {
    const sed = commandsOf(devBlock()).find((c) => c.argv[0] === 'sed');
    expect(sed).toBeDefined();
    const source = readFileSync(path.join(ROOT, 'services/players/src/apps/demo-app.ts'), 'utf8');
    const template = /`(demo app created; API key: \$\{created\.publishableKey\}[^`]*)`/.exec(source)?.[1];
    expect(template, 'the line players logs').toBeDefined();
    const key = 'pk_Abc-123_xyz';
    // As the container logs it: one JSON line (pino).
    const line = JSON.stringify({ level: 30, time: 1, name: 'players', msg: template!.replace('${created.publishableKey}', key), appId: 'a' });
    expect(execFileSync('sed', sed!.argv.slice(1), { input: `${line}\n`, encoding: 'utf8' }).trim()).toBe(key);
  });

  it('every kubectl command of deploy.md, guide.md and operations.md names what exists', () => {
    const byNamespace = new Map([DEV, PRODUCTION].map((dir) => [namespaceOf(render(dir)).metadata.name, render(dir)] as const));
    const kubectl = kubectlCommands();
    expect(kubectl.length).toBeGreaterThan(20);
    for (const c of kubectl) checkKubectl(c, byNamespace);
  });

  it("runs the admin command in a pod as the NATS user admin (a service's own user may not call the admin subjects)", () => {
    const admin = kubectlCommands().filter((c) => c.argv.includes('tools/admin/dist/main.js') && !c.argv.includes('keep-grants'));
    expect(admin.length).toBeGreaterThan(0);
    for (const c of admin) {
      const run = c.argv.slice(c.argv.indexOf('--') + 1);
      expect(run[0], c.source).toBe('env');
      expect(run, c.source).toContain('NATS_USER=admin');
      expect(
        run.find((w) => w.startsWith('NATS_PASSWORD=')),
        c.source,
      ).toMatch(/NATS_PASSWORD_ADMIN/);
    }
  });
});

/** Every kubectl command of the three documents (blocks and inline code). */
function kubectlCommands(): ShellCommand[] {
  const commands: ShellCommand[] = [];
  for (const file of ['docs/deploy.md', 'docs/guide.md', 'docs/operations.md']) {
    for (const b of shellBlocks(file)) commands.push(...commandsOf(b.text));
    for (const inline of inlineCommands(file, 'kubectl ')) commands.push(...commandsOf(inline));
  }
  return commands.filter((c) => c.argv[0] === 'kubectl');
}

/** The files, namespace and objects one kubectl command names exist (placeholders such as `<pod>` and `…` aside). */
function checkKubectl(c: ShellCommand, byNamespace: Map<string, K8sObject[]>): void {
  const placeholder = (v: string) => /[<…]/.test(v) || v.startsWith('$');
  for (const [option, kind] of [
    ['-f', 'file'],
    ['-k', 'kustomization'],
    ['--from-file', 'file'],
  ] as const) {
    const value = optionOf(c.argv, option);
    if (!value || placeholder(value)) continue;
    expect(existsSync(path.join(ROOT, value)), `${c.source}: ${value}`).toBe(true);
    if (kind === 'kustomization') {
      expect(existsSync(path.join(ROOT, value, 'kustomization.yaml')), c.source).toBe(true);
      expect(render(value).length, c.source).toBeGreaterThan(0);
    }
  }
  const ns = optionOf(c.argv, '-n', '--namespace');
  // The NATS Helm chart's namespace: its objects are the chart's, not rendered here.
  if (!ns || ns === 'nats') return;
  // `-n <ns>`: what it names must exist in every overlay.
  const overlays = placeholder(ns) ? [...byNamespace.values()] : [byNamespace.get(ns)];
  for (const objs of overlays) {
    expect(objs, `${c.source}: namespace ${ns} is no overlay's`).toBeDefined();
    checkNamed(c, objs!);
  }
}

/** The Deployments (and their containers), Services (and ports) and HPAs a kubectl command names exist in a render. */
function checkNamed(c: ShellCommand, objs: K8sObject[]): void {
  const named = (kind: string, name: string) => objs.find((o) => o.kind === kind && o.metadata.name === name);
  for (const [i, word] of c.argv.entries()) {
    const ref = /^(deploy|deployment|svc|service)\/([\w-]+)$/.exec(word);
    if (ref) {
      const kind = ref[1]!.startsWith('d') ? 'Deployment' : 'Service';
      const obj = named(kind, ref[2]!);
      expect(obj, `${c.source}: ${kind} ${ref[2]}`).toBeDefined();
      const container = optionOf(c.argv, '-c');
      if (kind === 'Deployment' && container) {
        const names: string[] = [];
        forEachContainer(obj!, (x) => names.push(String(x.name)));
        expect(names, c.source).toContain(container);
      }
      if (kind === 'Service' && c.argv.includes('port-forward')) {
        const port = Number(c.argv[i + 1]!.split(':')[1]);
        expect(
          KService.parse(obj).spec.ports.map((p) => p.port),
          c.source,
        ).toContain(port);
      }
    }
    if (word === 'hpa' && c.argv[i + 1] && !c.argv[i + 1]!.startsWith('-')) {
      expect(named('HorizontalPodAutoscaler', c.argv[i + 1]!), `${c.source}: HPA ${c.argv[i + 1]}`).toBeDefined();
    }
  }
}
