-- What a reply's model reasoned before (or between) its text, kept with
-- the reply so that it can be read afterwards (the TUI folds it under a
-- line that says how long it is).
ALTER TABLE messages ADD COLUMN reasoning TEXT;
