/**
 * The subset of kustomize that deploy/k8s uses, so tests can render the manifests without a
 * kubectl or kustomize binary: resources (files and nested kustomizations), configMapGenerator
 * and secretGenerator (literals, env files; create/merge; hashed names and the references to
 * them), strategic-merge patches (maps merged, lists of named items merged by name), replicas,
 * images and namespace. A kustomization using anything else fails to parse here, loudly, rather
 * than rendering something kustomize would not.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { loadAll } from 'js-yaml';
import { z } from 'zod';

/** A Kubernetes object as parsed from YAML; tests narrow what they read with zod. */
export type K8sObject = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; [k: string]: unknown }; [k: string]: unknown };

const Generator = z
  .object({
    name: z.string(),
    behavior: z.enum(['create', 'merge', 'replace']).optional(),
    literals: z.array(z.string()).optional(),
    envs: z.array(z.string()).optional(),
    options: z.object({ disableNameSuffixHash: z.boolean().optional() }).strict().optional(),
  })
  .strict();

const Kustomization = z
  .object({
    apiVersion: z.literal('kustomize.config.k8s.io/v1beta1'),
    kind: z.literal('Kustomization'),
    namespace: z.string().optional(),
    resources: z.array(z.string()).default([]),
    configMapGenerator: z.array(Generator).default([]),
    secretGenerator: z.array(Generator).default([]),
    patches: z.array(z.object({ path: z.string() }).strict()).default([]),
    replicas: z.array(z.object({ name: z.string(), count: z.number().int() }).strict()).default([]),
    images: z.array(z.object({ name: z.string(), newName: z.string().optional(), newTag: z.coerce.string().optional() }).strict()).default([]),
  })
  .strict();

const ObjectSchema = z.object({ apiVersion: z.string(), kind: z.string(), metadata: z.object({ name: z.string() }).passthrough() }).passthrough();

/** A rendered object and, for generated ConfigMaps and Secrets, the name before hashing. */
interface Entry {
  obj: K8sObject;
  generated?: { name: string; hash: boolean };
}

const CLUSTER_SCOPED = new Set(['Namespace', 'ClusterRole', 'ClusterRoleBinding', 'CustomResourceDefinition', 'PersistentVolume', 'StorageClass', 'PriorityClass']);
const WORKLOADS = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'Job', 'ReplicaSet']);

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Parses every document of a YAML file as a Kubernetes object (empty documents skipped). */
export function loadObjects(file: string): K8sObject[] {
  return loadAll(readFileSync(file, 'utf8'))
    .filter((doc) => doc !== null && doc !== undefined)
    .map((doc) => ObjectSchema.parse(doc) as K8sObject);
}

/** KEY=VALUE lines of an env file (comments and blank lines skipped), in order. */
export function parseEnvFile(file: string): [string, string][] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]);
}

/** Renders a kustomization directory to the objects `kubectl kustomize <dir>` would print. */
export function renderKustomization(dir: string): K8sObject[] {
  const entries = build(dir);
  finalizeGeneratedNames(entries);
  return entries.map((e) => e.obj);
}

function build(dir: string): Entry[] {
  const k = Kustomization.parse(loadAll(readFileSync(path.join(dir, 'kustomization.yaml'), 'utf8'))[0]);
  const entries: Entry[] = [];
  for (const res of k.resources) {
    const target = path.join(dir, res);
    if (!existsSync(target)) throw new Error(`${dir}: resource ${res} does not exist`);
    if (statSync(target).isDirectory()) entries.push(...build(target));
    else entries.push(...loadObjects(target).map((obj) => ({ obj })));
  }
  for (const g of k.configMapGenerator) generate(entries, dir, g, 'ConfigMap');
  for (const g of k.secretGenerator) generate(entries, dir, g, 'Secret');
  for (const p of k.patches) for (const patch of loadObjects(path.join(dir, p.path))) applyPatch(entries, patch);
  for (const r of k.replicas) {
    const target = entries.find((e) => WORKLOADS.has(e.obj.kind) && e.obj.metadata.name === r.name);
    if (!target) throw new Error(`${dir}: replicas for unknown workload ${r.name}`);
    (target.obj.spec as Record<string, unknown>).replicas = r.count;
  }
  for (const image of k.images) for (const e of entries) forEachContainer(e.obj, (c) => retag(c, image));
  if (k.namespace) for (const e of entries) if (!CLUSTER_SCOPED.has(e.obj.kind)) e.obj.metadata.namespace = k.namespace;
  return entries;
}

