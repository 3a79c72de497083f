/**
 * The role matrix (item 5): EVERY console route registered in the app (read from
 * the console's own route table, `app.consoleRoutes()`, so routes added later are included) is
 * requested by an owner, a developer and a marketer of a company that has one of every object, and
 * by the owner of another company with the first company's ids. What each may do is written out below
 * route by route (`EXPECTED`), not computed from src/console/permissions.ts, so a wrong permission
 * fails here; a route missing from the table fails with its name.
 *
 * - A role the table refuses gets 403 and the "Not allowed" page; those requests change nothing (a
 *   snapshot of the company's rows and audit log before and after).
 * - A role the table allows never gets 403 or a 5xx: a GET answers 2xx/3xx, a POST (an empty form
 *   with a valid CSRF token) whatever its handler decides (validation 4xx, 303, ...); a POST that
 *   succeeds (303) has written an audit entry of the company.
 * - The other company's owner gets 404 for every route with an id, exactly like an unknown id, and
 *   the first company's objects are untouched.
 * - Pages without a session (sign-in, invitation, password reset, assets) are listed too: no role
 *   matters there.
 * - A console session cookie opens no operator route: every /admin operation of the OpenAPI document
 *   answers 401 to a signed-in owner's cookies.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import {
  ConsoleClient, csrfToken, freshEmail, insertBatch, invite, newCompany, newUser, PASSWORD, userIdOf, type Answer, type Role,
} from './helpers.ts';

let s: TestServer;
before(async () => {
  s = await startTestServer({ role: 'api' });
  await s.service.deps.database.db.deleteFrom('console_login_failures').where('bucket', 'like', 'addr:%').execute();
});
after(() => s.close());

// ---------------------------------------------------------------------------------------------------
// The expectation table: who may send each request. Written by hand from the roles table of docs/security.md#console-users-and-roles.

const ALL: readonly Role[] = ['owner', 'developer', 'marketer'];
const OWNER: readonly Role[] = ['owner'];
const OWNER_DEVELOPER: readonly Role[] = ['owner', 'developer'];
const OWNER_MARKETER: readonly Role[] = ['owner', 'marketer'];
const PUBLIC = 'public' as const;

const EXPECTED: Record<string, readonly Role[] | typeof PUBLIC> = {
  // Without a session.
  'GET /console/assets/console.js': PUBLIC,
  'GET /console/assets/segment-builder.js': PUBLIC,
  'GET /console/assets/console.css': PUBLIC,
  'GET /console/assets/pico/*': PUBLIC,
  'GET /console/assets/liquid/*': PUBLIC,
  'GET /console/assets/editor-preview.js': PUBLIC,
  'GET /console/assets/shared/render.js': PUBLIC,
  'GET /console/assets/shared/templates.js': PUBLIC,
  'GET /console/assets/shared/template-form.js': PUBLIC,
  'GET /console/login': PUBLIC,
  'POST /console/login': PUBLIC,
  'GET /console/invite/:token': PUBLIC,
  'POST /console/invite/:token': PUBLIC,
  'GET /console/password-reset/:token': PUBLIC,
  'POST /console/password-reset/:token': PUBLIC,

  // Everyone signed in.
  'GET /console': ALL,
  'GET /console/': ALL,
  'GET /console/overview': ALL,
  'GET /console/account/password': ALL,
  'POST /console/account/password': ALL,
  'POST /console/logout': ALL,

  // Owners only.
  'GET /console/settings/users': OWNER,
  'POST /console/settings/users/invitations': OWNER,
  'POST /console/settings/users/invitations/:invitationId/revoke': OWNER,
  'GET /console/settings/users/:userId': OWNER,
  'POST /console/settings/users/:userId/role': OWNER,
  'POST /console/settings/users/:userId/reset-link': OWNER,
  'GET /console/settings/users/:userId/remove': OWNER,
  'POST /console/settings/users/:userId/remove': OWNER,
  'GET /console/settings/messaging': OWNER,
  'POST /console/settings/messaging': OWNER,

  // Credentials and webhooks: owners and developers, reading too.
  'GET /console/settings/integrations/credentials': OWNER_DEVELOPER,
  'POST /console/settings/integrations/credentials': OWNER_DEVELOPER,
  'GET /console/settings/integrations/credentials/:keyId/revoke': OWNER_DEVELOPER,
  'POST /console/settings/integrations/credentials/:keyId/revoke': OWNER_DEVELOPER,
  'GET /console/settings/integrations/webhooks': OWNER_DEVELOPER,
  'POST /console/settings/integrations/webhooks': OWNER_DEVELOPER,
  'GET /console/settings/integrations/webhooks/:endpointId': OWNER_DEVELOPER,
  'POST /console/settings/integrations/webhooks/:endpointId': OWNER_DEVELOPER,
  'POST /console/settings/integrations/webhooks/:endpointId/enabled': OWNER_DEVELOPER,
  'POST /console/settings/integrations/webhooks/:endpointId/reveal': OWNER_DEVELOPER,
  'POST /console/settings/integrations/webhooks/:endpointId/rotate': OWNER_DEVELOPER,
  'POST /console/settings/integrations/webhooks/:endpointId/test': OWNER_DEVELOPER,
  'POST /console/settings/integrations/webhooks/:endpointId/resend': OWNER_DEVELOPER,
  'GET /console/settings/integrations/webhooks/:endpointId/remove': OWNER_DEVELOPER,
  'POST /console/settings/integrations/webhooks/:endpointId/remove': OWNER_DEVELOPER,

  // Messaging: everyone reads, owners and marketers change.
  'GET /console/automations': ALL,
  'GET /console/automations/new': ALL,
  'GET /console/automations/preview-contact.json': ALL,
  'POST /console/automations/new': OWNER_MARKETER,
  'GET /console/automations/:id': ALL,
  'POST /console/automations/:id': OWNER_MARKETER,
  'POST /console/automations/:id/active': OWNER_MARKETER,
  'POST /console/automations/:id/test-send': OWNER_MARKETER,
  'POST /console/automations/:id/archive': OWNER_MARKETER,
  'POST /console/automations/:id/restore': OWNER_MARKETER,
  'GET /console/campaigns': ALL,
  'GET /console/campaigns/new': ALL,
  'GET /console/campaigns/preview-contact.json': ALL,
  'POST /console/campaigns/new': OWNER_MARKETER,
  'GET /console/campaigns/:id': ALL,
  'POST /console/campaigns/:id': OWNER_MARKETER,
  'POST /console/campaigns/:id/test-send': OWNER_MARKETER,
  'POST /console/campaigns/:id/frequency-cap': OWNER_MARKETER,
  'POST /console/campaigns/:id/archive': OWNER_MARKETER,
  'POST /console/campaigns/:id/restore': OWNER_MARKETER,
  'GET /console/campaigns/:id/send': ALL,
  'POST /console/campaigns/:id/send': OWNER_MARKETER,
  'POST /console/campaigns/:id/send/confirm': OWNER_MARKETER,
  'GET /console/segments': ALL,
  'POST /console/segments': OWNER_MARKETER,
  'GET /console/segments/:segmentId': ALL,
  'POST /console/segments/:segmentId/rename': OWNER_MARKETER,
  'POST /console/segments/:segmentId/members': OWNER_MARKETER,
  'GET /console/segments/:segmentId/delete': ALL,
  'POST /console/segments/:segmentId/delete': OWNER_MARKETER,
  'GET /console/segments/new': ALL,
  'POST /console/segments/new': OWNER_MARKETER,
  'POST /console/segments/preview': OWNER_MARKETER,
  'GET /console/segments/:segmentId/filter': ALL,
  'POST /console/segments/:segmentId/filter': OWNER_MARKETER,
  'GET /console/contacts': ALL,
  'GET /console/contacts/export.csv': ALL,
  'GET /console/contacts/import': ALL,
  'POST /console/contacts/import': OWNER_MARKETER,
  'GET /console/contacts/imports/:importId': ALL,
  'GET /console/contacts/:key': ALL,
  'POST /console/contacts/:key/edit': OWNER_MARKETER,
  'POST /console/contacts/:key/opt-out': OWNER_MARKETER,
  'POST /console/contacts/:key/tags': OWNER_MARKETER,
  'GET /console/contacts/:key/erase': ALL,
  'POST /console/contacts/:key/erase': OWNER_MARKETER,
  'GET /console/sends': ALL,
  'GET /console/sends/:batchId': ALL,
  'GET /console/sends/:batchId/cancel': ALL,
  'POST /console/sends/:batchId/cancel': OWNER_MARKETER,
  'POST /console/sends/:batchId/pause': OWNER_MARKETER,
  'POST /console/sends/:batchId/resume': OWNER_MARKETER,
  // WhatsApp templates: everyone reads, owners and marketers sync and submit (this company is not
  // WhatsApp, so an allowed POST answers 409 and changes nothing).
  'GET /console/whatsapp/templates': ALL,
  'POST /console/whatsapp/templates/sync': OWNER_MARKETER,
  'POST /console/whatsapp/templates': OWNER_MARKETER,
};

/** Allowed GETs that answer a 4xx for the fixture's state, with the status (none so far). */
const GET_STATUS: Record<string, number> = {
  // The fixture's segment is static: it has no conditions to edit.
  'GET /console/segments/:segmentId/filter': 409,
};

