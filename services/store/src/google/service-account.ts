import { createPrivateKey } from 'node:crypto';
import { inspect } from 'node:util';
import { z } from 'zod';

/**
 * A Google service account's JSON key file, as the Cloud console downloads it. Strict about what
 * the store uses (`type`, `client_email`, `private_key_id`, `private_key`, and `project_id` for
 * the console), lenient about the rest (`client_id`, `auth_uri`, `token_uri`, `universe_domain`...
 * pass through unchecked). `token_uri` is never called: the token endpoint is a setting
 * (STORE_GOOGLE_TOKEN_URL), so an uploaded file cannot point the service at another host.
 */
export const ServiceAccountKeyFileSchema = z.looseObject({
  type: z.literal('service_account', { error: 'must be "service_account"' }),
  project_id: z.string({ error: 'must be a string' }).min(1, 'must not be empty').max(200, 'is too long'),
  private_key_id: z
    .string({ error: 'must be a string' })
    .min(1, 'must not be empty')
    .max(200, 'is too long')
    .regex(/^[A-Za-z0-9_-]+$/, 'must be the key id Google generated (letters, digits, - and _)'),
  private_key: z.string({ error: 'must be a string' }).min(1, 'must not be empty').max(16_384, 'is too long'),
  client_email: z.email({ error: 'must be an email address' }).max(320, 'is too long'),
});

/** Why a key file was refused: each line names a field and what is wrong with it, never its value. */
export class InvalidServiceAccountKeyError extends Error {
  constructor(readonly problems: string[]) {
    super(`Not a usable Google service-account key file: ${problems.join('; ')}.`);
    this.name = 'InvalidServiceAccountKeyError';
  }
}

const REDACTED = '[service account key]';

/**
 * A parsed, checked service-account key. The private key stays in a private field: it never
 * appears in JSON.stringify, util.inspect, a log line or an error message; `privateKeyPem()` hands
 * it to the signer and `toKeyFile()` to whoever stores it (encrypted).
 */
export class ServiceAccountKey {
  readonly #privateKey: string;
  readonly clientEmail: string;
  readonly privateKeyId: string;
  readonly projectId: string;

  constructor(fields: { clientEmail: string; privateKeyId: string; projectId: string; privateKey: string }) {
    this.clientEmail = fields.clientEmail;
    this.privateKeyId = fields.privateKeyId;
    this.projectId = fields.projectId;
    this.#privateKey = fields.privateKey;
  }

  /** The PKCS#8 PEM private key, for signing. */
  privateKeyPem(): string {
    return this.#privateKey;
  }

  /** The fields the store uses, as a key file's JSON (what to encrypt and keep). */
  toKeyFile(): { type: 'service_account'; project_id: string; private_key_id: string; private_key: string; client_email: string } {
    return {
      type: 'service_account',
      project_id: this.projectId,
      private_key_id: this.privateKeyId,
      private_key: this.#privateKey,
      client_email: this.clientEmail,
    };
  }

  /** What may be shown: the account's email and the key's id. */
  toJSON(): { client_email: string; private_key_id: string; project_id: string } {
    return { client_email: this.clientEmail, private_key_id: this.privateKeyId, project_id: this.projectId };
  }

  [inspect.custom](): string {
    return `${REDACTED} ${this.clientEmail} (${this.privateKeyId})`;
  }
}

/** Checks that the PEM is an unencrypted PKCS#8 RSA private key of at least 2048 bits; a problem's text, or undefined. */
function privateKeyProblem(pem: string): string | undefined {
  if (!/^-----BEGIN PRIVATE KEY-----\r?\n[\s\S]+\r?\n-----END PRIVATE KEY-----\s*$/.test(pem.trim())) {
    return 'private_key: must be a PKCS#8 PEM private key ("-----BEGIN PRIVATE KEY-----"), as in the key file Google issues';
  }
  let key;
  try {
    key = createPrivateKey({ key: pem, format: 'pem' });
  } catch {
    return 'private_key: is not a readable private key';
  }
  if (key.asymmetricKeyType !== 'rsa') return 'private_key: must be an RSA key (Google signs service-account assertions with RS256)';
  const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
  if (bits < 2048) return 'private_key: an RSA key of at least 2048 bits is required';
  return undefined;
}

function issueLine(issue: z.core.$ZodIssue, raw: object): string {
  const field = issue.path.length ? issue.path.map(String).join('.') : 'the file';
  const top = issue.path[0];
  if (typeof top === 'string' && !Object.hasOwn(raw, top)) return `${field}: is missing`;
  return `${field}: ${issue.message}`;
}

/**
 * Parses a service-account key file (its JSON text or the parsed object) and checks its private
 * key. Throws InvalidServiceAccountKeyError naming every problem found; no message ever contains
 * a value from the file.
 */
export function parseServiceAccountKey(input: unknown): ServiceAccountKey {
  let raw = input;
  if (typeof input === 'string') {
    try {
      raw = JSON.parse(input);
    } catch {
      throw new InvalidServiceAccountKeyError(['the file is not JSON']);
    }
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new InvalidServiceAccountKeyError(['the file must be a JSON object (the key file Google issues)']);
  }
  const parsed = ServiceAccountKeyFileSchema.safeParse(raw);
  if (!parsed.success) throw new InvalidServiceAccountKeyError(parsed.error.issues.map((issue) => issueLine(issue, raw)));
  const problem = privateKeyProblem(parsed.data.private_key);
  if (problem) throw new InvalidServiceAccountKeyError([problem]);
  return new ServiceAccountKey({
    clientEmail: parsed.data.client_email,
    privateKeyId: parsed.data.private_key_id,
    projectId: parsed.data.project_id,
    privateKey: parsed.data.private_key,
  });
}
