import {
  AdminDropInputs,
  AppError,
  buildDropTable,
  cryptoRandom,
  fairRandom,
  FAIRNESS_ALGORITHM,
  OddsSimulation,
  type RandomFor,
  type ReplyOf,
  type SimulationReport,
} from '@ccs/shared';
import { adminCall, AdminFailure, required, requiredAppId, UsageError, type AdminContext } from '../output.js';
import { renderSimulation } from './simulate-view.js';

/** Openings simulated when --opens is not given, and the most one run takes. */
export const DEFAULT_OPENS = 100_000;
export const MAX_OPENS = 10_000_000;
/** Openings per chunk: between chunks the event loop runs (NATS keeps its connection) and progress is shown. */
const CHUNK = 10_000;
/** Least time between two progress lines. */
const PROGRESS_EVERY_MS = 1000;
/** The client seed the seeded stream uses: opening i draws from fairRandom(seed, 'simulate', i). */
export const SIMULATE_CLIENT_SEED = 'simulate';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The chest simulated: what admin_drop_inputs answered. */
export type DropInputs = ReplyOf<typeof AdminDropInputs>;

/** The whole run as --json prints it (and the text view renders). */
export interface SimulationDocument extends SimulationReport {
  appId: string;
  chest: { id: string; slug: string; name: string; inCatalog: boolean; contentVersion: number };
  /** The seed given (hex), or null: cryptographic randomness, not reproducible. */
  seed: string | null;
  random: string;
  elapsedMs: number;
  /** The complete gachas this chest takes part in (docs/design.md §7), with what to change; empty: none. */
  completeGachas: NonNullable<DropInputs['completeGachas']>;
}

function parseOpens(text: string | undefined): number {
  if (text === undefined) return DEFAULT_OPENS;
  const n = /^\d+$/.test(text.replaceAll('_', '')) ? Number(text.replaceAll('_', '')) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < 1 || n > MAX_OPENS) throw new UsageError(`--opens takes a whole number from 1 to ${MAX_OPENS}, not "${text}"`);
  return n;
}

function parseSeed(text: string | undefined): string | null {
  if (text === undefined) return null;
  if (!/^(?:[0-9a-f]{2})+$/i.test(text)) throw new UsageError(`--seed takes hex bytes (an even number of 0-9a-f digits), not "${text}"`);
  return text.toLowerCase();
}

/** The chest's rules with the rarities and collectibles of their content version (chests service). */
async function dropInputs(c: AdminContext, appId: string, chest: string): Promise<DropInputs> {
  try {
    const named = UUID.test(chest) ? { chestTypeId: chest.toLowerCase() } : { slug: chest };
    return await c.bus.request(AdminDropInputs, { appId, ...named }, adminCall(), { timeoutMs: 5000 });
  } catch (err) {
    if (err instanceof AppError && (err.kind === 'unavailable' || err.kind === 'overloaded' || err.kind === 'timeout')) {
      throw new AdminFailure('No chests service answered: start the stack with `npm start`.');
    }
    if (err instanceof AppError && err.code === 'chest_not_found') {
      throw new AdminFailure(`${err.errors[0]!.detail} The chest is named by its id or its slug (the content's chest id).`);
    }
    throw err;
  }
}

/**
 * `simulate --app <id> --chest <id|slug> [--opens N] [--seed <hex>]`: opens the chest N times
 * with the production roll and pity code (packages/shared/src/domain/simulate.ts), the pity
 * counter carried from opening to opening, and prints observed against disclosed shares, the
 * chi-square test and the openings between pity hits. Progress goes to stderr.
 */
export async function simulateCommand(c: AdminContext, o: { app?: string; chest?: string; opens?: string; seed?: string }): Promise<number> {
  const appId = requiredAppId(o.app);
  const chest = required(o.chest, 'chest');
  const opens = parseOpens(o.opens);
  const seed = parseSeed(o.seed);
  const inputs = await dropInputs(c, appId, chest);
  const table = buildDropTable(inputs.rules, inputs.rarities, inputs.collectibles);
  const randomFor: RandomFor = seed ? (i) => fairRandom(seed, SIMULATE_CLIENT_SEED, i) : () => cryptoRandom;

  c.io.progress(`Simulating ${opens.toLocaleString('en-US')} openings of ${inputs.slug} (content version ${inputs.contentVersion})…`);
  const started = performance.now();
  let shown = started;
  const sim = new OddsSimulation(table, inputs.rarities);
  while (sim.done < opens) {
    sim.run(Math.min(CHUNK, opens - sim.done), randomFor);
    const now = performance.now();
    if (now - shown >= PROGRESS_EVERY_MS && sim.done < opens) {
      shown = now;
      c.io.progress(
        `  ${sim.done.toLocaleString('en-US')} / ${opens.toLocaleString('en-US')} (${Math.floor((100 * sim.done) / opens)}%, ${((now - started) / 1000).toFixed(1)} s)`,
      );
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  const elapsedMs = Math.round(performance.now() - started);
  c.io.progress(`  done: ${opens.toLocaleString('en-US')} openings in ${(elapsedMs / 1000).toFixed(1)} s`);

  const doc: SimulationDocument = {
    appId,
    chest: { id: inputs.chestTypeId, slug: inputs.slug, name: inputs.name, inCatalog: inputs.inCatalog, contentVersion: inputs.contentVersion },
    seed,
    random: seed ? `${FAIRNESS_ALGORITHM}: server seed = --seed, client seed "${SIMULATE_CLIENT_SEED}", nonce = opening index` : 'crypto',
    elapsedMs,
    ...sim.report(),
    completeGachas: inputs.completeGachas ?? [],
  };
  if (c.json) c.io.out(JSON.stringify(doc, null, 2));
  else for (const line of renderSimulation(doc)) c.io.out(line);
  return 0;
}
