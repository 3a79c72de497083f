/**
 * The audience of the big-send benchmarks (bench/big-send.ts, bench/million.ts) written in set-based
 * SQL, far faster than through the API: `contacts` contacts of one company (phones `+49151` + 8 digits,
 * first names and a `city` / `order_id` variable to render; every `optOutEvery`-th opted out, none when
 * 0), every one a member of one of `segmentIds` (consecutive ranges of equal size, in contact order:
 * a send takes at most MAX_SEND_CONTACTS, src/domain/campaign-sends.ts), then VACUUM ANALYZE. Plain SQL text (the ids are integers), so
 * that a Kysely database (PGlite or PostgreSQL) and a pg client alike can run it.
 */

/** The statements, in order: contacts, segment members, VACUUM ANALYZE (outside a transaction). */
export function segmentSeedSql(companyId: number, segmentIds: readonly number[], contacts: number, optOutEvery = 0): string[] {
  const whole = (x: number) => {
    if (!Number.isSafeInteger(x) || x < 0) throw new Error(`not a whole number: ${x}`);
    return x;
  };
  const [c, n, k] = [companyId, contacts, optOutEvery].map(whole);
  if (segmentIds.length === 0) throw new Error('no segment');
  const per = Math.ceil(n / segmentIds.length);
  return [
    `INSERT INTO contacts (company_id, phone, sha256_plus, sha256_bare, first_name, last_name, variables, opted_out, country)
     SELECT ${c}, p.phone, sha256(convert_to(p.phone, 'UTF8')), sha256(convert_to(substr(p.phone, 2), 'UTF8')),
            (ARRAY['Anna','Ben','Chiara','David','Elif','Finn','Greta','Hugo','Ida','Jonas'])[1 + i % 10], 'Tester ' || i,
            jsonb_build_object('city', (ARRAY['Berlin','Köln','Hamburg','München','Leipzig'])[1 + i % 5], 'order_id', 'A' || (100000 + i)),
            ${k > 0 ? `i % ${k} = 0` : 'false'}, 'DE'
     FROM generate_series(1, ${n}::int) AS i, LATERAL (SELECT '+49151' || lpad(i::text, 8, '0') AS phone) p`,
    `INSERT INTO segment_members (segment_id, contact_id)
     SELECT (ARRAY[${segmentIds.map(whole).join(',')}])[1 + (rn - 1) / ${per}], contact_id
     FROM (SELECT contact_id, row_number() OVER (ORDER BY contact_id) AS rn FROM contacts WHERE company_id = ${c}) t`,
    'VACUUM ANALYZE',
  ];
}