// ---------------------------------------------------------------------------------------------------
// Fixtures: one company per acting role, with one object of every kind the routes name.

interface Fixture {
  companyId: number;
  params: Record<string, string>;
}

/** A company with one of everything; `params` fills the route parameters with its ids. */
async function fixture(): Promise<Fixture> {
  const companyId = await newCompany(s);
  const db = s.service.deps.database.db;
  const key = await s.admin('POST', `/admin/companies/${companyId}/api-keys`, { label: 'matrix' });
  const endpoint = await s.admin('POST', `/admin/companies/${companyId}/event-endpoints`, { url: 'http://127.0.0.1:9/matrix' }, 201);
  const segment = await db.insertInto('segments').values({ company_id: companyId, name: 'matrix segment' }).returning('segment_id').executeTakeFirstOrThrow();
  await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: [{ phone: '+4915112345678', first_name: 'Ada' }] });
  const contact = await db.selectFrom('contacts').select('contact_id').where('company_id', '=', companyId).executeTakeFirstOrThrow();
  const automation = await s.admin('POST', `/admin/companies/${companyId}/automations`, { name: 'matrix automation', type: 'api', active: true, template: { body: 'Hi {{ first_name }}' } }, 201);
  const campaign = await s.admin('POST', `/admin/companies/${companyId}/campaigns`, { name: 'matrix campaign', template: { body: 'Sale {{ first_name }}' } }, 201);
  const batchId = await insertBatch(s, companyId, [{ phone: '+4915112345678', status: 'sent' }]);
  const imp = await fetch(`${s.url}/admin/companies/${companyId}/contact-imports`, {
    method: 'POST', headers: { authorization: 'Bearer test-admin-token-4Jx9qLw2Zr7Vb5Nc', 'content-type': 'text/csv' }, body: 'phone,first_name\n+4915112345679,Grace\n',
  });
  assert.equal(imp.status, 202, await imp.clone().text());
  const target = await userIdOf(s, await newUser(s, companyId, freshEmail('target'), 'developer'));
  const invitation = await invite(s, companyId, freshEmail('pending'), 'marketer');
  return {
    companyId,
    params: {
      keyId: String(key.key_id), endpointId: String(endpoint.endpoint_id), segmentId: String(segment.segment_id),
      key: String(contact.contact_id), batchId, importId: String((await imp.json()).import_id),
      automationId: String(automation.automation_id), campaignId: String(campaign.campaign_id),
      userId: String(target), invitationId: String(invitation.invitation_id),
      token: 'A'.repeat(43), '*': 'pico.min.css',
    },
  };
}

