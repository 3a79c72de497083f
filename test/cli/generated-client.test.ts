/**
 * The typed client: the checked-in `src/cli/api/openapi.ts` is what openapi-typescript
 * makes of the live `/openapi.json` (so it cannot drift), no operation's types hold `never` or
 * `Record<string, never>` where a body belongs, and `src/cli/client.ts` over it talks to the real server
 * with the CLI's error mapping. (That the generated file type-checks under --strict is `npm run typecheck`.)
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { GENERATED_FILE, REPO_ROOT, generateClientTypes, weakTypes } from '../../tools/openapi-client/generate.mts';
import { createOperatorClient, data, integerId } from '../../src/cli/client.ts';
import { ApiError, ConnectionError, UsageError } from '../../src/cli/errors.ts';
import { ADMIN_TOKEN, startTestServer, type TestServer } from '../helpers/server.ts';

/** The first line where `a` and `b` differ (1-based), with both versions of it. */
function firstDifference(a: string, b: string): string {
  const x = a.split('\n');
  const y = b.split('\n');
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    if (x[i] !== y[i]) return `line ${i + 1}: checked in ${JSON.stringify(x[i] ?? '(end of file)')}, served ${JSON.stringify(y[i] ?? '(end of file)')}`;
  }
  return 'no line differs';
}

describe('generated client types', () => {
  let server: TestServer;
  let generated: string;

  before(async () => {
    server = await startTestServer({ role: 'api' });
    const res = await fetch(`${server.url}/openapi.json`);
    assert.equal(res.status, 200);
    generated = await generateClientTypes(await res.json());
  });
  after(() => server.close());

  test('the checked-in file is what the live /openapi.json generates', () => {
    const checkedIn = fs.readFileSync(path.join(REPO_ROOT, GENERATED_FILE), 'utf8');
    if (checkedIn !== generated) {
      assert.fail(`${GENERATED_FILE} is out of date with the served /openapi.json (${firstDifference(checkedIn, generated)}): run npm run gen:client`);
    }
  });

  test('no operation has never or Record<string, never> where a type belongs', () => {
    const weak = weakTypes(generated);
    assert.deepEqual(weak.map((w) => `${w.where}: ${w.text}`), [], `${weak.length} weak type(s) in the generated client: complete these schemas`);
  });
});

describe('weakTypes', () => {
  const sample = (response: string, body: string) => `export interface paths {
    "/admin/things/{thing_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** never echoed */
        get: {
            requestBody?: never;
            responses: {
                307: components["responses"]["Moved"];
                200: components["responses"]["Empty"];
                ${response}: {
                    headers: {
                        [name: string]: unknown;
                    };
                    ${body}
                };
            };
        };
        put?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        Thing: {
            variables?: Record<string, never>;
        };
    };
    responses: {
        Moved: {
            headers: {
                [name: string]: unknown;
            };
            content?: never;
        };
        Empty: {
            headers: {
                [name: string]: unknown;
            };
            content?: never;
        };
    };
}
export type $defs = Record<string, never>;
`;

  test('finds a body typed never, an empty object schema and a shared response without a body used for a 200', () => {
    const found = weakTypes(sample('201', 'content?: never;'));
    assert.deepEqual(found.map((w) => [w.where, w.text]), [
      ['paths["/admin/things/{thing_id}"].get', 'content?: never;'],
      ['components.schemas.Thing', 'variables?: Record<string, never>;'],
      ['components.responses.Empty', 'content?: never;'],
    ]);
  });

  test('a 204 or a shared redirect without content is not weak', () => {
    assert.deepEqual(weakTypes(sample('204', 'content?: never;')).map((w) => w.where), ['components.schemas.Thing', 'components.responses.Empty']);
  });
});

describe('typed client against the real server', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ role: 'api' });
  });
  after(() => server.close());

  test('creates, reads and changes a company with typed calls', async () => {
    const api = createOperatorClient({ baseUrl: `${server.url}/`, token: ADMIN_TOKEN });
    const created = await data(api.POST('/admin/companies', { body: { name: 'Typed Co', default_country: 'DE' } }));
    assert.equal(created.name, 'Typed Co');
    const company_id = created.company_id;
    assert.equal(typeof company_id, 'number');
    const read = await data(api.GET('/admin/companies/{company_id}', { params: { path: { company_id } } }));
    assert.equal(read.default_country, 'DE');
    const changed = await data(api.PATCH('/admin/companies/{company_id}', { params: { path: { company_id } }, body: { name: 'Typed Co 2' } }));
    assert.equal(changed.name, 'Typed Co 2');
    const key = await data(api.POST('/admin/companies/{company_id}/api-keys', { params: { path: { company_id } }, body: { label: 'typed' } }));
    assert.match(key.api_key, /\S{20,}/);
    assert.equal(await data(api.DELETE('/admin/api-keys/{key_id}', { params: { path: { key_id: key.key_id } } })), undefined);
  });

  test('an answer outside 2xx throws ApiError with status, method, path and body', async () => {
    const api = createOperatorClient({ baseUrl: server.url, token: ADMIN_TOKEN });
    const err = await data(api.GET('/admin/batches/{batch_id}', { params: { path: { batch_id: '00000000-0000-4000-8000-000000000000' } } })).then(
      () => assert.fail('expected a 404'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof ApiError);
    assert.equal(err.status, 404);
    assert.equal(err.method, 'GET');
    assert.equal(err.path, '/admin/batches/00000000-0000-4000-8000-000000000000');
    assert.equal(err.routeMissing, false);
    assert.ok(err.detail);

    const wrongToken = createOperatorClient({ baseUrl: server.url, token: 'not-the-token' });
    const denied = await data(wrongToken.POST('/admin/companies', { body: { name: 'X' } })).catch((e: unknown) => e);
    assert.ok(denied instanceof ApiError);
    assert.equal(denied.status, 401);
    assert.equal(denied.method, 'POST');

    const invalid = await data(api.POST('/admin/companies', { body: { name: 'X', default_country: 'Germany' } })).catch((e: unknown) => e);
    assert.ok(invalid instanceof ApiError);
    assert.equal(invalid.status, 422);
    assert.ok(invalid.validationItems.length > 0);
  });

  test('no server, or no answer within the timeout, throws ConnectionError', async () => {
    const silent = createServer(() => { /* never answers */ });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    try {
      const slow = createOperatorClient({ baseUrl: url, token: ADMIN_TOKEN, timeoutMs: 200 });
      const timedOut = await data(slow.GET('/admin/companies')).catch((e: unknown) => e);
      assert.ok(timedOut instanceof ConnectionError);
      assert.equal(timedOut.code, 'timeout');
    } finally {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
    const gone = createOperatorClient({ baseUrl: url, token: ADMIN_TOKEN });
    const refused = await data(gone.GET('/admin/companies')).catch((e: unknown) => e);
    assert.ok(refused instanceof ConnectionError);
    assert.equal(refused.code, 'ECONNREFUSED');
  });

  test('integerId refuses what is not a whole number before any request', () => {
    assert.equal(integerId(' 42 ', 'company id'), 42);
    assert.throws(() => integerId('acme', 'company id'), (e: unknown) => e instanceof UsageError && /company id must be a whole number, got "acme"/.test(e.message));
    assert.throws(() => integerId('1.5', 'key id'), UsageError);
    assert.throws(() => integerId('99999999999999999999', 'key id'), UsageError);
  });
});
