/**
 * Test helpers for the `cms` CLI: a fake operator API
 * (node:http on 127.0.0.1, port 0) that records every request and answers like docs/operator-api.md;
 * `runCli`, which runs a `cms` command in the test's own process (src/cli/program.ts `run` with
 * captured streams, a clean environment and a temporary directory: src/cli/io.ts) and captures stdout,
 * stderr and the exit code; `spawnCli`, the same through the real bin/cms.js as a child process, for
 * what only a process shows (the entry point, its exit status); `cli` (against the fake API) and
 * `cliFor` (against a real test server, test/helpers/server.ts) on top of `runCli`.
 * A child process per command cost about 0.13 s of CPU, 331 times per `npm test`.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { CliIo } from '../../src/cli/io.ts';
import { run } from '../../src/cli/program.ts';

/** The admin token the fake server accepts. */
export const TOKEN = 'test-admin-token-4Jx9qLw2Zr7Vb5Nc';

/** Path of the CLI entry point under test. */
export const BIN = fileURLToPath(new URL('../../bin/cms.js', import.meta.url));

/** One request as the fake server saw it; `body` is parsed JSON (undefined when empty). */
export interface Recorded {
  method: string;
  path: string;
  query: Record<string, string>;
  authorization: string | undefined;
  contentType: string | undefined;
  body: any;
}

/** What a route answers: a status and a JSON body (or `raw` text). */
export interface Reply {
  status: number;
  body?: unknown;
  raw?: string;
}

type Handler = (req: Recorded, params: string[]) => Reply;

interface Route {
  method: string;
  pattern: RegExp;
  handler: Handler;
}

/** A running fake operator API. */
export interface FakeApi {
  url: string;
  requests: Recorded[];
  /** Answer `method` + path regex with `handler` (checked before the default routes). */
  on(method: string, pattern: RegExp, handler: Handler | Reply): void;
  /** Forget recorded requests and `on` overrides. */
  reset(): void;
  close(): Promise<void>;
}

const company = (id: number, body: any) => ({
  company_id: id,
  name: body.name ?? 'Acme',
  subscription_active: body.subscription_active ?? false,
  default_country: body.default_country ?? null,
  delivery_hours: body.delivery_hours ?? null,
});

/** Default answers for every operator route, shaped as in docs/operator-api.md. */
function defaultRoutes(): Route[] {
  let nextId = 1;
  const r = (method: string, pattern: RegExp, handler: Handler): Route => ({ method, pattern, handler });
  return [
    r('POST', /^\/admin\/companies$/, (q) => ({ status: 201, body: company(nextId++, q.body) })),
    r('PATCH', /^\/admin\/companies\/([^/]+)$/, (q, [id]) => ({ status: 200, body: company(Number(id), q.body) })),
    r('POST', /^\/admin\/companies\/([^/]+)\/api-keys$/, (q) => ({
      status: 201,
      body: { key_id: 42, api_key: 'cms_live_SECRETKEY123', label: q.body?.label ?? null },
    })),
    r('DELETE', /^\/admin\/api-keys\/([^/]+)$/, () => ({ status: 204 })),
    r('PUT', /^\/admin\/companies\/([^/]+)\/contacts$/, (q) => {
      const contacts: any[] = q.body?.contacts ?? [];
      const invalid = contacts.filter((c) => !/^\+?\d{6,15}$/.test(c.phone)).length;
      return { status: 200, body: { created: contacts.length - invalid, updated: 0, invalid } };
    }),
    r('POST', /^\/admin\/companies\/([^/]+)\/automations$/, (q) => ({
      status: 201,
      body: { automation_id: 7, ...q.body },
    })),
    r('PATCH', /^\/admin\/automations\/([^/]+)$/, (q, [id]) => ({
      status: 200,
      body: { automation_id: Number(id), name: 'Shipped', type: 'api', active: true, ...q.body },
    })),
    r('POST', /^\/admin\/companies\/([^/]+)\/campaigns$/, (q) => ({ status: 201, body: { campaign_id: 9, ...q.body } })),
    r('PUT', /^\/admin\/companies\/([^/]+)\/connector$/, (q, [id]) => ({
      status: 200,
      body: { company_id: Number(id), connected: q.body?.connected, provider: q.body?.provider ?? null },
    })),
    r('PUT', /^\/admin\/companies\/([^/]+)\/channel$/, (q, [id]) => ({
      status: 200,
      body: { company_id: Number(id), provider: q.body?.provider },
    })),
    r('GET', /^\/admin\/batches\/([^/]+)$/, (_q, [id]) => ({
      status: 200,
      body: {
        batch_id: id,
        kind: 'automation',
        status: 'completed',
        counts: { total: 2, sent: 1, delivered: 0, read: 0, failed: 1, skipped: 0, pending: 0 },
        ignored_contacts: 0,
        created_at: '2025-01-01T10:00:00Z',
        completed_at: '2025-01-01T10:00:05Z',
      },
    })),
    r('GET', /^\/admin\/batches\/([^/]+)\/messages$/, () => ({
      status: 200,
      body: {
        messages: [
          { message_id: 'm-1', phone: '+4915112345678', status: 'sent', attempts: 1, sent_at: '2025-01-01T10:00:01Z', rendered: { body: 'Hi Ada' } },
          { message_id: 'm-2', phone: '+4915112345679', status: 'failed', error: 'HTTP 500', attempts: 5, rendered: { body: 'Hi Bob' } },
        ],
      },
    })),
  ];
}

