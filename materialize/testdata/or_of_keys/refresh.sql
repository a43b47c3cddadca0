DROP TABLE IF EXISTS "stored_next";
CREATE TABLE "stored_next" AS SELECT "event" AS "_k0", count(*) AS "_a0", "event" AS "e", "distinct_id" AS "users", strftime('%Y-%m-%d 00:00:00', CASE WHEN "timestamp" IS NULL OR "timestamp" = strftime('%Y-%m-%d %H:%M:%S', "timestamp") THEN "timestamp" ELSE json_extract('{}', 'materialize: "timestamp" is not UTC text YYYY-MM-DD HH:MM:SS: ' || "timestamp") END) AS "from" FROM "events" GROUP BY "event", "distinct_id", strftime('%Y-%m-%d 00:00:00', CASE WHEN "timestamp" IS NULL OR "timestamp" = strftime('%Y-%m-%d %H:%M:%S', "timestamp") THEN "timestamp" ELSE json_extract('{}', 'materialize: "timestamp" is not UTC text YYYY-MM-DD HH:MM:SS: ' || "timestamp") END);
DROP TABLE IF EXISTS "stored";
ALTER TABLE "stored_next" RENAME TO "stored";
CREATE INDEX IF NOT EXISTS "stored_ix" ON "stored" ("from", "_k0", "_a0");
