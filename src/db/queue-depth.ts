/**
 * SQL of the workers' queue-depth metrics (metrics.ts `setQueueDepthSource`): what the job queue does
 * not count itself. One statement per function.
 */
import type { Db } from './database.ts';

/** How many messages are held (`held_until` set: waiting for delivery hours, a retry or a provider's wait). */
export async function countHeldMessages(db: Db): Promise<number> {
  const row = await db.selectFrom('messages').select((eb) => eb.fn.countAll<number>().as('n'))
    .where('held_until', 'is not', null).executeTakeFirst();
  return Number(row?.n ?? 0);
}
