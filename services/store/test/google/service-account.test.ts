import { generateKeyPairSync } from 'node:crypto';
import { inspect } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateServiceAccountKey, type ServiceAccountKeyFile } from '../../../../test/support/store/google-stand-in.js';
import { InvalidServiceAccountKeyError, parseServiceAccountKey } from '../../src/google/service-account.js';

/** The parser's refusal message for this input (fails the test if it parses). */
function refusal(input: unknown): string {
  try {
    parseServiceAccountKey(input);
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidServiceAccountKeyError);
    return (err as Error).message;
  }
  throw new Error('the key file was accepted');
}

describe('service-account key files', () => {
  let file: ServiceAccountKeyFile;
  /** A distinctive piece of the private key's base64 body: it must never appear in any output. */
  let secret: string;

  beforeAll(async () => {
    file = await generateServiceAccountKey();
    secret = file.private_key.split('\n')[5]!;
  });

  it('reads Google key file, as an object or as its JSON text, and never shows the private key', () => {
    for (const input of [file, JSON.stringify(file)]) {
      const key = parseServiceAccountKey(input);
      expect(key.clientEmail).toBe(file.client_email);
      expect(key.privateKeyId).toBe(file.private_key_id);
      expect(key.projectId).toBe(file.project_id);
      expect(key.privateKeyPem()).toBe(file.private_key);
      expect(key.toKeyFile()).toEqual({
        type: 'service_account',
        project_id: file.project_id,
        private_key_id: file.private_key_id,
        private_key: file.private_key,
        client_email: file.client_email,
      });
      for (const shown of [JSON.stringify(key), inspect(key), inspect({ nested: key }), String(key), `${JSON.stringify({ key })}`]) {
        expect(shown).not.toContain(secret);
        expect(shown).not.toContain('PRIVATE KEY');
      }
      expect(JSON.parse(JSON.stringify(key))).toEqual({
        client_email: file.client_email,
        private_key_id: file.private_key_id,
        project_id: file.project_id,
      });
    }
  });

  it('ignores the fields it does not use, including token_uri', () => {
    const key = parseServiceAccountKey({ ...file, token_uri: 'http://169.254.169.254/evil', extra: { anything: true } });
    expect(key.toKeyFile()).not.toHaveProperty('token_uri');
  });

  it('refuses a file that is not a service-account key, naming each problem and never echoing a value', () => {
    expect(refusal('{not json')).toMatch(/not JSON/);
    expect(refusal([file])).toMatch(/JSON object/);
    expect(refusal(null)).toMatch(/JSON object/);
    expect(refusal({ ...file, type: 'authorized_user' })).toMatch(/type: must be "service_account"/);
    const missing = refusal({ type: 'service_account' });
    for (const field of ['project_id', 'private_key_id', 'private_key', 'client_email']) expect(missing).toContain(`${field}: is missing`);
    const wrong = refusal({ ...file, client_email: `not-an-email ${secret}`, private_key_id: 'has spaces/and slashes' });
    expect(wrong).toMatch(/client_email: must be an email address/);
    expect(wrong).toMatch(/private_key_id: must be the key id/);
    expect(wrong).not.toContain(secret);
  });

  it('refuses a private key that is not an unencrypted PKCS#8 RSA key of 2048 bits or more, without echoing it', () => {
    const pkcs1 = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem' }) as string;
    expect(refusal({ ...file, private_key: pkcs1 })).toMatch(/private_key: must be a PKCS#8 PEM private key/);
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    expect(refusal({ ...file, private_key: ec })).toMatch(/private_key: must be an RSA key/);
    const small = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    expect(refusal({ ...file, private_key: small })).toMatch(/at least 2048 bits/);
    // The first base64 line holds the DER structure's headers: zeroed, the key no longer reads.
    const lines = file.private_key.split('\n');
    lines[1] = 'A'.repeat(lines[1]!.length);
    const message = refusal({ ...file, private_key: lines.join('\n') });
    expect(message).toMatch(/private_key: is not a readable private key/);
    expect(message).not.toContain(secret);
    expect(refusal({ ...file, private_key: 'just a string' })).toMatch(/PKCS#8 PEM/);
    const publicOnly = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ type: 'spki', format: 'pem' }) as string;
    expect(refusal({ ...file, private_key: publicOnly })).toMatch(/PKCS#8 PEM private key/);
  });
});
