import { createHash } from 'node:crypto';

// Fixed namespace of chest type ids (a random v4 chosen once for this project).
const NAMESPACE = Buffer.from('6f1c2b7e4a9d4c1f8e3b5a7d9c0e2f41', 'hex');

/**
 * The id of a chest type: a name-based UUID (RFC 4122 version 5) of the app and the slug, so
 * reloading content, on any replica, keeps every chest type's id.
 */
export function chestTypeId(appId: string, slug: string): string {
  const hash = createHash('sha1').update(NAMESPACE).update(`${appId}:${slug}`).digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
