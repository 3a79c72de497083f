-- 033: message templates store LF line endings only (docs/console.md "Editor and live preview"): every
-- way in now normalises CRLF and lone CR to LF (src/domain/templates.ts normaliseLineEndings), so the
-- preview, the stored template and what a receiver gets are the same bytes. This rewrites the bodies
-- and text headers stored before, the same way; rows without a CR are not touched.
UPDATE automations
SET template = jsonb_set(template, '{body}', to_jsonb(replace(replace(template->>'body', E'\r\n', E'\n'), E'\r', E'\n')))
WHERE strpos(template->>'body', E'\r') > 0;

UPDATE automations
SET template = jsonb_set(template, '{header,text}', to_jsonb(replace(replace(template#>>'{header,text}', E'\r\n', E'\n'), E'\r', E'\n')))
WHERE strpos(template#>>'{header,text}', E'\r') > 0;

UPDATE campaigns
SET template = jsonb_set(template, '{body}', to_jsonb(replace(replace(template->>'body', E'\r\n', E'\n'), E'\r', E'\n')))
WHERE strpos(template->>'body', E'\r') > 0;

UPDATE campaigns
SET template = jsonb_set(template, '{header,text}', to_jsonb(replace(replace(template#>>'{header,text}', E'\r\n', E'\n'), E'\r', E'\n')))
WHERE strpos(template#>>'{header,text}', E'\r') > 0;
