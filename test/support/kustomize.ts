/**
 * The deploy/k8s kustomizations rendered by `kubectl kustomize` itself (no renderer of our own:
 * it would be a second kustomize to keep right), and small helpers over the objects.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadAll } from 'js-yaml';

/** A Kubernetes object as parsed from YAML; tests narrow what they read with zod. */
export type K8sObject = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; [k: string]: unknown };
  [k: string]: unknown;
};

const WORKLOADS = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'Job', 'ReplicaSet', 'CronJob']);

/** Why the manifests cannot be rendered on this machine (kubectl missing), or undefined when they can. */
export const kustomizeUnavailable: string | undefined = (() => {
  try {
    execFileSync('kubectl', ['version', '--client'], { stdio: 'ignore', timeout: 10_000 });
    return undefined;
  } catch {
    return 'kubectl is not installed: the manifests are rendered with `kubectl kustomize`';
  }
})();

/** The objects `kubectl kustomize <dir>` prints (empty where kubectl is missing: see kustomizeUnavailable). */
export function renderKustomization(dir: string): K8sObject[] {
  if (kustomizeUnavailable) return [];
  const out = execFileSync('kubectl', ['kustomize', dir], { encoding: 'utf8', timeout: 60_000 });
  return loadAll(out).filter((o): o is K8sObject => typeof o === 'object' && o !== null);
}

/** KEY=VALUE lines of an env file (comments and blank lines skipped), in order. */
export function parseEnvFile(file: string): [string, string][] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]);
}

/** Calls fn on every container and init container of a workload's pod template. */
export function forEachContainer(obj: K8sObject, fn: (container: Record<string, unknown>) => void): void {
  if (!WORKLOADS.has(obj.kind)) return;
  type Template = { template?: { spec?: Record<string, unknown> } };
  const spec = obj.kind === 'CronJob' ? (obj.spec as { jobTemplate?: { spec?: Template } }).jobTemplate?.spec : (obj.spec as Template);
  const pod = (spec?.template?.spec ?? {}) as Record<string, unknown>;
  for (const list of [pod.initContainers, pod.containers]) if (Array.isArray(list)) list.forEach((c) => fn(c as Record<string, unknown>));
}
