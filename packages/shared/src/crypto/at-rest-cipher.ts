import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { Logger } from '../config/logger.js';

/**
 * Encrypts secrets a service keeps in its schema (AES-256-GCM), so that a reader of the database
 * (a replica, a backup, an analyst's query) cannot read them. The key is a setting (32 bytes,
 * base64 or hex; required under NODE_ENV=production). Without it (development), a key is
 * generated once and kept in the service's own schema through `stored`, which protects nothing
 * against a database reader; a warning says so at first use. Each ciphertext names its key
 * (`v1.<key id>.<iv>.<tag>.<data>`, base64url), so a value written under another key fails loudly
 * instead of decrypting to garbage.
 */
export class AtRestCipher {
  private key?: Promise<{ id: string; bytes: Buffer }>;

  constructor(
    private readonly opts: {
      /** The setting's value, if set. */
      configured: string | undefined;
      /** The setting's name, for messages. */
      setting: string;
      /** What is encrypted, for messages ("server seeds"). */
      what: string;
      /** The development key (base64): stored as `candidate` by the first replica that needs one, read by the others. */
      stored: (candidate: string) => Promise<string>;
      log: Logger;
    },
  ) {}

  /** Loads the key (from the setting, or the database the first time); call before opening a transaction that seals or opens. */
  async ready(): Promise<void> {
    await this.keyOf();
  }

  async seal(plain: Buffer): Promise<string> {
    const { id, bytes } = await this.keyOf();
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', bytes, iv);
    const data = Buffer.concat([cipher.update(plain), cipher.final()]);
    return ['v1', id, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), data.toString('base64url')].join('.');
  }

  async open(sealed: string): Promise<Buffer> {
    const { id, bytes } = await this.keyOf();
    const [version, keyId, iv, tag, data] = sealed.split('.');
    if (version !== 'v1' || !iv || !tag || !data) throw new Error(`a stored value (${this.opts.what}) has an unknown format`);
    if (keyId !== id)
      throw new Error(
        `a stored value (${this.opts.what}) was encrypted with key ${keyId}, not the configured ${id}: set ${this.opts.setting} to the key it was written with`,
      );
    const decipher = createDecipheriv('aes-256-gcm', bytes, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]);
  }

  private keyOf(): Promise<{ id: string; bytes: Buffer }> {
    this.key ??= this.load().catch((err) => {
      this.key = undefined;
      throw err;
    });
    return this.key;
  }

  private async load(): Promise<{ id: string; bytes: Buffer }> {
    const bytes = this.opts.configured ? parseAtRestKey(this.opts.configured, this.opts.setting) : await this.storedKey();
    return { id: createHash('sha256').update(bytes).digest('hex').slice(0, 12), bytes };
  }

  private async storedKey(): Promise<Buffer> {
    const key = await this.opts.stored(randomBytes(32).toString('base64'));
    this.opts.log.warn(
      `${this.opts.setting} is not set: ${this.opts.what} are encrypted with a key stored in the database, which does not hide them from its readers; set it in production`,
    );
    return Buffer.from(key, 'base64');
  }
}

/** 32 bytes given as 64 hex digits or base64. */
export function parseAtRestKey(value: string, setting: string): Buffer {
  const bytes = /^[0-9a-fA-F]{64}$/.test(value) ? Buffer.from(value, 'hex') : Buffer.from(value, 'base64');
  if (bytes.length !== 32) throw new Error(`${setting} must be 32 bytes, as 64 hex digits or base64 (e.g. \`openssl rand -base64 32\`)`);
  return bytes;
}
