import { execFile } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminExportStore, AppError } from '@ccs/shared';
import {
  appleGems,
  googleGems,
  newPlayer,
  postAppleNotification,
  startStoreStack,
  submitApple,
  submitGoogle,
  type StoreStack,
} from '../../../test/support/store/store-stack.js';
import { runAdminIn } from './support/run-admin.js';

const VERIFY = fileURLToPath(new URL('../../../scripts/verify-opening.mjs', import.meta.url));

/** scripts/verify-opening.mjs --audit <dir> as an auditor runs it: exit code, stdout, stderr. */
function verifyAudit(dir: string): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [VERIFY, '--audit', dir], (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, out: stdout, err: stderr }),
    );
  });
}

const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');
const lines = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown> & { refunds: Record<string, unknown>[] });

/** A copy of the export whose store-transactions.jsonl is rewritten by `change` (and its SHA-256 in the manifest, unless told not to). */
function forged(from: string, to: string, change: (text: string) => string, { updateManifest = true } = {}) {
  cpSync(from, to, { recursive: true });
  const file = path.join(to, 'store-transactions.jsonl');
  writeFileSync(file, change(readFileSync(file, 'utf8')));
  if (!updateManifest) return;
  const manifest = JSON.parse(readFileSync(path.join(to, 'manifest.json'), 'utf8'));
  manifest.files['store-transactions.jsonl'].sha256 = sha256(file);
  writeFileSync(path.join(to, 'manifest.json'), JSON.stringify(manifest, null, 2));
}

/**
 * The auditor's export of store transactions (npm run admin -- export-audit): an App Store
 * purchase refunded by Apple and a Google Play purchase, exported with their refunds into
 * store-transactions.jsonl, listed in the manifest and checked by verify-opening.mjs --audit.
 */
