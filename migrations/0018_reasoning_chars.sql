-- How much a streaming reply's model has reasoned so far (characters), for
-- the front ends of other processes: the reasoning itself is not kept.
ALTER TABLE messages ADD COLUMN reasoning_chars INTEGER;
