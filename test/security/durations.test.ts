/**
 * Durations and times are range-checked (docs/security.md "Durations and times"): every duration or
 * time an operator, a console user or a `cms` command can give answers 422 with `loc` at the field and
 * a message saying the range (never a 500, never an absurd stored value), and changes nothing; every
 * duration setting of the environment stops the start with a message naming the setting (the start
 * itself, a process of its own: durations.process.test.ts).
 * Time comes from a FakeClock (2026-06-01T10:00:00Z).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { FakeClock, startTestServer, type TestServer } from '../helpers/server.ts';
import { cliFor } from '../cli/helpers.ts';
import { newCompany, signedInClient } from '../console/helpers.ts';

const NOW = Date.parse('2026-06-01T10:00:00Z');
const DAY = 86_400_000;
const clock = new FakeClock(NOW);
let s: TestServer;
before(async () => { s = await startTestServer({ clock }); });
after(() => s.close());

const iso = (ms: number) => new Date(ms).toISOString();
const ABSURD_DURATIONS: unknown[] = ['999999d', '999999999d', '-1d', '0s', '0ms', 1e308, 99_999_999_999, '1e308d', '31d', '721h', '999ms', ''];

/** Calls the operator API; the status and parsed body, whatever the status. */
async function call(method: string, p: string, body?: unknown): Promise<{ status: number; json: any }> {
  let status = 0;
  const json = await s.admin(method, p, body, -1).catch((err: Error) => {
    const m = /answered (\d{3}): ([\s\S]*)$/.exec(err.message);
    if (!m) throw err;
    status = Number(m[1]);
    return JSON.parse(m[2]);
  });
  return { status, json };
}

/** Asserts a 422 whose first item is at `loc` (and whose items are all there or above it), message matching `msg`. */
function assert422(res: { status: number; json: any }, loc: (string | number)[], msg: RegExp | undefined, why: string): void {
  assert.equal(res.status, 422, `${why}: ${JSON.stringify(res.json)}`);
  assert.deepEqual(res.json.detail[0].loc, loc, why);
  for (const item of res.json.detail) assert.deepEqual(item.loc, loc.slice(0, item.loc.length), `${why}: every item at the field or its parent`);
  if (msg) assert.match(res.json.detail[0].msg, msg, why);
}

test('expire_after of automations and campaigns: from 1s to 30d or null; anything else is 422 at body.expire_after and stores nothing', async () => {
  const companyId = await newCompany(s);
  const camp = await s.admin('POST', `/admin/companies/${companyId}/campaigns`, { name: 'c', template: { body: 'hi' }, expire_after: '2d' }, 201);
  const auto = await s.admin('POST', `/admin/companies/${companyId}/automations`, { name: 'a', type: 'api', active: true, template: { body: 'hi' }, expire_after: '2h' }, 201);
  for (const bad of ABSURD_DURATIONS) {
    const why = `expire_after ${JSON.stringify(bad)}`;
    const range = typeof bad === 'string' && /^[0-9]+(ms|s|m|h|d)$/.test(bad) ? /from 1s to 30d/ : undefined;
    assert422(await call('PATCH', `/admin/campaigns/${camp.campaign_id}`, { expire_after: bad }), ['body', 'expire_after'], range, `campaign ${why}`);
    assert422(await call('PATCH', `/admin/automations/${auto.automation_id}`, { expire_after: bad }), ['body', 'expire_after'], range, `automation ${why}`);
    assert422(await call('POST', `/admin/companies/${companyId}/campaigns`, { name: 'x', template: { body: 'hi' }, expire_after: bad }), ['body', 'expire_after'], range, `new campaign ${why}`);
    assert422(await call('POST', `/admin/companies/${companyId}/automations`, { name: 'x', type: 'api', active: true, template: { body: 'hi' }, expire_after: bad }), ['body', 'expire_after'], range, `new automation ${why}`);
  }
  assert.equal((await s.admin('GET', `/admin/campaigns/${camp.campaign_id}`)).expire_after, '2d', 'nothing stored');
  assert.equal((await s.admin('GET', `/admin/automations/${auto.automation_id}`)).expire_after, '2h');
  assert.equal((await s.admin('GET', `/admin/companies/${companyId}/campaigns`)).length, 1, 'no campaign created');
  assert.equal((await s.admin('GET', `/admin/companies/${companyId}/automations`)).length, 1, 'no automation created');
  for (const good of ['1s', '1000ms', '30d', '720h', null]) {
    assert.equal((await s.admin('PATCH', `/admin/campaigns/${camp.campaign_id}`, { expire_after: good })).expire_after, good);
    assert.equal((await s.admin('PATCH', `/admin/automations/${auto.automation_id}`, { expire_after: good })).expire_after, good);
  }
});

