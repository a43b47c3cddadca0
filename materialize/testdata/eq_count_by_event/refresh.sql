DROP TABLE IF EXISTS "stored_next";
DROP INDEX IF EXISTS "stored_next_ix";
CREATE TABLE "stored_next" AS SELECT "event" AS "_k0", count(*) AS "_a0", "event" AS "event" FROM "events" GROUP BY "event";
CREATE INDEX "stored_next_ix" ON "stored_next" ("event");
DROP TABLE IF EXISTS "stored";
ALTER TABLE "stored_next" RENAME TO "stored";
