/**
 * The outbound signer (src/delivery/sign.ts): the signature computed with Node's HMAC is the
 * `standardwebhooks` library's own, byte for byte, for both kinds of secret (`whsec_` + base64, and
 * any other string as its UTF-8 bytes), any id, time and body (strings with any UTF-16 content, lone
 * surrogates included, and Buffers that are not valid UTF-8), and the library's `verify` accepts it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { scalarValue } from '../helpers/arbitraries.ts';
import { Webhook } from 'standardwebhooks';
import { createSigner, webhookKey } from '../../src/delivery/sign.ts';

const secretArb = fc.oneof(
  fc.uint8Array({ minLength: 1, maxLength: 64 }).map((b) => 'whsec_' + Buffer.from(b).toString('base64')),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }),
);
const bodyArb = fc.oneof(
  fc.string({ unit: scalarValue, maxLength: 300 }),
  fc.json(),
  fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)),
);
const idArb = fc.oneof(fc.uuid(), fc.string({ unit: scalarValue, maxLength: 40 }));
const timeArb = fc.integer({ min: 0, max: 4_102_444_800_000 }).map((ms) => new Date(ms));

test('the native signature equals the library\'s own for any secret, id, time and body', () => {
  fc.assert(fc.property(secretArb, idArb, timeArb, bodyArb, (secret, id, at, body) => {
    const native = createSigner(secret);
    const library = createSigner(secret, { nativeHmac: false });
    assert.equal(native.sign(id, at, body), library.sign(id, at, body));
  }), { numRuns: 2_000, seed: 20261127 });
});

test('the library verifies what the native signer signs, and refuses another body', () => {
  fc.assert(fc.property(secretArb, fc.uuid(), fc.json(), (secret, id, body) => {
    const at = new Date();
    const signature = createSigner(secret).sign(id, at, body);
    const receiver = new Webhook(webhookKey(secret), { format: 'raw' });
    const headers = { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': signature };
    receiver.verify(body, headers);
    assert.throws(() => receiver.verify(body + ' ', headers), /No matching signature/); // a changed body
  }), { numRuns: 300, seed: 20261127 });
});

test('a known vector: the Standard Webhooks specification\'s example', () => {
  // The example of the specification's "Signature scheme": secret, id, timestamp and body as published.
  const signer = createSigner('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw');
  const signature = signer.sign('msg_p5jXN8AQM9LWM0D4loKWxJek', new Date(1614265330 * 1000), '{"test": 2432232314}');
  assert.equal(signature, 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
});

test('a Buffer body that is not valid UTF-8 signs as the library decodes it, and a wrong type is refused', () => {
  const secret = 'whsec_' + Buffer.from('k'.repeat(24)).toString('base64');
  const body = Buffer.from([0x7b, 0xff, 0xfe, 0x22, 0x7d]);
  assert.equal(createSigner(secret).sign('id', new Date(0), body), createSigner(secret, { nativeHmac: false }).sign('id', new Date(0), body));
  assert.throws(() => createSigner(secret).sign('id', new Date(0), 5 as unknown as string), /Expected payload/);
  assert.throws(() => createSigner(''), Error);
});
