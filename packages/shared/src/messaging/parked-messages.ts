import type { Queryable } from '../db/pool.js';

/** A durable message a consumer gave up on, as an operator sees it. */
export interface ParkedMessage {
  messageId: string;
  consumer: string;
  subject: string;
  payload: unknown;
  error: string;
}

/** Parks a message in the service's own schema (its error cut to 2,000 characters). */
export async function parkMessage(q: Queryable, m: ParkedMessage): Promise<void> {
  await q.query('INSERT INTO parked_messages (message_id, consumer, subject, payload, error) VALUES ($1, $2, $3, $4, $5)', [
    m.messageId,
    m.consumer,
    m.subject,
    m.payload,
    m.error.slice(0, 2000),
  ]);
}
