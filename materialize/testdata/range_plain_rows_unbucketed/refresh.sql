DROP TABLE IF EXISTS "stored_next";
CREATE TABLE "stored_next" AS SELECT "uuid" AS "_c0", "timestamp" AS "date_from" FROM "events";
DROP TABLE IF EXISTS "stored";
ALTER TABLE "stored_next" RENAME TO "stored";
CREATE INDEX IF NOT EXISTS "stored_ix" ON "stored" ("date_from");
