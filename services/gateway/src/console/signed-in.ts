import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { adminApi, errorLines, type Call, type CallOptions, type Failure } from './admin-client.js';
import type { SafeHtml } from './html.js';
import { errorBody, page } from './layout.js';

declare module '@fastify/secure-session' {
  interface SessionData {
    key: string;
    app: { id: string; name: string };
    /** The players' search of this sign-in: the start of an email, kept here so that it is never in a URL. */
    playerSearch: string;
  }
}

/** Sends a fragment or a whole page as HTML. */
export const sendHtml = (reply: FastifyReply, body: SafeHtml, status = 200) => reply.code(status).type('text/html; charset=utf-8').send(body.value);

const Fields = z.record(z.string(), z.unknown()).catch({});

/** A path parameter of the route ('' when absent). */
export const paramOf = (request: FastifyRequest, name: string): string => String(Fields.parse(request.params)[name] ?? '');
/** A query parameter as a string ('' when absent; a repeated one joined by commas). */
export const queryOf = (request: FastifyRequest, name: string): string => String(Fields.parse(request.query)[name] ?? '');
/** The fields of a posted form (url-encoded): a repeated field is an array. */
export const formOf = (request: FastifyRequest): Record<string, unknown> => Fields.parse(request.body);

/** A page of the signed-in console: its request, the session's key and what every page does with them. */
export class ConsolePage {
  constructor(
    readonly request: FastifyRequest,
    readonly reply: FastifyReply,
    readonly key: string,
  ) {}

  /** Calls the admin API with the session's key (see adminApi). */
  api<S extends z.ZodType | undefined = undefined>(call: Call<S>, options?: CallOptions) {
    return adminApi(this.request, this.key, call, options);
  }

  /** Shows a page of the console, with its navigation. */
  view(title: string, current: string, body: SafeHtml, status = 200) {
    return sendHtml(this.reply, page({ title, current, app: this.request.session.get('app'), body }), status);
  }

  /** An admin API answer that failed: the signed-out case (key rotated away) goes back to sign-in, others show their errors. */
  failed(title: string, current: string, a: Failure) {
    if (a.status === 401 || a.status === 403) {
      this.request.session.delete();
      return this.reply.redirect('/console/sign-in?expired=1', 303);
    }
    return this.view(title, current, errorBody(errorLines(a)), a.status >= 500 ? 502 : a.status);
  }
}

/** A route of the signed-in console: without a session it redirects to the sign-in page. */
export function signedIn(handler: (page: ConsolePage) => Promise<unknown>) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const key = request.session.get('key');
    if (!key) return reply.redirect('/console/sign-in', 303);
    return handler(new ConsolePage(request, reply, key));
  };
}
