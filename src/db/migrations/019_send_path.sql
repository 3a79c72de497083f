-- 019: the WhatsApp send path (docs/whatsapp.md "What each error code does"): attempts that ended in a
-- wait which does not count against DELIVERY_RETRY_SCHEDULE (Meta held a marketing message, the channel
-- was paused, the template was paused). The schedule's position of a message is
-- `attempts - uncounted_attempts`; `attempts` still counts every request made to the provider.
ALTER TABLE messages ADD COLUMN uncounted_attempts integer NOT NULL DEFAULT 0;
