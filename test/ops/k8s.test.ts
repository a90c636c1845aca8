/**
 * Each of the seven services as deploy/k8s renders it (base, dev and production overlays, via
 * `kubectl kustomize`): a Deployment running the image's entry point, probes on the port its
 * container really listens on, requests and limits, a non-root read-only pod, a grace period
 * longer than its shutdown, an HPA and a PDB of its own, migrations before start, and a
 * configuration the service's own schema accepts. No cluster needed.
 */
import { describe, expect, it } from 'vitest';
import { GatewayConfigSchema } from '../../services/gateway/src/config.js';
import { PlayersConfigSchema } from '../../services/players/src/config.js';
import { WalletConfigSchema } from '../../services/wallet/src/config.js';
import { ChestsConfigSchema } from '../../services/chests/src/config.js';
import { CollectionsConfigSchema } from '../../services/collections/src/config.js';
import { EgressConfigSchema } from '../../services/egress/src/config.js';
import { StoreConfigSchema } from '../../services/store/src/config.js';
import {
  appContainer,
  bytes,
  DataObject,
  deployment,
  environmentOf,
  find,
  Hpa,
  KService,
  millicores,
  ofKind,
  OVERLAYS,
  Pdb,
  rendered,
  selects,
  SERVICES,
  type Overlay,
  type ServiceName,
  kustomizeUnavailable,
} from '../support/k8s-manifests.js';
import { looksLikeRealSecret } from '../support/secret-scan.js';

const SCHEMAS = {
  gateway: GatewayConfigSchema,
  players: PlayersConfigSchema,
  wallet: WalletConfigSchema,
  chests: ChestsConfigSchema,
  collections: CollectionsConfigSchema,
  egress: EgressConfigSchema,
  store: StoreConfigSchema,
};
/** The port each service serves its probes and /metrics on (docs/guide.md, "Configuration": PORT, HEALTH_PORT). */
const PROBE_PORT: Record<ServiceName, number> = {
  gateway: 3000,
  players: 8081,
  wallet: 8081,
  chests: 8081,
  collections: 8081,
  egress: 8081,
  store: 8081,
};
const PROBE_PATHS: Record<'gateway' | 'backend', { liveness: string; readiness: string }> = {
  gateway: { liveness: '/healthz', readiness: '/readyz' },
  backend: { liveness: '/livez', readiness: '/readyz' },
};
/** The services' own shutdown bound (runMain and the gateway's main force an exit after it). */
const SHUTDOWN_BOUND_S = 25;

