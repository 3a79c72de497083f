/**
 * The `outbox` provider (the default, docs/operator-api.md): the message is recorded as sent and nothing
 * leaves the machine. The rendered message stays inspectable in GET /admin/batches/{id}/messages.
 */
import type { Provider } from './types.ts';

/** The outbox provider; stateless, so one instance serves every company. */
export const outboxProvider: Provider = {
  name: 'outbox',
  sendsNothing: true,
  async send() {
    return { status: 'sent' };
  },
};
