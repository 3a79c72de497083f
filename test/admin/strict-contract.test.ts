/**
 * The operator API holds its documented schemas strictly (docs/operator-api.md, "Conventions";
 * src/http/strict-validators.ts), for every operation `/openapi.json` lists under `/admin` (whatever
 * routes the document holds: the test walks it, it has no list of its own):
 *
 * - every operation with a JSON request body, sent its documented example with ONE value replaced by a
 *   value of a wrong JSON type (each property, nested ones and absent optional ones included: `null`
 *   where not nullable, a number for a string, a numeric string for a number, `"true"` for a boolean,
 *   an object for an array, an array for an object ...), and the whole body replaced by an array, a
 *   string, a number, a boolean (and null unless the body may be null): 422 in the admin shape, an
 *   item at the replaced value's `loc`, and nothing changed;
 * - every body whose schema says `additionalProperties: false`, sent with an unknown property: 422 at
 *   that property (`type` `additionalProperties`), nothing changed;
 * - every operation with typed path or query parameters, sent them as text that is not the type's
 *   JSON text (`abc`, `1.5`, `0x1F`, `1e3`, ` 1`, a repeated query parameter): 422 or 404, documented
 *   for the operation, and nothing changed.
 *
 * "Nothing changed": every row of every table that has a `company_id` column, for the test's own
 * company (each test creates one), is the same before and after; on PGlite (a database of this file
 * alone) the row count of every table too (on a shared PostgreSQL other test files write meanwhile).
 * Path parameters name the test company's own automation, campaign, segment, contact, key and event
 * endpoint, so that a request that got through would have changed something.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { ADMIN_TOKEN, startTestServer, type TestServer } from '../helpers/server.ts';

type Schema = Record<string, any>;
type Op = { method: string; path: string; op: any };

// A server of its own: the snapshots count every table's rows (on PGlite), another file's rows included.
const s: TestServer = await startTestServer({ role: 'api', own: true });
const doc: any = await (await fetch(`${s.url}/openapi.json`)).json();
after(() => s.close());

const METHODS = ['get', 'put', 'post', 'patch', 'delete'];
const OPERATIONS: Op[] = Object.entries<any>(doc.paths)
  .filter(([path]) => path.startsWith('/admin/'))
  .flatMap(([path, item]) => METHODS.filter((m) => item[m]).map((method) => ({ method, path, op: item[method] })));

/** A schema with its `$ref` (to `#/components/schemas/…`) followed. */
function resolve(schema: Schema | undefined): Schema | undefined {
  let s = schema;
  for (let i = 0; s?.$ref && i < 10; i++) s = doc.components.schemas[String(s.$ref).replace('#/components/schemas/', '')];
  return s;
}

const JSON_TYPES = ['null', 'boolean', 'integer', 'number', 'string', 'array', 'object'] as const;
const typeOf = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer' : typeof v);

/** The JSON types a schema accepts; undefined when it says nothing about types (any value). */
function accepted(schema: Schema | undefined): Set<string> | undefined {
  const s = resolve(schema);
  if (!s) return undefined;
  const out = new Set<string>();
  if (s.type !== undefined) for (const t of [s.type].flat()) out.add(t);
  else if (s.const !== undefined) out.add(typeOf(s.const));
  else if (Array.isArray(s.enum)) for (const v of s.enum) out.add(typeOf(v));
  else if (s.anyOf || s.oneOf) {
    for (const branch of s.anyOf ?? s.oneOf) {
      const t = accepted(branch);
      if (!t) return undefined;
      for (const x of t) out.add(x);
    }
  } else return undefined;
  if (out.has('number')) out.add('integer');
  return out;
}

/**
 * Values of a JSON type the schema does not accept, each the one that Fastify's default (lax) Ajv
 * options would have coerced into an accepted one where there is such a value.
 */
function wrongValues(schema: Schema | undefined): unknown[] {
  const ok = accepted(schema);
  if (!ok) return [];
  const out: unknown[] = [];
  if (!ok.has('null')) out.push(null);
  if (!ok.has('integer')) out.push(5);
  if (!ok.has('string')) out.push(ok.has('integer') ? '7' : ok.has('boolean') ? 'true' : 'x');
  if (!ok.has('boolean')) out.push(true);
  if (!ok.has('array')) out.push(ok.has('string') ? ['x'] : ok.has('integer') ? [7] : ok.has('boolean') ? [true] : [{}]);
  if (!ok.has('object')) out.push({});
  return out;
}

