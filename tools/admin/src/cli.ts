import { parseArgs } from 'node:util';
import { AppError, type Bus } from '@ccs/shared';
import { createAppCommand } from './commands/create-app.js';
import { exportAuditCommand } from './commands/export-audit.js';
import { grantChestsCommand } from './commands/grant-chests.js';
import { listAppsCommand } from './commands/list-apps.js';
import { lockPlayerCommand } from './commands/lock-player.js';
import { loadContentCommand } from './commands/load-content.js';
import { openingsCommand } from './commands/openings.js';
import { rotateKeysCommand } from './commands/rotate-keys.js';
import { simulateCommand } from './commands/simulate.js';
import { statsCommand } from './commands/stats.js';
import { UsageError, type AdminContext, type AdminIo } from './output.js';
import {
  addWebhookCommand,
  listWebhooksCommand,
  removeWebhookCommand,
  retryDeliveryCommand,
  updateWebhookCommand,
  webhookDeliveriesCommand,
} from './commands/webhooks.js';

export const USAGE = `Usage: npm run admin -- <command> [options]

  list-apps                                   every app: id, name, content version, players, live keys
  create-app --name "My Game" [--content content.json]
                                              a new app with a publishable and a secret key (shown once)
  load-content --app <app id> --file content.json
                                              validate a content file, load it as the app's next version,
                                              and follow each service applying it
  rotate-keys --app <app id> [--kind publishable|secret] [--grace 24h | --now]
                                              new keys (shown once); old ones work for the grace period
                                              (default 24h, at most 30d) or stop at once with --now
  stats --app <app id>                        players, chests, openings, items, pending grants, balances,
                                              and each service's outbox and parked messages
  simulate --app <app id> --chest <chest id|slug> [--opens 100000] [--seed <hex>]
                                              open the chest many times with the production roll and
                                              pity code: observed against disclosed shares, chi-square,
                                              openings between pity hits (docs/content.md, "Odds simulator")
  grant-chests --app <app id> --player <player id|email> --chest <chest id|slug> [--quantity 1] [--reference <text>]
                                              give a player chests (compensation, events): to the inventory,
                                              or the mailbox when full; the same --reference grants once
                                              (grant-chest is the same command)
  lock-player --app <app id> --player <player id|email>
                                              lock a player out: every request with their token answers
                                              403 player_locked at once, and login and refresh too
  unlock-player --app <app id> --player <player id|email>
                                              lift the lock: their tokens and sessions work again
  openings --app <app id> --player <player id|email> [--limit 20] [--offset 0]
                                              a player's openings, newest first: items, rules version,
                                              seed commitment and nonce, pity before→after, conversions
  export-audit --app <app id> --from <date> --to <date> --out <dir>
                                              the auditor's export of a period [--from, --to): openings with
                                              their inputs and items (seeds where revealed), the rules they
                                              rolled, the odds log, the store transactions verified with
                                              their refunds, and a manifest of counts and SHA-256s;
                                              a date alone is UTC midnight (--to includes its day), or give
                                              2026-11-01T12:00:00Z; --out must be new or empty. Check it with
                                              node scripts/verify-opening.mjs --audit <dir> (docs/operations.md)
  webhooks --app <app id>                     the app's webhook endpoints and their deliveries by status
  add-webhook --app <app id> --url <url> [--events chest.opened,… | all] [--description <text>] [--disabled]
                                              a new endpoint; its signing secret is shown once (docs/webhooks.md)
  update-webhook --app <app id> --webhook <id> [--url <url>] [--events …] [--description <text>]
                 [--enable | --disable] [--rotate-secret]
  remove-webhook --app <app id> --webhook <id>
  webhook-deliveries --app <app id> --webhook <id> [--status pending|delivered|parked] [--limit 20] [--offset 0]
  retry-delivery --app <app id> --webhook <id> --delivery <id>
                                              send a (parked) delivery again now, with a new 24 h window

  keep-grants [--once]                        the grants stream's keeper (NATS user \`streams\`): creates the
                                              stream or raises its replicas, then purges what every consumer
                                              acknowledged every 10 minutes (docs/operations.md)

Options for every command: --json (one JSON document on stdout; progress stays on stderr).
create-app and load-content: --wait <seconds> (default 60) or --no-wait.
Talks to the running services over NATS (NATS_URL, NATS_PREFIX): start them first with \`npm start\`.`;

const OPTIONS = {
  name: { type: 'string' },
  content: { type: 'string' },
  app: { type: 'string' },
  chest: { type: 'string' },
  opens: { type: 'string' },
  seed: { type: 'string' },
  player: { type: 'string' },
  limit: { type: 'string' },
  quantity: { type: 'string' },
  reference: { type: 'string' },
  offset: { type: 'string' },
  file: { type: 'string' },
  kind: { type: 'string' },
  grace: { type: 'string' },
  now: { type: 'boolean' },
  json: { type: 'boolean' },
  wait: { type: 'string' },
  'no-wait': { type: 'boolean' },
  url: { type: 'string' },
  events: { type: 'string' },
  description: { type: 'string' },
  disabled: { type: 'boolean' },
  enable: { type: 'boolean' },
  disable: { type: 'boolean' },
  'rotate-secret': { type: 'boolean' },
  webhook: { type: 'string' },
  delivery: { type: 'string' },
  status: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  out: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

function parse(argv: string[]) {
  try {
    return parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message.split('. ')[0]! : String(err));
  }
}

