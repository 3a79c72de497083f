/**
 * Operator API rate card routes (src/http/admin/rate-card.ts), against the real server: JSON and CSV
 * loads, replace semantics, 422 `loc` naming the bad row in each format, duplicates, unknown
 * category / country, negative price, mixed currencies, 401 without a token, the audit entry, and the
 * document (operationId, statuses, answers validating against their schemas).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ADMIN_TOKEN, FakeClock, startTestServer, type TestServer } from '../helpers/server.ts';

const clock = new FakeClock(Date.parse('2026-06-01T10:00:00Z'));
let s: TestServer;
before(async () => {
  s = await startTestServer({ clock });
});
after(() => s.close());

async function put(body: unknown, type = 'application/json', token: string | null = ADMIN_TOKEN): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = { 'content-type': type };
  if (token !== null) headers.authorization = `Bearer ${token}`;
  const res = await fetch(`${s.url}/admin/whatsapp/rate-card`, { method: 'PUT', headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}
const get = () => s.admin('GET', '/admin/whatsapp/rate-card');

/** Empties the one rate card of the database (on PostgreSQL, test runs share the database and its card). */
async function forgetCard(): Promise<void> {
  const db = s.service.deps.database.db;
  await db.deleteFrom('whatsapp_rates').execute();
  await db.deleteFrom('whatsapp_rate_card').execute();
}
const row = (country: string, category: string, price: number, currency = 'EUR') => ({ country, category, price, currency });

test('an empty card before the first load; JSON load replaces it; the GET returns it', async () => {
  await forgetCard();
  assert.deepEqual(await get(), { rows: [], currency: null, updated_at: null });
  const first = await put({ rows: [row('DE', 'MARKETING', 0.1365), row('DE', 'UTILITY', 0.0456), row('BR', 'MARKETING', 0.0625)] });
  assert.equal(first.status, 200, JSON.stringify(first.body));
  assert.deepEqual(first.body, {
    rows: [row('BR', 'MARKETING', 0.0625), row('DE', 'MARKETING', 0.1365), row('DE', 'UTILITY', 0.0456)],
    currency: 'EUR', updated_at: '2026-06-01T10:00:00.000Z',
  });
  assert.deepEqual(await get(), first.body);

  clock.advance(60_000);
  const second = await put({ rows: [row('IN', 'AUTHENTICATION', 0, 'USD')] });
  assert.equal(second.status, 200);
  assert.deepEqual(second.body, { rows: [row('IN', 'AUTHENTICATION', 0, 'USD')], currency: 'USD', updated_at: '2026-06-01T10:01:00.000Z' });
  assert.deepEqual(await get(), second.body, 'the earlier rows are gone');

  const emptied = await put({ rows: [] });
  assert.deepEqual([emptied.status, emptied.body.rows, emptied.body.currency], [200, [], null]);
});

test('a CSV body loads the card (any column order, ; delimiter)', async () => {
  const csv = 'category;country;currency;price\r\nMARKETING;DE;EUR;0.1365\r\nUTILITY;FR;EUR;0.0300\r\n\r\n';
  const res = await put(csv, 'text/csv');
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.deepEqual(res.body.rows, [row('DE', 'MARKETING', 0.1365), row('FR', 'UTILITY', 0.03)]);
  const comma = await put('country,category,price,currency\nIT,MARKETING,0.0691,EUR\n', 'text/csv; charset=utf-8');
  assert.deepEqual(comma.body.rows, [row('IT', 'MARKETING', 0.0691)]);
});

