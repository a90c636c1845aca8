import { describe, expect, it } from 'vitest';
import { resolveTestInfra, testInfraMode } from '../src/testing/infra.js';

describe('TEST_INFRA', () => {
  it('is auto by default, and local or containers when asked; anything else is refused', () => {
    expect([
      testInfraMode({}),
      testInfraMode({ TEST_INFRA: '' }),
      testInfraMode({ TEST_INFRA: 'local' }),
      testInfraMode({ TEST_INFRA: 'containers' }),
    ]).toEqual(['auto', 'auto', 'local', 'containers']);
    expect(() => testInfraMode({ TEST_INFRA: 'docker' })).toThrow('TEST_INFRA="docker" is not a mode: use auto (the default), local or containers.');
  });

  it('local uses what answers here, and fails naming what does not (never starting containers)', async () => {
    const here = await resolveTestInfra('local', process.env);
    expect(here.source).toBe('local');
    expect(here.urls.databaseUrl).toBe(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
    await expect(resolveTestInfra('local', { ...process.env, REDIS_URL: 'redis://127.0.0.1:1' })).rejects.toThrow(
      'TEST_INFRA=local, but Redis at redis://127.0.0.1:1 does not answer: start it',
    );
  });

  it('auto uses what answers here without starting containers', async () => {
    const auto = await resolveTestInfra('auto', process.env);
    expect([auto.source, auto.stop]).toEqual(['local', undefined]);
  });
});
