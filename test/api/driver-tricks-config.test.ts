/**
 * DB_DRIVER_TRICKS (src/config.ts, src/db/driver-tricks.ts): `on` by default, `off` turns the tricks off,
 * anything else is a ConfigError naming the variable; the running service reports what it uses.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

test('DB_DRIVER_TRICKS: on by default, on/off in any case, anything else refused', () => {
  assert.equal(loadConfig({}).driverTricks, true);
  assert.equal(loadConfig({ DB_DRIVER_TRICKS: '' }).driverTricks, true);
  assert.equal(loadConfig({ DB_DRIVER_TRICKS: 'on' }).driverTricks, true);
  assert.equal(loadConfig({ DB_DRIVER_TRICKS: 'OFF' }).driverTricks, false);
  assert.equal(loadConfig({ DB_DRIVER_TRICKS: ' off ' }).driverTricks, false);
  for (const bad of ['0', 'false', 'no', 'of']) {
    assert.throws(() => loadConfig({ DB_DRIVER_TRICKS: bad }), (err: unknown) => err instanceof ConfigError && /DB_DRIVER_TRICKS must be on or off/.test(err.message));
  }
});

let s: TestServer;
before(async () => { s = await startTestServer({ role: 'api', env: { DB_DRIVER_TRICKS: 'off' } }); });
after(() => s.close());

test('a service started with DB_DRIVER_TRICKS=off has no pipelined pool and still accepts sends', async () => {
  const { database } = s.service.deps;
  assert.equal(database.driverTricks, false);
  assert.equal(database.pipelinePool, undefined);
  const c = await s.company();
  const a = await s.admin('POST', `/admin/companies/${c.companyId}/automations`, { name: 'a', type: 'api', active: true, template: { body: 'Hi' } });
  const r = await s.api('/api/automations/send', { key: c.key, body: { automation_id: a.automation_id, contacts: [{ phone: '+4915112345678' }] } });
  assert.equal(r.status, 200);
  const stored = await database.db.selectFrom('batches').select('batch_id').where('batch_id', '=', r.json.batch_id).executeTakeFirst();
  assert.ok(stored, 'the batch is committed');
});