test('frequency_cap.per from 1m to 366d, delivery_hours HH:MM in an IANA zone: anything else is 422 at the field and changes nothing', async () => {
  const companyId = await newCompany(s);
  await s.admin('PATCH', `/admin/companies/${companyId}`, { frequency_cap: { messages: 3, per: '7d' } });
  for (const bad of [...ABSURD_DURATIONS.filter((d) => d !== '31d' && d !== '721h'), '367d', '8785h', '527041m', '0m', '1s']) {
    const range = typeof bad === 'string' && /^[1-9][0-9]{0,5}[mhd]$/.test(bad) ? /at most 366d/ : undefined;
    assert422(await call('PATCH', `/admin/companies/${companyId}`, { frequency_cap: { messages: 3, per: bad } }), ['body', 'frequency_cap', 'per'], range, `per ${JSON.stringify(bad)}`);
  }
  for (const bad of [0, -1, 1001, 1e308, 99_999_999_999]) {
    assert422(await call('PATCH', `/admin/companies/${companyId}`, { frequency_cap: { messages: bad, per: '7d' } }), ['body', 'frequency_cap', 'messages'], undefined, `messages ${bad}`);
  }
  for (const [field, hours] of [
    ['start', { start: '24:00', end: '21:00', timezone: 'UTC' }], ['end', { start: '09:00', end: '99:99', timezone: 'UTC' }],
    ['start', { start: '9:00', end: '21:00', timezone: 'UTC' }], ['timezone', { start: '09:00', end: '21:00', timezone: 'Mars/Olympus_Mons' }],
  ] as const) {
    assert422(await call('PATCH', `/admin/companies/${companyId}`, { delivery_hours: hours }), ['body', 'delivery_hours', field], undefined, JSON.stringify(hours));
  }
  const company = await s.admin('GET', `/admin/companies/${companyId}`);
  assert.deepEqual(company.frequency_cap, { messages: 3, per: '7d' }, 'nothing stored');
  assert.equal(company.delivery_hours, null);
  for (const per of ['1m', '366d', '8784h']) assert.deepEqual((await s.admin('PATCH', `/admin/companies/${companyId}`, { frequency_cap: { messages: 1, per } })).frequency_cap, { messages: 1, per });
});

test('a send\'s scheduled_for: in the future, at most 730 days ahead; expire_at at most 30 days after the send time; else 422 at the field, nothing sent', async () => {
  const companyId = await newCompany(s);
  const camp = await s.admin('POST', `/admin/companies/${companyId}/campaigns`, { name: 'c', template: { body: 'hi' } }, 201);
  const send = (body: Record<string, unknown>) => call('POST', `/admin/campaigns/${camp.campaign_id}/sends`, { contacts: ['+4915112345678'], ...body });
  const now = clock.now();
  for (const at of [iso(now + 730 * DAY + 1000), '9999-12-31T23:59:59Z', '2999-01-01T00:00:00+14:00']) {
    assert422(await send({ scheduled_for: at }), ['body', 'scheduled_for'], /^must be at most 730 days ahead \(not after 2028-05-31T10:00:00\.000Z\)$/, `scheduled_for ${at}`);
  }
  for (const at of [iso(now), iso(now - 1000), '1970-01-01T00:00:00Z', '0001-01-01T00:00:00Z']) {
    assert422(await send({ scheduled_for: at }), ['body', 'scheduled_for'], /must be in the future/, `scheduled_for ${at}`);
  }
  assert422(await send({ scheduled_for: '+275760-09-13T00:00:00Z' }), ['body', 'scheduled_for'], undefined, 'an extended year');
  for (const at of [iso(now + 30 * DAY + 1000), '9999-12-31T23:59:59Z']) {
    assert422(await send({ expire_at: at }), ['body', 'expire_at'], /^must be at most 30 days after now \(not after 2026-07-01T10:00:00\.000Z\)$/, `expire_at ${at}`);
  }
  const later = now + 100 * DAY;
  assert422(await send({ scheduled_for: iso(later), expire_at: iso(later + 30 * DAY + 1) }), ['body', 'expire_at'], /^must be at most 30 days after scheduled_for/, 'expire_at after a scheduled send');
  assert.deepEqual((await s.admin('GET', `/admin/companies/${companyId}/batches`)).batches, [], 'no batch was made');
  // The bounds themselves are accepted.
  assert.equal((await send({ scheduled_for: iso(now + 730 * DAY), dry_run: true })).status, 200);
  assert.equal((await send({ expire_at: iso(now + 30 * DAY), dry_run: true })).status, 200);
  assert.equal((await send({ scheduled_for: iso(later), expire_at: iso(later + 30 * DAY), dry_run: true })).status, 200);
});

