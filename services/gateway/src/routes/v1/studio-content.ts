import type { FastifyReply, FastifyRequest } from 'fastify';
import { AdminContentDiff, AdminListContentVersions, AdminLoadContent, AppContentSchema } from '@ccs/shared';
import { z } from 'zod';
import { jsonApiQuery, parseBody, sendDocument } from '../../lib/http.js';
import { NO_QUERY } from '../../openapi/route-doc.js';
import { studioCall } from './studio-call.js';
import { gatewayErrors } from '../../errors.js';
import { contentVersionsDocument, contentDiffDocument, contentLoadedDocument } from '../../resources/studio-content.js';

/** The admin API's content routes: the versions players keeps, the diff it computes, the load of a file. */

/** GET /api/v1/admin/content: the app's content versions, newest first. */
export async function contentVersions(request: FastifyRequest, reply: FastifyReply) {
  jsonApiQuery(request, NO_QUERY);
  const r = await request.server.bus.request(AdminListContentVersions, { appId: request.tenant!.appId }, studioCall(request));
  reply.header('cache-control', 'no-store');
  return sendDocument(reply, 200, contentVersionsDocument(r));
}

const VersionSchema = z.coerce.number().int().min(1).max(2_147_483_647);

/** GET /api/v1/admin/content/{version}/diff: what the current content changed from that version (players computes it). */
export async function contentDiff(request: FastifyRequest, reply: FastifyReply) {
  jsonApiQuery(request, NO_QUERY);
  const raw = (request.params as Record<string, string>).version;
  const parsed = VersionSchema.safeParse(raw);
  if (!parsed.success || !/^\d+$/.test(raw ?? ''))
    // Only a version number can exist; anything else is not found, as an unknown number is.
    throw gatewayErrors.contentVersionNotFound();
  const d = await request.server.bus.request(AdminContentDiff, { appId: request.tenant!.appId, version: parsed.data }, studioCall(request));
  reply.header('cache-control', 'no-store');
  return sendDocument(reply, 200, contentDiffDocument(d));
}

/** POST /api/v1/admin/content: validates a content file and loads it as the app's next version. */
export async function loadContent(request: FastifyRequest, reply: FastifyReply) {
  jsonApiQuery(request, NO_QUERY);
  const content = parseBody(AppContentSchema, request.body);
  const r = await request.server.bus.request(AdminLoadContent, { appId: request.tenant!.appId, content }, studioCall(request), { timeoutMs: 30_000 });
  reply.header('cache-control', 'no-store');
  return sendDocument(reply, 201, contentLoadedDocument(r));
}
