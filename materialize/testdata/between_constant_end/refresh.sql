DROP TABLE IF EXISTS "stored_next";
CREATE TABLE "stored_next" AS SELECT "event" AS "_k0", count(*) AS "_a0", strftime('%Y-%m-%d 00:00:00', CASE WHEN "timestamp" IS NULL OR "timestamp" = strftime('%Y-%m-%d %H:%M:%S', "timestamp") THEN "timestamp" ELSE json_extract('{}', 'materialize: "timestamp" is not UTC text YYYY-MM-DD HH:MM:SS: ' || "timestamp") END) AS "to" FROM "events" WHERE "distinct_id" = 'user-1' AND "timestamp" >= '2025-01-01 00:00:00' GROUP BY "event", strftime('%Y-%m-%d 00:00:00', CASE WHEN "timestamp" IS NULL OR "timestamp" = strftime('%Y-%m-%d %H:%M:%S', "timestamp") THEN "timestamp" ELSE json_extract('{}', 'materialize: "timestamp" is not UTC text YYYY-MM-DD HH:MM:SS: ' || "timestamp") END);
DROP TABLE IF EXISTS "stored";
ALTER TABLE "stored_next" RENAME TO "stored";
CREATE INDEX IF NOT EXISTS "stored_ix" ON "stored" ("to", "_k0", "_a0");
