/**
 * Who may publish and subscribe to what on NATS: one user per process kind (the five services,
 * the gateway, the admin CLI, the grants stream's keeper), each with allow-lists derived from the
 * contracts in `../contracts` (each subject declares its callers, `defineSubject(…, { callers })`;
 * each grant and notice its publishers and listeners, `defineEvent(…, { publishers, listeners })`)
 * and from what the runtime really does (health subjects, the Service API, inboxes, JetStream).
 *
 * `scripts/nats-permissions.ts` writes them (rendered by `./nats-server-conf.ts`) as
 * `deploy/nats/nats-server.conf` (compose, the dev cluster) and as the `authorization` block of
 * `deploy/nats/values-production.yaml` (the Helm chart); test/ops/nats-permissions.test.ts fails
 * when either file differs from what this module generates, when a contract subject is not
 * covered by the right role, or when a process calls a subject its role may not. The shipped
 * files assume NATS_PREFIX is empty (one stack per NATS); `npx tsx scripts/nats-permissions.ts
 * --prefix <p>` renders them for a prefix.
 */
import * as contracts from '../contracts/index.js';
import type { EventContract, SubjectContract } from '../contracts/subject.js';
import { inboxPrefixOf } from '../runtime/nats-auth.js';
import { healthSubject } from '../runtime/service.js';
import { prefixed, streamName } from '../runtime/subjects.js';

export const SERVICE_ROLES = ['players', 'wallet', 'chests', 'collections', 'egress', 'store'] as const;
/**
 * `streams`: the grants stream's keeper (`npm run admin -- keep-grants`), the one user that may
 * create or reconfigure the stream and purge what every consumer acknowledged. No service may.
 */
export const NATS_ROLES = [...SERVICE_ROLES, 'gateway', 'admin', 'streams'] as const;
export type ServiceRole = (typeof SERVICE_ROLES)[number];
export type NatsRole = (typeof NATS_ROLES)[number];

/** Services that wait for their own grants to be applied (an AppliedNotices subscription). */
export const NOTICE_WAITERS: readonly ServiceRole[] = ['players', 'chests', 'store', 'collections'];

/** Services with durable consumers on the grants stream (they ack, and publish applied notices). */
export const GRANT_CONSUMERS: readonly ServiceRole[] = ['players', 'wallet', 'chests', 'collections', 'egress', 'store'];

/** The service that answers a subject (`<service>.v1.<name>`). */
export const responderOf = (subject: string): string => subject.split('.')[0]!;

/** Admin subjects (`<service>.v<N>.admin_*`): the operator's, called by the admin CLI or the gateway's admin API only. */
export const isAdminSubject = (subject: string): boolean => /^[a-z]+\.v\d+\.admin_/.test(subject);

const isSubjectContract = (v: unknown): v is SubjectContract =>
  typeof v === 'object' && v !== null && 'subject' in v && 'request' in v && 'reply' in v && 'callers' in v;
const isEventContract = (v: unknown): v is EventContract =>
  typeof v === 'object' && v !== null && 'subject' in v && 'payload' in v && !('request' in v);

/**
 * Every request-reply contract the stack answers, by subject: the contracts exported by
 * `../contracts`, each service's health subject (the runtime's) and the admin content-version
 * subject of the content services.
 */
export function requestContracts(): SubjectContract[] {
  const all = new Map<string, SubjectContract>();
  const add = (c: SubjectContract) => all.set(c.subject, c);
  for (const v of Object.values(contracts)) if (isSubjectContract(v)) add(v);
  for (const s of SERVICE_ROLES) add(healthSubject(s));
  for (const s of contracts.CONTENT_SERVICES) add(contracts.adminContentVersion(s));
  return [...all.values()].sort((a, b) => (a.subject < b.subject ? -1 : 1));
}

/** Every request-reply subject the stack answers, sorted. */
export const requestSubjects = (): string[] => requestContracts().map((c) => c.subject);

/** Every message kind exported by `../contracts` (grants and notices), one per subject, sorted. */
function eventContracts(): EventContract[] {
  const all = new Map<string, EventContract>();
  for (const v of Object.values(contracts as Record<string, unknown>)) if (isEventContract(v)) all.set(v.subject, v);
  return [...all.values()].sort((a, b) => (a.subject < b.subject ? -1 : 1));
}

/** Every event contract's subject (grants and notices), sorted. */
export const eventSubjects = (): string[] => eventContracts().map((e) => e.subject);

/** The roles of `among` that `declared` names, in the order of `among`. */
const inRoleOrder = <R extends NatsRole>(declared: readonly string[] | undefined, among: readonly R[]): R[] =>
  among.filter((r) => (declared ?? []).includes(r));

