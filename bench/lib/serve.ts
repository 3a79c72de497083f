/**
 * Small pieces the service benchmarks share: the service as a process of its own (`node bin/cms.js
 * serve`, as deployed, with the Node options of `npm start`), a free port, a fresh PostgreSQL database
 * and a caller of the operator API.
 *
 * Units: ports are TCP ports on 127.0.0.1, times in ms. `startServeProcess` throws when /readyz does
 * not answer within 60 s (the child is killed first); `operatorApi`'s caller throws on any status of
 * 300 or more, with the answer's text.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import pg from 'pg';
import { serviceNodeOptions } from './accept-load.ts';

const ROOT = path.join(import.meta.dirname, '../..');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Starts `node bin/cms.js serve [...args]` with `env` (over this process's environment) on `port`;
 * resolves with the child once GET /readyz answers 200.
 */
export async function startServeProcess(env: Record<string, string>, port: number, args: string[] = []): Promise<ChildProcess> {
  const child = spawn(process.execPath, [...serviceNodeOptions(), path.join(ROOT, 'bin/cms.js'), 'serve', ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  for (let i = 0; i < 600; i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/readyz`)).ok) return child;
    } catch { /* not listening yet */ }
    await sleep(100);
  }
  child.kill();
  throw new Error('the server did not start');
}

/** A TCP port free on 127.0.0.1 at the time of asking. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * Drops and creates database `name` next to the one in PostgreSQL URL `url`; resolves to the new
 * database's URL. `name` must be a plain identifier (it is not quoted).
 */
export async function freshDatabase(url: string, name: string): Promise<string> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`the database name must be a plain identifier, got ${name}`);
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/** A caller of the operator API at `base` with bearer `token`: (method, path, JSON body?) → the parsed answer. */
export function operatorApi(base: string, token: string): <T = any>(method: string, p: string, body?: unknown) => Promise<T> {
  return async <T = any>(method: string, p: string, body?: unknown): Promise<T> => {
    const res = await fetch(base + p, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${text}`);
    return (text ? JSON.parse(text) : undefined) as T;
  };
}
