/**
 * What each overlay adds to the base (dev: one small replica each and in-cluster Postgres, NATS
 * with JetStream on a volume, and Redis; production: a pinned registry image and a clustered
 * NATS), the Secret example and the image layout the manifests assume; rendered by
 * `kubectl kustomize` (skipped, saying why, where kubectl is missing).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { load } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { forEachContainer, kustomizeUnavailable } from '../support/kustomize.js';
import {
  appContainer,
  bytes,
  deployment,
  environmentOf,
  EnvVar,
  find,
  Hpa,
  KService,
  millicores,
  ofKind,
  rendered,
  ROOT,
  SECRET_EXAMPLE,
  SERVICES,
} from '../support/k8s-manifests.js';
import { generateSecrets } from '../../scripts/generate-secrets.js';
import { looksLikeRealSecret } from '../support/secret-scan.js';

const skipped = kustomizeUnavailable ? ` (skipped: ${kustomizeUnavailable})` : '';

describe.skipIf(kustomizeUnavailable)(`the secret example${skipped}`, () => {
  it('lists every key the Deployments and the grants keeper read, with placeholders only', () => {
    const keys = new Set<string>();
    for (const o of [...ofKind(rendered.base, 'Deployment'), ...ofKind(rendered.base, 'CronJob')])
      forEachContainer(o, (c) =>
        EnvVar.array()
          .parse(c.env ?? [])
          .forEach((e) => e.valueFrom && keys.add(e.valueFrom.secretKeyRef.key)),
      );
    expect(Object.keys(SECRET_EXAMPLE).sort()).toEqual([...keys].sort());
    for (const [key, value] of Object.entries(SECRET_EXAMPLE)) expect(looksLikeRealSecret(value), key).toBeUndefined();
  });
});

describe.skipIf(kustomizeUnavailable)(`deploy/k8s/overlays/dev${skipped}`, () => {
  const objs = rendered.dev;

  it('runs one replica of each service, smaller than the base, in its own namespace', () => {
    for (const name of SERVICES) {
      const d = deployment(objs, name);
      expect(d.spec.replicas).toBe(1);
      const hpa = Hpa.parse(ofKind(objs, 'HorizontalPodAutoscaler').find((h) => h.metadata.name === name));
      expect(hpa.spec.minReplicas).toBe(1);
      const base = appContainer(deployment(rendered.base, name), name).resources;
      expect(bytes(appContainer(d, name).resources.requests.memory)).toBeLessThanOrEqual(bytes(base.requests.memory));
      expect(millicores(appContainer(d, name).resources.limits.cpu)).toBeLessThanOrEqual(millicores(base.limits.cpu));
    }
    expect(find(objs, 'Namespace', 'ccs-dev')).toBeDefined();
    for (const o of objs.filter((o) => o.kind !== 'Namespace')) expect(o.metadata.namespace, `${o.kind}/${o.metadata.name}`).toBe('ccs-dev');
  });

  it('runs Postgres, NATS with JetStream on a volume, and Redis where the configuration points', () => {
    const env = environmentOf(objs, appContainer(deployment(objs, 'chests'), 'chests'));
    // DATABASE_URL comes from the Secret the operator creates with scripts/generate-secrets.ts --dev-cluster.
    const generated = Object.fromEntries(
      generateSecrets({ devCluster: true })
        .split('\n')
        .filter((l) => /^[A-Z_]+=/.test(l))
        .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
    );
    for (const url of [generated.DATABASE_URL!, env.NATS_URL!, env.REDIS_URL!]) {
      const { hostname, port } = new URL(url);
      const svc = KService.parse(find(objs, 'Service', hostname));
      expect(svc.spec.ports.map((p) => p.port)).toContain(Number(port));
    }
    const NatsContainer = z.object({ args: z.array(z.string()), volumeMounts: z.array(z.object({ name: z.string(), mountPath: z.string() })) });
    const nats = z
      .object({
        spec: z.object({
          template: z.object({ spec: z.object({ containers: z.array(NatsContainer) }) }),
          volumeClaimTemplates: z.array(z.object({ metadata: z.object({ name: z.string() }) })),
        }),
      })
      .parse(find(objs, 'StatefulSet', 'nats'));
    const { args, volumeMounts } = nats.spec.template.spec.containers[0]!;
    expect(args).toContain('-js');
    const storeDir = args[args.indexOf('-sd') + 1];
    const mount = volumeMounts.find((m) => m.mountPath === storeDir);
    expect(nats.spec.volumeClaimTemplates.map((v) => v.metadata.name)).toContain(mount?.name);
    expect(find(objs, 'StatefulSet', 'postgres')).toBeDefined();
    expect(find(objs, 'Deployment', 'redis')).toBeDefined();
  });
});

describe.skipIf(kustomizeUnavailable)(`production${skipped}`, () => {
  it('keeps at least two pods of every service, so a drain or a rollout never empties one', () => {
    for (const name of SERVICES) {
      const hpa = Hpa.parse(ofKind(rendered.production, 'HorizontalPodAutoscaler').find((h) => h.metadata.name === name));
      expect(hpa.spec.minReplicas, name).toBeGreaterThanOrEqual(2);
    }
  });

  it('pulls a pinned image from a registry and points at NATS in its own namespace', () => {
    const c = appContainer(deployment(rendered.production, 'players'), 'players');
    expect(c.image).toMatch(/^[\w.-]+\/.+:\d+\.\d+\.\d+$/);
    expect(environmentOf(rendered.production, c).NATS_URL).toMatch(/^nats:\/\/nats\.nats\.svc/);
  });

  it('documents a three-node NATS cluster with JetStream file storage (official Helm chart values)', () => {
    const FileStore = z.object({ enabled: z.literal(true), pvc: z.object({ enabled: z.literal(true), size: z.string() }) });
    const values = z
      .object({
        config: z.object({
          cluster: z.object({ enabled: z.literal(true), replicas: z.literal(3) }),
          jetstream: z.object({ enabled: z.literal(true), fileStore: FileStore }),
        }),
      })
      .safeParse(load(readFileSync(path.join(ROOT, 'deploy/nats/values-production.yaml'), 'utf8')));
    expect(values.success, JSON.stringify(values.error?.issues)).toBe(true);
  });
});

describe('the image layout the manifests assume', () => {
  it.each(SERVICES)('builds services/%s/src/main.ts to dist/main.js under /app, as the node user (uid 1000)', (name) => {
    expect(existsSync(path.join(ROOT, `services/${name}/src/main.ts`))).toBe(true);
    expect(JSON.parse(readFileSync(path.join(ROOT, `services/${name}/tsconfig.build.json`), 'utf8')).compilerOptions).toMatchObject({
      rootDir: 'src',
      outDir: 'dist',
    });
    const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
    const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    expect(runtime).toMatch(/^WORKDIR \/app$/m);
    expect(runtime).toMatch(/^COPY --from=build .*\/app\/services services$/m);
    // The node user of the official Node images is uid 1000; the manifests pin runAsUser to it.
    expect(runtime).toMatch(/^USER node$/m);
    expect(runtime).toMatch(/^EXPOSE 3000 8081 9464$/m);
    expect(runtime).toMatch(/HEALTH_PORT=8081/);
    // The gateway's /metrics never on the API port, even run from the image alone.
    expect(runtime).toMatch(/METRICS_PORT=9464/);
  });
});

describe('the secret scan these checks rely on', () => {
  it('flags keys, tokens and unmarked passwords, and passes placeholders', () => {
    expect(looksLikeRealSecret('-----BEGIN PRIVATE KEY-----\\nMIGH...')).toBe('a PEM block');
    expect(looksLikeRealSecret(`pk_${randomBytes(24).toString('base64url')}`)).toMatch(/random-looking/);
    expect(looksLikeRealSecret('postgres://app:hunter2@db:5432/chests')).toMatch(/placeholder/);
    expect(looksLikeRealSecret('postgres://ccs_app:CHANGE_ME@postgres.example.internal:5432/chests')).toBeUndefined();
    expect(looksLikeRealSecret('demo_dev_key_change_me_0000')).toBeUndefined();
  });
});
