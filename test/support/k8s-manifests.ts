/**
 * The rendered deploy/k8s manifests (base and overlays, by `kubectl kustomize`) and typed
 * views of the parts the ops tests read: Deployments, containers, HPAs, PDBs, Services, and the
 * environment a container really starts with.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { kustomizeUnavailable, parseEnvFile, renderKustomization, type K8sObject } from './kustomize.js';

export { kustomizeUnavailable };

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The seven services, each one Deployment. */
export const SERVICES = ['gateway', 'players', 'wallet', 'chests', 'collections', 'egress', 'store'] as const;
export type ServiceName = (typeof SERVICES)[number];
/** Where each kustomization lives. */
export const OVERLAYS = { base: 'deploy/k8s/base', dev: 'deploy/k8s/overlays/dev', production: 'deploy/k8s/overlays/production' } as const;
export type Overlay = keyof typeof OVERLAYS;
/** Every kustomization rendered once (empty where kubectl is missing: the tests that read them skip, saying why). */
export const rendered = Object.fromEntries(Object.entries(OVERLAYS).map(([k, dir]) => [k, renderKustomization(path.join(ROOT, dir))])) as Record<
  Overlay,
  K8sObject[]
>;
/** deploy/k8s/base/secrets.example.env, the keys of the Secret the base expects. */
export const SECRET_EXAMPLE = Object.fromEntries(parseEnvFile(path.join(ROOT, 'deploy/k8s/base/secrets.example.env')));

const HttpProbe = z.object({ httpGet: z.object({ path: z.string(), port: z.union([z.number(), z.string()]) }) }).passthrough();
const Quantities = z.object({ cpu: z.union([z.string(), z.number()]), memory: z.string() });
const SecurityContext = z.object({
  runAsNonRoot: z.boolean().optional(),
  runAsUser: z.number().optional(),
  allowPrivilegeEscalation: z.boolean().optional(),
  readOnlyRootFilesystem: z.boolean().optional(),
  capabilities: z.object({ drop: z.array(z.string()) }).optional(),
  seccompProfile: z.object({ type: z.string() }).optional(),
});
/** One env entry: a value or a Secret key. */
export const EnvVar = z.object({
  name: z.string(),
  value: z.string().optional(),
  valueFrom: z.object({ secretKeyRef: z.object({ name: z.string(), key: z.string(), optional: z.boolean().optional() }) }).optional(),
});
/** A container of our services (every field the checks read; strict where it matters). */
export const Container = z.object({
  name: z.string(),
  image: z.string(),
  command: z.array(z.string()),
  workingDir: z.string().optional(),
  ports: z.array(z.object({ name: z.string().optional(), containerPort: z.number() })).default([]),
  envFrom: z.array(z.object({ configMapRef: z.object({ name: z.string() }) })).default([]),
  env: z.array(EnvVar).default([]),
  livenessProbe: HttpProbe.optional(),
  readinessProbe: HttpProbe.optional(),
  startupProbe: HttpProbe.optional(),
  lifecycle: z.object({ preStop: z.object({ exec: z.object({ command: z.array(z.string()) }) }) }).optional(),
  resources: z.object({ requests: Quantities, limits: Quantities }),
  securityContext: SecurityContext.default({}),
});
export type Container = z.infer<typeof Container>;
/** A Deployment of one of our services. */
export const Deployment = z.object({
  metadata: z.object({ name: z.string(), annotations: z.record(z.string(), z.string()).optional() }),
  spec: z.object({
    replicas: z.number().optional(),
    selector: z.object({ matchLabels: z.record(z.string(), z.string()) }),
    template: z.object({
      metadata: z.object({ labels: z.record(z.string(), z.string()), annotations: z.record(z.string(), z.string()).default({}) }),
      spec: z.object({
        terminationGracePeriodSeconds: z.number(),
        securityContext: SecurityContext.default({}),
        initContainers: z.array(Container).default([]),
        containers: z.array(Container),
      }),
    }),
  }),
});
export type Deployment = z.infer<typeof Deployment>;
/** autoscaling/v2 HorizontalPodAutoscaler. */
export const Hpa = z.object({
  apiVersion: z.literal('autoscaling/v2'),
  spec: z.object({
    scaleTargetRef: z.object({ apiVersion: z.string(), kind: z.string(), name: z.string() }),
    minReplicas: z.number(),
    maxReplicas: z.number(),
    metrics: z.array(
      z.object({ type: z.string(), resource: z.object({ name: z.string(), target: z.object({ type: z.string() }).passthrough() }).optional() }),
    ),
  }),
});
/** policy/v1 PodDisruptionBudget. */
export const Pdb = z.object({
  apiVersion: z.literal('policy/v1'),
  spec: z.object({ selector: z.object({ matchLabels: z.record(z.string(), z.string()) }) }).passthrough(),
});
/** A Service's selector and ports. */
export const KService = z.object({
  spec: z.object({
    selector: z.record(z.string(), z.string()),
    ports: z.array(z.object({ port: z.number(), targetPort: z.union([z.number(), z.string()]) })),
  }),
});
/** A ConfigMap or Secret. */
export const DataObject = z.object({ metadata: z.object({ name: z.string() }), data: z.record(z.string(), z.string()).default({}) });