function generate(entries: Entry[], dir: string, g: z.infer<typeof Generator>, kind: 'ConfigMap' | 'Secret'): void {
  const pairs: [string, string][] = [
    ...(g.envs ?? []).flatMap((f) => parseEnvFile(path.join(dir, f))),
    ...(g.literals ?? []).map((l): [string, string] => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  ];
  const values = Object.fromEntries(pairs.map(([key, v]) => [key, kind === 'Secret' ? Buffer.from(v).toString('base64') : v]));
  const existing = entries.find((e) => e.obj.kind === kind && e.generated?.name === g.name);
  if (g.behavior === 'merge' || g.behavior === 'replace') {
    if (!existing) throw new Error(`${dir}: ${g.behavior} of unknown ${kind} ${g.name}`);
    existing.obj.data = g.behavior === 'merge' ? { ...(existing.obj.data as Record<string, string>), ...values } : values;
    return;
  }
  if (existing) throw new Error(`${dir}: ${kind} ${g.name} generated twice`);
  const obj: K8sObject = { apiVersion: 'v1', kind, metadata: { name: g.name }, data: values };
  if (kind === 'Secret') obj.type = 'Opaque';
  entries.push({ obj, generated: { name: g.name, hash: !g.options?.disableNameSuffixHash } });
}

function applyPatch(entries: Entry[], patch: K8sObject): void {
  const target = entries.find((e) => e.obj.kind === patch.kind && (e.generated?.name ?? e.obj.metadata.name) === patch.metadata.name);
  if (!target) throw new Error(`patch for unknown ${patch.kind} ${patch.metadata.name}`);
  target.obj = strategicMerge(target.obj, patch) as K8sObject;
}

/** Strategic merge as kustomize applies it to the fields these manifests patch. */
export function strategicMerge(base: unknown, patch: unknown): unknown {
  if (isMap(base) && isMap(patch)) {
    const out: Record<string, unknown> = { ...base };
    for (const [key, value] of Object.entries(patch)) {
      if (value === null) delete out[key];
      else out[key] = key in base ? strategicMerge(base[key], value) : value;
    }
    return out;
  }
  const named = (list: unknown): list is Record<string, unknown>[] => Array.isArray(list) && list.every((i) => isMap(i) && typeof i.name === 'string');
  if (named(base) && named(patch)) {
    const out = [...base];
    for (const item of patch) {
      const at = out.findIndex((b) => b.name === item.name);
      if (at >= 0) out[at] = strategicMerge(out[at], item) as Record<string, unknown>;
      else out.push(item);
    }
    return out;
  }
  return patch;
}

function retag(container: Record<string, unknown>, image: { name: string; newName?: string; newTag?: string }): void {
  const ref = String(container.image);
  const name = ref.replace(/[@:][^/]*$/, '');
  if (name !== image.name) return;
  const tag = ref.slice(name.length);
  container.image = `${image.newName ?? name}${image.newTag !== undefined ? `:${image.newTag}` : tag}`;
}

/** Calls fn on every container and init container of a workload's pod template. */
export function forEachContainer(obj: K8sObject, fn: (container: Record<string, unknown>) => void): void {
  if (!WORKLOADS.has(obj.kind)) return;
  const pod = ((obj.spec as { template?: { spec?: Record<string, unknown> } }).template?.spec ?? {}) as Record<string, unknown>;
  for (const list of [pod.initContainers, pod.containers]) if (Array.isArray(list)) list.forEach((c) => fn(c as Record<string, unknown>));
}

/** Gives generated objects their hashed names and points every reference at them. */
function finalizeGeneratedNames(entries: Entry[]): void {
  const renamed = new Map<string, string>();
  for (const e of entries) {
    if (!e.generated) continue;
    const hash = createHash('sha256').update(JSON.stringify(e.obj.data)).digest('hex').slice(0, 10);
    e.obj.metadata.name = e.generated.hash ? `${e.generated.name}-${hash}` : e.generated.name;
    renamed.set(`${e.obj.kind}/${e.generated.name}`, e.obj.metadata.name);
  }
  const rename = (kind: string, ref: Record<string, unknown> | undefined, field = 'name') => {
    const to = ref && renamed.get(`${kind}/${String(ref[field])}`);
    if (ref && to) ref[field] = to;
  };
  for (const e of entries) {
    forEachContainer(e.obj, (c) => {
      for (const from of (c.envFrom ?? []) as Record<string, Record<string, unknown>>[]) {
        rename('ConfigMap', from.configMapRef);
        rename('Secret', from.secretRef);
      }
      for (const env of (c.env ?? []) as { valueFrom?: Record<string, Record<string, unknown>> }[]) {
        rename('ConfigMap', env.valueFrom?.configMapKeyRef);
        rename('Secret', env.valueFrom?.secretKeyRef);
      }
    });
    const pod = (e.obj.spec as { template?: { spec?: { volumes?: Record<string, Record<string, unknown>>[] } } } | undefined)?.template?.spec;
    for (const v of WORKLOADS.has(e.obj.kind) ? (pod?.volumes ?? []) : []) {
      rename('ConfigMap', v.configMap);
      rename('Secret', v.secret, 'secretName');
    }
  }
}
