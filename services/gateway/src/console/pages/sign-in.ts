import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppOverviewDocument } from '../../resources/studio-overview.js';
import { adminApi, type Failure } from '../admin-client.js';
import { html, type SafeHtml } from '../html.js';
import { notice, page } from '../layout.js';
import type { SignInThrottle } from '../sign-in-throttle.js';
import { formOf, queryOf, sendHtml } from '../signed-in.js';

/** The sign-in form: the app's secret key, kept only in the encrypted session cookie. */
export function signInBody(error?: string): SafeHtml {
  return html`${error ? notice('error', error) : ''}
    <article>
      <form method="post" action="/console/sign-in" data-testid="sign-in">
        <label>
          The app's secret key
          <input type="password" name="secret_key" autocomplete="off" required placeholder="sk_…" aria-describedby="key-help" />
          <small id="key-help"
            >Printed once when the app was created (<code>npm run admin -- create-app</code>, or by <code>npm start</code> for the demo app); kept
            only in an encrypted, HttpOnly session cookie, never in the page.</small
          >
        </label>
        <button type="submit">Sign in</button>
      </form>
    </article>`;
}

const signInPage = (reply: FastifyReply, why: string | undefined, status = 200) =>
  sendHtml(reply, page({ title: 'Sign in', body: signInBody(why) }), status);

/** Why a key was refused, by the admin API's status. */
const refusal = (status: number) =>
  status === 403
    ? "That is a publishable key: the console needs the app's secret key (sk_…)."
    : status === 401 || status === 400
      ? 'No app has that secret key.'
      : `The admin API answered ${status}; try again.`;

/** POST /console/sign-in: checks the key against the admin API, throttled per address (docs/console.md). */
async function signIn(throttle: SignInThrottle, request: FastifyRequest, reply: FastifyReply) {
  // Too many failures from this address this minute: every attempt waits, a right key too.
  const wait = await throttle.wait(request.ip);
  if (wait !== undefined) {
    reply.header('retry-after', String(wait));
    return signInPage(reply, `Too many failed sign-ins from your address: try again in ${wait} second${wait === 1 ? '' : 's'}.`, 429);
  }
  const key = String(formOf(request).secret_key ?? '').trim();
  const noKey: Failure = { ok: false, status: 401, errors: [] };
  const a = key ? await adminApi(request, key, { method: 'get', path: '/api/v1/admin/overview', success: 200, shape: AppOverviewDocument }) : noKey;
  if (!a.ok) {
    // A refused key counts against the address; the admin API failing (5xx) is not the caller's doing.
    if (a.status < 500) await throttle.failed(request.ip);
    return signInPage(reply, refusal(a.status), a.status === 403 ? 403 : 401);
  }
  request.session.set('key', key);
  request.session.set('app', { id: a.doc.data.id, name: a.doc.data.attributes.name });
  return reply.redirect('/console', 303);
}

/** The sign-in and sign-out routes (the only ones without a session). */
export function signInRoutes(app: FastifyInstance, throttle: SignInThrottle) {
  app.get('/sign-in', async (request, reply) => {
    if (request.session.get('key')) return reply.redirect('/console', 303);
    const expired = queryOf(request, 'expired');
    return signInPage(reply, expired ? 'The session ended or the key no longer works: sign in again.' : undefined);
  });
  app.post('/sign-in', (request, reply) => signIn(throttle, request, reply));
  app.post('/sign-out', async (request, reply) => {
    request.session.delete();
    return reply.redirect('/console/sign-in', 303);
  });
}
