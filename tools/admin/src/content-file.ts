import { statSync } from 'node:fs';
import { encodeJson, readContentFile, type AppContent } from '@ccs/shared';
import { AdminFailure, type AdminContext } from './output.js';
import { formatBytes } from './table.js';

// Room left in a NATS message for the request's headers and envelope.
const ENVELOPE_BYTES = 4096;

/**
 * Reads and validates a content file with progress lines (size, then what it holds), and checks
 * that it fits in one NATS message: a content load travels as one request and one JetStream message.
 */
export function loadContentFile(c: AdminContext, file: string): AppContent {
  let size: number;
  try {
    size = statSync(file).size;
  } catch {
    throw new AdminFailure(`Cannot read ${file}: no such file.`);
  }
  c.io.progress(`Reading ${file} (${formatBytes(size)})…`);
  let content: AppContent;
  try {
    content = readContentFile(file);
  } catch (err) {
    if (err instanceof SyntaxError) throw new AdminFailure(`${file} is not valid JSON: ${err.message}`);
    throw err;
  }
  const collectibles = content.collections.reduce((n, col) => n + col.collectibles.length, 0);
  c.io.progress(
    `Valid: ${content.currencies.length} currencies, ${content.rarities.length} rarities, ${content.collections.length} collections ` +
      `(${collectibles} collectibles), ${content.chests.length} chest types.`,
  );
  const bytes = encodeJson(content).length + ENVELOPE_BYTES;
  if (bytes > c.maxPayload) {
    throw new AdminFailure(
      `The content is ${formatBytes(bytes)} as a message, above the ${formatBytes(c.maxPayload)} NATS accepts (max_payload): ` +
        'raise max_payload in the NATS server configuration (e.g. "max_payload: 8MB") and retry.',
    );
  }
  return content;
}
