/**
 * Writes the NATS users and permissions (packages/shared/src/ops/nats-permissions.ts) into
 *   deploy/nats/nats-server.conf        (compose and the dev cluster: `nats-server -c`)
 *   deploy/nats/values-production.yaml  (the Helm chart: config.merge.authorization, between markers)
 *   deploy/k8s/overlays/dev/infra/nats-config.yaml  (the same file as a ConfigMap, for the dev cluster)
 *   npx tsx scripts/nats-permissions.ts               # rewrite both (NATS_PREFIX empty)
 *   npx tsx scripts/nats-permissions.ts --check        # exit 1 when either is out of date
 *   npx tsx scripts/nats-permissions.ts --prefix stage  # print the conf for a NATS_PREFIX instead
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { dump } from 'js-yaml';
import { GENERATED_NOTE, helmAuthorization, renderServerConf } from '../packages/shared/src/ops/nats-server-conf.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const CONF_FILE = `${ROOT}deploy/nats/nats-server.conf`;
export const VALUES_FILE = `${ROOT}deploy/nats/values-production.yaml`;
export const DEV_CONFIGMAP_FILE = `${ROOT}deploy/k8s/overlays/dev/infra/nats-config.yaml`;

/**
 * The dev cluster's copy of nats-server.conf (mounted by infra/nats.yaml). A Secret rather than a
 * ConfigMap: the overlay's ConfigMaps hold environment settings only (test/ops/k8s.test.ts). It
 * holds no password (they come from ccs-secrets). Not a kustomize generator, whose files must sit
 * under the overlay: restart the nats pod after it changes.
 */
export function devConfigMap(): string {
  const conf = `# dev-only copy of deploy/nats/nats-server.conf\n${renderServerConf()}`;
  const doc = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'nats-config', labels: { 'app.kubernetes.io/name': 'nats', 'app.kubernetes.io/part-of': 'collectible-chest-service' } },
    type: 'Opaque',
    data: { 'nats-server.conf': Buffer.from(conf).toString('base64') },
  };
  return `# ${GENERATED_NOTE}\n# nats-server.conf for the dev cluster (base64 of the file, with a dev-only marker line).\n${dump(doc, { lineWidth: -1 })}`;
}

export const BEGIN = '  # BEGIN GENERATED authorization';
export const END = '  # END GENERATED authorization';

/** values-production.yaml with its generated block (under `config:`) replaced by the current one. */
export function withHelmAuthorization(values: string, prefix = ''): string {
  const from = values.indexOf(BEGIN);
  const to = values.indexOf(END);
  if (from < 0 || to < from) throw new Error(`${VALUES_FILE}: no "${BEGIN.trim()}" … "${END.trim()}" block under config:`);
  const body = dump({ merge: { authorization: helmAuthorization(prefix) } }, { lineWidth: -1, noRefs: true })
    .trimEnd()
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n');
  return `${values.slice(0, from)}${BEGIN} (${GENERATED_NOTE})\n${body}\n${values.slice(to)}`;
}

function main(): number {
  const { values } = parseArgs({ options: { check: { type: 'boolean' }, prefix: { type: 'string' } } });
  if (values.prefix !== undefined) {
    process.stdout.write(renderServerConf(values.prefix));
    return 0;
  }
  const wanted = [
    [CONF_FILE, renderServerConf()],
    [VALUES_FILE, withHelmAuthorization(readFileSync(VALUES_FILE, 'utf8'))],
    [DEV_CONFIGMAP_FILE, devConfigMap()],
  ] as const;
  let stale = 0;
  for (const [file, text] of wanted) {
    const current = (() => {
      try {
        return readFileSync(file, 'utf8');
      } catch {
        return '';
      }
    })();
    if (current === text) continue;
    if (values.check) {
      console.error(`${file} is out of date: run npx tsx scripts/nats-permissions.ts`);
      stale++;
    } else {
      writeFileSync(file, text);
      console.log(`wrote ${file}`);
    }
  }
  return stale ? 1 : 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) process.exitCode = main();
