import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { testInfra } from '@ccs/shared/testing';
import { SCHEMA_FILE, servedDocument, typesOf } from '../../scripts/client/generate.js';

describe('the typed client (packages/client)', () => {
  it('has types generated from the OpenAPI document the gateway serves (else: npm run client:generate)', async () => {
    const infra = await testInfra();
    const served = await servedDocument({ ...process.env, NATS_URL: infra.natsUrl, REDIS_URL: infra.redisUrl });
    const generated = await typesOf(served);
    expect(readFileSync(SCHEMA_FILE, 'utf8') === generated, 'packages/client/src/schema.ts is stale: run npm run client:generate').toBe(true);
  }, 60_000);
});
