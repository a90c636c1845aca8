import { randomFillSync } from 'node:crypto';

/** A source of uniform numbers in [0, 1). */
export type RandomSource = () => number;

const SCALE = 2 ** 48;
// Random bytes are fetched from the CSPRNG in blocks; each number uses 6 of them (48 bits).
const block = Buffer.alloc(6 * 1024);
let offset = block.length;

/** Crypto-grade uniform numbers in [0, 1) with 48 bits of resolution (node:crypto CSPRNG). */
export const cryptoRandom: RandomSource = () => {
  if (offset >= block.length) {
    randomFillSync(block);
    offset = 0;
  }
  const value = block.readUIntBE(offset, 6);
  offset += 6;
  return value / SCALE;
};
