/**
 * The CLI's parts of frequency caps and the consent ledger (docs/audience.md) against the real
 * server: `cms company update --frequency-cap 3/7d | none` (bad specs are usage errors, out-of-range
 * ones the server's 422), `cms campaign create --ignore-frequency-cap`, `cms campaign update
 * --[no-]ignore-frequency-cap`, `cms campaign send --dry-run` printing the capped count, `cms contacts
 * update --opt-out --consent-evidence`, `cms contacts consent` (table and JSON; unknown number: exit
 * 1), and `cms contacts erase` printing `suppressed`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ADMIN_TOKEN, eventually, startTestServer, type TestServer } from '../helpers/server.ts';
import { runCli } from './helpers.ts';

describe('cms: frequency caps and consent', () => {
  let s: TestServer;
  let env: Record<string, string>;
  let companyId: number;
  const base = 10_000_000 + Math.floor(Math.random() * 80_000_000);
  const [a, b] = [`+49151${base}`, `+49151${base + 1}`];
  before(async () => {
    s = await startTestServer();
    env = { CMS_URL: s.url, ADMIN_TOKEN };
    companyId = (await s.admin('POST', '/admin/companies', { name: 'CLI caps' }, 201)).company_id;
  });
  after(() => s.close());
  const cms = (args: string[]) => runCli(args, { env });

  it('sets and clears the cap; bad specs are usage errors, out-of-range ones the server\'s 422', async () => {
    const set = await cms(['company', 'update', String(companyId), '--frequency-cap', '2/7d', '--json']);
    assert.equal(set.code, 0, set.stderr);
    assert.deepEqual(JSON.parse(set.stdout).frequency_cap, { messages: 2, per: '7d' });
    const usage = await cms(['company', 'update', String(companyId), '--frequency-cap', 'twice a week']);
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /N\/DURATION/);
    const range = await cms(['company', 'update', String(companyId), '--frequency-cap', '2/400d']);
    assert.equal(range.code, 1);
    assert.match(range.stderr, /frequency_cap/);
    const none = await cms(['company', 'update', String(companyId), '--frequency-cap', 'none', '--json']);
    assert.equal(JSON.parse(none.stdout).frequency_cap, null);
    await cms(['company', 'update', String(companyId), '--frequency-cap', '1/7d']);
  });

  it('campaigns: --ignore-frequency-cap at create and update; the dry run prints the capped count', async () => {
    const created = await cms(['campaign', 'create', '--company', String(companyId), '--name', 'Loud', '--body', 'Hi', '--ignore-frequency-cap', '--json']);
    assert.equal(created.code, 0, created.stderr);
    const loud = JSON.parse(created.stdout);
    assert.equal(loud.ignore_frequency_cap, true);
    const plain = JSON.parse((await cms(['campaign', 'create', '--company', String(companyId), '--name', 'Plain', '--body', 'Hi', '--json'])).stdout);
    assert.equal(plain.ignore_frequency_cap, false);
    const sent = await s.admin('POST', `/admin/campaigns/${plain.campaign_id}/sends`, { contacts: [a] }, 202);
    await eventually(async () => (await s.admin('GET', `/admin/batches/${sent.batch_id}`)).status === 'completed');

    const dry = await cms(['campaign', 'send', String(plain.campaign_id), '--contacts', `${a},${b}`, '--dry-run']);
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(dry.stdout, /skipped_frequency_cap\s+1/);
    const loudDry = JSON.parse((await cms(['campaign', 'send', String(loud.campaign_id), '--contacts', `${a},${b}`, '--dry-run', '--json'])).stdout);
    assert.deepEqual([loudDry.plan.send, loudDry.plan.skipped_frequency_cap], [2, 0]);

    const off = await cms(['campaign', 'update', String(loud.campaign_id), '--no-ignore-frequency-cap', '--json']);
    assert.equal(off.code, 0, off.stderr);
    assert.equal(JSON.parse(off.stdout).ignore_frequency_cap, false);
    const nothing = await cms(['campaign', 'update', String(loud.campaign_id)]);
    assert.equal(nothing.code, 2);
  });

  it('contacts: --consent-evidence, `consent` (table, JSON, unknown: exit 1), `erase` prints suppressed', async () => {
    await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: [{ phone: b }] });
    const upd = await cms(['contacts', 'update', b, '--company', String(companyId), '--opt-out', '--consent-evidence', 'Phoned in: no more offers']);
    assert.equal(upd.code, 0, upd.stderr);
    const alone = await cms(['contacts', 'update', b, '--company', String(companyId), '--consent-evidence', 'x']);
    assert.equal(alone.code, 2);
    const table = await cms(['contacts', 'consent', b, '--company', String(companyId)]);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /opted out\toperator\tmarketing\tactor: admin; operation: update_contact; note: Phoned in: no more offers/);
    const json = JSON.parse((await cms(['contacts', 'consent', b, '--company', String(companyId), '--json'])).stdout);
    assert.deepEqual(json.entries.map((e: any) => [e.source, e.opted_out]), [['operator', true]]);
    const unknown = await cms(['contacts', 'consent', '+4915100000001', '--company', String(companyId)]);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /Contact not found/);
    const erased = await cms(['contacts', 'erase', b, '--company', String(companyId), '--yes']);
    assert.equal(erased.code, 0, erased.stderr);
    assert.match(erased.stdout, /suppressed\ttrue/);
    assert.match(erased.stdout, /consent_entries\t1/);
  });
});
