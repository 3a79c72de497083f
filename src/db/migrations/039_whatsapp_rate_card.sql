-- The operator's WhatsApp rate card (docs/whatsapp.md "Pricing and the rate card"): Meta's price of one
-- delivered template message by the recipient's country (ISO 3166-1 alpha-2) and the template's
-- category, in one currency. `whatsapp_rate_card` is one row (absent until the first load) holding the
-- card's currency and when it was last replaced; `whatsapp_rates` holds its rows. A load replaces both
-- in one transaction (src/domain/rate-card.ts).
CREATE TABLE whatsapp_rate_card (
  card boolean PRIMARY KEY DEFAULT true CHECK (card),
  currency text CHECK (currency ~ '^[A-Z]{3}$'),
  updated_at timestamptz NOT NULL
);

CREATE TABLE whatsapp_rates (
  country text NOT NULL CHECK (country ~ '^[A-Z]{2}$'),
  category text NOT NULL CHECK (category IN ('MARKETING', 'UTILITY', 'AUTHENTICATION')),
  price numeric NOT NULL CHECK (price >= 0),
  PRIMARY KEY (country, category)
);
