DROP TABLE IF EXISTS "stored_next";
CREATE TABLE "stored_next" AS SELECT min("timestamp") AS "_a0", max("timestamp") AS "_a1", total(length("uuid")) AS "_a2", "event" AS "event", strftime('%Y-%m-%d 00:00:00', CASE WHEN "timestamp" IS NULL OR "timestamp" = strftime('%Y-%m-%d %H:%M:%S', "timestamp") THEN "timestamp" ELSE json_extract('{}', 'materialize: "timestamp" is not UTC text YYYY-MM-DD HH:MM:SS: ' || "timestamp") END) AS "date_from" FROM "events" GROUP BY "event", strftime('%Y-%m-%d 00:00:00', CASE WHEN "timestamp" IS NULL OR "timestamp" = strftime('%Y-%m-%d %H:%M:%S', "timestamp") THEN "timestamp" ELSE json_extract('{}', 'materialize: "timestamp" is not UTC text YYYY-MM-DD HH:MM:SS: ' || "timestamp") END);
DROP TABLE IF EXISTS "stored";
ALTER TABLE "stored_next" RENAME TO "stored";
CREATE INDEX IF NOT EXISTS "stored_ix" ON "stored" ("event", "date_from", "_a0", "_a1", "_a2");
