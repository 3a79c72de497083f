/**
 * The audience's domain commands (src/domain/segments.ts, contacts.ts; the frequency cap through
 * companies.ts `changeCompany`) record their
 * own audit entry for the actor that runs them: the operator API's route runs them as `OPERATOR`
 * (actor text `admin`), the console as `consoleActor(session)` (`console:<email>`), and the entry
 * is otherwise the same (action, target, company, details). In process: the service's own database,
 * the commands called directly for the console user.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { consoleActor, OPERATOR } from '../../src/domain/actor.ts';
import { listAudit } from '../../src/domain/audit.ts';
import { resolveContact, updateContact } from '../../src/domain/contacts.ts';
import { changeCompany } from '../../src/domain/companies.ts';
import { addSegment, editSegment } from '../../src/domain/segments.ts';
import { ADMIN_TOKEN, startTestServer, type TestServer } from '../helpers/server.ts';

let s: TestServer;
before(async () => { s = await startTestServer({ role: 'api' }); });
after(() => s?.close());

const EMAIL = 'anna@acme-shoes.example';

/** The company's audit entries with `action`, oldest first, as {actor, target, company_id, details}. */
async function entries(companyId: number, action: string) {
  const rows = await listAudit(s.service.deps.database.db, { companyId, limit: 1000 });
  return rows.filter((r) => r.action === action).reverse()
    .map((r) => ({ actor: r.actor, target: r.target, company_id: r.company_id === null ? null : Number(r.company_id), details: r.details }));
}

test('segment rename: the admin route records `admin`, the same command for a console user `console:<email>`', async () => {
  const { companyId } = await s.company();
  const db = s.service.deps.database.db;
  const seg = await s.admin('POST', `/admin/companies/${companyId}/segments`, { name: 'Newsletter' }, 201);
  await s.admin('PATCH', `/admin/segments/${seg.segment_id}`, { name: 'Weekly' }, 200);
  const renamed = await editSegment(db, consoleActor({ email: EMAIL, company_id: companyId }), companyId, seg.segment_id, { name: 'Monthly' });
  assert.equal(renamed.name, 'Monthly');
  assert.deepEqual(await entries(companyId, 'segment.rename'), [
    { actor: 'admin', target: `segment:${seg.segment_id}`, company_id: companyId, details: { from: 'Newsletter', to: 'Weekly' } },
    { actor: `console:${EMAIL}`, target: `segment:${seg.segment_id}`, company_id: companyId, details: { from: 'Weekly', to: 'Monthly' } },
  ]);
  // Creation: the operator's entry names the kind; a console user's static segment its name alone (as always).
  const made = await addSegment(db, consoleActor({ email: EMAIL, company_id: companyId }), companyId, { name: 'VIP' });
  const direct = await addSegment(db, OPERATOR, companyId, { name: 'Trial' });
  assert.deepEqual((await entries(companyId, 'segment.create')).map((e) => [e.actor, e.target, e.details]), [
    ['admin', `segment:${seg.segment_id}`, { name: 'Newsletter', kind: 'static' }],
    [`console:${EMAIL}`, `segment:${made.segment_id}`, { name: 'VIP' }],
    ['admin', `segment:${direct.segment_id}`, { name: 'Trial', kind: 'static' }],
  ]);
});

test('contact update: `admin` with source operator through the route, `console:<email>` with source console through the command', async () => {
  const { companyId } = await s.company();
  const db = s.service.deps.database.db;
  const phone = '+4915112340001';
  await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: [{ phone }] });
  await s.admin('PATCH', `/admin/companies/${companyId}/contacts/${encodeURIComponent(phone)}`, { first_name: 'Ada', opted_out: true });
  const contact = await resolveContact(db, companyId, 'DE', phone);
  assert.equal(contact.opt_out_source, 'operator');
  const changed = await updateContact(db, consoleActor({ email: EMAIL, company_id: companyId }), companyId, contact.contact_id, { opted_out: false }, { now: new Date() });
  assert.deepEqual(changed, ['opted_out']);
  assert.equal((await resolveContact(db, companyId, 'DE', phone)).opt_out_source, 'console');
  assert.deepEqual(await entries(companyId, 'contact.update'), [
    { actor: 'admin', target: `contact:${contact.contact_id}`, company_id: companyId, details: { changed: ['first_name', 'opted_out'], opted_out: true } },
    { actor: `console:${EMAIL}`, target: `contact:${contact.contact_id}`, company_id: companyId, details: { changed: ['opted_out'], opted_out: false } },
  ]);
  const ledger = await s.admin('GET', `/admin/companies/${companyId}/contacts/${encodeURIComponent(phone)}/consent`);
  assert.deepEqual(ledger.entries.map((e: { source: string; evidence: unknown }) => [e.source, e.evidence]), [
    ['operator', { actor: 'admin', operation: 'update_contact' }],
    ['console', { actor: `console:${EMAIL}` }],
  ]);
});

test('frequency cap: the company update records `company.update` with the cap for the operator (route) and a console user (command)', async () => {
  const { companyId } = await s.company();
  await s.admin('PATCH', `/admin/companies/${companyId}`, { frequency_cap: { messages: 2, per: '1d' } });
  const company = await changeCompany(s.service.deps.database.db, s.service.deps.auth, consoleActor({ email: EMAIL, company_id: companyId }), companyId, { frequency_cap: { messages: 3, per: '7d' } });
  assert.deepEqual(company.frequency_cap, { messages: 3, per: '7d' });
  assert.deepEqual(await entries(companyId, 'company.update'), [
    { actor: 'admin', target: `company:${companyId}`, company_id: companyId, details: { frequency_cap: { messages: 2, per: '1d' } } },
    { actor: `console:${EMAIL}`, target: `company:${companyId}`, company_id: companyId, details: { frequency_cap: { messages: 3, per: '7d' } } },
  ]);
});

test('the CSV imports moved to …/contact-imports: the old path …/contacts/imports is no import route any more', async () => {
  const { companyId } = await s.company();
  const post = (path: string) => fetch(`${s.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'text/csv' }, body: 'phone\n+4915112340002\n' });
  const moved = await post(`/admin/companies/${companyId}/contact-imports`);
  assert.equal(moved.status, 202);
  const { import_id: importId } = await moved.json() as { import_id: number };
  // POST …/contacts/imports: the path of a contact (`{phone}` = imports), which takes no POST.
  assert.equal((await post(`/admin/companies/${companyId}/contacts/imports`)).status, 405);
  assert.equal((await fetch(`${s.url}/admin/companies/${companyId}/contacts/imports/${importId}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).status, 404);
  assert.equal((await s.admin('GET', `/admin/companies/${companyId}/contact-imports/${importId}`)).import_id, importId);
});
