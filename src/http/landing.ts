/**
 * What a person who opens the server in a browser meets first:
 *
 * - `GET /`: a small HTML page that says what this is and links to the API docs (`/docs`), the OpenAPI
 *   document, the console (`/console`) and the probes; not part of the API (hidden from /openapi.json).
 * - `GET /favicon.ico` (a 32×32 PNG, which every browser accepts there) and `GET /favicon.svg`: the
 *   icon browsers show for the console and the docs.
 */
import { crc32, deflateSync } from 'node:zlib';
import type { FastifyInstance } from 'fastify';

/** The service's colour (the console's primary blue). */
const RGB = [0x10, 0x6c, 0xc8] as const;

const SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#106cc8"/><path d="M8 10h16a2 2 0 0 1 2 2v8a2 2 0 0 1-2 2h-9l-5 4v-4H8a2 2 0 0 1-2-2v-8a2 2 0 0 1 2-2z" fill="#fff"/></svg>`;

/** A PNG chunk: length, type, data, CRC-32 of type and data. */
function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

/** A `size`×`size` RGBA PNG: a rounded square in {@link RGB} with a white speech bubble (as the SVG). */
export function faviconPng(size = 32): Buffer {
  const rows: Buffer[] = [];
  const inRounded = (x: number, y: number, x0: number, y0: number, x1: number, y1: number, r: number) => {
    const cx = Math.min(Math.max(x, x0 + r), x1 - r);
    const cy = Math.min(Math.max(y, y0 + r), y1 - r);
    return x >= x0 && x < x1 && y >= y0 && y < y1 && (x - cx) ** 2 + (y - cy) ** 2 <= r * r;
  };
  const k = size / 32;
  for (let y = 0; y < size; y++) {
    const row = Buffer.alloc(1 + size * 4); // filter byte 0, then RGBA
    for (let x = 0; x < size; x++) {
      const px = x + 0.5;
      const py = y + 0.5;
      const bubble = inRounded(px, py, 6 * k, 10 * k, 26 * k, 22 * k, 2 * k) || (px >= 10 * k && px <= 15 * k && py >= 22 * k && py <= 26 * k - (px - 10 * k) * 0.8);
      const tile = inRounded(px, py, 0, 0, size, size, 7 * k);
      const o = 1 + x * 4;
      if (bubble) row.fill(0xff, o, o + 4);
      else if (tile) {
        row[o] = RGB[0]; row[o + 1] = RGB[1]; row[o + 2] = RGB[2]; row[o + 3] = 0xff;
      }
    }
    rows.push(row);
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size, 0);
  ihdr.writeUInt32BE(size, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 6; // RGBA
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(Buffer.concat(rows))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Contact Messaging Service</title>
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;color:#1b1f24}a{color:#0b5cad}li{margin:.4rem 0}code{background:#f1f3f5;padding:0 .2rem}</style>
</head>
<body>
<main>
<h1>Contact Messaging Service</h1>
<p>This server runs the Contact Messaging Service: segments of contacts, API automations and campaign sends, delivered in the background.</p>
<ul>
<li><a href="/console">Console</a>: sign in to your company's console.</li>
<li><a href="/docs">API documentation</a>: the public API (<code>/api</code>, header <code>service-api-key</code>) and the operator API (<code>/admin</code>, bearer token), interactive.</li>
<li><a href="/openapi.json">OpenAPI document</a>: to generate a client.</li>
<li><a href="/healthz">Liveness</a> and <a href="/readyz">readiness</a> probes, <a href="/metrics">Prometheus metrics</a>.</li>
</ul>
</main>
</body>
</html>
`;

/** Registers `/`, `/favicon.ico` and `/favicon.svg` (hidden from the OpenAPI document). */
export function registerLanding(app: FastifyInstance): void {
  const png = faviconPng();
  const cache = 'public, max-age=86400';
  app.get('/', { schema: { hide: true } }, async (_request, reply) => reply.type('text/html; charset=utf-8').send(PAGE));
  app.get('/favicon.ico', { schema: { hide: true }, logLevel: 'warn' }, async (_request, reply) => reply.type('image/png').header('cache-control', cache).send(png));
  app.get('/favicon.svg', { schema: { hide: true }, logLevel: 'warn' }, async (_request, reply) => reply.type('image/svg+xml').header('cache-control', cache).send(SVG));
}