/** The whole request body as text. */
function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Start a fake operator API that requires `Bearer ${TOKEN}`. */
export async function startFakeApi(): Promise<FakeApi> {
  const requests: Recorded[] = [];
  const overrides: Route[] = [];
  const defaults = defaultRoutes();
  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const text = await readBody(req);
    const rec: Recorded = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      authorization: req.headers.authorization,
      contentType: req.headers['content-type'],
      body: text === '' ? undefined : JSON.parse(text),
    };
    requests.push(rec);
    let reply: Reply;
    if (rec.authorization !== `Bearer ${TOKEN}`) {
      reply = { status: 401, body: { detail: 'Invalid admin token' } };
    } else {
      reply = { status: 404, body: { message: `Route ${rec.method}:${rec.path} not found`, error: 'Not Found', statusCode: 404 } };
      for (const route of [...overrides, ...defaults]) {
        const m = route.method === rec.method ? route.pattern.exec(rec.path) : null;
        if (m) {
          reply = route.handler(rec, m.slice(1));
          break;
        }
      }
    }
    const payload = reply.raw ?? (reply.body === undefined ? '' : JSON.stringify(reply.body));
    res.writeHead(reply.status, payload && reply.raw === undefined ? { 'content-type': 'application/json' } : {});
    res.end(payload);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    on(method, pattern, handler) {
      overrides.unshift({ method, pattern, handler: typeof handler === 'function' ? handler : () => handler });
    },
    reset() {
      requests.length = 0;
      overrides.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Result of one CLI run. */
export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Options of one CLI run: environment additions (`undefined` leaves a variable out), directory, stdin, terminal. */
export interface CliOptions {
  env?: Record<string, string | undefined>;
  cwd?: string;
  stdin?: string;
  /** Let the captured stdout say it is a terminal (`isTTY`, 100 columns), as a shell's would. */
  tty?: boolean;
}

/** The clean environment of a run: only PATH, HOME (and SYSTEMROOT) from this process, plus `env`. */
function cleanEnv(extra: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const k of ['PATH', 'HOME', 'SYSTEMROOT']) if (process.env[k] !== undefined) env[k] = process.env[k] as string;
  for (const [k, v] of Object.entries(extra)) if (v !== undefined) env[k] = v;
  return env;
}

