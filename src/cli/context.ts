/**
 * Connection settings shared by every API command: `--url`, `--token`, `--json`.
 * Base URL: `--url`, else env CMS_URL, else `http://127.0.0.1:${PORT or 8000}`.
 * Admin token: `--token`, else env ADMIN_TOKEN, else the file `${DATA_DIR or ./data}/admin-token`
 * that the server writes (mode 0600) when ADMIN_TOKEN is unset (docs/operator-api.md, last paragraph).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { createOperatorClient, type OperatorApi } from './client.ts';
import { UsageError } from './errors.ts';
import type { CliIo } from './io.ts';

/** The shared options as seen by one command after merging it with its ancestors. */
export interface CommonOptions {
  url?: string;
  token?: string;
  json: boolean;
}

/** The description of a `--url` that is the server's base URL (not, e.g., a webhook URL): it marks such commands. */
const SERVER_URL_OPTION = 'operator API base URL (env CMS_URL, default http://127.0.0.1:$PORT or :8000)';

/** True when `cmd`'s own `--url` is the server's base URL (added by {@link addCommonOptions}). */
function hasServerUrl(cmd: Command): boolean {
  return cmd.options.some((o) => o.long === '--url' && o.description === SERVER_URL_OPTION);
}

/**
 * Add `--json`, `--token` and (unless `serverUrl: false`) `--url` to `cmd`.
 * `serverUrl: false` is for commands that use `--url` for something else (channel set).
 */
export function addCommonOptions(cmd: Command, opts: { serverUrl?: boolean } = {}): Command {
  if (opts.serverUrl !== false) {
    cmd.option('--url <base>', SERVER_URL_OPTION);
  }
  cmd.option('--token <token>', 'admin token (env ADMIN_TOKEN, else $DATA_DIR/admin-token)');
  cmd.option('--json', 'print machine-readable JSON');
  return cmd;
}

/** Merge the shared options of `cmd` and its ancestors; the innermost command wins. */
export function commonOptions(cmd: Command): CommonOptions {
  const merged: CommonOptions = { json: false };
  for (let c: Command | null = cmd; c; c = c.parent) {
    const o = c.opts();
    if (merged.url === undefined && hasServerUrl(c) && typeof o.url === 'string') merged.url = o.url;
    if (merged.token === undefined && typeof o.token === 'string') merged.token = o.token;
    if (o.json === true) merged.json = true;
  }
  return merged;
}

const nonEmpty = (v: string | undefined): string | undefined => (v && v.trim() !== '' ? v.trim() : undefined);

/** The operator API base URL, without trailing slash. Throws `UsageError` for a non-http(s) URL. */
export function resolveBaseUrl(flag: string | undefined, env: CliIo['env']): string {
  const raw = nonEmpty(flag) ?? nonEmpty(env.CMS_URL) ?? `http://127.0.0.1:${nonEmpty(env.PORT) ?? '8000'}`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`invalid server URL: ${raw}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`invalid server URL (http or https expected): ${raw}`);
  }
  return raw.replace(/\/+$/, '');
}

/** Path of the token file the server writes: `${DATA_DIR or ./data}/admin-token`, made absolute against `cwd`. */
export function tokenFilePath(env: CliIo['env'], cwd: string): string {
  return path.resolve(cwd, nonEmpty(env.DATA_DIR) ?? './data', 'admin-token');
}

/** The admin token (see module doc). Throws `UsageError` when none is found or the file is unreadable. */
export async function resolveToken(flag: string | undefined, io: CliIo): Promise<string> {
  const direct = nonEmpty(flag) ?? nonEmpty(io.env.ADMIN_TOKEN);
  if (direct) return direct;
  const file = tokenFilePath(io.env, io.cwd);
  let content: string;
  try {
    content = await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      throw new UsageError(
        `no admin token: pass --token, set ADMIN_TOKEN, or start the server once so it writes ${file}`,
      );
    }
    throw new UsageError(`cannot read the admin token file ${file}: ${code ?? String(err)}`);
  }
  const token = content.trim();
  if (token === '') throw new UsageError(`the admin token file ${file} is empty`);
  return token;
}

/** Resolved options of an API command: whether to print JSON, a ready client and the run's streams. */
export interface CommandContext {
  json: boolean;
  io: CliIo;
  /** The typed client (client.ts): `await data(ctx.api.GET('/admin/...', { params }))`. */
  api: OperatorApi;
}

/** Build the `CommandContext` for an action from its `Command` (base URL and token resolved). */
export async function contextFor(cmd: Command, io: CliIo): Promise<CommandContext> {
  const o = commonOptions(cmd);
  const baseUrl = resolveBaseUrl(o.url, io.env);
  const token = await resolveToken(o.token, io);
  return { json: o.json, io, api: createOperatorClient({ baseUrl, token }) };
}
