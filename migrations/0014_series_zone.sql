-- The time zone a series' wall-clock times are in (an IANA name such as
-- Europe/Berlin), taken from the process that made (or last re-ruled) it:
-- "every day at 9am" stays 9am where the user said it, whichever process
-- dispatches it (a daemon under another TZ, say). NULL for series made
-- before this column: they follow the dispatching process's zone, as before.
ALTER TABLE series ADD COLUMN zone TEXT;
