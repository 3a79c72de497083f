/**
 * Operator API contact routes: list and search (number digits, name prefixes) paged;
 * one contact with segments and history; edit of variables and opt-out (source `operator`); CSV import
 * as a background job with progress and line-numbered row errors; the streamed CSV export (5,000
 * contacts equal what was imported); GDPR erasure (personal data gone, batch counts kept, a later
 * send creates a new contact). Errors: documented status and body, nothing written. Security:
 * another company's contact or import answers 404 exactly like an unknown one.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { parse } from 'csv-parse/sync';
import { sql } from 'kysely';
import { ADMIN_TOKEN, eventually, startTestServer, type TestServer } from '../helpers/server.ts';

let s: TestServer;
before(async () => { s = await startTestServer(); });
after(async () => { await s.close(); });

let n = 0;
/** A fresh German mobile number (unique across runs sharing a PostgreSQL database). */
function phone(): string {
  n++;
  return `+49151${String(process.pid % 1000).padStart(3, '0')}${String((Date.now() + n) % 100_000).padStart(5, '0')}`;
}

async function raw(method: string, path: string, body?: string | object, headers: Record<string, string> = {}) {
  const h: Record<string, string> = { authorization: `Bearer ${ADMIN_TOKEN}`, ...headers };
  if (typeof body === 'object') h['content-type'] = 'application/json';
  const res = await fetch(s.url + path, { method, headers: h, body: typeof body === 'object' ? JSON.stringify(body) : body });
  const text = await res.text();
  let json: any;
  try { json = JSON.parse(text); } catch { json = undefined; }
  return { status: res.status, headers: res.headers, text, json };
}

const contactCount = async (companyId: number) => Number((await s.service.deps.database.db.selectFrom('contacts')
  .select((eb) => eb.fn.countAll<number>().as('n')).where('company_id', '=', companyId).executeTakeFirstOrThrow()).n);


/**
 * GETs `url` over a raw HTTP/1.1 connection (with the operator token) and counts the data chunks of its
 * chunked transfer encoding: how the server framed the body, whatever the timing of the reads.
 */
async function chunkFrames(url: URL): Promise<number> {
  const raw = await new Promise<Buffer>((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname);
    const parts: Buffer[] = [];
    socket.on('data', (d: Buffer) => parts.push(d));
    socket.on('end', () => resolve(Buffer.concat(parts)));
    socket.on('error', reject);
    socket.write(`GET ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${ADMIN_TOKEN}\r\nConnection: close\r\n\r\n`);
  });
  let at = raw.indexOf('\r\n\r\n') + 4;
  let frames = 0;
  for (;;) {
    const eol = raw.indexOf('\r\n', at);
    const size = parseInt(raw.subarray(at, eol).toString('latin1'), 16);
    if (!(size > 0)) return frames;
    frames++;
    at = eol + 2 + size + 2;
  }
}

