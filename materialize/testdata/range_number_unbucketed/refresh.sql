DROP TABLE IF EXISTS "stored_next";
DROP INDEX IF EXISTS "stored_next_ix";
CREATE TABLE "stored_next" AS SELECT "event" AS "_k0", count(*) AS "_a0", "rowid" AS "max_id" FROM "events" WHERE length("uuid") > 3 GROUP BY "event", "rowid";
CREATE INDEX "stored_next_ix" ON "stored_next" ("max_id");
DROP TABLE IF EXISTS "stored";
ALTER TABLE "stored_next" RENAME TO "stored";
