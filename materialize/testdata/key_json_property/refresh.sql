DROP TABLE IF EXISTS "stored_next";
CREATE TABLE "stored_next" AS SELECT count(*) AS "_a0", json_extract("properties", '$.country') AS "_v0" FROM "events" GROUP BY json_extract("properties", '$.country');
DROP TABLE IF EXISTS "stored";
ALTER TABLE "stored_next" RENAME TO "stored";
CREATE INDEX IF NOT EXISTS "stored_ix" ON "stored" ("_v0");
