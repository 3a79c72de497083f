/** In-process unit tests of the CLI's pure helpers: option parsers, CSV mapping, error texts. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { channelBody } from '../../src/cli/commands/channel.ts';
import { normalizeHeader, parseOptedOut, recordToContact } from '../../src/cli/csv-import.ts';
import { ApiError, describeError } from '../../src/cli/errors.ts';
import { resolveBaseUrl, tokenFilePath } from '../../src/cli/context.ts';
import { parseDeliveryHours } from '../../src/cli/parse.ts';

describe('cli helpers', () => {
  it('parseDeliveryHours', () => {
    assert.deepEqual(parseDeliveryHours('09:00-21:00@Europe/Berlin'), { start: '09:00', end: '21:00', timezone: 'Europe/Berlin' });
    assert.equal(parseDeliveryHours('None'), 'none');
    assert.throws(() => parseDeliveryHours('24:00-21:00@Europe/Berlin'));
    assert.throws(() => parseDeliveryHours('09:00-21:00'));
  });

  it('CSV mapping', () => {
    assert.deepEqual(normalizeHeader(['PHONE', ' First_Name ', 'Order_Id']), ['phone', 'first_name', 'Order_Id']);
    // Variable names are identifiers, as PATCH .../contacts/{phone} requires (docs/contacts.md).
    assert.throws(() => normalizeHeader(['phone', 'Order Id']), /"Order Id" is no variable name/);
    assert.throws(() => normalizeHeader(['phone', '=HYPERLINK("http://evil/","x")']), /no variable name/);
    assert.throws(() => normalizeHeader(['phone', 'x', 'x']), /twice/);
    assert.equal(parseOptedOut('Y', 2), true);
    assert.equal(parseOptedOut('', 2), undefined);
    assert.throws(() => parseOptedOut('nope', 7), /line 7/);
    assert.equal(recordToContact({ phone: '', first_name: 'A' }, 2), null);
    assert.deepEqual(recordToContact({ phone: '+491', opted_out: 'false', tier: 'gold', note: '' }, 2), {
      phone: '+491',
      opted_out: false,
      variables: { tier: 'gold' },
    });
  });

  it('channelBody', () => {
    assert.deepEqual(channelBody({ company: '1', provider: 'outbox' }), { provider: 'outbox' });
    assert.throws(() => channelBody({ company: '1', provider: 'whatsapp', accessToken: 't' }), /--phone-number-id/);
  });

  it('connection defaults', () => {
    assert.equal(resolveBaseUrl(undefined, {}), 'http://127.0.0.1:8000');
    assert.equal(resolveBaseUrl(undefined, { PORT: '9000' }), 'http://127.0.0.1:9000');
    assert.equal(resolveBaseUrl(undefined, { CMS_URL: 'https://cms.example/', PORT: '9000' }), 'https://cms.example');
    assert.match(tokenFilePath({ DATA_DIR: '/srv/cms' }, '/home/op'), /^\/srv\/cms\/admin-token$/);
    assert.equal(tokenFilePath({}, '/home/op'), '/home/op/data/admin-token');
  });

  it('describeError tells a missing route from a missing resource', () => {
    const route = new ApiError(404, 'GET', '/admin/audit', { message: 'Route GET:/admin/audit not found', error: 'Not Found', statusCode: 404 });
    assert.match(describeError(route).message, /does not provide GET \/admin\/audit/);
    const resource = new ApiError(404, 'GET', '/admin/batches/x', { detail: 'Batch not found' });
    assert.equal(describeError(resource).message, 'not found (HTTP 404): Batch not found');
    assert.equal(describeError(new Error('boom')).exitCode, 1);
  });
});