/** One wrong-typed request body: the body, and the `loc` a 422 must name. */
interface Probe { body: unknown; loc: (string | number)[] }

const clone = <T>(v: T): T => structuredClone(v);

/** Puts `value` at `path` of a copy of `base`. */
function replaced(base: unknown, path: (string | number)[], value: unknown): unknown {
  const copy: any = clone(base);
  let at = copy;
  for (const p of path.slice(0, -1)) at = at[p];
  at[path[path.length - 1]] = value;
  return copy;
}

/** Probes for every property of the object schema at `path` of `body` (nested objects and first array items too). */
function propertyProbes(body: unknown, schema: Schema | undefined, path: (string | number)[], out: Probe[], depth = 0): void {
  const s = resolve(schema);
  if (!s?.properties || depth > 4) return;
  let value: any = body;
  for (const p of path) value = value?.[p];
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return;
  for (const [name, propSchema] of Object.entries<Schema>(s.properties)) {
    for (const wrong of wrongValues(propSchema)) out.push({ body: replaced(body, [...path, name], wrong), loc: ['body', ...path, name] });
    const inner = resolve(propSchema);
    if (!(name in value)) continue;
    if (inner?.properties) propertyProbes(body, inner, [...path, name], out, depth + 1);
    const items = resolve(inner?.items);
    if (items?.properties && Array.isArray(value[name]) && value[name].length > 0) propertyProbes(body, items, [...path, name, 0], out, depth + 1);
  }
}

/** The documented example of a request body (media `example`, `examples`, or the schema's `examples`). */
function exampleBody(media: any): unknown {
  if (media.example !== undefined) return media.example;
  const named = Object.values<any>(media.examples ?? {});
  if (named.length > 0) return named[0].value;
  return resolve(media.schema)?.examples?.[0];
}

