DROP TABLE IF EXISTS "stored_next";
DROP INDEX IF EXISTS "stored_next_ix";
CREATE TABLE "stored_next" AS SELECT "uuid" AS "_c0", "timestamp" AS "_o0", "event" AS "event" FROM "events";
CREATE INDEX "stored_next_ix" ON "stored_next" ("event");
DROP TABLE IF EXISTS "stored";
ALTER TABLE "stored_next" RENAME TO "stored";
