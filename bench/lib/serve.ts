/**
 * Small pieces the service benchmarks share: the service as a process of its own (`node bin/cms.js
 * serve`, as deployed, with the Node options of `npm start`) and a free port.
 *
 * Units: ports are TCP ports on 127.0.0.1, times in ms. `startServeProcess` throws when /readyz does
 * not answer within 60 s (the child is killed first).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
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
