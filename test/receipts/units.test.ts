/**
 * Units of receipts and inbound handling (no server): Meta payload parsing, gateway payload parsing,
 * collapsing a payload's statuses per message, keyword matching, signature checks.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { keywordOf, type InboundCompany } from '../../src/domain/inbound.ts';
import { collapseStatuses, parseGatewayPayload, PayloadError } from '../../src/domain/receipts.ts';
import { parseWhatsappPayload, verifyHubSignature } from '../../src/providers/whatsapp/webhooks.ts';
import { changeValue, hubSignature, waButton, waStatus, waText, webhookPayload } from '../helpers/fake-graph.ts';

test('Meta payload: statuses, messages (text, button, interactive), unknown statuses dropped, shapes refused', () => {
  const t = Date.parse('2026-03-01T10:00:00Z');
  const payload = webhookPayload([changeValue('123456', {
    statuses: [waStatus('wamid.A', 'delivered', '4915', t), waStatus('wamid.B', 'failed', '4915', t, [{ code: 131026, title: 'Message undeliverable' }]), { id: 'wamid.C', status: 'deleted', timestamp: '1', recipient_id: '1' }],
    messages: [waText('4915112345678', 'STOP', t, 'wamid.T'), waButton('4915112345678', 'P1', 'Yes please', t, 'wamid.U'),
      { from: '4915112345678', id: 'wamid.V', timestamp: '1', type: 'interactive', interactive: { type: 'list_reply', list_reply: { id: 'opt-2', title: 'Two' } } }],
  })]);
  const [change] = parseWhatsappPayload(payload);
  assert.equal(change.phoneNumberId, '123456');
  assert.deepEqual(change.statuses, [
    { id: 'wamid.A', status: 'delivered', at: t },
    { id: 'wamid.B', status: 'failed', at: t, code: '131026', title: 'Message undeliverable' },
  ]);
  assert.deepEqual(change.messages.map((m) => [m.type, m.text, m.payload]), [['text', 'STOP', null], ['button', 'Yes please', 'P1'], ['interactive', 'Two', 'opt-2']]);
  for (const bad of [null, {}, { object: 'page', entry: [] }, { object: 'whatsapp_business_account', entry: [{ changes: [{ value: { metadata: {} } }] }] },
    webhookPayload([changeValue('1', { statuses: [{ id: 'x', status: 'read', timestamp: '253402300800', recipient_id: '1' }] })])]) {
    assert.throws(() => parseWhatsappPayload(bad), PayloadError, JSON.stringify(bad));
  }
});

test('gateway payload: RFC 3339 times, error, statuses other than delivered/read/failed refused', () => {
  assert.deepEqual(parseGatewayPayload({ statuses: [{ message_id: 'm', status: 'failed', timestamp: '2026-03-01T11:00:00+01:00', error: { code: 30, title: 'Unreachable' } }] }),
    [{ id: 'm', status: 'failed', at: Date.parse('2026-03-01T10:00:00Z'), code: '30', title: 'Unreachable' }]);
  for (const bad of [{ statuses: [] }, { statuses: [{ message_id: 'm', status: 'sent', timestamp: '2026-03-01T10:00:00Z' }] }, { statuses: [{ message_id: 'm', status: 'read', timestamp: '1709287200' }] }]) {
    assert.throws(() => parseGatewayPayload(bad), PayloadError);
  }
});

test('collapse: earliest delivered and read per message, first failure, sent dropped', () => {
  const out = collapseStatuses([
    { id: 'a', status: 'read', at: 30 }, { id: 'a', status: 'delivered', at: 20 }, { id: 'a', status: 'delivered', at: 10 }, { id: 'a', status: 'sent', at: 5 },
    { id: 'b', status: 'failed', at: 7, code: '131047', title: 'Re-engagement' }, { id: 'b', status: 'failed', at: 9, code: '1' },
    { id: 'c', status: 'sent', at: 1 },
  ]);
  assert.deepEqual(out, [
    { id: 'a', delivered_at: 10, read_at: 30, failed_at: null, error_code: null, error: null, provider_error: null },
    { id: 'b', delivered_at: null, read_at: null, failed_at: 7, error_code: '131047', error: 'Re-engagement', provider_error: { code: '131047', title: 'Re-engagement', message: null, details: null } },
  ]);
});

test('keywords: trimmed and case-folded text, or a button payload; other types never', () => {
  const company: InboundCompany = { company_id: 1, default_country: 'DE', opt_out_keywords: ['STOP', 'Abmelden'], opt_in_keywords: ['START'] };
  assert.equal(keywordOf(company, { type: 'text', text: '  stop\n', payload: null }), true);
  assert.equal(keywordOf(company, { type: 'text', text: 'ABMELDEN', payload: null }), true);
  assert.equal(keywordOf(company, { type: 'text', text: 'Start', payload: null }), false);
  assert.equal(keywordOf(company, { type: 'text', text: 'please stop', payload: null }), null);
  assert.equal(keywordOf(company, { type: 'button', text: 'Unsubscribe me', payload: 'STOP' }), true);
  assert.equal(keywordOf(company, { type: 'image', text: 'STOP', payload: null }), null, 'a caption is not a keyword');
});

test('X-Hub-Signature-256: only sha256=<64 hex> of the exact bytes with the secret', () => {
  const body = Buffer.from('{"a":1}');
  assert.equal(verifyHubSignature(body, hubSignature('s3cret', body), 's3cret'), true);
  assert.equal(verifyHubSignature(body, hubSignature('s3cret', body).toUpperCase().replace('SHA256', 'sha256'), 's3cret'), true);
  assert.equal(verifyHubSignature(body, hubSignature('other', body), 's3cret'), false);
  assert.equal(verifyHubSignature(Buffer.from('{"a":2}'), hubSignature('s3cret', body), 's3cret'), false);
  assert.equal(verifyHubSignature(body, undefined, 's3cret'), false);
  assert.equal(verifyHubSignature(body, 'sha256=abc', 's3cret'), false);
});
