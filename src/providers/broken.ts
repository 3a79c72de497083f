/**
 * A provider that cannot be built (a corrupt channel value, a secret sealed under another key, a URL
 * whose literal address the network guard refuses): it fails each of its messages at once, not
 * retried, with `error` (never a secret). Providers' plugins answer it from `forChannel`, which never throws.
 */
import type { Provider, ProviderName } from './types.ts';

/** The broken provider of `name`, failing each message with `error`. */
export function brokenProvider(name: ProviderName, error: string): Provider {
  return { name, async send() { return { status: 'failed', retryable: false, error }; } };
}