test('event replay since: from 1970 to now (a minute of leeway); a later or earlier time is 422 at body.since', async () => {
  const companyId = await newCompany(s);
  const ep = await s.admin('POST', `/admin/companies/${companyId}/event-endpoints`, { url: 'http://127.0.0.1:9/events' }, 201);
  const replay = (since: string) => call('POST', `/admin/event-endpoints/${ep.endpoint_id}/replay`, { since });
  // Judged by the wall clock, which stamps events (the service's clock is the FakeClock's 2026-06-01).
  for (const since of [iso(Date.now() + 120_000), '9999-12-31T23:59:59Z']) {
    assert422(await replay(since), ['body', 'since'], /^since must not be in the future \(now is \d{4}-\d\d-\d\dT[\d:.]+Z\)$/, since);
  }
  for (const since of ['1969-12-31T23:59:59Z', '0001-01-01T00:00:00Z']) assert422(await replay(since), ['body', 'since'], /before 1970-01-01/, since);
  assert.equal((await replay(iso(Date.now()))).status, 202);
  assert.equal((await replay('1970-01-01T00:00:00Z')).status, 202);
});

test('console: a send time more than 730 days ahead is refused beside its field', async () => {
  const companyId = await newCompany(s, { delivery_hours: { start: '08:00', end: '22:00', timezone: 'Europe/Berlin' } });
  const camp = await s.admin('POST', `/admin/companies/${companyId}/campaigns`, { name: 'Later', template: { body: 'Later' } }, 201);
  const cl = await signedInClient(s, companyId);
  const page = `/console/campaigns/${camp.campaign_id}/send`;
  const form = { audience: 'numbers', segment_id: '', numbers: '+4915112345678', when: 'later' };
  for (const sendAt of ['2028-05-31T12:01', '9999-12-31T23:59']) {
    const far = await cl.submit(page, page, { ...form, send_at: sendAt });
    assert.equal(far.status, 422, sendAt);
    assert.match(far.text, /id="send_at-error"[^>]*>That is too far ahead: choose a time at most 730 days from now \(before 31 May 2028, 12:00 Europe\/Berlin\)\./, sendAt);
  }
  assert.equal((await cl.submit(page, page, { ...form, send_at: '2028-05-31T11:59' })).status, 200, 'a day within the bound is reviewed');
  assert.deepEqual((await s.admin('GET', `/admin/companies/${companyId}/batches`)).batches, []);
});

test('cms: --expire-after, --frequency-cap, --at and --since out of range exit non-zero with the field and its range', async () => {
  const cms = cliFor(s);
  const companyId = await newCompany(s);
  const camp = await s.admin('POST', `/admin/companies/${companyId}/campaigns`, { name: 'c', template: { body: 'hi' } }, 201);
  const expire = await cms(['campaign', 'update', String(camp.campaign_id), '--expire-after', '999999d']);
  assert.notEqual(expire.code, 0);
  assert.match(expire.stderr, /expire_after.*from 1s to 30d/);
  const cap = await cms(['company', 'update', String(companyId), '--frequency-cap', '3/999999d']);
  assert.notEqual(cap.code, 0);
  assert.match(cap.stderr, /frequency_cap\.per.*at most 366d/);
  const at = await cms(['campaign', 'send', String(camp.campaign_id), '--contacts', '+4915112345678', '--at', '9999-12-31T23:59:59Z']);
  assert.notEqual(at.code, 0);
  assert.match(at.stderr, /scheduled_for.*at most 730 days ahead/);
  const ep = await s.admin('POST', `/admin/companies/${companyId}/event-endpoints`, { url: 'http://127.0.0.1:9/events' }, 201);
  const back = await cms(['events', 'replay', String(ep.endpoint_id), '--since', '99999999999999d']);
  assert.equal(back.code, 2);
  assert.match(back.stderr, /reaches back before 1970-01-01/);
  const ahead = await cms(['events', 'replay', String(ep.endpoint_id), '--since', '9999-12-31T00:00:00Z']);
  assert.notEqual(ahead.code, 0);
  assert.match(ahead.stderr, /since must not be in the future/);
  assert.equal((await s.admin('GET', `/admin/campaigns/${camp.campaign_id}`)).expire_after, '24h', 'nothing changed');
  assert.equal((await s.admin('GET', `/admin/companies/${companyId}`)).frequency_cap, null);
});

