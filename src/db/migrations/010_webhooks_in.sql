-- 010: WhatsApp webhooks in (docs/decisions.md#9-whatsapp-webhooks-in).
-- The GET handshake finds the channel whose verify token it was sent by the token's SHA-256 (hex), kept
-- beside the sealed token in the channel jsonb, without opening any sealed secret.
CREATE INDEX companies_whatsapp_verify_token ON companies ((channel->>'verify_token_sha256'))
  WHERE channel->>'provider' = 'whatsapp';
