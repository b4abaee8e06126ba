-- Token usage of a reply as its provider reported it (NULL: not reported).
-- prompt_tokens counts the whole prompt, cached_tokens the part of it read
-- from the provider's prompt cache.
ALTER TABLE messages ADD COLUMN prompt_tokens INTEGER;
ALTER TABLE messages ADD COLUMN completion_tokens INTEGER;
ALTER TABLE messages ADD COLUMN cached_tokens INTEGER;

-- The message a send replaces: the user message an edit-and-resend
-- rewrites, or the reply a regeneration supersedes. The message the send
-- creates (the new user message, or the new reply) is its next version.
ALTER TABLE outbox ADD COLUMN replaces_message_id INTEGER;
