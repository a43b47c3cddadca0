DROP TABLE IF EXISTS "stored_next";
CREATE TABLE "stored_next" AS SELECT "event" AS "_k0", count(*) AS "_a0", lower(coalesce(json_extract("properties", '$.country'), 'none')) AS "_v0" FROM "events" GROUP BY "event", lower(coalesce(json_extract("properties", '$.country'), 'none'));
DROP TABLE IF EXISTS "stored";
ALTER TABLE "stored_next" RENAME TO "stored";
CREATE INDEX IF NOT EXISTS "stored_ix" ON "stored" ("_v0");
