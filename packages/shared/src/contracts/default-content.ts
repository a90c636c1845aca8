import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { AppContentSchema, type AppContent } from './content.js';

/** Path of the project's default content file, loaded into the demo app. */
export const DEFAULT_CONTENT_PATH = fileURLToPath(new URL('../../content/default.json', import.meta.url));

/** Reads and validates a content file; a bad file names the failing fields. */
export function readContentFile(path: string = DEFAULT_CONTENT_PATH): AppContent {
  const raw: unknown = JSON.parse(readFileSync(path, 'utf8'));
  const parsed = AppContentSchema.safeParse(raw);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`).join('\n');
    throw new Error(`Content file ${path} is invalid:\n${lines}`);
  }
  return parsed.data;
}
