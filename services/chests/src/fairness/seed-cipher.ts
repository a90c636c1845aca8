import { AtRestCipher, type Logger, type Queryable } from '@ccs/shared';
import { storedFairnessKey } from '../repositories/fairness-keys-repo.js';

/**
 * Encrypts server seeds at rest (AtRestCipher: AES-256-GCM under FAIRNESS_SEED_KEY, or a
 * development key kept in `fairness_keys`), so that a reader of the database cannot compute future
 * rolls from `player_seeds`. Seeds decrypted lately are remembered: a player opens many chests
 * with one seed pair.
 */
export class SeedCipher {
  private readonly cipher: AtRestCipher;
  /** Seeds decrypted lately: ciphertext → seed. */
  private readonly plain = new Map<string, string>();

  constructor(db: Queryable, configured: string | undefined, log: Logger) {
    this.cipher = new AtRestCipher({
      configured,
      setting: 'FAIRNESS_SEED_KEY',
      what: 'server seeds',
      stored: (candidate) => storedFairnessKey(db, 'default', candidate),
      log,
    });
  }

  /**
   * Loads the key (from the environment, or the database the first time): callers await it
   * before opening a transaction, because a transaction that waited for a pooled connection to
   * load the key could deadlock a busy pool (every connection held by a transaction waiting on
   * the same player's lock, the lock holder waiting for a connection).
   */
  ready(): Promise<void> {
    return this.cipher.ready();
  }

  encrypt(seedHex: string): Promise<string> {
    return this.cipher.seal(Buffer.from(seedHex, 'hex'));
  }

  async decrypt(sealed: string): Promise<string> {
    const hit = this.plain.get(sealed);
    if (hit) return hit;
    const seed = (await this.cipher.open(sealed)).toString('hex');
    if (this.plain.size >= 10_000) this.plain.delete(this.plain.keys().next().value!);
    this.plain.set(sealed, seed);
    return seed;
  }
}