/** Every duration setting: absurd values stop the start with a message that begins with the setting's name. */
const SETTINGS: { name: string; bad: string[]; good: [string, string, number][] }[] = [
  { name: 'WHATSAPP_PAIR_INTERVAL', bad: ['999999d', '-1d', '1e308s', '61m', 'often'], good: [['0s', 'whatsappPairIntervalMs', 0], ['1h', 'whatsappPairIntervalMs', 3_600_000]] },
  { name: 'WHATSAPP_PACING_MARGIN', bad: ['999999d', '1001ms', '-1ms'], good: [['1s', 'whatsappPacingMarginMs', 1000]] },
  { name: 'DELIVERY_TIMEOUT', bad: ['999999d', '0s', '99ms', '11m', '-1s'], good: [['100ms', 'deliveryTimeoutMs', 100], ['10m', 'deliveryTimeoutMs', 600_000]] },
  { name: 'DELIVERY_RETRY_SCHEDULE', bad: ['999999d', '5s,8d', '0s', '5s,,5s', Array(101).fill('1s').join(',')], good: [['1ms,7d', 'deliveryRetrySchedule', 1]] },
  { name: 'EVENT_RETRY_SCHEDULE', bad: ['999999d', '0ms', '1e308d'], good: [['7d', 'eventRetrySchedule', 7 * DAY]] },
  { name: 'EVENT_RETENTION', bad: ['999999d', '0d', '23h', '36501d'], good: [['1d', 'eventRetentionMs', DAY], ['36500d', 'eventRetentionMs', 36_500 * DAY]] },
  { name: 'MESSAGE_RETENTION', bad: ['999999d', '0d'], good: [['1d', 'messageRetentionMs', DAY]] },
  { name: 'WHATSAPP_TEMPLATE_SYNC', bad: ['999999d', '0s', '59s', '8d'], good: [['1m', 'whatsappTemplateSyncMs', 60_000], ['7d', 'whatsappTemplateSyncMs', 7 * DAY]] },
  { name: 'PGLITE_VACUUM_INTERVAL', bad: ['999999d', '99ms', '25h', '-1s'], good: [['0s', 'pgliteVacuumIntervalMs', 0], ['100ms', 'pgliteVacuumIntervalMs', 100], ['1d', 'pgliteVacuumIntervalMs', DAY]] },
];

test('duration settings: each has a range; a value outside it is a ConfigError naming the setting', () => {
  for (const { name, bad, good } of SETTINGS) {
    for (const value of bad) {
      assert.throws(() => loadConfig({ [name]: value }), (err: unknown) => err instanceof ConfigError && err.message.startsWith(`${name} must `), `${name}=${value.slice(0, 40)}`);
    }
    for (const [value, key, first] of good) {
      const got = (loadConfig({ [name]: value }) as unknown as Record<string, number | readonly number[]>)[key];
      assert.equal(Array.isArray(got) ? (got as readonly number[])[0] : got, first, `${name}=${value}`);
    }
  }
  assert.throws(() => loadConfig({ SMTP_URL: 'http://mail.example' }), (err: unknown) => err instanceof ConfigError && /^SMTP_URL must/.test(err.message));
  assert.throws(() => loadConfig({ SMTP_URL: 'smtp://mail.example:587' }), (err: unknown) => err instanceof ConfigError && /^MAIL_FROM must/.test(err.message));
  // Not a duration, but a setting whose bad value used to surface as pino's own error.
  assert.throws(() => loadConfig({ LOG_LEVEL: 'nope' }), (err: unknown) => err instanceof ConfigError && /^LOG_LEVEL must be one of .*; got "nope"$/.test(err.message));
  for (const level of ['silent', 'debug', 'warn']) assert.equal(loadConfig({ LOG_LEVEL: level }).logLevel, level);
  assert.equal(loadConfig({}).logLevel, 'info');
});