/** The concrete path of a route URL for a fixture; throws naming the parameter when none fits. */
function pathOf(url: string, f: Fixture): string {
  return url.replace(/:([A-Za-z]+)|\*/g, (m, name: string | undefined) => {
    let p = name ?? '*';
    if (p === 'id') p = url.startsWith('/console/automations') ? 'automationId' : url.startsWith('/console/campaigns') ? 'campaignId' : 'id';
    const v = f.params[p];
    if (v === undefined) throw new Error(`no fixture id for parameter "${m}" of ${url}: add one to fixture() in test/console/roles.test.ts`);
    return v;
  });
}

/** Requests that change or end what later requests need run last: removals, then sign-out. */
function order(key: string): number {
  if (key.endsWith('/logout')) return 3;
  if (key.startsWith('POST') && /\/(remove|delete|erase|revoke|cancel)$/.test(key)) return 2;
  return key.startsWith('GET') ? 0 : 1;
}

/** What a company's rows look like (everything a console request could change), and its audit log. */
async function snapshot(companyId: number): Promise<string> {
  const db = s.service.deps.database.db;
  const q = async (text: string) => (await sql.raw(text.replaceAll('$C', String(companyId))).execute(db)).rows;
  const parts = await Promise.all([
    q('SELECT key_id, label, revoked_at FROM api_keys WHERE company_id = $C ORDER BY key_id'),
    q('SELECT endpoint_id, url, enabled, description FROM event_endpoints WHERE company_id = $C ORDER BY endpoint_id'),
    q('SELECT segment_id, name FROM segments WHERE company_id = $C ORDER BY segment_id'),
    q('SELECT count(*)::int AS n FROM segment_members m JOIN segments g USING (segment_id) WHERE g.company_id = $C'),
    q('SELECT phone, first_name, last_name, variables, opted_out FROM contacts WHERE company_id = $C ORDER BY phone'),
    q('SELECT automation_id, name, active, template FROM automations WHERE company_id = $C ORDER BY automation_id'),
    q('SELECT campaign_id, name, template FROM campaigns WHERE company_id = $C ORDER BY campaign_id'),
    q('SELECT count(*)::int AS n FROM batches WHERE company_id = $C'),
    q('SELECT user_id, email, role FROM console_users WHERE company_id = $C ORDER BY user_id'),
    q('SELECT invitation_id, revoked_at FROM console_invitations WHERE company_id = $C ORDER BY invitation_id'),
    q("SELECT count(*)::int AS n FROM audit_log WHERE company_id = $C AND action NOT IN ('console.sign_in')"),
  ]);
  return JSON.stringify(parts);
}

