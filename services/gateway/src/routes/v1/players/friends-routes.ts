import type { FastifyInstance } from 'fastify';
import { AddFriend, ListFriends, RemoveFriend } from '@ccs/shared';
import { callContext, jsonApiQuery, parseBody, playerOf, sendDocument, uuidParam } from '../../../lib/http.js';
import { FriendRequestBody } from './bodies.js';
import { friendResource } from './render.js';

/**
 * Friends of the calling player: a request is confirmed when the other side requests too;
 * the list shows each relation's status in resource meta; DELETE ends it in both directions.
 */
export default async function friendsRoutes(app: FastifyInstance) {
  app.post('/api/v1/players/me/friends', { config: { bodyType: 'jsonapi' } }, async (request, reply) => {
    playerOf(request);
    jsonApiQuery(request, {});
    const { data } = parseBody(FriendRequestBody, request.body);
    const { friend, created } = await app.bus.request(AddFriend, { playerId: data.id.toLowerCase() }, callContext(request));
    return sendDocument(reply, created ? 201 : 200, { data: friendResource(friend) });
  });

  app.get('/api/v1/players/me/friends', async (request, reply) => {
    playerOf(request);
    jsonApiQuery(request, {});
    const { friends } = await app.bus.request(ListFriends, {}, callContext(request));
    return sendDocument(reply, 200, { data: friends.map(friendResource), meta: { total_count: friends.length } });
  });

  app.delete('/api/v1/players/me/friends/:id', async (request, reply) => {
    playerOf(request);
    jsonApiQuery(request, {});
    const playerId = uuidParam(request, 'id');
    await app.bus.request(RemoveFriend, { playerId }, callContext(request));
    return reply.code(204).send();
  });
}