describe("the auditor's export: store transactions", () => {
  let s: StoreStack;
  let root: string;
  let exported: string;
  let appleTransaction: string;
  let googleOrder: string;
  const start = new Date(Date.now() - 1000).toISOString();

  beforeAll(async () => {
    s = await startStoreStack();
    root = mkdtempSync(path.join(tmpdir(), 'ccs-audit-store-'));
    const ada = await newPlayer(s);
    const jws = await appleGems(s, ada.id);
    const bought = await submitApple(s, ada.token, jws);
    expect(bought.statusCode, bought.body).toBe(201);
    appleTransaction = bought.json().data.attributes.transaction_id;
    const refund = await postAppleNotification(s, await s.pki.signNotification({ notificationType: 'REFUND', signedTransactionInfo: jws }));
    expect(refund.json().meta.outcome).toBe('applied');
    const bob = await newPlayer(s);
    const google = googleGems(s, bob.id, { price: '4.99', currency: 'EUR' });
    const granted = await submitGoogle(s, bob.token, 'gems_500', google.token);
    expect(granted.statusCode, granted.body).toBe(201);
    googleOrder = google.orderId!;
    exported = path.join(root, 'export');
    const to = new Date(Date.now() + 60_000).toISOString();
    const r = await runAdminIn(s.stack, ['export-audit', '--app', s.appId, '--from', start, '--to', to, '--out', exported]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain('and 2 store transaction(s) (1 refund(s) and reversal(s))');
  }, 120_000);
  afterAll(async () => {
    rmSync(root, { recursive: true, force: true });
    await s?.close();
  });

  it('writes each transaction of the period with its refunds, listed in the manifest; the verifier checks it and passes', async () => {
    const file = path.join(exported, 'store-transactions.jsonl');
    const manifest = JSON.parse(readFileSync(path.join(exported, 'manifest.json'), 'utf8'));
    expect(manifest).toMatchObject({
      format: 'ccs-audit-export/2',
      counts: { store_transactions: 2, store_refunded: 1, store_refunds: 1 },
      files: { 'store-transactions.jsonl': { sha256: sha256(file), lines: 2 } },
    });
    const byTransaction = new Map(lines(file).map((l) => [l.transaction_id, l]));
    expect(byTransaction.get(appleTransaction)).toMatchObject({
      platform: 'apple',
      product_id: 'gems-500',
      store_product_id: 'com.example.chests.gems_500',
      environment: 'Sandbox',
      price: { amount: '4.99', currency: 'USD' },
      state: 'refunded',
      refunded_at: expect.any(String),
      granted: { currencies: [{ currency: 'gems', amount: '500' }], chests: [] },
      refunds: [{ kind: 'refund', reason: 'REFUND', policy: 'revoke_then_debt', currencies: [{ currency: 'gems', amount: '500' }], chest_ids: [] }],
    });
    expect(byTransaction.get(googleOrder)).toMatchObject({
      platform: 'google',
      state: 'granted',
      price: { amount: '4.99', currency: 'EUR' },
      refunds: [],
    });

    const v = await verifyAudit(exported);
    expect(v.code, v.out + v.err).toBe(0);
    expect(v.out).toContain('manifest: 4 files, SHA-256 as listed');
    // Not openings: nothing of them is counted unverifiable.
    expect(v.out).toMatch(/openings: 0\n {2}verified: 0\n {2}unverifiable \(seed not revealed\): 0\n {2}mismatched: 0\n/);
    expect(v.out).toContain('store transactions: 2, 1 refunded now; 1 refunds, 0 reversals; each once, states agree with refunds\n');
  });

  it('refuses a store file changed after the export, and transactions that do not hold even with the manifest rewritten', async () => {
    const edited = path.join(root, 'edited');
    forged(exported, edited, (t) => t.replace('"refunded"', '"granted"'), { updateManifest: false });
    const refused = await verifyAudit(edited);
    expect(refused.code).toBe(1);
    expect(refused.out).toBe('manifest: refused: 1 file(s) not as the manifest says\n');
    expect(refused.err).toContain("store-transactions.jsonl: SHA-256 is not the manifest's (the file changed after the export)");

    // A refund hidden (the state left refunded), and a transaction granted twice.
    const hidden = path.join(root, 'hidden');
    forged(exported, hidden, (t) =>
      t
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.stringify({ ...JSON.parse(l), refunds: [] }) + '\n')
        .join(''),
    );
    const v = await verifyAudit(hidden);
    expect(v.code).toBe(1);
    expect(v.out).toContain('store transactions: 2, 0 refunded now; 0 refunds, 0 reversals; 1 not as they should be');
    expect(v.err).toContain(`apple transaction ${appleTransaction} is refunded, but its refunds say granted (last: none)`);
    const twice = path.join(root, 'twice');
    forged(exported, twice, (t) => t + t.split('\n')[0] + '\n');
    const w = await verifyAudit(twice);
    expect(w.code).toBe(1);
    expect(w.out).toContain('store transactions: 3 (the manifest counts 2)');
    expect(w.err).toContain('appears twice: a store transaction grants once');
  });

  it('exports none for a period without transactions, and still verifies', async () => {
    const dir = path.join(root, 'empty');
    const r = await runAdminIn(s.stack, ['export-audit', '--app', s.appId, '--from', '2020-01-01', '--to', '2020-01-31', '--out', dir, '--json']);
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ counts: { store_transactions: 0, store_refunds: 0 } });
    expect(readFileSync(path.join(dir, 'store-transactions.jsonl'), 'utf8')).toBe('');
    const v = await verifyAudit(dir);
    expect(v.code, v.out + v.err).toBe(0);
    expect(v.out).toContain('store transactions: 0, 0 refunded now');
  });

  it('refuses a period that is not two times with their offsets (400), never failing inside', async () => {
    const unchecked = s.stack.bus.withOptions({ validateRequests: false });
    for (const period of [
      { from: 'yesterday', to: new Date().toISOString() },
      { from: '2026-01-01T00:00:00Z', to: '2026-02-01' },
      { from: '2026-01-01T00:00:00', to: '2026-02-01T00:00:00Z' },
    ]) {
      const err = await unchecked
        .request(AdminExportStore, { appId: s.appId, ...period, limit: 10 }, { requestId: randomUUID() })
        .catch((e: unknown) => e);
      expect(err, JSON.stringify(period)).toBeInstanceOf(AppError);
      expect([(err as AppError).kind, (err as AppError).code]).toEqual(['bad_request', 'invalid_message']);
    }
  });
});