describe.skipIf(kustomizeUnavailable).each(Object.keys(OVERLAYS) as Overlay[])(
  `deploy/k8s %s${kustomizeUnavailable ? ` (skipped: ${kustomizeUnavailable})` : ''}`,
  (overlay) => {
    const objs = rendered[overlay];

    it.each(SERVICES)('runs %s from the Dockerfile image with its own entry point', (name) => {
      const c = appContainer(deployment(objs, name), name);
      expect(c.command).toEqual(['node', `services/${name}/dist/main.js`]);
      expect(c.workingDir ?? '/app').toBe('/app');
      // One image for all seven, as the Dockerfile builds it.
      const images = new Set(SERVICES.map((s) => appContainer(deployment(objs, s), s).image));
      expect([...images]).toEqual([c.image]);
      expect(c.image).toMatch(/(^|\/)collectible-chests:[\w.-]+$/);
    });

    it.each(SERVICES)('gives %s liveness, readiness and startup probes on a port its container listens on', (name) => {
      const d = deployment(objs, name);
      const c = appContainer(d, name);
      // The gateway's metrics have their own port (METRICS_PORT), kept off the ingress.
      const metricsPort = name === 'gateway' ? 9464 : PROBE_PORT[name];
      expect(c.ports.map((p) => p.containerPort)).toEqual(name === 'gateway' ? [PROBE_PORT[name], metricsPort] : [PROBE_PORT[name]]);
      const paths = PROBE_PATHS[name === 'gateway' ? 'gateway' : 'backend'];
      for (const [probe, expected] of [
        ['livenessProbe', paths.liveness],
        ['readinessProbe', paths.readiness],
        ['startupProbe', paths.liveness],
      ] as const) {
        const p = c[probe];
        expect(p, `${name} ${probe}`).toBeDefined();
        const port = typeof p!.httpGet.port === 'number' ? p!.httpGet.port : c.ports.find((q) => q.name === p!.httpGet.port)?.containerPort;
        expect(port, `${name} ${probe} port`).toBe(PROBE_PORT[name]);
        expect(p!.httpGet.path).toBe(expected);
      }
      const env = environmentOf(objs, c);
      expect(Number(name === 'gateway' ? env.PORT : env.HEALTH_PORT)).toBe(PROBE_PORT[name]);
      if (name === 'gateway') expect(Number(env.METRICS_PORT)).toBe(metricsPort);
      const ann = d.spec.template.metadata.annotations;
      expect(ann).toMatchObject({ 'prometheus.io/scrape': 'true', 'prometheus.io/port': String(metricsPort), 'prometheus.io/path': '/metrics' });
    });

    it.each(SERVICES)('sets requests and limits on every %s container, requests within limits', (name) => {
      const d = deployment(objs, name);
      for (const c of [...d.spec.template.spec.initContainers, ...d.spec.template.spec.containers]) {
        expect(millicores(c.resources.requests.cpu)).toBeLessThanOrEqual(millicores(c.resources.limits.cpu));
        expect(bytes(c.resources.requests.memory)).toBeLessThanOrEqual(bytes(c.resources.limits.memory));
        expect(bytes(c.resources.limits.memory)).toBeGreaterThanOrEqual(128 * 1024 ** 2);
      }
    });

    it.each(SERVICES)("runs %s as the image's non-root user with a read-only root and no privileges", (name) => {
      const pod = deployment(objs, name).spec.template.spec;
      expect(pod.securityContext.seccompProfile?.type).toBe('RuntimeDefault');
      for (const c of [...pod.initContainers, ...pod.containers]) {
        const sc = { ...pod.securityContext, ...c.securityContext };
        expect(sc, c.name).toMatchObject({ runAsNonRoot: true, runAsUser: 1000, allowPrivilegeEscalation: false, readOnlyRootFilesystem: true });
        expect(sc.capabilities?.drop).toContain('ALL');
      }
    });

    it.each(SERVICES)('lets %s deregister, then drain within the termination grace period', (name) => {
      const d = deployment(objs, name);
      const preStop = appContainer(d, name).lifecycle?.preStop.exec.command ?? [];
      expect(preStop[0]).toBe('sleep');
      const sleep = Number(preStop[1]);
      expect(sleep).toBeGreaterThan(0);
      expect(d.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThan(sleep + SHUTDOWN_BOUND_S);
    });

    it.each(SERVICES)('scales %s with its own CPU-based HPA and bounds disruptions with a PDB', (name) => {
      const d = deployment(objs, name);
      const hpas = ofKind(objs, 'HorizontalPodAutoscaler')
        .map((o) => Hpa.parse(o))
        .filter((h) => h.spec.scaleTargetRef.name === name);
      expect(hpas).toHaveLength(1);
      const hpa = hpas[0]!;
      expect(hpa.spec.scaleTargetRef).toMatchObject({ apiVersion: 'apps/v1', kind: 'Deployment' });
      expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(1);
      expect(hpa.spec.maxReplicas).toBeGreaterThanOrEqual(hpa.spec.minReplicas);
      expect(hpa.spec.metrics).toContainEqual(expect.objectContaining({ type: 'Resource', resource: expect.objectContaining({ name: 'cpu' }) }));
      const labels = d.spec.template.metadata.labels;
      const pdbs = ofKind(objs, 'PodDisruptionBudget')
        .map((o) => Pdb.parse(o))
        .filter((p) => selects(p.spec.selector.matchLabels, labels));
      expect(pdbs).toHaveLength(1);
      // ...and that PDB selects no other service's pods.
      for (const other of SERVICES.filter((s) => s !== name)) {
        expect(selects(pdbs[0]!.spec.selector.matchLabels, deployment(objs, other).spec.template.metadata.labels)).toBe(false);
      }
      expect(selects(d.spec.selector.matchLabels, labels)).toBe(true);
    });

    it.each(SERVICES.filter((s) => s !== 'gateway'))('migrates the %s schema before the service starts, with the same configuration', (name) => {
      const d = deployment(objs, name);
      const migrate = d.spec.template.spec.initContainers.filter((c) => c.command.includes('--migrate-only'));
      expect(migrate).toHaveLength(1);
      const app = appContainer(d, name);
      expect(migrate[0]!.command).toEqual([...app.command, '--migrate-only']);
      expect(migrate[0]!.image).toBe(app.image);
      // --migrate-only loads the whole service config, so it needs the same variables.
      expect(environmentOf(objs, migrate[0]!)).toEqual(environmentOf(objs, app));
    });

    it.each(SERVICES)('gives %s a configuration it accepts, from the ConfigMap and the Secret', (name) => {
      const env = environmentOf(objs, appContainer(deployment(objs, name), name));
      const parsed = SCHEMAS[name].safeParse(env);
      expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
      // Production leaves NATS and Redis un-namespaced: one stack per NATS and Redis.
      expect(env.NATS_PREFIX).toBe('');
      expect(env.REDIS_PREFIX).toBe('');
      // Least privilege: only players gets the signing key, only chests the seed key, only store the
      // credentials key; the gateway gets no database.
      const declared = appContainer(deployment(objs, name), name).env.map((e) => e.name);
      expect(declared.includes('JWT_PRIVATE_KEY')).toBe(name === 'players');
      expect(declared.includes('FAIRNESS_SEED_KEY')).toBe(name === 'chests');
      expect(declared.includes('STORE_CREDENTIALS_KEY')).toBe(name === 'store');
      expect(declared.includes('DATABASE_URL')).toBe(name !== 'gateway');
    });

    it('sets only variables some service reads', () => {
      const known = new Set(Object.values(SCHEMAS).flatMap((s) => Object.keys(s.shape)));
      for (const cm of ofKind(objs, 'ConfigMap').map((o) => DataObject.parse(o))) {
        for (const key of Object.keys(cm.data)) expect(known.has(key) || key.startsWith('OTEL_'), `${cm.metadata.name}: ${key}`).toBe(true);
      }
    });

    it('exposes the gateway through a Service on its HTTP port', () => {
      const svc = KService.parse(find(objs, 'Service', 'gateway'));
      const d = deployment(objs, 'gateway');
      expect(selects(svc.spec.selector, d.spec.template.metadata.labels)).toBe(true);
      const target = svc.spec.ports[0]!.targetPort;
      const port = typeof target === 'number' ? target : appContainer(d, 'gateway').ports.find((p) => p.name === target)?.containerPort;
      expect(port).toBe(3000);
    });

    it('ships no real-looking secret', () => {
      for (const s of ofKind(objs, 'Secret').map((o) => DataObject.parse(o))) {
        for (const [key, value] of Object.entries(s.data)) {
          expect(looksLikeRealSecret(Buffer.from(value, 'base64').toString()), `${s.metadata.name}/${key}`).toBeUndefined();
        }
      }
      // The base and production never create the Secret: it comes from the cluster's secret store.
      if (overlay !== 'dev') expect(ofKind(objs, 'Secret')).toEqual([]);
    });
  },
);