/** The object of that kind and name, if rendered. */
export const find = (objs: K8sObject[], kind: string, name: string) => objs.find((o) => o.kind === kind && o.metadata.name === name);
/** Every object of a kind. */
export const ofKind = (objs: K8sObject[], kind: string) => objs.filter((o) => o.kind === kind);
/** A service's Deployment, parsed (throws when missing or malformed). */
export const deployment = (objs: K8sObject[], name: ServiceName) => Deployment.parse(find(objs, 'Deployment', name));
/** The service's own container in its Deployment. */
export const appContainer = (d: Deployment, name: ServiceName) => {
  const c = d.spec.template.spec.containers.find((x) => x.name === name);
  if (!c) throw new Error(`Deployment ${d.metadata.name} has no container ${name}`);
  return c;
};
/** True when every selector label is on the pod. */
export const selects = (selector: Record<string, string>, labels: Record<string, string>) =>
  Object.entries(selector).every(([k, v]) => labels[k] === v);

/** A CPU quantity in millicores ("500m", "2", 1). */
export function millicores(q: string | number): number {
  const m = /^([\d.]+)(m?)$/.exec(String(q));
  if (!m) throw new Error(`unreadable CPU quantity ${q}`);
  return Number(m[1]) * (m[2] ? 1 : 1000);
}

/** A memory quantity in bytes ("256Mi", "1Gi"). */
export function bytes(q: string): number {
  const m = /^(\d+)(Ki|Mi|Gi)?$/.exec(q);
  if (!m) throw new Error(`unreadable memory quantity ${q}`);
  return Number(m[1]) * { '': 1, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3 }[m[2] ?? '']!;
}

/** The environment a container starts with: its ConfigMaps, then its own env (secrets resolved). */
export function environmentOf(objs: K8sObject[], c: Container): Record<string, string> {
  const env: Record<string, string> = {};
  for (const from of c.envFrom) Object.assign(env, DataObject.parse(find(objs, 'ConfigMap', from.configMapRef.name)).data);
  for (const v of c.env) {
    const ref = v.valueFrom?.secretKeyRef;
    if (!ref) {
      env[v.name] = v.value ?? '';
      continue;
    }
    const secret = find(objs, 'Secret', ref.name);
    // Base and production expect the Secret from outside: use the documented example.
    const value = secret ? DataObject.parse(secret).data[ref.key] : SECRET_EXAMPLE[ref.key];
    const decoded = secret && value !== undefined ? Buffer.from(value, 'base64').toString() : value;
    if (decoded === undefined && !ref.optional) throw new Error(`${c.name}: secret key ${ref.name}/${ref.key} is missing`);
    if (decoded !== undefined) env[v.name] = decoded;
  }
  return env;
}
