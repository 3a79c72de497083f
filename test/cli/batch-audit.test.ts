/** `cms batch show` and `cms audit`, including a server without the audit route. */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { TOKEN, cli, runCli, startFakeApi, type FakeApi } from './helpers.ts';

describe('cms batch / audit', () => {
  let api: FakeApi;
  before(async () => {
    api = await startFakeApi();
  });
  after(() => api.close());
  beforeEach(() => api.reset());

  it('batch show prints status and flattened counts', async () => {
    const r = await cli(api, ['batch', 'show', 'b-123']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(api.requests.length, 1);
    assert.equal(api.requests[0].method, 'GET');
    assert.equal(api.requests[0].path, '/admin/batches/b-123');
    assert.match(r.stdout, /Batch b-123/);
    assert.match(r.stdout, /^status\tcompleted$/m);
    assert.match(r.stdout, /^failed\t1$/m);
  });

  it('batch show --messages adds the message table / the messages array', async () => {
    const r = await cli(api, ['batch', 'show', 'b-123', '--messages']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(api.requests.map((q) => q.path), ['/admin/batches/b-123', '/admin/batches/b-123/messages']);
    assert.match(r.stdout, /Messages \(2\)/);
    assert.match(r.stdout, /^message_id\tphone\tstatus\treason \/ error\tattempts\tcode\t/m);
    assert.match(r.stdout, /^m-2\t\+4915112345679\tfailed\tHTTP 500\t5\t/m);

    const j = await cli(api, ['batch', 'show', 'b-123', '--messages', '--json']);
    const out = JSON.parse(j.stdout);
    assert.equal(out.batch_id, 'b-123');
    assert.equal(out.counts.total, 2);
    assert.equal(out.messages.length, 2);
    assert.deepEqual(out.messages[0].rendered, { body: 'Hi Ada' });
  });

  it('batch show --messages follows the next cursor to the last page; --limit stops early', async () => {
    const all = Array.from({ length: 2500 }, (_, i) => ({ message_id: `m-${i}`, phone: `+49151${String(i).padStart(8, '0')}`, status: 'sent', attempts: 1, rendered: null }));
    api.on('GET', /^\/admin\/batches\/big\/messages$/, (req) => {
      const from = req.query.after === undefined ? 0 : Number(req.query.after) + 1;
      const limit = Number(req.query.limit ?? 100);
      const page = all.slice(from, from + limit);
      return { status: 200, body: { messages: page, next: from + limit < all.length ? String(from + limit - 1) : null } };
    });
    const j = await cli(api, ['batch', 'show', 'big', '--messages', '--json']);
    assert.equal(j.code, 0, j.stderr);
    const ids = JSON.parse(j.stdout).messages.map((m: any) => m.message_id);
    assert.deepEqual(ids, all.map((m) => m.message_id), 'every message once, in order');
    const pages = api.requests.filter((q) => q.path.endsWith('/messages'));
    assert.deepEqual(pages.map((q) => q.query.after ?? null), [null, '999', '1999']);

    api.reset();
    api.on('GET', /^\/admin\/batches\/big\/messages$/, (req) => {
      const from = req.query.after === undefined ? 0 : Number(req.query.after) + 1;
      const page = all.slice(from, from + Number(req.query.limit));
      return { status: 200, body: { messages: page, next: String(from + page.length - 1) } };
    });
    const t = await cli(api, ['batch', 'show', 'big', '--messages', '--limit', '150']);
    assert.equal(t.code, 0, t.stderr);
    assert.match(t.stdout, /Messages \(150\)/);
    assert.deepEqual(api.requests.filter((q) => q.path.endsWith('/messages')).map((q) => q.query.limit), ['150']);
  });

  it('batch show of an unknown batch reports the detail', async () => {
    api.on('GET', /^\/admin\/batches\/nope$/, { status: 404, body: { detail: 'Batch not found' } });
    const r = await cli(api, ['batch', 'show', 'nope']);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^cms: error: not found \(HTTP 404\): Batch not found$/m);
  });

  it('audit passes company and limit and prints entries', async () => {
    api.on('GET', /^\/admin\/audit$/, {
      status: 200,
      body: {
        entries: [
          { at: '2025-01-02T09:00:00Z', actor: 'admin', action: 'company.create', target: 'company:1', details: { name: 'Acme' } },
        ],
      },
    });
    const r = await cli(api, ['audit', '--company', '1', '--limit', '20']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(api.requests[0].path, '/admin/audit');
    assert.deepEqual(api.requests[0].query, { company_id: '1', limit: '20' });
    assert.match(r.stdout, /^at\tactor\taction\ttarget\tdetails$/m);
    assert.match(r.stdout, /\tcompany\.create\tcompany:1\t\{"name":"Acme"\}$/m);

    const j = await cli(api, ['audit', '--json']);
    assert.deepEqual(api.requests[1].query, {});
    assert.equal(JSON.parse(j.stdout).entries[0].actor, 'admin');
  });

  it('audit with no entries: the header line only (TSV); on a terminal it says so', async () => {
    api.on('GET', /^\/admin\/audit$/, { status: 200, body: { entries: [] } });
    const r = await cli(api, ['audit']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'at\tactor\taction\ttarget\tdetails\n');
    const onTerminal = await runCli(['audit'], { env: { CMS_URL: api.url, ADMIN_TOKEN: TOKEN }, tty: true });
    assert.equal(onTerminal.code, 0, onTerminal.stderr);
    assert.match(onTerminal.stdout, /no audit entries/);
  });

  it('audit on a server without the route explains instead of failing obscurely', async () => {
    const r = await cli(api, ['audit']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /this server does not provide GET \/admin\/audit \(HTTP 404\)/);
    assert.doesNotMatch(r.stderr, /\n\s+at /);
    // The service's own not-found handler answers {detail: "Not Found"}.
    api.on('GET', /^\/admin\/audit$/, { status: 404, body: { detail: 'Not Found' } });
    const real = await cli(api, ['audit', '--json']);
    assert.equal(real.code, 1);
    assert.equal(JSON.parse(real.stderr).status, 404);
    const plain = await cli(api, ['audit']);
    assert.match(plain.stderr, /does not provide GET \/admin\/audit/);
    const bad = await cli(api, ['audit', '--limit', '0']);
    assert.equal(bad.code, 2);
  });
});
