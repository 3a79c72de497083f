/**
 * The baseline of bench/http.ts: a bare Node http server that answers POST /api/automations/send with a
 * body of the same shape and size as the service's answer, after reading the whole request body. What
 * the service does beyond this (parsing, validation, auth, rate limit, one transaction) is its cost.
 * Usage: node bench/bare-server.ts PORT
 */
import http from 'node:http';

const port = Number(process.argv[2] ?? 8100);
const answer = Buffer.from(JSON.stringify({ batch_id: '0b7e3f3c-7a55-4d1e-9a51-5c3f1f0e2d11', contacts: 50, status: 'accepted' }));

http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': answer.length });
    res.end(answer);
  });
}).listen(port, '127.0.0.1', () => process.send?.('ready'));
