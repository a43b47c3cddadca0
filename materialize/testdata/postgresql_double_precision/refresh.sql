DROP TABLE IF EXISTS "stored_next";
CREATE TABLE "stored_next" AS SELECT "event" AS "_k0", max(CAST(json_extract_path_text(CAST("properties" AS json), 'amount') AS double precision)) AS "_a0", date_trunc('day', ("timestamp")::timestamp) AS "date_from", "properties"::json ->> 'country' AS "_v1" FROM "events" GROUP BY "event", date_trunc('day', ("timestamp")::timestamp), "properties"::json ->> 'country';
DROP TABLE IF EXISTS "stored";
ALTER TABLE "stored_next" RENAME TO "stored";
CREATE INDEX IF NOT EXISTS "stored_ix" ON "stored" ("_v1", "date_from");