/** Audit entries of a company so far. */
async function auditCount(companyId: number): Promise<number> {
  const row = await s.service.deps.database.db.selectFrom('audit_log').select((eb) => eb.fn.countAll<string>().as('n'))
    .where('company_id', '=', companyId).executeTakeFirstOrThrow();
  return Number(row.n);
}

interface Outcome { key: string; path: string; status: number; text: string }

/** Signs in a user of `role` in the fixture's company; resolves to its client and a CSRF token. */
async function actor(f: Fixture, role: Role): Promise<{ client: ConsoleClient; token: string }> {
  const email = await newUser(s, f.companyId, freshEmail(`matrix-${role}`), role);
  const client = new ConsoleClient(s.url);
  await client.signIn(email, PASSWORD);
  return { client, token: csrfToken((await client.get('/console/overview')).text) };
}

async function send(client: ConsoleClient, token: string, key: string, path: string): Promise<Answer> {
  const [method] = key.split(' ', 1);
  return method === 'GET' ? client.get(path) : client.request('POST', path, { _csrf: token });
}

/** Every console route (HEAD left out), as "METHOD URL". */
function routeKeys(): string[] {
  return s.service.app.consoleRoutes().map((r) => `${r.method} ${r.url}`).sort();
}

// ---------------------------------------------------------------------------------------------------

