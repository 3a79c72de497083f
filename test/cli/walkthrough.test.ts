/**
 * The README walkthrough, run as a new user would, against the real server: create a company and a key
 * with `cms`, create a segment, import contacts from a CSV, add them to the segment by digest, trigger an
 * automation, and see the batch accepted with `cms batch show`.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { cliFor } from './helpers.ts';

let s: TestServer;
let dir: string;
before(async () => {
  s = await startTestServer({ role: 'api' });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cms-walk-'));
});
after(async () => {
  await s.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** `cms --json ...args` against the server; exits 0; its parsed output. */
const cms = (...args: string[]): Promise<any> => cliFor(s).json(args);

test('README walkthrough', async () => {
  const company = await cms('company', 'create', '--name', 'Acme', '--subscription-active', '--default-country', 'DE');
  assert.equal(company.name, 'Acme');
  const key = await cms('key', 'create', '--company', String(company.company_id), '--label', 'integration');
  assert.match(key.api_key, /^cms_live_/);

  const seg = await s.api('/api/segments/create', { key: key.api_key, body: { name: 'Newsletter' } });
  assert.equal(seg.status, 200);

  const csv = path.join(dir, 'contacts.csv');
  fs.writeFileSync(csv, 'phone,first_name,last_name,order_id\n+4915112345678,Ada,Lovelace,A-1\n015112345679,Alan,Turing,A-2\nnot-a-number,X,Y,A-3\n');
  const imported = await cms('contacts', 'import', '--company', String(company.company_id), csv);
  assert.equal(imported.created, 2);
  assert.equal(imported.invalid, 1);

  const digests = ['+4915112345678', '+4915112345679'].map((p) => createHash('sha256').update(p).digest('hex'));
  const added = await s.api(`/api/segments/${seg.json.segment_id}/contacts`, { key: key.api_key, body: { contacts: digests, mode: 'add', use_hashed_phone: true } });
  assert.deepEqual(added.json, {
    segment_id: seg.json.segment_id, mode: 'add', contacts_provided: 2, contacts_found: 2, contacts_not_found: 0, contacts_processed: 2,
  });

  const auto = await cms('automation', 'create', '--company', String(company.company_id), '--name', 'Shipped', '--type', 'api',
    '--body', 'Hi {{ first_name }}, your order {{ order_id }} has shipped.');
  const sent = await s.api('/api/automations/send', { key: key.api_key, body: { automation_id: auto.automation_id, contacts: [{ phone: '+4915112345678' }] } });
  assert.equal(sent.status, 200);
  assert.equal(sent.json.status, 'accepted');

  const batch = await cms('batch', 'show', sent.json.batch_id);
  assert.equal(batch.batch_id, sent.json.batch_id);
  assert.equal(batch.status, 'accepted');
  assert.equal(batch.counts.total, 1);
});
