import { describe, expect, it } from 'vitest';
import { createLogger, runInScope, ServiceMetrics } from '../src/index.js';

function capture(level = 'info') {
  const lines: Record<string, unknown>[] = [];
  const raw: string[] = [];
  const log = createLogger('test', level, {
    write: (s: string) => {
      raw.push(s);
      lines.push(JSON.parse(s));
    },
  });
  return { log, lines, raw };
}

describe('the service logger', () => {
  it('redacts secrets under every spelling the services use, at the top and one level down', () => {
    const { log, lines } = capture();
    log.info(
      {
        password: 'p1-secret',
        apiKey: 'k1-secret',
        body: { password_confirmation: 'p2-secret', refresh_token: 'r1-secret', refreshToken: 'r2-secret', accessToken: 'a1-secret' },
        headers: { authorization: 'Bearer a2-secret', apikey: 'k2-secret', cookie: 'c1-secret', accept: 'application/json' },
        req: { headers: { authorization: 'Bearer a3-secret' } },
        keys: { privateKey: 'pk-secret' },
      },
      'attempt',
    );
    const text = JSON.stringify(lines);
    expect(text).not.toMatch(/-secret/);
    expect(lines[0]!.headers).toEqual({ authorization: '[redacted]', apikey: '[redacted]', cookie: '[redacted]', accept: 'application/json' });
  });

  it('never writes the compliance attributes players declare (country, birth year), at the top or one level down', () => {
    const { log, lines } = capture();
    log.info({ country: 'BE', birthYear: 2009, attributes: { country: 'be', birth_year: 2009 }, profile: { birthYear: 2009 } }, 'profile');
    expect(lines[0]).toMatchObject({
      country: '[redacted]',
      birthYear: '[redacted]',
      attributes: { country: '[redacted]', birth_year: '[redacted]' },
      profile: { birthYear: '[redacted]' },
    });
    expect(JSON.stringify(lines)).not.toMatch(/2009|"BE"|"be"/);
  });

  it('adds the request id of the work in scope to every line, once, and lets a line set its own', () => {
    const { log, lines, raw } = capture();
    const metrics = new ServiceMetrics('test');
    log.info('outside');
    runInScope({ metrics, requestId: 'req-12345678' }, () => {
      log.info('inside');
      log.child({ requestId: 'req-bound' }).info('bound child');
      log.info({ requestId: 'req-explicit' }, 'explicit');
    });
    expect(lines.map((l) => l.requestId)).toEqual([undefined, 'req-12345678', 'req-bound', 'req-explicit']);
    // pino would write a bound key and a mixed-in one twice in the same line.
    for (const line of raw) expect(line.match(/"requestId"/g)?.length ?? 0).toBeLessThanOrEqual(1);
  });
});