function waitSeconds(v: { wait?: string; 'no-wait'?: boolean }): number {
  if (v['no-wait']) return 0;
  if (v.wait === undefined) return 60;
  if (!/^\d+$/.test(v.wait)) throw new UsageError(`--wait takes whole seconds, not "${v.wait}"`);
  return Number(v.wait);
}

async function dispatch(c: AdminContext, command: string | undefined, v: ReturnType<typeof parse>['values']): Promise<number> {
  switch (command) {
    case 'list-apps':
      return listAppsCommand(c);
    case 'create-app':
      return createAppCommand(c, { name: v.name, content: v.content, waitSeconds: waitSeconds(v) });
    case 'load-content':
      return loadContentCommand(c, { app: v.app, file: v.file, waitSeconds: waitSeconds(v) });
    case 'rotate-keys':
      return rotateKeysCommand(c, { app: v.app, kind: v.kind, grace: v.grace, now: v.now });
    case 'stats':
      return statsCommand(c, { app: v.app });
    case 'grant-chests':
    case 'grant-chest':
      return grantChestsCommand(c, { app: v.app, player: v.player, chest: v.chest, quantity: v.quantity, reference: v.reference });
    case 'lock-player':
      return lockPlayerCommand(c, { app: v.app, player: v.player }, true);
    case 'unlock-player':
      return lockPlayerCommand(c, { app: v.app, player: v.player }, false);
    case 'openings':
      return openingsCommand(c, { app: v.app, player: v.player, limit: v.limit, offset: v.offset });
    case 'simulate':
      return simulateCommand(c, { app: v.app, chest: v.chest, opens: v.opens, seed: v.seed });
    case 'export-audit':
      return exportAuditCommand(c, { app: v.app, from: v.from, to: v.to, out: v.out });
    case 'webhooks':
      return listWebhooksCommand(c, { app: v.app });
    case 'add-webhook':
      return addWebhookCommand(c, { app: v.app, url: v.url, events: v.events, description: v.description, disabled: v.disabled });
    case 'update-webhook':
      return updateWebhookCommand(c, v);
    case 'remove-webhook':
      return removeWebhookCommand(c, { app: v.app, webhook: v.webhook });
    case 'webhook-deliveries':
      return webhookDeliveriesCommand(c, { app: v.app, webhook: v.webhook, status: v.status, limit: v.limit, offset: v.offset });
    case 'retry-delivery':
      return retryDeliveryCommand(c, { app: v.app, webhook: v.webhook, delivery: v.delivery });
    default:
      throw new UsageError(command ? `unknown command "${command}"` : 'no command given');
  }
}

/** What failed, for an operator: one or a few lines, never a stack trace. */
function explain(err: unknown, prefix: string): string {
  if (err instanceof AppError) {
    if (err.kind === 'unavailable' || err.kind === 'overloaded' || err.kind === 'timeout') {
      const where = prefix ? `NATS prefix "${prefix}"` : 'no NATS prefix (NATS_PREFIX is unset)';
      return `No players service answered on ${where}: start the stack with \`npm start\`, or set NATS_PREFIX to the prefix the running stack uses.`;
    }
    if (err.code === 'app_not_found') return `${err.errors[0]!.detail ?? 'No such app.'} List the apps with: npm run admin -- list-apps`;
    return err.errors.map((e) => `${e.code}: ${e.detail ?? e.kind}`).join('\n');
  }
  return err instanceof Error ? err.message : String(err);
}

/**
 * Runs one admin command line against the services behind `bus`; returns the exit code: 0 done,
 * 1 failed (or a running service did not apply new content in time), 2 wrong usage.
 */
export async function runAdmin(argv: string[], deps: { bus: Bus; io: AdminIo; maxPayload: number }): Promise<number> {
  try {
    const { values, positionals } = parse(argv);
    if (values.help || positionals[0] === 'help') {
      deps.io.out(USAGE);
      return 0;
    }
    if (positionals.length > 1) throw new UsageError(`unexpected argument "${positionals[1]}"`);
    return await dispatch({ bus: deps.bus, io: deps.io, json: values.json ?? false, maxPayload: deps.maxPayload }, positionals[0], values);
  } catch (err) {
    if (err instanceof UsageError) {
      deps.io.progress(`${err.message}\n\n${USAGE}`);
      return 2;
    }
    deps.io.progress(explain(err, deps.bus.prefix));
    return 1;
  }
}
