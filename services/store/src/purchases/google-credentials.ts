import { parseServiceAccountKey, type ServiceAccountKey } from '../google/index.js';
import type { StoreDeps } from '../deps.js';
import { findGoogleCredentials, saveGoogleCredentials } from '../repositories/credentials-repo.js';
import { InvalidServiceAccountKeyError } from '../google/index.js';
import { storeErrors } from '../errors.js';

/** Each app's unsealed key, by app, while its stored row is unchanged. */
const unsealed = new Map<string, { updatedAt: number; key: ServiceAccountKey }>();

/** The app's Google service-account key, or undefined when the studio has set none. */
export async function googleCredentialsOf(deps: Pick<StoreDeps, 'pool' | 'cipher'>, appId: string): Promise<ServiceAccountKey | undefined> {
  const row = await findGoogleCredentials(deps.pool, appId);
  if (!row) return undefined;
  const known = unsealed.get(appId);
  if (known && known.updatedAt === row.updatedAt.getTime()) return known.key;
  const key = parseServiceAccountKey((await deps.cipher.open(row.sealedKey)).toString('utf8'));
  if (unsealed.size >= 1000) unsealed.delete(unsealed.keys().next().value!);
  unsealed.set(appId, { updatedAt: row.updatedAt.getTime(), key });
  return key;
}

/** Checks and stores (sealed) an app's key file; answers the service account's email, the only part ever shown. */
export async function setGoogleCredentials(deps: Pick<StoreDeps, 'pool' | 'cipher'>, appId: string, file: unknown): Promise<string> {
  let key: ServiceAccountKey;
  try {
    key = parseServiceAccountKey(file);
  } catch (err) {
    if (err instanceof InvalidServiceAccountKeyError) throw storeErrors.credentialsInvalid(err.problems.join('; '));
    throw err;
  }
  const sealedKey = await deps.cipher.seal(Buffer.from(JSON.stringify(key.toKeyFile()), 'utf8'));
  await saveGoogleCredentials(deps.pool, appId, { clientEmail: key.clientEmail, privateKeyId: key.privateKeyId, sealedKey });
  return key.clientEmail;
}
