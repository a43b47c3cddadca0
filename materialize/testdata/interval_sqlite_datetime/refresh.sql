DROP TABLE IF EXISTS "stored_next";
CREATE TABLE "stored_next" AS SELECT "event" AS "_k0", "distinct_id" AS "_d0", strftime('%Y-%m-%d 00:00:00', CASE WHEN "timestamp" IS NULL OR "timestamp" = strftime('%Y-%m-%d %H:%M:%S', "timestamp") THEN "timestamp" ELSE json_extract('{}', 'materialize: "timestamp" is not UTC text YYYY-MM-DD HH:MM:SS: ' || "timestamp") END) AS "to" FROM "events" GROUP BY "event", strftime('%Y-%m-%d 00:00:00', CASE WHEN "timestamp" IS NULL OR "timestamp" = strftime('%Y-%m-%d %H:%M:%S', "timestamp") THEN "timestamp" ELSE json_extract('{}', 'materialize: "timestamp" is not UTC text YYYY-MM-DD HH:MM:SS: ' || "timestamp") END), "distinct_id";
DROP TABLE IF EXISTS "stored";
ALTER TABLE "stored_next" RENAME TO "stored";
CREATE INDEX IF NOT EXISTS "stored_ix" ON "stored" ("to", "_k0", "_d0");
