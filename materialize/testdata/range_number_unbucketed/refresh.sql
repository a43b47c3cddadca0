DROP TABLE IF EXISTS "stored_next";
CREATE TABLE "stored_next" AS SELECT "event" AS "_k0", count(*) AS "_a0", "rowid" AS "max_id" FROM "events" WHERE length("uuid") > 3 GROUP BY "event", "rowid";
DROP TABLE IF EXISTS "stored";
ALTER TABLE "stored_next" RENAME TO "stored";
CREATE INDEX IF NOT EXISTS "stored_ix" ON "stored" ("max_id", "_k0", "_a0");
