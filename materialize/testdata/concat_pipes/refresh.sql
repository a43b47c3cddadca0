DROP TABLE IF EXISTS "stored_next";
CREATE TABLE "stored_next" AS SELECT "event" || '!' AS "_c0", "event" AS "_v0" FROM "events";
DROP TABLE IF EXISTS "stored";
ALTER TABLE "stored_next" RENAME TO "stored";
CREATE INDEX IF NOT EXISTS "stored_ix" ON "stored" ("_v0");