describe('happy', () => {
  test('list, search by digits and by name, paged; profile with segments and history; edit by hand', async () => {
    const c = await s.company();
    const [a, b, d] = [phone(), phone(), phone()];
    await s.admin('PUT', `/admin/companies/${c.companyId}/contacts`, { contacts: [
      { phone: a, first_name: 'Ada', last_name: 'Lovelace', variables: { tier: 'gold' } },
      { phone: b, first_name: 'Adam', last_name: 'Smith' },
      { phone: d, first_name: 'Grace', last_name: 'Hopper' },
    ] });
    const all = await s.admin('GET', `/admin/companies/${c.companyId}/contacts?limit=2`);
    assert.equal(all.contacts.length, 2);
    assert.ok(all.next_after);
    const rest = await s.admin('GET', `/admin/companies/${c.companyId}/contacts?limit=2&after=${encodeURIComponent(all.next_after)}`);
    assert.equal(rest.contacts.length, 1);
    assert.equal(rest.next_after, null);
    assert.deepEqual([...all.contacts, ...rest.contacts].map((x: any) => x.phone), [a, b, d].sort());

    const byName = await s.admin('GET', `/admin/companies/${c.companyId}/contacts?q=ada`);
    assert.deepEqual(byName.contacts.map((x: any) => x.first_name).sort(), ['Ada', 'Adam']);
    const both = await s.admin('GET', `/admin/companies/${c.companyId}/contacts?q=${encodeURIComponent('ADA love')}`);
    assert.deepEqual(both.contacts.map((x: any) => x.phone), [a]);
    const byLast = await s.admin('GET', `/admin/companies/${c.companyId}/contacts?q=hop`);
    assert.deepEqual(byLast.contacts.map((x: any) => x.phone), [d]);
    const byDigits = await s.admin('GET', `/admin/companies/${c.companyId}/contacts?q=${d.slice(-6, -1)}`);
    assert.ok(byDigits.contacts.some((x: any) => x.phone === d));
    const wild = await s.admin('GET', `/admin/companies/${c.companyId}/contacts?q=${encodeURIComponent('a%')}`);
    assert.equal(wild.contacts.length, 0, 'LIKE wildcards are plain characters');

    const seg = await s.api('/api/segments/create', { key: c.key, body: { name: 'Newsletter' } });
    await s.api(`/api/segments/${seg.json.segment_id}/contacts`, { key: c.key, body: { contacts: [a], mode: 'add' } });
    const patched = await s.admin('PATCH', `/admin/companies/${c.companyId}/contacts/${encodeURIComponent(a)}`, { variables: { tier: 'platinum', city: 'Berlin' }, opted_out: true });
    assert.deepEqual(patched.variables, { tier: 'platinum', city: 'Berlin' });
    assert.equal(patched.opted_out, true);
    assert.equal(patched.opt_out_source, 'operator');
    assert.ok(patched.opt_out_at);
    assert.deepEqual(patched.segments.map((x: any) => x.name), ['Newsletter']);
    assert.equal(patched.history.length, 1);
    assert.equal(patched.history[0].actor, 'admin');
    assert.deepEqual(patched.history[0].details.changed, ['variables', 'opted_out']);
    assert.ok(!JSON.stringify(patched.history).includes('Berlin'), 'the history holds field names, not values');
    const national = await s.admin('GET', `/admin/companies/${c.companyId}/contacts/${encodeURIComponent('0' + a.slice(3))}`);
    assert.equal(national.contact_id, patched.contact_id);
    const back = await s.admin('PATCH', `/admin/companies/${c.companyId}/contacts/${encodeURIComponent(a)}`, { opted_out: false });
    assert.equal(back.opted_out, false);
    assert.equal(back.history.length, 2);
  });

  test('CSV import in the background: progress to completion, invalid rows with line numbers, semicolons detected', async () => {
    const c = await s.company();
    const good = Array.from({ length: 2500 }, () => phone());
    const lines = ['Phone;First_Name;tier', ...good.map((p, i) => `${p};Name${i};t${i % 3}`)];
    lines.splice(5, 0, '12;Bad;x'); // line 6
    lines.splice(9, 0, ';NoPhone;x'); // line 10
    lines.splice(12, 0, `${phone()};Opt;x;extra`); // line 13: a field too many
    const r = await raw('POST', `/admin/companies/${c.companyId}/contact-imports?filename=people.csv`, lines.join('\r\n') + '\r\n', { 'content-type': 'text/csv' });
    assert.equal(r.status, 202, r.text);
    assert.equal(r.json.total, 2503);
    assert.equal(r.json.delimiter, ';');
    assert.equal(r.json.filename, 'people.csv');
    const done = await eventually(async () => {
      const x = await s.admin('GET', `/admin/companies/${c.companyId}/contact-imports/${r.json.import_id}`);
      return x.status === 'completed' ? x : undefined;
    }, 90_000); // thousands of rows on a busy machine
    assert.deepEqual({ processed: done.processed, created: done.created, updated: done.updated, failed: done.failed }, { processed: 2503, created: 2500, updated: 0, failed: 3 });
    assert.deepEqual(done.errors.map((e: any) => e.line), [6, 10, 13]);
    assert.match(done.errors[0].error, /not a valid phone number/);
    assert.equal(await contactCount(c.companyId), 2500);
    const one = await s.admin('GET', `/admin/companies/${c.companyId}/contacts/${encodeURIComponent(good[7])}`);
    assert.equal(one.first_name, 'Name7');
    assert.deepEqual(one.variables, { tier: 't1' });
    const audit = await s.admin('GET', `/admin/audit?company_id=${c.companyId}`);
    assert.ok(audit.entries.some((e: any) => e.action === 'contacts.import' && e.target === `import:${r.json.import_id}`));
    const stored = (await sql<{ csv: unknown }>`SELECT csv FROM contact_imports WHERE import_id = ${r.json.import_id}`.execute(s.service.deps.database.db)).rows[0];
    assert.equal(stored.csv, null, 'the file is dropped once imported');
  });

  test('export streams every contact as CSV; 5,000 exported equal what was imported', async () => {
    const c = await s.company();
    const contacts = Array.from({ length: 5000 }, (_, i) => ({
      phone: `+49151${String(i).padStart(8, '0')}`, // always a valid German mobile number (contacts are per company)
      first_name: i % 7 === 0 ? null : `Fïrst "${i}", ok`,
      last_name: `Last${i}`,
      variables: i % 2 ? { order: `O-${i}`, note: 'line1\nline2' } : { order: `O-${i}` },
      opted_out: i % 10 === 0,
    }));
    await s.admin('PUT', `/admin/companies/${c.companyId}/contacts`, { contacts });
    const res = await fetch(`${s.url}/admin/companies/${c.companyId}/contacts/export`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/csv/);
    assert.match(res.headers.get('content-disposition') ?? '', /attachment; filename="contacts-\d+-\d{4}-\d{2}-\d{2}\.csv"/);
    assert.equal(res.headers.get('content-length'), null, 'streamed: no length known up front');
    assert.equal(res.headers.get('transfer-encoding'), 'chunked');
    const text = await res.text();
    // Streamed as it is read: the server sent the body as many chunks of the chunked encoding (counted on
    // the wire; how many reads the client needs depends on timing, how the server framed it does not).
    const frames = await chunkFrames(new URL(`/admin/companies/${c.companyId}/contacts/export`, s.url));
    assert.ok(frames > 1, `sent as ${frames} chunks`);
    const rows = parse(text, { columns: true }) as Record<string, string>[];
    assert.deepEqual(Object.keys(rows[0]), ['phone', 'first_name', 'last_name', 'opted_out', 'opt_out_source', 'opt_out_at', 'tags',
      'phone_country', 'last_inbound_at', 'last_sent_at', 'last_delivered_at', 'last_read_at', 'note', 'order']);
    assert.ok(rows.every((r) => r.phone_country === 'DE' && r.last_sent_at === ''), 'the facts: country of the number, no message yet');
    assert.equal(rows.length, 5000);
    const expected = contacts.map((x) => ({
      phone: x.phone, first_name: x.first_name ?? '', last_name: x.last_name, opted_out: String(x.opted_out),
      note: (x.variables as Record<string, string>).note ?? '', order: x.variables.order,
    })).sort((p, q) => (p.phone < q.phone ? -1 : 1));
    assert.deepEqual(rows.map(({ opt_out_source: _s, opt_out_at: _a, tags: _t, phone_country: _c, last_inbound_at: _i, last_sent_at: _se, last_delivered_at: _d, last_read_at: _r, ...rest }) => rest), expected);
    assert.equal(rows[0].opt_out_source, 'operator');

    // Importing the export again changes nothing.
    const again = await raw('POST', `/admin/companies/${c.companyId}/contact-imports`, text, { 'content-type': 'text/csv' });
    assert.equal(again.status, 202, again.text);
    const done = await eventually(async () => {
      const x = await s.admin('GET', `/admin/companies/${c.companyId}/contact-imports/${again.json.import_id}`);
      return x.status === 'completed' ? x : undefined;
    }, 90_000); // thousands of rows on a busy machine
    assert.deepEqual([done.created, done.updated, done.failed], [0, 5000, 0]);
    const res2 = await fetch(`${s.url}/admin/companies/${c.companyId}/contacts/export`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    assert.equal(await res2.text(), text);
  });

  test('erase: personal data gone from the contact, its messages and inbound; counts kept; a later send creates a new contact', async () => {
    const c = await s.company();
    const p = phone();
    const other = phone();
    const auto = await s.admin('POST', `/admin/companies/${c.companyId}/automations`, { name: 'hi', type: 'api', active: true, template: { body: 'Hi {{ first_name }} {{ code }}' } }, 201);
    const sent = await s.api('/api/automations/send', { key: c.key, body: { automation_id: auto.automation_id, contacts: [{ phone: p, first_name: 'Erika', variables: { code: 'SECRET42' } }, { phone: other, first_name: 'Max' }] } });
    assert.equal(sent.status, 200, sent.text);
    const batchId = sent.json.batch_id;
    const before = await eventually(async () => {
      const b = await s.admin('GET', `/admin/batches/${batchId}`);
      return b.status === 'completed' ? b : undefined;
    });
    const seg = await s.api('/api/segments/create', { key: c.key, body: { name: 'VIP' } });
    await s.api(`/api/segments/${seg.json.segment_id}/contacts`, { key: c.key, body: { contacts: [p, other], mode: 'add' } });
    const db = s.service.deps.database.db;
    const contact = await s.admin('GET', `/admin/companies/${c.companyId}/contacts/${encodeURIComponent(p)}`);
    await db.insertInto('inbound_messages').values({ company_id: c.companyId, contact_id: contact.contact_id, provider_message_id: `wamid.${p}`, type: 'text', text: 'my address is Main St 1', payload: null, received_at: new Date() }).execute();

    const erased = await s.admin('DELETE', `/admin/companies/${c.companyId}/contacts/${encodeURIComponent(p)}`);
    assert.deepEqual(erased, { contact_id: contact.contact_id, messages: 1, skipped: 0, inbound: 1, segments: 1, events: 0, consent_entries: 0, suppressed: false });
    await s.admin('GET', `/admin/companies/${c.companyId}/contacts/${encodeURIComponent(p)}`, undefined, 404);
    await s.admin('DELETE', `/admin/companies/${c.companyId}/contacts/${encodeURIComponent(p)}`, undefined, 404);

    const after = await s.admin('GET', `/admin/batches/${batchId}`);
    assert.deepEqual(after.counts, before.counts, 'batch counts unchanged');
    assert.equal(after.total, before.total);
    const row = await db.selectFrom('contacts').selectAll().where('contact_id', '=', contact.contact_id).executeTakeFirstOrThrow();
    assert.match(row.phone, /^erased:[0-9a-f-]{36}$/);
    assert.equal(row.first_name, null);
    assert.deepEqual(row.variables, {});
    const msgs = await db.selectFrom('messages').selectAll().where('batch_id', '=', batchId).orderBy('seq').execute();
    assert.equal(msgs[0].phone, row.phone);
    assert.equal(msgs[0].rendered, null);
    assert.equal(msgs[0].status, 'sent');
    assert.equal(msgs[1].phone, other, 'the other contact of the batch is untouched');
    assert.ok(msgs[1].rendered);
    const batchRow = await db.selectFrom('batches').select('items').where('batch_id', '=', batchId).executeTakeFirstOrThrow();
    assert.ok(!batchRow.items.includes(p) && !batchRow.items.includes('Erika') && !batchRow.items.includes('SECRET42'), 'batch items scrubbed');
    assert.ok(batchRow.items.includes(other));
    const inbound = await db.selectFrom('inbound_messages').selectAll().where('contact_id', '=', contact.contact_id).execute();
    assert.equal(inbound[0].text, null);
    const members = await db.selectFrom('segment_members').selectAll().where('segment_id', '=', seg.json.segment_id).execute();
    assert.equal(members.length, 1);
    const audit = await s.admin('GET', `/admin/audit?company_id=${c.companyId}`);
    const entry = audit.entries.find((e: any) => e.action === 'contact.erase');
    assert.ok(entry);
    assert.equal(entry.target, `contact:${contact.contact_id}`);
    const allAudit = JSON.stringify(audit);
    assert.ok(!allAudit.includes(p.slice(1)) && !allAudit.includes('Erika'), 'the audit log holds no personal data');
    const exported = await (await fetch(`${s.url}/admin/companies/${c.companyId}/contacts/export`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).text();
    assert.ok(!exported.includes('erased') && !exported.includes(p));

    const again = await s.api('/api/automations/send', { key: c.key, body: { automation_id: auto.automation_id, contacts: [{ phone: p }] } });
    assert.equal(again.status, 200);
    await eventually(async () => (await s.admin('GET', `/admin/batches/${again.json.batch_id}`)).status === 'completed');
    const fresh = await s.admin('GET', `/admin/companies/${c.companyId}/contacts/${encodeURIComponent(p)}`);
    assert.notEqual(fresh.contact_id, contact.contact_id);
    assert.equal(fresh.first_name, null);
    assert.equal(fresh.messages.length, 1, 'the erased messages are not the new contact\'s');
  });
});

describe('errors', () => {
  test('bad input gets the documented status and body and changes nothing', async () => {
    const c = await s.company();
    const p = phone();
    await s.admin('PUT', `/admin/companies/${c.companyId}/contacts`, { contacts: [{ phone: p, variables: { a: '1' } }] });
    const short = await raw('GET', `/admin/companies/${c.companyId}/contacts?q=123`);
    assert.equal(short.status, 422);
    assert.deepEqual(short.json.detail[0].loc, ['query', 'q']);
    assert.match(short.json.detail[0].msg, /at least 4 digits/);
    const badLimit = await raw('GET', `/admin/companies/${c.companyId}/contacts?limit=0`);
    assert.equal(badLimit.status, 422);

    const url = `/admin/companies/${c.companyId}/contacts/${encodeURIComponent(p)}`;
    for (const body of [{ variables: { 'bad name': 'x' } }, { opted_out: 'yes' }, { variables: { v: 'x'.repeat(1001) } }]) {
      const r = await raw('PATCH', url, body);
      assert.equal(r.status, 422, JSON.stringify(body));
      assert.ok(Array.isArray(r.json.detail));
    }
    const still = await s.admin('GET', url);
    assert.deepEqual(still.variables, { a: '1' });
    assert.equal(still.history.length, 0);
    assert.equal((await raw('GET', `/admin/companies/${c.companyId}/contacts/${encodeURIComponent(phone())}`)).json.detail, 'Contact not found');
    assert.equal((await raw('GET', `/admin/companies/${c.companyId}/contacts/not-a-number`)).status, 404);
    assert.equal((await raw('GET', `/admin/companies/${c.companyId}/contact-imports/999999999`)).status, 404);

    const cases: [string | Buffer, RegExp][] = [
      ['mobile,name\n+4915112345678,A\n', /no "phone" column .*separated by commas, semicolons/],
      ['phone|name\n', /no contact rows/],
      [Buffer.from('phone,first_name\n+4915112345678,J\xfcrgen\n', 'latin1'), /not UTF-8/],
      ['phone,first_name\n"+4915112345678,A\n', /invalid CSV/i],
      ['', /empty/],
    ];
    for (const [body, msg] of cases) {
      const r = await fetch(`${s.url}/admin/companies/${c.companyId}/contact-imports`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'text/csv' }, body: typeof body === 'string' ? body : new Uint8Array(body) });
      const j = await r.json() as any;
      assert.equal(r.status, 422, `${body}: ${JSON.stringify(j)}`);
      assert.match(j.detail[0].msg, msg);
    }
    const big = await fetch(`${s.url}/admin/companies/${c.companyId}/contact-imports`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'text/csv' }, body: 'phone\n' + '+4915112345678\n'.repeat(1_500_000) });
    assert.equal(big.status, 413);
    assert.equal(await contactCount(c.companyId), 1);
    const imports = (await sql`SELECT import_id FROM contact_imports WHERE company_id = ${c.companyId}`.execute(s.service.deps.database.db)).rows;
    assert.equal(imports.length, 0, 'no import row written');
  });
});

