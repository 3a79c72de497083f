/**
 * Bounded contact searches (docs/contacts.md "Search", docs/security.md "Statement
 * time limits and pages"): one page of a search (`q`, `tag`) looks at no more than SEARCH_SCAN_ROWS
 * contacts in phone order after its cursor; a match beyond them is found by following `next_after`,
 * pages without a search stay full keyset pages, and `tag` narrows a number search too.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { SEARCH_SCAN_ROWS } from '../../src/db/contacts.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let s: TestServer;
before(async () => { s = await startTestServer(); });
after(async () => { await s.close(); });

const TOTAL = SEARCH_SCAN_ROWS + 2_000;
const phoneOf = (i: number) => `+4915${String(i).padStart(9, '0')}`;

test('a search page reads a bounded window; following next_after finds what lies beyond it', async () => {
  const c = await s.company({ default_country: 'DE' });
  const db = s.service.deps.database.db;
  // Contacts in phone order 1..TOTAL; the last one is the only Zelda and the only one tagged `rare`.
  await sql`INSERT INTO contacts (company_id, phone, sha256_plus, sha256_bare, first_name, tags)
    SELECT ${c.companyId}, p, sha256(convert_to(p, 'UTF8')), sha256(convert_to(substr(p, 2), 'UTF8')),
           CASE WHEN i = ${TOTAL} THEN 'Zelda' ELSE 'Ada' END, CASE WHEN i = ${TOTAL} THEN ARRAY['rare'] ELSE '{}' END
    FROM generate_series(1, ${TOTAL}) i, LATERAL (SELECT '+4915' || lpad(i::text, 9, '0') AS p) x`.execute(db);
  const list = (query: string) => s.admin('GET', `/admin/companies/${c.companyId}/contacts?${query}`);

  for (const query of ['q=zelda', 'tag=rare', `q=${phoneOf(TOTAL).slice(-6)}`]) {
    const first = await list(query);
    assert.deepEqual(first.contacts, [], query);
    assert.equal(first.next_after, phoneOf(SEARCH_SCAN_ROWS), `${query}: the cursor is the last contact looked at`);
    const second = await list(`${query}&after=${encodeURIComponent(first.next_after)}`);
    assert.deepEqual(second.contacts.map((x: { phone: string }) => x.phone), [phoneOf(TOTAL)], query);
    assert.equal(second.next_after, null, query);
  }
  // A common match fills its page as before.
  const common = await list('q=ada&limit=3');
  assert.deepEqual(common.contacts.map((x: { phone: string }) => x.phone), [phoneOf(1), phoneOf(2), phoneOf(3)]);
  assert.equal(common.next_after, phoneOf(3));
  // Without a search, pages are full whatever their depth.
  const deep = await list(`limit=500&after=${encodeURIComponent(phoneOf(TOTAL - 600))}`);
  assert.equal(deep.contacts.length, 500);
  assert.equal(deep.next_after, phoneOf(TOTAL - 100));
});

test('tag narrows a search by number', async () => {
  const c = await s.company({ default_country: 'DE' });
  await s.admin('PUT', `/admin/companies/${c.companyId}/contacts`, {
    contacts: [{ phone: '+4915112345001', tags: ['vip'] }, { phone: '+4915112345002' }, { phone: '+4915112345003', tags: ['vip'] }],
  });
  const page = await s.admin('GET', `/admin/companies/${c.companyId}/contacts?q=12345&tag=vip`);
  assert.deepEqual(page.contacts.map((x: { phone: string }) => x.phone), ['+4915112345001', '+4915112345003']);
  assert.equal(page.next_after, null);
});