/** Who publishes a message kind, as its contract declares; a contract of the stack without publishers is refused. */
function publishersOf(e: EventContract): ServiceRole[] {
  if (!e.publishers?.length) throw new Error(`${e.subject} declares no publishers: defineEvent(subject, payload, { publishers })`);
  return inRoleOrder(e.publishers, SERVICE_ROLES);
}

/** Durable grants (JetStream, under `grants.`): which services publish each (their outboxes), from the contracts. */
export const GRANT_PRODUCERS: Readonly<Record<string, readonly ServiceRole[]>> = Object.fromEntries(
  eventContracts()
    .filter((e) => e.subject.startsWith('grants.'))
    .map((e) => [e.subject, publishersOf(e)]),
);

/** Core-NATS notices (`events.`, not durable): who publishes and who listens, from the contracts. */
export const NOTICES: Readonly<Record<string, { publishers: readonly ServiceRole[]; listeners: readonly NatsRole[] }>> = Object.fromEntries(
  eventContracts()
    .filter((e) => e.subject.startsWith('events.'))
    .map((e) => [e.subject, { publishers: publishersOf(e), listeners: inRoleOrder(e.listeners, NATS_ROLES) }]),
);

/** Who may call a request subject: the callers its contract declares, in NATS_ROLES order. */
export function callersOf(subject: string): readonly NatsRole[] {
  const contract = requestContracts().find((c) => c.subject === subject);
  if (!contract) throw new Error(`no contract declares ${subject}`);
  return inRoleOrder(contract.callers, NATS_ROLES);
}

/** One user's allow-lists (subjects as NATS sees them, prefix applied). */
export interface RolePermissions {
  publish: string[];
  subscribe: string[];
  /** May answer the requests it receives (publish once to their reply subject). */
  allowResponses: boolean;
}

/**
 * Durable consumers on the grants stream: the service that owns each and the one subject it
 * filters. A service may create, read, pull from and ack only its own (with that filter pinned in
 * the create subject, so it cannot widen its durable to other grants), never another's.
 */
export const DURABLE_CONSUMERS: Readonly<Record<string, { service: ServiceRole; subject: string }>> = {
  [contracts.DURABLE.collectionsOpenings]: { service: 'collections', subject: 'grants.openings.granted' },
  [contracts.DURABLE.collectionsSparks]: { service: 'collections', subject: 'grants.sparks.granted' },
  'collections-app-content': { service: 'collections', subject: 'grants.apps.content' },
  [contracts.DURABLE.walletCreditGrants]: { service: 'wallet', subject: 'grants.wallet.credit' },
  [contracts.DURABLE.walletContent]: { service: 'wallet', subject: 'grants.apps.content' },
  [contracts.DURABLE.playersExperience]: { service: 'players', subject: 'grants.openings.granted' },
  [contracts.DURABLE.chestsGrants]: { service: 'chests', subject: 'grants.chests.grant' },
  [contracts.DURABLE.chestsContent]: { service: 'chests', subject: 'grants.apps.content' },
  [contracts.DURABLE.storeContent]: { service: 'store', subject: 'grants.apps.content' },
  [contracts.DURABLE.walletStoreRefunds]: { service: 'wallet', subject: 'grants.store.refund' },
  [contracts.DURABLE.chestsStoreRefunds]: { service: 'chests', subject: 'grants.store.refund' },
  // The webhook fan-out: the egress worker, which sends webhooks, owns these.
  [contracts.DURABLE.webhookEvents]: { service: 'egress', subject: 'grants.events' },
  [contracts.DURABLE.webhookOpenings]: { service: 'egress', subject: 'grants.openings.granted' },
  [contracts.DURABLE.webhookSparks]: { service: 'egress', subject: 'grants.sparks.granted' },
};

/** A service's own durable consumer names (without prefix). */
export const durablesOf = (role: NatsRole): string[] =>
  Object.entries(DURABLE_CONSUMERS)
    .filter(([, d]) => d.service === role)
    .map(([name]) => name);

/** The retired names of a service's durables (contracts.RETIRED_DURABLES: it reads and deletes them once it took them over). */
export const retiredDurablesOf = (role: NatsRole): string[] =>
  Object.entries(contracts.RETIRED_DURABLES)
    .filter(([, now]) => DURABLE_CONSUMERS[now]?.service === role)
    .map(([old]) => old);

/**
 * JetStream API calls a service makes, and nothing else: read the account and the grants stream,
 * create the stream when it is missing (CREATE cannot change an existing stream: a different
 * configuration is refused by the server), and create, update, read and pull its OWN durable
 * consumers (exact names, the filter subject pinned); read and delete the retired names of its
 * own durables (the handover to their new names). No purge, delete or update of the stream, no
 * other service's durable, no message get, no consumer listing.
 */