describe('security', () => {
  test("another company's contact and import answer 404 like unknown ones; no token is 401", async () => {
    const a = await s.company();
    const b = await s.company();
    const p = phone();
    await s.admin('PUT', `/admin/companies/${a.companyId}/contacts`, { contacts: [{ phone: p, first_name: 'Secret' }] });
    const imp = await raw('POST', `/admin/companies/${a.companyId}/contact-imports`, `phone\n${phone()}\n`, { 'content-type': 'text/csv' });
    assert.equal(imp.status, 202);
    const path = `/admin/companies/${b.companyId}/contacts/${encodeURIComponent(p)}`;
    const unknown = `/admin/companies/${b.companyId}/contacts/${encodeURIComponent(phone())}`;
    for (const [method, body] of [['GET'], ['PATCH', { opted_out: true }], ['DELETE']] as [string, object?][]) {
      const foreign = await raw(method, path, body);
      const none = await raw(method, unknown, body);
      assert.equal(foreign.status, 404, method);
      assert.deepEqual(foreign.json, none.json, method);
    }
    const foreignImport = await raw('GET', `/admin/companies/${b.companyId}/contact-imports/${imp.json.import_id}`);
    assert.equal(foreignImport.status, 404);
    assert.deepEqual(foreignImport.json, { detail: 'Import not found' });
    const list = await s.admin('GET', `/admin/companies/${b.companyId}/contacts?q=secret`);
    assert.equal(list.contacts.length, 0);
    const exp = await (await fetch(`${s.url}/admin/companies/${b.companyId}/contacts/export`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).text();
    assert.ok(!exp.includes(p));
    assert.equal((await raw('GET', `/admin/companies/2147483000/contacts/export`)).status, 404);
    const still = await s.admin('GET', `/admin/companies/${a.companyId}/contacts/${encodeURIComponent(p)}`);
    assert.equal(still.opted_out, false);
    for (const path2 of [`/admin/companies/${a.companyId}/contacts/export`, `/admin/companies/${a.companyId}/contacts/${encodeURIComponent(p)}`]) {
      const r = await fetch(s.url + path2);
      assert.equal(r.status, 401);
    }
    const del = await fetch(s.url + `/admin/companies/${a.companyId}/contacts/${encodeURIComponent(p)}`, { method: 'DELETE', headers: { authorization: 'Bearer wrong' } });
    assert.equal(del.status, 401);
    await s.admin('GET', `/admin/companies/${a.companyId}/contacts/${encodeURIComponent(p)}`);
  });
});

describe('documented', () => {
  const OPERATIONS: [string, string, number[], string][] = [
    ['put', '/admin/companies/{company_id}/contacts', [200, 401, 404, 422], 'application/json'],
    ['get', '/admin/companies/{company_id}/contacts', [200, 401, 404, 422], 'application/json'],
    ['get', '/admin/companies/{company_id}/contacts/export', [200, 401, 404, 422], 'text/csv'],
    ['get', '/admin/companies/{company_id}/contacts/{phone}', [200, 401, 404, 422], 'application/json'],
    ['patch', '/admin/companies/{company_id}/contacts/{phone}', [200, 401, 404, 422], 'application/json'],
    ['delete', '/admin/companies/{company_id}/contacts/{phone}', [200, 401, 404, 422], 'application/json'],
    ['post', '/admin/companies/{company_id}/contact-imports', [202, 401, 404, 413, 422], 'application/json'],
    ['get', '/admin/companies/{company_id}/contact-imports/{import_id}', [200, 401, 404, 422], 'application/json'],
  ];

  test('every contact operation: operationId, every status with a body and an example that validates; errors are Detail / AdminValidationError', async () => {
    const doc = await (await fetch(`${s.url}/openapi.json`)).json() as any;
    const DOC_ID = 'https://cms.invalid/openapi.json';
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
    (addFormatsModule as unknown as (a: Ajv2020) => void)(ajv);
    ajv.addSchema({ ...doc, $id: DOC_ID });
    const pointer = (...parts: (string | number)[]) => parts.map((p) => String(p).replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
    const ids = new Set<string>();
    for (const [method, path, statuses, success] of OPERATIONS) {
      const op = doc.paths[path]?.[method];
      assert.ok(op, `${method} ${path}`);
      assert.match(op.operationId ?? '', /^[a-z][a-z_]+$/);
      assert.ok(!ids.has(op.operationId));
      ids.add(op.operationId);
      assert.ok(op.tags?.length && op.summary);
      for (const status of statuses) {
        const answer = op.responses[String(status)];
        assert.ok(answer && answer.description !== 'Default Response', `${method} ${path} ${status}`);
        const type = status < 300 ? success : 'application/json';
        const media = answer.content?.[type];
        assert.ok(media?.schema, `${method} ${path} ${status} body`);
        assert.ok(media.example !== undefined, `${method} ${path} ${status} example`);
        if (type === 'application/json') {
          const validate = ajv.getSchema(`${DOC_ID}#/${pointer('paths', path, method, 'responses', status, 'content', type, 'schema')}`)!;
          assert.ok(validate(media.example), `${method} ${path} ${status} example: ${JSON.stringify(validate.errors)}`);
        }
        // A named component (its title; the key in components.schemas is the swagger plugin's choice).
        const component = (ref: string) => doc.components.schemas[ref.replace('#/components/schemas/', '')]?.title;
        if (status === 404 || status === 401 || status === 413) assert.equal(component(media.schema.$ref), 'Detail', `${method} ${path} ${status}`);
        if (status === 422) assert.equal(component(media.schema.$ref), 'AdminValidationError', `${method} ${path} ${status}`);
        if (status === 200 && type === 'application/json' && method !== 'put' && path.endsWith('contacts')) assert.equal(component(media.schema.$ref), 'ContactList');
      }
      const body = op.requestBody?.content?.['application/json'];
      if (body) {
        assert.ok(body.example !== undefined || body.schema.examples?.length, `${method} ${path} request example`);
        const example = body.example ?? body.schema.examples[0];
        const validate = ajv.getSchema(`${DOC_ID}#/${pointer('paths', path, method, 'requestBody', 'content', 'application/json', 'schema')}`)!;
        assert.ok(validate(example), `${method} ${path} request example: ${JSON.stringify(validate.errors)}`);
      }
    }
  });

  test('real answers validate against the documented schema', async () => {
    const doc = await (await fetch(`${s.url}/openapi.json`)).json() as any;
    const DOC_ID = 'https://cms.invalid/openapi-2.json';
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
    (addFormatsModule as unknown as (a: Ajv2020) => void)(ajv);
    ajv.addSchema({ ...doc, $id: DOC_ID });
    const pointer = (...parts: (string | number)[]) => parts.map((p) => String(p).replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
    const check = (value: unknown, path: string, method: string, status: number) => {
      const validate = ajv.getSchema(`${DOC_ID}#/${pointer('paths', path, method, 'responses', status, 'content', 'application/json', 'schema')}`)!;
      assert.ok(validate(value), `${method} ${path} ${status}: ${JSON.stringify(validate.errors)}`);
    };
    const c = await s.company();
    const p = phone();
    await s.admin('PUT', `/admin/companies/${c.companyId}/contacts`, { contacts: [{ phone: p, first_name: 'Ada', variables: { n: 1 } }] });
    const base = `/admin/companies/${c.companyId}/contacts`;
    check((await raw('GET', base)).json, '/admin/companies/{company_id}/contacts', 'get', 200);
    check((await raw('GET', `${base}?q=12`)).json, '/admin/companies/{company_id}/contacts', 'get', 422);
    check((await raw('GET', `${base}/${encodeURIComponent(p)}`)).json, '/admin/companies/{company_id}/contacts/{phone}', 'get', 200);
    check((await raw('GET', `${base}/${encodeURIComponent(phone())}`)).json, '/admin/companies/{company_id}/contacts/{phone}', 'get', 404);
    check((await raw('PATCH', `${base}/${encodeURIComponent(p)}`, { opted_out: true })).json, '/admin/companies/{company_id}/contacts/{phone}', 'patch', 200);
    const imp = await raw('POST', `/admin/companies/${c.companyId}/contact-imports`, `phone\n${phone()}\n`, { 'content-type': 'text/csv' });
    check(imp.json, '/admin/companies/{company_id}/contact-imports', 'post', 202);
    check((await raw('GET', `/admin/companies/${c.companyId}/contact-imports/${imp.json.import_id}`)).json, '/admin/companies/{company_id}/contact-imports/{import_id}', 'get', 200);
    check((await raw('DELETE', `${base}/${encodeURIComponent(p)}`)).json, '/admin/companies/{company_id}/contacts/{phone}', 'delete', 200);
  });
});