/** Runs `f` in `opts.cwd`, else in a fresh temporary directory that is removed afterwards. */
async function inDir<T>(opts: CliOptions, f: (cwd: string) => Promise<T>): Promise<T> {
  const cwd = opts.cwd ?? (await mkdtemp(path.join(tmpdir(), 'cms-cli-')));
  try {
    return await f(cwd);
  } finally {
    if (!opts.cwd) await rm(cwd, { recursive: true, force: true });
  }
}

/** A stream that keeps what is written to it (bytes, decoded once at the end: no character split across chunks). */
function capture(): { stream: Writable; text(): string } {
  const chunks: Buffer[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
      done();
    },
  });
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
}

/**
 * Runs `cms ...args` in this process, as bin/cms.js would in its own: `run` from src/cli/program.ts
 * with captured stdout and stderr (not terminals, unless `opts.tty` for stdout), `opts.stdin` as stdin, a clean environment
 * ({@link cleanEnv}) and `opts.cwd` (default: a fresh temporary directory) as its directory.
 */
export async function runCli(args: string[], opts: CliOptions = {}): Promise<CliResult> {
  return inDir(opts, async (cwd) => {
    const stdout = capture();
    const stderr = capture();
    if (opts.tty) Object.assign(stdout.stream, { isTTY: true, columns: 100 });
    const io: CliIo = { stdout: stdout.stream, stderr: stderr.stream, stdin: Readable.from([Buffer.from(opts.stdin ?? '')]), env: cleanEnv(opts.env), cwd };
    const code = await run([process.execPath, BIN, ...args], io);
    return { code, stdout: stdout.text(), stderr: stderr.text() };
  });
}

/** Runs `node bin/cms.js ...args` as a child process, with the same environment, directory and stdin as {@link runCli}. */
export async function spawnCli(args: string[], opts: CliOptions = {}): Promise<CliResult> {
  return inDir(opts, (cwd) =>
    new Promise<CliResult>((resolve, reject) => {
      const child = spawn(process.execPath, [BIN, ...args], { cwd, env: cleanEnv(opts.env), stdio: ['pipe', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
      child.stdin.end(opts.stdin ?? '');
    }),
  );
}

/** `runCli` against `api` with the right token in ADMIN_TOKEN and its URL in CMS_URL. */
export function cli(api: FakeApi, args: string[], env: Record<string, string | undefined> = {}): Promise<CliResult> {
  return runCli(args, { env: { CMS_URL: api.url, ADMIN_TOKEN: TOKEN, ...env } });
}

/**
 * `runCli` against a real server (`startTestServer`): its URL in CMS_URL and `token` (default: the test
 * servers' admin token) in ADMIN_TOKEN. `cliFor(s)(args)` resolves to the result whatever the exit
 * code; `.json(args)` runs with `--json`, requires exit code 0 and parses stdout.
 */
export function cliFor(server: { url: string }, token = TOKEN): CliRunner {
  const runner = (args: string[], opts: CliOptions = {}) =>
    runCli(args, { ...opts, env: { CMS_URL: server.url, ADMIN_TOKEN: token, ...opts.env } });
  return Object.assign(runner, {
    async json(args: string[]): Promise<any> {
      const r = await runner(['--json', ...args]);
      if (r.code !== 0) throw new Error(`cms ${args.join(' ')} exited with ${r.code}: ${r.stderr}`);
      return JSON.parse(r.stdout);
    },
  });
}

/** What {@link cliFor} returns. */
export interface CliRunner {
  (args: string[], opts?: CliOptions): Promise<CliResult>;
  /** Runs `cms --json ...args`; throws unless it exits 0; the parsed stdout. */
  json(args: string[]): Promise<any>;
}

/** Make a temp directory; the caller removes it. */
export function tempDir(): Promise<string> {
  return mkdtemp(path.join(tmpdir(), 'cms-cli-'));
}
