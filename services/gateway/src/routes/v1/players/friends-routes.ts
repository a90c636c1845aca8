import type { FastifyInstance } from 'fastify';
import { AddFriend, ListFriends, RemoveFriend } from '@ccs/shared';
import { callContext, jsonApiQuery, parseBody, sendDocument, uuidParam } from '../../../lib/http.js';
import { FriendRequestBody } from './bodies.js';
import { friendResource } from '../../../resources/players.js';
import { documented, NO_QUERY } from '../../../openapi/route-doc.js';
import * as docs from '../../../openapi/operations/players.js';
import type { FriendDocument, FriendListDocument } from '../../../resources/players.js';

/**
 * Friends of the calling player: a request is confirmed when the other side requests too;
 * the list shows each relation's status in resource meta; DELETE ends it in both directions.
 */
export default async function friendsRoutes(app: FastifyInstance) {
  const addDoc = documented(docs.addFriend, { query: NO_QUERY, body: { schema: FriendRequestBody, required: true } });
  app.post('/api/v1/players/me/friends', { config: { bodyType: 'jsonapi', openapi: addDoc } }, async (request, reply) => {
    jsonApiQuery(request, NO_QUERY);
    const { data } = parseBody(FriendRequestBody, request.body);
    const { friend, created } = await app.bus.request(AddFriend, { playerId: data.id.toLowerCase() }, callContext(request));
    return sendDocument(reply, created ? 201 : 200, { data: friendResource(friend) } satisfies FriendDocument);
  });

  app.get('/api/v1/players/me/friends', { config: { openapi: documented(docs.listFriends, { query: NO_QUERY }) } }, async (request, reply) => {
    jsonApiQuery(request, NO_QUERY);
    const { friends } = await app.bus.request(ListFriends, {}, callContext(request));
    return sendDocument(reply, 200, {
      data: friends.map(friendResource),
      meta: { total_count: friends.length },
    } satisfies FriendListDocument);
  });

  app.delete(
    '/api/v1/players/me/friends/:id',
    { config: { openapi: documented(docs.removeFriend, { query: NO_QUERY }) } },
    async (request, reply) => {
      jsonApiQuery(request, NO_QUERY);
      const playerId = uuidParam(request, 'id');
      await app.bus.request(RemoveFriend, { playerId }, callContext(request));
      return reply.code(204).send();
    },
  );
}
