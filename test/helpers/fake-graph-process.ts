/**
 * The fake WhatsApp Cloud (Graph) API of test/helpers/fake-graph.ts in a child process of its own
 * (bench/whatsapp-pacing.ts, test/whatsapp/pacing.process.test.ts): its CPU is apart from the caller's, and
 * the arrival times it records (performance.now() of its own event loop) are not delayed by whatever
 * else the caller's event loop does, so rates measured there are the rates requests arrived at.
 *
 * `startFakeGraphProcess()` forks this file; over IPC the parent asks `stats(phoneNumberId)`:
 * {count, most (highest count in any sliding 1-s window), firstAt, lastAt (ms), closestPairMs
 * (smallest gap between two requests to one recipient, null if none repeats), repeats}, sets a WABA's
 * templates with `templates(wabaId, list)`, and `stop()`s it.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { maxInWindow, startFakeGraph, type GraphTemplate } from './fake-graph.ts';

/** What the fake Graph API saw for one phone number id. */
export interface GraphStats {
  count: number;
  most: number;
  firstAt: number;
  lastAt: number;
  closestPairMs: number | null;
  repeats: number;
}

export interface FakeGraphProcess {
  baseUrl: string;
  /** The bearer token its template endpoints accept. */
  accessToken: string;
  pid: number;
  stats(phoneNumberId: string): Promise<GraphStats>;
  templates(wabaId: string, list: GraphTemplate[]): Promise<void>;
  stop(): void;
}

const SELF = fileURLToPath(import.meta.url);

/** Starts the fake Graph API in a child process; resolves when it listens. */
export async function startFakeGraphProcess(): Promise<FakeGraphProcess> {
  const child = fork(SELF, ['--fake-graph'], { stdio: 'inherit', execArgv: [] }); // not the test runner's flags
  const { baseUrl, accessToken } = await new Promise<{ baseUrl: string; accessToken: string }>((resolve) => child.once('message', (m: any) => resolve(m)));
  return {
    baseUrl,
    accessToken,
    pid: child.pid!,
    templates(wabaId, list) {
      child.send({ templates: { wabaId, list } });
      return new Promise((resolve) => child.once('message', () => resolve()));
    },
    stats(phoneNumberId) {
      child.send({ stats: phoneNumberId });
      return new Promise((resolve) => child.once('message', (m: any) => resolve(m.stats)));
    },
    stop: () => { if (child.connected) child.send({ stop: true }); },
  };
}

async function runChild(): Promise<void> {
  const graph = await startFakeGraph();
  process.send!({ baseUrl: graph.baseUrl, accessToken: graph.accessToken });
  process.on('disconnect', () => process.exit(0)); // the parent is gone
  process.on('message', async (m: any) => {
    if (m.stop) {
      await graph.close();
      process.exit(0);
    }
    if (m.templates) {
      graph.templates.set(m.templates.wabaId, m.templates.list);
      process.send!({ ok: true });
    }
    if (m.stats) {
      const ours = graph.requests.filter((r) => r.phoneNumberId === m.stats);
      const times = ours.map((r) => r.at).sort((a, b) => a - b);
      const byTo = new Map<string, number[]>();
      for (const r of ours) {
        const list = byTo.get(r.body?.to) ?? [];
        list.push(r.at);
        byTo.set(r.body?.to, list);
      }
      let closest = Infinity;
      let repeats = 0;
      for (const list of byTo.values()) {
        list.sort((a, b) => a - b);
        repeats += list.length - 1;
        for (let i = 1; i < list.length; i++) closest = Math.min(closest, list[i] - list[i - 1]);
      }
      const stats: GraphStats = { count: ours.length, most: maxInWindow(times), firstAt: times[0] ?? 0, lastAt: times.at(-1) ?? 0, closestPairMs: closest, repeats };
      process.send!({ stats: { ...stats, closestPairMs: Number.isFinite(closest) ? closest : null } });
    }
  });
}

if (process.argv.includes('--fake-graph')) void runChild();