/** Every probe of an operation's JSON body: each property, then the whole body. */
function probes(media: any): Probe[] {
  const base = exampleBody(media);
  assert.ok(base !== undefined, 'the request body has an example');
  const out: Probe[] = [];
  propertyProbes(base, media.schema, [], out);
  for (const wrong of [...wrongValues(media.schema), [clone(base)], 'x']) {
    if (!out.some((p) => p.loc.length === 1 && JSON.stringify(p.body) === JSON.stringify(wrong))) out.push({ body: wrong, loc: ['body'] });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The test company, its resources, and what "nothing changed" compares
// ---------------------------------------------------------------------------------------------

const PHONE = '+4915112345678';
const UNKNOWN_ID = 2147483000;

/** Calls the operator API with a JSON body (or none); answers status and parsed body. */
async function call(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<{ status: number; body: any; text: string }> {
  const headers: Record<string, string> = { authorization: `Bearer ${ADMIN_TOKEN}` };
  if (body !== undefined) headers['content-type'] = contentType;
  const res = await fetch(s.url + path, { method: method.toUpperCase(), headers, body: body === undefined ? undefined : typeof body === 'string' && contentType !== 'application/json' ? body : JSON.stringify(body) });
  const text = await res.text();
  let json: unknown;
  try { json = JSON.parse(text); } catch { json = undefined; }
  return { status: res.status, body: json, text };
}

/** A company of the test with the resources its operations' path parameters name, made on first use. */
class Fixture {
  readonly values = new Map<string, string | number>();
  companyId = 0;

  static async create(): Promise<Fixture> {
    const f = new Fixture();
    const c = await s.company({ name: 'Strict contract' });
    f.companyId = c.companyId;
    f.values.set('company_id', c.companyId).set('key_id', c.keyId);
    return f;
  }

  /** The value of path parameter `name` (`schema` for the fallback): the company's own resource, else an unknown id. */
  async param(name: string, schema: Schema | undefined): Promise<string | number> {
    const known = this.values.get(name);
    if (known !== undefined) return known;
    const c = this.companyId;
    const make: Record<string, () => Promise<string | number>> = {
      automation_id: async () => (await s.admin('POST', `/admin/companies/${c}/automations`, { name: 'A', type: 'api', active: true, template: { body: 'Hi {{ first_name }}' } })).automation_id,
      campaign_id: async () => (await s.admin('POST', `/admin/companies/${c}/campaigns`, { name: 'C', template: { body: 'Sale {{ first_name }}' } })).campaign_id,
      segment_id: async () => (await s.admin('POST', `/admin/companies/${c}/segments`, { name: 'S' })).segment_id,
      endpoint_id: async () => (await s.admin('POST', `/admin/companies/${c}/event-endpoints`, { url: 'http://127.0.0.1:9/events', events: ['message.delivered'] })).endpoint_id,
      phone: async () => {
        await s.admin('PUT', `/admin/companies/${c}/contacts`, { contacts: [{ phone: PHONE, first_name: 'Ada' }] });
        return PHONE;
      },
    };
    const value = make[name] ? await make[name]() : (resolve(schema)?.type === 'integer' ? UNKNOWN_ID : (resolve(schema)?.examples?.[0] ?? 'x'));
    this.values.set(name, value);
    return value;
  }

  /** The operation's path with every parameter filled (`override` replaces one, as raw text). */
  async url(o: Op, override?: { name: string; text: string }): Promise<string> {
    let url = o.path;
    for (const p of (o.op.parameters ?? []).filter((x: any) => x.in === 'path')) {
      const text = override !== undefined && override.name === p.name ? override.text : encodeURIComponent(String(await this.param(p.name, p.schema)));
      url = url.replace(`{${p.name}}`, text);
    }
    return url;
  }

  /**
   * Every row of the company in every table with a `company_id` column (as JSON, sorted), the company's
   * row, and on PGlite the row count of every table.
   */
  async snapshot(): Promise<Record<string, unknown>> {
    const db = s.service.deps.database.db;
    const tables = await sql<{ table_name: string; scoped: boolean }>`
      SELECT table_name, bool_or(column_name = 'company_id') AS scoped FROM information_schema.columns
      WHERE table_schema = 'public' GROUP BY table_name ORDER BY table_name`.execute(db);
    const out: Record<string, unknown> = {};
    for (const { table_name: t, scoped } of tables.rows) {
      if (scoped) {
        const rows = await sql<{ row: string }>`SELECT to_jsonb(x)::text AS row FROM ${sql.table(t)} x WHERE company_id = ${this.companyId}`.execute(db);
        out[t] = rows.rows.map((r) => r.row).sort();
      }
      if (s.kind === 'pglite') out[`${t} (rows)`] = Number((await sql<{ n: string }>`SELECT count(*) AS n FROM ${sql.table(t)}`.execute(db)).rows[0].n);
    }
    return out;
  }
}

/** The tables whose rows (or row count) differ between two snapshots, with both versions. */
function changed(before: Record<string, unknown>, after: Record<string, unknown>): string[] {
  return [...new Set([...Object.keys(before), ...Object.keys(after)])]
    .filter((k) => JSON.stringify(before[k]) !== JSON.stringify(after[k]))
    .map((k) => `${k}: ${JSON.stringify(before[k])} -> ${JSON.stringify(after[k])}`);
}

/** The documented answer of `status` for the operation, or a failure naming what was answered. */
function assertDocumented(o: Op, status: number, text: string, what: string): void {
  assert.ok(o.op.responses?.[String(status)], `${o.method.toUpperCase()} ${o.path} ${what}: answered ${status}, which the operation does not document (${text.slice(0, 300)})`);
}

/** Checks an answer is a 422 in the admin shape with an item at `loc`. */
function assert422(res: { status: number; body: any; text: string }, loc: (string | number)[], what: string): void {
  assert.equal(res.status, 422, `${what}: ${res.status} ${res.text.slice(0, 300)}`);
  assert.ok(Array.isArray(res.body?.detail) && res.body.detail.length > 0, `${what}: the admin 422 shape (${res.text})`);
  for (const item of res.body.detail) {
    assert.equal(typeof item.type, 'string', what);
    assert.equal(typeof item.msg, 'string', what);
    assert.ok(Array.isArray(item.loc), what);
  }
  assert.ok(res.body.detail.some((item: any) => JSON.stringify(item.loc) === JSON.stringify(loc)), `${what}: an item at ${JSON.stringify(loc)} (${res.text.slice(0, 300)})`);
}

// ---------------------------------------------------------------------------------------------
// The tests (one per operation, generated from the document)
// ---------------------------------------------------------------------------------------------

const withJsonBody = OPERATIONS.filter((o) => o.op.requestBody?.content?.['application/json']);

before(() => {
  // The walk covers something: the operator API's body operations (companies, keys, contacts,
  // automations, campaigns, segments, users, event endpoints ...).
  assert.ok(withJsonBody.length >= 25, `JSON body operations in the document: ${withJsonBody.length}`);
});

describe('wrong-typed bodies are 422 and change nothing', () => {
  for (const o of withJsonBody) {
    test(`${o.method.toUpperCase()} ${o.path}`, async () => {
      const f = await Fixture.create();
      const url = await f.url(o);
      const all = probes(o.op.requestBody.content['application/json']);
      assert.ok(all.length > 0);
      const before = await f.snapshot();
      for (const p of all) {
        const what = `${o.method.toUpperCase()} ${url} ${JSON.stringify(p.body).slice(0, 200)}`;
        const res = await call(o.method, url, p.body);
        assert422(res, p.loc, what);
        assertDocumented(o, res.status, res.text, what);
      }
      assert.deepEqual(changed(before, await f.snapshot()), [], `${o.method.toUpperCase()} ${o.path}: nothing changed`);
    });
  }
});

describe('unknown properties where the schema says additionalProperties: false', () => {
  const closed = withJsonBody.filter((o) => resolve(o.op.requestBody.content['application/json'].schema)?.additionalProperties === false);
  test('there are such bodies', () => assert.ok(closed.length > 0));
  for (const o of closed) {
    test(`${o.method.toUpperCase()} ${o.path}: 422 at the unknown property, nothing changed`, async () => {
      const f = await Fixture.create();
      const url = await f.url(o);
      const base = exampleBody(o.op.requestBody.content['application/json']);
      const before = await f.snapshot();
      const res = await call(o.method, url, { ...(base as object), zzz_unknown: 1 });
      assert422(res, ['body', 'zzz_unknown'], `${o.method.toUpperCase()} ${url}`);
      assert.equal(res.body.detail.find((d: any) => d.loc.at(-1) === 'zzz_unknown').type, 'additionalProperties');
      assert.deepEqual(changed(before, await f.snapshot()), [], 'nothing changed');
    });
  }
});

/** Texts that are not the JSON text of an integer (nor of a number, except `1.5` / `1e3`). */
const NOT_INTEGERS = ['abc', '1.5', '0x1F', '1e3', '%201', '1%20', 'true', ''];

describe('wrong-typed path and query parameters are 422 (or 404 as documented) and change nothing', () => {
  const typed = (p: any) => ['integer', 'number', 'boolean'].includes(resolve(p.schema)?.type);
  for (const o of OPERATIONS.filter((x) => (x.op.parameters ?? []).some(typed))) {
    test(`${o.method.toUpperCase()} ${o.path}`, async () => {
      const f = await Fixture.create();
      const media = o.op.requestBody?.content?.['application/json'];
      const body = media ? exampleBody(media) : undefined;
      await f.url(o); // the company's resources first
      const before = await f.snapshot();
      for (const p of (o.op.parameters ?? []).filter(typed)) {
        const type = resolve(p.schema)?.type;
        const texts = type === 'boolean' ? ['1', 'yes', 'True', ''] : NOT_INTEGERS.filter((t) => type === 'integer' || !['1.5', '1e3'].includes(t));
        for (const text of texts) {
          if (p.in === 'path' && text === '') continue; // an empty path segment routes elsewhere (404 of the router)
          let url = await f.url(o, p.in === 'path' ? { name: p.name, text } : undefined);
          if (p.in === 'query') url += `?${encodeURIComponent(p.name)}=${text}`;
          const what = `${o.method.toUpperCase()} ${url}`;
          const res = await call(o.method, url, body);
          assertDocumented(o, res.status, res.text, what);
          if (res.status === 404) continue;
          assert422(res, [p.in === 'path' ? 'path' : 'query', p.name], what);
        }
        if (p.in === 'query') {
          const url = `${await f.url(o)}?${p.name}=1&${p.name}=2`;
          const res = await call(o.method, url, body);
          assertDocumented(o, res.status, res.text, `${o.method.toUpperCase()} ${url}`);
          assert422(res, ['query', p.name], `${o.method.toUpperCase()} ${url} (repeated)`);
        }
      }
      assert.deepEqual(changed(before, await f.snapshot()), [], `${o.method.toUpperCase()} ${o.path}: nothing changed`);
    });
  }
});

describe('the lax answers of before, one by one', () => {
  test('{"active":null}, {"name":5}, {"contacts":true}, {"opt_in_keywords":12345}: 422 at the field, nothing changed', async () => {
    const f = await Fixture.create();
    const automation = await f.param('automation_id', undefined);
    const campaign = await f.param('campaign_id', undefined);
    const before = await f.snapshot();
    assert422(await call('patch', `/admin/automations/${automation}`, { active: null }), ['body', 'active'], 'active null');
    assert.equal((await s.admin('GET', `/admin/automations/${automation}`)).active, true, 'still active');
    assert422(await call('post', '/admin/companies', { name: 5 }), ['body', 'name'], 'name 5');
    assert422(await call('post', `/admin/campaigns/${campaign}/sends`, { contacts: true }), ['body', 'contacts'], 'contacts true');
    assert422(await call('patch', `/admin/companies/${f.companyId}`, { opt_in_keywords: 12345 }), ['body', 'opt_in_keywords'], 'keywords 12345');
    assert.deepEqual(changed(before, await f.snapshot()), [], 'nothing changed');
    const companies = (await s.admin('GET', '/admin/companies')).companies as { name: string }[];
    assert.ok(!companies.some((c) => c.name === '5'), 'no company "5"');
  });

  test('a form body is 415 with the documented body; the api-key body may be left out', async () => {
    const form = await call('post', '/admin/companies', 'name=Form+Co', 'application/x-www-form-urlencoded');
    assert.deepEqual([form.status, form.body], [415, { detail: 'Unsupported Media Type: send application/json' }]);
    const f = await Fixture.create();
    assert.equal((await call('post', `/admin/companies/${f.companyId}/api-keys`)).status, 201);
    assert.equal((await call('post', `/admin/companies/${f.companyId}/api-keys`, null)).status, 201);
  });
});

describe('the walk itself', () => {
  test('a property probe replaces one value and names its loc; lax-coercible values are among them', () => {
    const media = {
      schema: { type: 'object', properties: { name: { type: 'string' }, on: { type: 'boolean' }, n: { type: 'integer' }, tags: { type: 'array', items: { type: 'string' } }, hours: { type: ['object', 'null'], properties: { start: { type: 'string' } } } } },
      example: { name: 'x', hours: { start: '09:00' } },
    };
    const all = probes(media);
    const at = (loc: string) => all.filter((p) => JSON.stringify(p.loc) === loc).map((p) => JSON.stringify(p.body));
    assert.ok(at('["body","name"]').includes('{"name":5,"hours":{"start":"09:00"}}'));
    assert.ok(at('["body","on"]').includes('{"name":"x","hours":{"start":"09:00"},"on":null}'));
    assert.ok(at('["body","n"]').includes('{"name":"x","hours":{"start":"09:00"},"n":"7"}'));
    assert.ok(at('["body","tags"]').includes('{"name":"x","hours":{"start":"09:00"},"tags":"x"}'));
    assert.ok(at('["body","hours","start"]').includes('{"name":"x","hours":{"start":5}}'));
    assert.ok(!at('["body","hours"]').includes('{"name":"x","hours":null}'), 'null is not wrong where nullable');
    assert.ok(at('["body"]').includes('[{"name":"x","hours":{"start":"09:00"}}]') && at('["body"]').includes('"x"'));
  });
});
