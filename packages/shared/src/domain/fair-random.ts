import { createHash, createHmac } from 'node:crypto';
import type { RandomSource } from './random.js';

/** Name of the algorithm, as the fairness endpoints and docs/fairness.md give it. */
export const FAIRNESS_ALGORITHM = 'hmac-sha256-48bit-v1';

/** Numbers taken from each 32-byte HMAC block: 5 × 6 bytes (the last 2 bytes are not used). */
const PER_BLOCK = 5;
const SCALE = 2 ** 48;

/**
 * The random stream of one opening (docs/fairness.md): block k is
 * HMAC-SHA256(key = the server seed's 32 bytes, message = `${clientSeed}:${nonce}:${k}`), k = 0, 1, …;
 * number i is bytes 6(i mod 5) .. 6(i mod 5)+5 of block floor(i / 5), read as a big-endian
 * 48-bit integer and divided by 2^48, so it lies in [0, 1).
 */
export function fairRandom(serverSeedHex: string, clientSeed: string, nonce: number): RandomSource {
  const key = Buffer.from(serverSeedHex, 'hex');
  let block = Buffer.alloc(0);
  let k = 0;
  let i = PER_BLOCK;
  return () => {
    if (i >= PER_BLOCK) {
      block = createHmac('sha256', key).update(`${clientSeed}:${nonce}:${k++}`).digest();
      i = 0;
    }
    return block.readUIntBE(6 * i++, 6) / SCALE;
  };
}

/** The commitment published before a server seed is used: SHA-256 of its 32 bytes, hex. */
export function seedCommitment(serverSeedHex: string): string {
  return createHash('sha256').update(Buffer.from(serverSeedHex, 'hex')).digest('hex');
}