describe('role matrix', () => {
  test('the table names every console route, and every route it names exists', () => {
    const keys = routeKeys();
    const missing = keys.filter((k) => !(k in EXPECTED));
    assert.deepEqual(missing, [], `console routes missing from EXPECTED in test/console/roles.test.ts: ${missing.join(', ')}`);
    const signedIn = new Set(s.service.app.consoleRoutes().filter((r) => r.signedIn).map((r) => `${r.method} ${r.url}`));
    for (const [k, who] of Object.entries(EXPECTED)) {
      if (k === 'GET /console/') continue; // the same route as GET /console (prefix with and without the slash)
      assert.ok(keys.includes(k), `EXPECTED names a route the app does not have: ${k}`);
      assert.equal(signedIn.has(k), who !== PUBLIC, `${k}: ${who === PUBLIC ? 'should need no session' : 'should need a session'}`);
    }
  });

  for (const role of ['owner', 'developer', 'marketer'] as const) {
    test(`${role}: refused requests get the 403 page and change nothing; allowed ones are never 403 or 5xx`, async () => {
      const f = await fixture();
      const { client, token } = await actor(f, role);
      const keys = routeKeys().filter((k) => EXPECTED[k] !== PUBLIC && EXPECTED[k] !== undefined);
      const denied = keys.filter((k) => !(EXPECTED[k] as readonly Role[]).includes(role));
      const allowed = keys.filter((k) => (EXPECTED[k] as readonly Role[]).includes(role)).sort((a, b) => order(a) - order(b));
      if (role === 'owner') assert.deepEqual(denied, [], 'owners may do everything');

      const before = await snapshot(f.companyId);
      const wrong: string[] = [];
      for (const key of denied) {
        const path = pathOf(key.slice(key.indexOf(' ') + 1), f);
        const r = await send(client, token, key, path);
        if (r.status !== 403 || !/<h1>Not allowed<\/h1>/.test(r.text) || !new RegExp(`Your role is ${role}`).test(r.text)) wrong.push(`${key} (${path}) → ${r.status}`);
      }
      assert.deepEqual(wrong, [], `${role} should have been refused (403 page)`);
      assert.equal(await snapshot(f.companyId), before, 'refused requests changed nothing');

      const outcomes: Outcome[] = [];
      const unaudited: string[] = [];
      for (const key of allowed) {
        const path = pathOf(key.slice(key.indexOf(' ') + 1), f);
        const entries = await auditCount(f.companyId);
        const r = await send(client, token, key, path);
        outcomes.push({ key, path, status: r.status, text: r.text.slice(0, 300) });
        // A form that succeeded (POST-redirect-GET) changed something: it must have left an audit entry.
        if (key.startsWith('POST ') && r.status === 303 && (await auditCount(f.companyId)) === entries) unaudited.push(key);
      }
      assert.deepEqual(unaudited, [], `${role}: changes without an audit entry`);
      const bad = outcomes.filter((o) => {
        if (o.status === 403 || o.status >= 500) return true;
        if (o.key.startsWith('GET ')) return !(o.status < 400 || GET_STATUS[o.key] === o.status);
        return false;
      });
      assert.deepEqual(bad.map((o) => `${o.key} (${o.path}) → ${o.status}`), [], `${role} should have been allowed`);
    });
  }

  test('the owner of another company gets 404 for every route with an id, and the company\'s objects stay', async () => {
    const victim = await fixture();
    const before = await snapshot(victim.companyId);
    const { client, token } = await actor({ companyId: await newCompany(s), params: {} }, 'owner');
    const keys = routeKeys().filter((k) => EXPECTED[k] !== PUBLIC && /[:*]/.test(k)).sort((a, b) => order(a) - order(b));
    assert.ok(keys.length > 30, `routes with ids: ${keys.length}`);
    const wrong: string[] = [];
    for (const key of keys) {
      const path = pathOf(key.slice(key.indexOf(' ') + 1), victim);
      const r = await send(client, token, key, path);
      if (r.status !== 404) wrong.push(`${key} (${path}) → ${r.status}`);
    }
    assert.deepEqual(wrong, [], 'another company\'s ids must answer 404');
    assert.equal(await snapshot(victim.companyId), before, 'nothing of the other company changed');
  });

  test('pages without a session: no role matters (never 403 for a valid CSRF token, never 5xx)', async () => {
    const f = await fixture();
    for (const role of ALL) {
      const { client, token } = await actor(f, role);
      for (const key of routeKeys().filter((k) => EXPECTED[k] === PUBLIC)) {
        const path = pathOf(key.slice(key.indexOf(' ') + 1), f);
        const r = await send(client, token, key, path);
        assert.ok(r.status !== 403 && r.status < 500, `${role} ${key} (${path}) → ${r.status}`);
      }
    }
  });
});

describe('operator routes behind the console', () => {
  test('a console session (owner, cookies and CSRF token) opens no /admin route: every operation answers 401', async () => {
    const f = await fixture();
    const { client, token } = await actor(f, 'owner');
    const spec = await (await fetch(`${s.url}/openapi.json`)).json() as { paths: Record<string, Record<string, unknown>> };
    const ops = Object.entries(spec.paths).filter(([p]) => p.startsWith('/admin'))
      .flatMap(([p, item]) => Object.keys(item).filter((m) => ['get', 'post', 'put', 'patch', 'delete'].includes(m)).map((m) => [m.toUpperCase(), p] as const));
    assert.ok(ops.length > 30, `admin operations in the document: ${ops.length}`);
    const opened: string[] = [];
    for (const [method, p] of ops) {
      const path = p.replace(/\{company_id\}/g, String(f.companyId)).replace(/\{[a-z_]+\}/g, '1');
      const r = await client.request(method, path, method === 'GET' || method === 'DELETE' ? undefined : { _csrf: token }, { 'x-csrf-token': token });
      if (r.status !== 401) opened.push(`${method} ${path} → ${r.status}`);
    }
    assert.deepEqual(opened, [], 'operator routes must need the admin token');
  });
});