test('bad rows are 422 naming the row index and field; nothing changes', async () => {
  await put({ rows: [row('DE', 'MARKETING', 0.1)] });
  const before = await get();
  const cases: [unknown, (string | number)[]][] = [
    [{ rows: [row('DE', 'MARKETING', 0.1), row('FR', 'MARKETING', 0.1), row('IT', 'MARKETING', 0.1), row('DE', 'MARKETING', -1)] }, ['body', 'rows', 3, 'price']],
    [{ rows: [row('DE', 'PROMO', 0.1)] }, ['body', 'rows', 0, 'category']],
    [{ rows: [row('DE', 'MARKETING', 0.1), row('XX', 'MARKETING', 0.1)] }, ['body', 'rows', 1, 'country']],
    [{ rows: [row('de', 'MARKETING', 0.1)] }, ['body', 'rows', 0, 'country']],
    [{ rows: [row('DE', 'MARKETING', 0.1), row('FR', 'MARKETING', 0.1, 'USD')] }, ['body', 'rows', 1, 'currency']],
    [{ rows: [row('DE', 'MARKETING', 0.1), row('DE', 'MARKETING', 0.2)] }, ['body', 'rows', 1, 'category']],
    [{ rows: [{ country: 'DE', category: 'MARKETING', currency: 'EUR' }] }, ['body', 'rows', 0, 'price']],
  ];
  for (const [body, loc] of cases) {
    const res = await put(body);
    assert.equal(res.status, 422, JSON.stringify(body));
    assert.ok(res.body.detail.some((d: any) => JSON.stringify(d.loc) === JSON.stringify(loc)), `${JSON.stringify(loc)} in ${JSON.stringify(res.body)}`);
  }
  const duplicate = await put({ rows: [row('DE', 'MARKETING', 0.1), row('DE', 'MARKETING', 0.2)] });
  assert.match(duplicate.body.detail[0].msg, /duplicate of row 0/);
  assert.deepEqual(await get(), before, 'nothing changed');
});

test('bad CSV rows are 422 with loc ["body", index, column]; a bad header is ["body"]', async () => {
  const csvCases: [string, (string | number)[]][] = [
    ['country,category,price,currency\nDE,MARKETING,0.1,EUR\nFR,MARKETING,-0.5,EUR\n', ['body', 1, 'price']],
    ['country,category,price,currency\nDE,MARKETING,abc,EUR\n', ['body', 0, 'price']],
    ['country,category,price,currency\nZZ,MARKETING,0.1,EUR\n', ['body', 0, 'country']],
    ['country,category,price,currency\nDE,SERVICE,0.1,EUR\n', ['body', 0, 'category']],
    ['country,category,price,currency\nDE,UTILITY,0.1,EUR\nDE,UTILITY,0.2,EUR\n', ['body', 1, 'category']],
    ['country,kind,price,currency\nDE,UTILITY,0.1,EUR\n', ['body']],
    ['', ['body']],
  ];
  for (const [csv, loc] of csvCases) {
    const res = await put(csv, 'text/csv');
    assert.equal(res.status, 422, csv);
    assert.ok(res.body.detail.some((d: any) => JSON.stringify(d.loc) === JSON.stringify(loc)), `${JSON.stringify(loc)} in ${JSON.stringify(res.body)}`);
  }
});

test('401 without a token; 415 for another media type; the load is audited with the row count', async () => {
  const res = await put({ rows: [] }, 'application/json', null);
  assert.equal(res.status, 401);
  const anon = await fetch(`${s.url}/admin/whatsapp/rate-card`);
  assert.equal(anon.status, 401);
  const form = await put('a=b', 'application/x-www-form-urlencoded');
  assert.equal(form.status, 415);

  await put({ rows: [row('DE', 'MARKETING', 0.1), row('DE', 'UTILITY', 0.05)] });
  const { entries } = await s.admin('GET', '/admin/audit?limit=5');
  const entry = entries.find((e: any) => e.action === 'whatsapp.rate_card.set');
  assert.ok(entry);
  assert.deepEqual([entry.actor, entry.target, entry.company_id, entry.details], ['admin', 'whatsapp:rate_card', null, { rows: 2, currency: 'EUR' }]);
});

test('the document: operationIds, statuses, examples', async () => {
  const doc = await (await fetch(`${s.url}/openapi.json`)).json();
  const put = doc.paths['/admin/whatsapp/rate-card'].put;
  const got = doc.paths['/admin/whatsapp/rate-card'].get;
  assert.equal(put.operationId, 'set_whatsapp_rate_card');
  assert.equal(got.operationId, 'get_whatsapp_rate_card');
  assert.deepEqual(Object.keys(put.requestBody.content).sort(), ['application/json', 'text/csv']);
  for (const status of ['200', '401', '415', '422']) assert.ok(put.responses[status], `PUT ${status}`);
  for (const status of ['200', '401']) assert.ok(got.responses[status], `GET ${status}`);
});
