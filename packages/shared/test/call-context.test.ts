import { describe, expect, it } from 'vitest';
import { AppError, appOf, callerOf, optionalCallerOf } from '../src/index.js';

const APP = '6F1C2D3E-4A5B-4C6D-8E7F-9A0B1C2D3E4F';
const PLAYER = 'AB2C3D4E-5F60-4718-89AB-CDEF01234567';

/** The error a call fails with: its kind and code. */
function refusal(f: () => unknown): { kind: string; code: string } {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    const [first] = (err as AppError).errors;
    return { kind: first!.kind, code: first!.code };
  }
  throw new Error('expected a refusal');
}

describe('the call context, as every service reads it', () => {
  it('gives the app and the caller lower-cased', () => {
    const ctx = { requestId: 'r', appId: APP, playerId: PLAYER };
    expect([appOf(ctx), callerOf(ctx), optionalCallerOf(ctx)]).toEqual([APP.toLowerCase(), PLAYER.toLowerCase(), PLAYER.toLowerCase()]);
  });

  it('refuses a missing or malformed app with bad_request missing_app, never an internal error', () => {
    for (const appId of [undefined, '', 'not-a-uuid', `${APP}x`])
      expect(refusal(() => appOf({ requestId: 'r', appId }))).toEqual({ kind: 'bad_request', code: 'missing_app' });
  });

  it('refuses a missing or malformed caller with unauthenticated missing_token; an optional caller may be absent', () => {
    for (const playerId of [undefined, '', 'x']) {
      expect(refusal(() => callerOf({ requestId: 'r', appId: APP, playerId }))).toEqual({ kind: 'unauthenticated', code: 'missing_token' });
    }
    expect(optionalCallerOf({ requestId: 'r', appId: APP })).toBeUndefined();
    expect(refusal(() => optionalCallerOf({ requestId: 'r', appId: APP, playerId: 'x' }))).toEqual({
      kind: 'unauthenticated',
      code: 'missing_token',
    });
  });
});
