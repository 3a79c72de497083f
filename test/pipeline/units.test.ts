/**
 * Pure parts of the send pipeline: delivery hours (IANA zones, windows across midnight, DST), template
 * rendering (scope, prototype keys, media and button precedence, WhatsApp parameters), Standard
 * Webhooks signing (the specification's test vector), the retry decision on the schedule (Retry-After,
 * permanent failures, exhaustion), chunking, Graph error classification and wamids.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { inWindow, nextSendTime } from '../../src/domain/delivery-hours.ts';
import { compileTemplate, RenderError, renderMessage, type RenderContact } from '../../src/domain/render.ts';
import { networkFailure, retryAfterMs } from '../../src/delivery/failure.ts';
import { createSigner, webhookKey } from '../../src/delivery/sign.ts';
import { nextStep } from '../../src/delivery/retry.ts';
import { classifyError, templateMessage, wamidOf } from '../../src/providers/whatsapp/send.ts';
import { chunkRanges } from '../../src/db/messages.ts';

const at = (iso: string) => Date.parse(iso);
const berlin = { start: '09:00', end: '21:00', timezone: 'Europe/Berlin' };

describe('delivery hours', () => {
  test('no hours, or inside the window: now', () => {
    assert.equal(nextSendTime(null, at('2026-01-05T02:00:00Z')), at('2026-01-05T02:00:00Z'));
    assert.equal(nextSendTime(berlin, at('2026-01-05T08:00:00Z')), at('2026-01-05T08:00:00Z')); // 09:00 local, start inclusive
    assert.equal(nextSendTime(berlin, at('2026-01-05T19:59:59Z')), at('2026-01-05T19:59:59Z'));
  });
  test('before the window: today\'s opening; after it (end exclusive): tomorrow\'s', () => {
    assert.equal(nextSendTime(berlin, at('2026-01-05T02:00:00Z')), at('2026-01-05T08:00:00Z'));
    assert.equal(nextSendTime(berlin, at('2026-01-05T20:00:00Z')), at('2026-01-06T08:00:00Z'));
    assert.equal(nextSendTime(berlin, at('2026-07-01T20:30:00Z')), at('2026-07-02T07:00:00Z')); // CEST
  });
  test('a window across midnight', () => {
    const night = { start: '22:00', end: '06:00', timezone: 'America/New_York' };
    assert.equal(nextSendTime(night, at('2026-01-06T04:00:00Z')), at('2026-01-06T04:00:00Z')); // 23:00 local
    assert.equal(nextSendTime(night, at('2026-01-06T10:30:00Z')), at('2026-01-06T10:30:00Z')); // 05:30 local
    assert.equal(nextSendTime(night, at('2026-01-06T11:00:00Z')), at('2026-01-07T03:00:00Z')); // 06:00 local: closed until 22:00
    assert.equal(inWindow(23 * 60, 22 * 60, 6 * 60), true);
    assert.equal(inWindow(12 * 60, 22 * 60, 6 * 60), false);
    assert.equal(inWindow(12 * 60, 9 * 60, 9 * 60), true, 'start == end: open all day');
  });
  test('DST: an opening the clocks skip opens when they jump', () => {
    const early = { start: '02:30', end: '05:00', timezone: 'Europe/Berlin' };
    // 2026-03-29: 02:00 CET jumps to 03:00 CEST (01:00Z).
    assert.equal(nextSendTime(early, at('2026-03-28T23:00:00Z')), at('2026-03-29T01:00:00Z'));
    // Fall back (2026-10-25, 03:00 CEST → 02:00 CET at 01:00Z): 02:30 happens twice, the first counts.
    assert.equal(nextSendTime(early, at('2026-10-24T22:00:00Z')), at('2026-10-25T00:30:00Z'));
  });
  test('property: the answer is now when open, else a later instant that is open, with nothing open in between (hour steps)', () => {
    const zones = ['Europe/Berlin', 'America/New_York', 'Asia/Kolkata', 'Australia/Lord_Howe', 'UTC'];
    fc.assert(fc.property(
      fc.integer({ min: Date.parse('2025-01-01'), max: Date.parse('2028-01-01') }),
      fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }), fc.integer({ min: 0, max: 23 }), fc.constantFrom(...zones),
      (now, sh, sm, eh, zone) => {
        const pad = (n: number) => String(n).padStart(2, '0');
        const hours = { start: `${pad(sh)}:${pad(sm)}`, end: `${pad(eh)}:00`, timezone: zone };
        const next = nextSendTime(hours, now);
        assert.ok(next >= now && next - now <= 26 * 3600_000);
        assert.equal(nextSendTime(hours, next), next, 'the window is open at the answer');
        for (let t = now + 60_000; t < next; t += 3600_000) assert.notEqual(nextSendTime(hours, t), t, 'closed before the answer');
      },
    ), { numRuns: 300 });
  });
});

const contact = (over: Partial<RenderContact> = {}): RenderContact => ({ phone: '+4915112345678', first_name: 'Ada', last_name: 'Lovelace', variables: { order_id: 'A-1' }, ...over });
const input = (c: RenderContact, overrides = {}) => ({ message_id: 'm-1', batch_id: 'b-1', company_id: 7, kind: 'automation' as const, source_id: 3, contact: c, overrides });

describe('rendering', () => {
  const template = {
    header: { type: 'video' as const, url: 'https://cdn.example/default.mp4' },
    body: '{{ first_name }} {{ last_name }} {{ phone }} {{ order_id }}/{{ variables.order_id }} [{{ missing }}] [{{ constructor }}] [{{ variables.constructor }}]',
    buttons: [{ type: 'url' as const, text: 'Track', url: 'https://shop.example/t' }, { type: 'url' as const, text: 'Help', url: 'https://shop.example/h' }],
    whatsapp: { name: 'n', language: 'de' },
  };
  test('scope: contact fields, variables by name and as variables.NAME; missing renders empty; inherited members invisible', () => {
    const r = renderMessage(compileTemplate(template), input(contact()));
    assert.equal(r.body, 'Ada Lovelace +4915112345678 A-1/A-1 [] [] []');
    assert.deepEqual(r.whatsapp!.body_parameters, ['Ada', 'Lovelace', '+4915112345678', 'A-1', 'A-1', '', '', '']);
  });
  test('__proto__ and constructor keys are data; nothing reaches a prototype', () => {
    const vars = JSON.parse('{"__proto__":{"polluted":"yes"},"constructor":"C","order_id":"X"}');
    const t = compileTemplate({ ...template, body: '{{ constructor }} {{ variables.constructor }} {{ __proto__.polluted }} {% assign __proto__ = variables %}{{ polluted }}' });
    assert.equal(renderMessage(t, input(contact({ variables: vars }))).body, 'C C yes ');
    assert.equal(({} as any).polluted, undefined);
  });
  test('media: contact > request > template; buttons: url/url2 replace the first/second destination', () => {
    const t = compileTemplate(template);
    const overrides = { video_url: 'https://r.example/v.mp4', url: 'https://shop.example/t/123', url2: null };
    assert.deepEqual(renderMessage(t, input(contact({ video_url: 'https://c.example/v.mp4' }), overrides)).header, { type: 'video', url: 'https://c.example/v.mp4' });
    const r = renderMessage(t, input(contact({ image_url: 'https://c.example/i.png' }), overrides));
    assert.deepEqual(r.header, { type: 'video', url: 'https://r.example/v.mp4' }, 'an image does not replace a video header');
    assert.deepEqual(r.buttons, [{ text: 'Track', url: 'https://shop.example/t/123' }, { text: 'Help', url: 'https://shop.example/h' }]);
    assert.deepEqual(r.whatsapp!.button_parameters, ['/123', null]);
    assert.deepEqual(renderMessage(t, input(contact())).header, { type: 'video', url: 'https://cdn.example/default.mp4' });
  });
  test('errors fail the message: unknown filter (parse), runaway loop (render), file access', () => {
    assert.throws(() => renderMessage(compileTemplate({ ...template, body: '{{ x | nope }}' }), input(contact())), RenderError);
    const loop = compileTemplate({ ...template, body: '{% for i in (1..variables.n) %}x{% endfor %}' });
    assert.equal(renderMessage(loop, input(contact({ variables: { n: 3 } }))).body, 'xxx');
    assert.throws(() => renderMessage(loop, input(contact({ variables: { n: 1e9 } }))), /template error: memory alloc limit exceeded/);
    assert.throws(() => renderMessage(compileTemplate({ ...template, body: "{% include '/etc/passwd' %}" }), input(contact())), RenderError);
  });
  test('a batch renders once per distinct set of values read; different values never share a render', () => {
    const t = compileTemplate({ ...template, body: 'Hi {{ first_name }}{% if last_name %} {{ last_name }}{% endif %} {{ variables.n }}' });
    const a = renderMessage(t, input(contact({ first_name: 'Ada', last_name: null, variables: { n: 1 } })));
    const b = renderMessage(t, input(contact({ first_name: 'Ada', last_name: '', variables: { n: 1 }, phone: '+4915199999999' })));
    const c = renderMessage(t, input(contact({ first_name: 'Ada', last_name: null, variables: { n: 2 } })));
    const d = renderMessage(t, input(contact({ first_name: 'Bob', last_name: 'B', variables: { n: 1 } })));
    assert.deepEqual([a.body, b.body, c.body, d.body], ['Hi Ada 1', 'Hi Ada  1', 'Hi Ada 2', 'Hi Bob B 1'], "a missing name is nil (false in {% if %}), '' is not");
    assert.equal(b.to, '+4915199999999', 'per-message fields are never shared');
    assert.equal(t.memo.size, 4);
    renderMessage(t, input(contact({ first_name: 'Ada', last_name: null, variables: { n: 1 }, phone: '+4915188888888' })));
    assert.equal(t.memo.size, 4, 'equal values read: one render shared');
    assert.deepEqual(t.reads, ['first_name', 'last_name', 'variables']);
  });
  test('a text header is rendered and becomes header parameters', () => {
    const t = compileTemplate({ ...template, header: { type: 'text', text: 'For {{ first_name }}' } });
    const r = renderMessage(t, input(contact()));
    assert.deepEqual(r.header, { type: 'text', text: 'For Ada' });
    assert.deepEqual(templateMessage(r)!.template, {
      name: 'n', language: { code: 'de' },
      components: [
        { type: 'header', parameters: [{ type: 'text', text: 'Ada' }] },
        { type: 'body', parameters: r.whatsapp!.body_parameters.map((text) => ({ type: 'text', text })) },
      ],
    });
  });
});

describe('webhook signatures', () => {
  test('the Standard Webhooks test vector', () => {
    const signer = createSigner('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw');
    assert.equal(signer.sign('msg_p5jXN8AQM9LWM0D4loKWxJek', new Date(1614265330 * 1000), '{"test": 2432232314}'), 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });
  test('secrets without the prefix are used as their UTF-8 bytes, even when they look like base64', () => {
    assert.deepEqual(webhookKey('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'), Buffer.from('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'));
    assert.deepEqual(webhookKey('not base64: a plain secret!'), Buffer.from('not base64: a plain secret!'));
  });
});

describe('retries and chunks', () => {
  test('retry decision: the schedule\'s wait after attempt n, Retry-After when longer, failed after the last wait or at once when permanent', () => {
    const schedule = [5_000, 30_000, 120_000];
    const t = 1_000_000;
    const transient = { status: 'failed', retryable: true, error: 'HTTP 503', code: '503' } as const;
    assert.deepEqual(nextStep(transient, 1, schedule, t), { kind: 'retry', at: t + 5_000, error: 'HTTP 503', code: '503' });
    assert.deepEqual(nextStep(transient, 3, schedule, t), { kind: 'retry', at: t + 120_000, error: 'HTTP 503', code: '503' });
    assert.deepEqual(nextStep(transient, 4, schedule, t), { kind: 'failed', error: 'HTTP 503', code: '503' });
    assert.equal((nextStep({ ...transient, retryAfterMs: 60_000 }, 1, schedule, t) as any).at, t + 60_000, 'Retry-After longer than the schedule');
    assert.equal((nextStep({ ...transient, retryAfterMs: 1_000 }, 2, schedule, t) as any).at, t + 30_000, 'Retry-After shorter than the schedule');
    assert.deepEqual(nextStep({ status: 'failed', retryable: false, error: 'HTTP 400', code: '400' }, 1, schedule, t), { kind: 'failed', error: 'HTTP 400', code: '400' });
    assert.deepEqual(nextStep({ status: 'sent', providerMessageId: 'wamid.X' }, 2, schedule, t), { kind: 'sent', providerMessageId: 'wamid.X' });
    assert.deepEqual(nextStep(transient, 1, [], t), { kind: 'failed', error: 'HTTP 503', code: '503' }, 'an empty schedule: no retries');
  });
  test('Retry-After: delta-seconds or an HTTP date; garbage ignored', () => {
    const now = Date.parse('2026-03-02T12:00:00Z');
    assert.equal(retryAfterMs('120', now), 120_000);
    assert.equal(retryAfterMs(' 0 ', now), 0);
    assert.equal(retryAfterMs('Mon, 02 Mar 2026 12:05:00 GMT', now), 300_000);
    assert.equal(retryAfterMs('Mon, 02 Mar 2026 11:00:00 GMT', now), 0, 'a date in the past: no wait');
    assert.equal(retryAfterMs('soon', now), undefined);
    assert.equal(retryAfterMs('-5', now), undefined);
    assert.equal(retryAfterMs(undefined, now), undefined);
  });
  test('one network-error classifier: timeouts, resets, invalid HTTP retry; a refused address does not; interruption wins', () => {
    const aborted = AbortSignal.abort();
    assert.deepEqual(networkFailure({ code: 'UND_ERR_HEADERS_TIMEOUT' }, 15_000), { status: 'failed', retryable: true, error: 'timeout after 15000 ms' });
    assert.deepEqual(networkFailure(new Error('x'), 15_000, undefined, { timedOut: true }), { status: 'failed', retryable: true, error: 'timeout after 15000 ms' });
    assert.deepEqual(networkFailure({ code: 'ECONNREFUSED' }, 1), { status: 'failed', retryable: true, error: 'connection error: ECONNREFUSED' });
    assert.equal((networkFailure({ code: 'HPE_INVALID_CONSTANT' }, 1) as any).retryable, true);
    assert.equal((networkFailure({ code: 'EADDRNOTALLOWED' }, 1) as any).retryable, false);
    assert.deepEqual(networkFailure({ code: 'UND_ERR_ABORTED' }, 1, aborted), { status: 'failed', retryable: true, error: 'delivery interrupted' });
  });
  test('chunks cover every pending seq once, at most `size` each', () => {
    assert.deepEqual(chunkRanges([0, 1, 2, 4, 7, 8, 9], 3), [{ seq_from: 0, seq_to: 2 }, { seq_from: 4, seq_to: 8 }, { seq_from: 9, seq_to: 9 }]);
    assert.deepEqual(chunkRanges([], 3), []);
  });
  test('Graph errors: throttling and temporary codes retry, others fail; unknown bodies by status', () => {
    const err = (code: number) => JSON.stringify({ error: { code, message: 'm' } });
    assert.equal((classifyError(400, err(130429)) as any).retryable, true);
    assert.equal((classifyError(400, err(131056)) as any).retryable, true);
    assert.equal((classifyError(400, err(132001)) as any).retryable, false);
    assert.deepEqual([(classifyError(401, err(190)) as any).status, (classifyError(401, err(190)) as any).reason], ['wait', 'channel_paused'], 'an expired token pauses the channel');
    assert.equal((classifyError(503, 'oops') as any).retryable, true);
    assert.equal((classifyError(404, 'oops') as any).retryable, false);
    assert.equal((classifyError(408, 'oops') as any).retryable, true);
    assert.equal((classifyError(400, err(131026)) as any).code, '131026');
    assert.equal((classifyError(429, err(130429), '90') as any).retryAfterMs, 90_000, 'Retry-After of a 429 is passed on');
    assert.equal((classifyError(400, err(131026), '90') as any).retryAfterMs, undefined, 'not for a permanent failure');
  });
  test('wamid of a Graph answer', () => {
    assert.equal(wamidOf(JSON.stringify({ messaging_product: 'whatsapp', messages: [{ id: 'wamid.HBgL' }] })), 'wamid.HBgL');
    assert.equal(wamidOf('{}'), undefined);
    assert.equal(wamidOf('not json'), undefined);
    assert.equal(wamidOf(JSON.stringify({ messages: [{ id: 42 }] })), undefined);
  });
});