export function jetStreamApi(prefix: string, role: ServiceRole): string[] {
  const stream = streamName(prefix, 'GRANTS');
  return [
    '$JS.API.INFO',
    `$JS.API.STREAM.INFO.${stream}`,
    `$JS.API.STREAM.CREATE.${stream}`,
    ...durablesOf(role).flatMap((d) => {
      const durable = streamName(prefix, d);
      return [
        `$JS.API.CONSUMER.CREATE.${stream}.${durable}.${prefixed(prefix, DURABLE_CONSUMERS[d]!.subject)}`,
        `$JS.API.CONSUMER.INFO.${stream}.${durable}`,
        `$JS.API.CONSUMER.MSG.NEXT.${stream}.${durable}`,
      ];
    }),
    ...retiredDurablesOf(role).flatMap((d) => [
      `$JS.API.CONSUMER.INFO.${stream}.${streamName(prefix, d)}`,
      `$JS.API.CONSUMER.DELETE.${stream}.${streamName(prefix, d)}`,
    ]),
  ];
}

/** The acknowledgements of a service's own durables (`$JS.ACK.<stream>.<durable>.>`). */
export function jetStreamAcks(prefix: string, role: ServiceRole): string[] {
  const stream = streamName(prefix, 'GRANTS');
  return durablesOf(role).map((d) => `$JS.ACK.${stream}.${streamName(prefix, d)}.>`);
}

/**
 * The grants stream's keeper (`streams`): ensures the stream (create, raise its replicas) and
 * purges what every consumer acknowledged (it lists the consumers and reads message times).
 * It publishes and consumes no grant.
 */
export function streamsKeeperApi(prefix: string): string[] {
  const stream = streamName(prefix, 'GRANTS');
  return [
    '$JS.API.INFO',
    `$JS.API.STREAM.INFO.${stream}`,
    `$JS.API.STREAM.CREATE.${stream}`,
    `$JS.API.STREAM.UPDATE.${stream}`,
    `$JS.API.STREAM.PURGE.${stream}`,
    `$JS.API.STREAM.MSG.GET.${stream}`,
    `$JS.API.CONSUMER.LIST.${stream}`,
  ];
}

const uniq = (xs: string[]) => [...new Set(xs)];

/** The allow-lists of every role for a stack's NATS_PREFIX. */
export function natsPermissions(prefix = ''): Record<NatsRole, RolePermissions> {
  const p = (s: string) => prefixed(prefix, s);
  const subjects = requestSubjects();
  const callable = requestContracts();
  const calls = (role: NatsRole) => callable.filter((c) => (c.callers as readonly string[]).includes(role)).map((c) => p(c.subject));
  const notices = (role: NatsRole, side: 'publishers' | 'listeners') =>
    Object.entries(NOTICES)
      .filter(([, n]) => (n[side] as readonly string[]).includes(role))
      .map(([s]) => p(s));
  const out = {} as Record<NatsRole, RolePermissions>;
  for (const svc of SERVICE_ROLES) {
    const consumes = GRANT_CONSUMERS.includes(svc);
    out[svc] = {
      publish: uniq([
        ...calls(svc),
        ...Object.entries(GRANT_PRODUCERS)
          .filter(([, by]) => by.includes(svc))
          .map(([s]) => p(s)),
        ...notices(svc, 'publishers'),
        ...(consumes ? [p('notify.>'), p('applied.>'), ...jetStreamAcks(prefix, svc)] : []),
        ...jetStreamApi(prefix, svc),
      ]),
      subscribe: uniq([
        ...subjects.filter((s) => responderOf(s) === svc).map(p),
        // The Service API's discovery (PING, INFO, STATS) and the replies to this process's calls
        // (in its own inbox: no other user may read them).
        '$SRV.>',
        `${inboxPrefixOf(svc)}.>`,
        ...(NOTICE_WAITERS.includes(svc) ? [p('notify.>')] : []),
        ...notices(svc, 'listeners'),
      ]),
      allowResponses: true,
    };
  }
  out.gateway = {
    publish: calls('gateway'),
    subscribe: [`${inboxPrefixOf('gateway')}.>`, ...notices('gateway', 'listeners')],
    allowResponses: false,
  };
  out.admin = { publish: calls('admin'), subscribe: [`${inboxPrefixOf('admin')}.>`], allowResponses: false };
  out.streams = { publish: streamsKeeperApi(prefix), subscribe: [`${inboxPrefixOf('streams')}.>`], allowResponses: false };
  return out;
}

/** The environment variable holding a role's password (the NATS server and the process read it). */
export const passwordVariable = (role: NatsRole): string => `NATS_PASSWORD_${role.toUpperCase()}`;
