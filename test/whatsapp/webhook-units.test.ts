/**
 * Units of the webhook fields (no server; docs/whatsapp.md "Webhook fields", "Inbound messages"):
 * routing of changes (phone number or WABA), what each account-level field applies, Meta's tiers as
 * messaging limits, the bounded metric label, and the inbound enrichments read from `messages`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PayloadError } from '../../src/domain/receipts.ts';
import { fieldLabel, LIMIT_OF_TIER, parseAccountChange, parseWhatsappPayload } from '../../src/providers/whatsapp/webhooks.ts';
import { changeValue, webhookPayload } from '../helpers/fake-graph.ts';

const tpl = { message_template_id: 1689556908129835, message_template_name: 'order_shipped', message_template_language: 'en_US' };

test('changes are routed by phone number (metadata) or by the entry\'s WABA id, with the entry time', () => {
  const changes = parseWhatsappPayload({
    object: 'whatsapp_business_account',
    entry: [
      { id: '102290129340398', time: 1780315400, changes: [
        { field: 'message_template_status_update', value: { event: 'APPROVED', ...tpl, reason: 'NONE' } },
        { field: 'security', value: { event: 'PIN_CHANGED' } },
      ] },
      { id: '1', changes: [{ field: 'messages', value: changeValue('106540352242922', { statuses: [] }) }] },
    ],
  });
  assert.deepEqual(changes.map((c) => [c.field, c.phoneNumberId, c.wabaId]), [
    ['message_template_status_update', undefined, '102290129340398'], ['security', undefined, '102290129340398'], ['messages', '106540352242922', '1'],
  ]);
  assert.deepEqual(changes[0].account, { kind: 'template', at: 1780315400_000, ref: { template_id: '1689556908129835', name: 'order_shipped', language: 'en_US' }, status: 'APPROVED', rejected_reason: null });
  assert.equal(changes[1].account, undefined);
  for (const bad of [
    { object: 'whatsapp_business_account', entry: [{ id: 'abc', changes: [{ field: 'account_update', value: { event: 'DISABLED_UPDATE' } }] }] },
    { object: 'whatsapp_business_account', entry: [{ changes: [{ field: 'account_update', value: { event: 'DISABLED_UPDATE' } }] }] },
    { object: 'whatsapp_business_account', entry: [{ id: '1', changes: [{ field: 'messages', value: {} }] }] },
    { object: 'whatsapp_business_account', entry: [{ id: '1', changes: [{ field: 42, value: {} }] }] },
  ]) assert.throws(() => parseWhatsappPayload(bad), PayloadError, JSON.stringify(bad));
});

test('account-level fields: what each applies, and the events that apply nothing', () => {
  const p = (field: string, value: Record<string, unknown>) => parseAccountChange(field, value, 'v', 5);
  assert.deepEqual(p('message_template_status_update', { event: 'REJECTED', ...tpl, reason: 'INVALID_FORMAT' }),
    { kind: 'template', at: 5, ref: { template_id: '1689556908129835', name: 'order_shipped', language: 'en_US' }, status: 'REJECTED', rejected_reason: 'INVALID_FORMAT' });
  assert.equal((p('message_template_status_update', { event: 'REINSTATED', ...tpl }) as any).status, 'APPROVED');
  assert.equal(p('message_template_status_update', { event: 'FLAGGED', ...tpl }), null);
  assert.deepEqual((p('message_template_status_update', { event: 'PAUSED', message_template_name: 'x', message_template_language: 'de' }) as any).ref, { template_id: null, name: 'x', language: 'de' });
  assert.equal((p('message_template_quality_update', { new_quality_score: 'RED', ...tpl }) as any).quality_score, 'RED');
  assert.equal((p('template_category_update', { new_category: 'MARKETING', ...tpl }) as any).category, 'MARKETING');
  assert.equal(p('template_category_update', { correct_category: 'MARKETING', category_update_timestamp: 1760711433, ...tpl }), null, 'announced for later');
  assert.deepEqual(p('phone_number_quality_update', { event: 'FLAGGED', current_limit: 'TIER_2K' }), { kind: 'phone_quality', at: 5, event: 'FLAGGED', quality_rating: 'FLAGGED', messaging_limit: 2000 });
  assert.deepEqual(p('phone_number_quality_update', { event: 'UPGRADE', current_limit: 'TIER_10K', max_daily_conversations_per_business: 'TIER_UNLIMITED' }), { kind: 'phone_quality', at: 5, event: 'UPGRADE', messaging_limit: null });
  assert.equal(p('phone_number_quality_update', { event: 'ONBOARDING', current_limit: 'TIER_NOT_SET' }), null);
  assert.equal((p('account_update', { event: 'DISABLED_UPDATE', ban_info: { waba_ban_state: 'DISABLE' } }) as any).kind, 'pause');
  assert.equal((p('account_update', { event: 'DISABLED_UPDATE' }) as any).kind, 'pause', 'a ban Meta does not describe');
  assert.equal(p('account_update', { event: 'DISABLED_UPDATE', ban_info: { waba_ban_state: 'REINSTATE' } }), null);
  assert.equal((p('account_update', { event: 'ACCOUNT_RESTRICTION', restriction_info: [{ restriction_type: 'RESTRICTED_ADD_PHONE_NUMBER_ACTION' }, { restriction_type: 'RESTRICTED_BIZ_INITIATED_MESSAGING' }] }) as any).reason,
    'account_update: ACCOUNT_RESTRICTION (RESTRICTED_BIZ_INITIATED_MESSAGING)');
  assert.equal(p('account_update', { event: 'ACCOUNT_RESTRICTION', restriction_info: [{ restriction_type: 'RESTRICTED_CUSTOMER_INITIATED_MESSAGING' }] }), null);
  assert.equal(p('account_update', { event: 'ACCOUNT_VIOLATION', violation_info: { violation_type: 'SCAM' } }), null);
  assert.equal(p('flows', { event: 'ENDPOINT_ERROR_RATE' }), null);
  for (const [field, value] of [
    ['message_template_status_update', { ...tpl }], ['message_template_status_update', { event: 'APPROVED' }],
    ['message_template_quality_update', { ...tpl }], ['template_category_update', { ...tpl, new_category: '' }],
    ['phone_number_quality_update', {}], ['account_update', { event: 7 }],
  ] as const) assert.throws(() => p(field, value), PayloadError, `${field} ${JSON.stringify(value)}`);
});

test('Meta\'s tiers as messaging limits: never above Meta\'s; labels bounded', () => {
  assert.deepEqual(LIMIT_OF_TIER, { TIER_250: 250, TIER_1K: 250, TIER_2K: 2000, TIER_10K: 10_000, TIER_100K: 100_000, TIER_UNLIMITED: null });
  assert.equal(fieldLabel('account_update'), 'account_update');
  assert.equal(fieldLabel('x'.repeat(64)), 'other');
});

test('inbound enrichments: profile name by wa_id, context, reaction, media, location', () => {
  const [change] = parseWhatsappPayload(webhookPayload([changeValue('123', {
    contacts: [{ profile: { name: '  Ada  ' }, wa_id: '4915112345678' }],
    messages: [
      { from: '4915112345678', id: 'wamid.A', timestamp: '1', type: 'text', text: { body: 'ok' }, context: { from: '15550783881', id: 'wamid.OURS' } },
      { from: '4915112345678', id: 'wamid.B', timestamp: '2', type: 'reaction', reaction: { message_id: 'wamid.OURS', emoji: '🙏' } },
      { from: '4915112345679', id: 'wamid.C', timestamp: '3', type: 'video', video: { id: '77', mime_type: 'video/mp4', sha256: 'x', caption: 'look' } },
      { from: '4915112345679', id: 'wamid.D', timestamp: '4', type: 'location', location: { latitude: -33.9, longitude: 151.2, url: 'https://maps.example/x' } },
    ],
  })]));
  const [a, b, c, d] = change.messages;
  assert.equal(a.name, 'Ada');
  assert.equal(a.reply_to, 'wamid.OURS');
  assert.deepEqual(b.reaction, { provider_message_id: 'wamid.OURS', emoji: '🙏' });
  assert.equal(b.reply_to, 'wamid.OURS');
  assert.equal(c.name, undefined, 'no profile for this sender');
  assert.deepEqual([c.text, c.media], ['look', { id: '77', mime_type: 'video/mp4', sha256: 'x' }]);
  assert.deepEqual(d.location, { latitude: -33.9, longitude: 151.2, url: 'https://maps.example/x' });
});
