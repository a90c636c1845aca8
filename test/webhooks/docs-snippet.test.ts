import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { signWebhook } from '@ccs/shared';

/** The verification snippet of docs/webhooks.md, run as written, against the service's own signatures. */
describe('docs/webhooks.md verification snippet', () => {
  const doc = readFileSync(new URL('../../docs/webhooks.md', import.meta.url), 'utf8');
  const snippet = doc.match(/```js\n([\s\S]*?)```/)?.[1];

  it('accepts what the sender signs, and refuses a changed body, another secret and an old timestamp', async () => {
    expect(snippet).toContain('export function verifyCcsSignature');
    const mod = (await import(`data:text/javascript,${encodeURIComponent(snippet!)}`)) as {
      verifyCcsSignature(secret: string, header: string, raw: string, tolerance?: number): boolean;
    };
    const secret = 'whsec_test';
    const body = JSON.stringify({ id: 'e1', type: 'chest.opened', data: { emoji: 'é✓' } });
    const now = Math.floor(Date.now() / 1000);
    expect(mod.verifyCcsSignature(secret, signWebhook(secret, now, body), body)).toBe(true);
    expect(mod.verifyCcsSignature(secret, signWebhook(secret, now, body), body.replace('e1', 'e2'))).toBe(false);
    expect(mod.verifyCcsSignature('whsec_other', signWebhook(secret, now, body), body)).toBe(false);
    expect(mod.verifyCcsSignature(secret, signWebhook(secret, now - 301, body), body)).toBe(false);
    expect(mod.verifyCcsSignature(secret, 'garbage', body)).toBe(false);
  });
});
