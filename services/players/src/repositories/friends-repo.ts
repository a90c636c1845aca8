import type { FriendView, Queryable } from '@ccs/shared';

interface FriendRow {
  other_id: string;
  is_anonymous: boolean;
  outgoing_at: Date | null;
  incoming_at: Date | null;
}

function toView(r: FriendRow): FriendView {
  const status = r.outgoing_at && r.incoming_at ? 'confirmed' : r.outgoing_at ? 'pending_outgoing' : 'pending_incoming';
  const since = [r.outgoing_at, r.incoming_at].filter((d): d is Date => d !== null).sort((a, b) => b.getTime() - a.getTime())[0]!;
  return { playerId: r.other_id, status, isAnonymous: r.is_anonymous, since: since.toISOString() };
}

// Both directions of every relation of `me`, one row per other player. `since` is the later
// request: for a confirmed friendship, the moment it was confirmed.
const RELATIONS = `
  SELECT p.id AS other_id, p.is_anonymous, o.created_at AS outgoing_at, i.created_at AS incoming_at
  FROM players p
  LEFT JOIN friend_requests o ON o.app_id = p.app_id AND o.requester_id = $2 AND o.addressee_id = p.id
  LEFT JOIN friend_requests i ON i.app_id = p.app_id AND i.requester_id = p.id AND i.addressee_id = $2
  WHERE p.app_id = $1 AND (o.requester_id IS NOT NULL OR i.requester_id IS NOT NULL)`;

/** Records `me`'s request to `other`; false when it already existed. */
export async function insertFriendRequest(q: Queryable, appId: string, me: string, other: string): Promise<boolean> {
  const { rowCount } = await q.query(
    `INSERT INTO friend_requests (app_id, requester_id, addressee_id) VALUES ($1, $2, $3)
     ON CONFLICT DO NOTHING`,
    [appId, me, other],
  );
  return rowCount === 1;
}

/** The relation between `me` and one other player, if any. */
export async function findRelation(q: Queryable, appId: string, me: string, other: string): Promise<FriendView | undefined> {
  const { rows } = await q.query<FriendRow>(`${RELATIONS} AND p.id = $3`, [appId, me, other]);
  return rows[0] && toView(rows[0]);
}

/** Every relation of `me`: confirmed friends and pending requests both ways, newest first. */
export async function listRelations(q: Queryable, appId: string, me: string): Promise<FriendView[]> {
  const { rows } = await q.query<FriendRow>(`${RELATIONS} ORDER BY greatest(o.created_at, i.created_at) DESC, p.id`, [appId, me]);
  return rows.map(toView);
}

/** Whether both players requested each other. */
export async function areConfirmedFriends(q: Queryable, appId: string, a: string, b: string): Promise<boolean> {
  const { rows } = await q.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM friend_requests
     WHERE app_id = $1 AND ((requester_id = $2 AND addressee_id = $3) OR (requester_id = $3 AND addressee_id = $2))`,
    [appId, a, b],
  );
  return rows[0]?.n === 2;
}

/** Removes the relation in both directions (unfriend, cancel or decline); false when there was none. */
export async function removeRelation(q: Queryable, appId: string, me: string, other: string): Promise<boolean> {
  const { rowCount } = await q.query(
    `DELETE FROM friend_requests
     WHERE app_id = $1 AND ((requester_id = $2 AND addressee_id = $3) OR (requester_id = $3 AND addressee_id = $2))`,
    [appId, me, other],
  );
  return (rowCount ?? 0) > 0;
}
