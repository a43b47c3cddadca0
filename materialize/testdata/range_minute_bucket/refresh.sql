DROP TABLE IF EXISTS "stored_next";
CREATE TABLE "stored_next" AS SELECT min("timestamp") AS "_a0", strftime('%Y-%m-%d %H:%M:00', CASE WHEN "timestamp" IS NULL OR "timestamp" = strftime('%Y-%m-%d %H:%M:%S', "timestamp") THEN "timestamp" ELSE json_extract('{}', 'materialize: "timestamp" is not UTC text YYYY-MM-DD HH:MM:SS: ' || "timestamp") END) AS "after" FROM "events" GROUP BY strftime('%Y-%m-%d %H:%M:00', CASE WHEN "timestamp" IS NULL OR "timestamp" = strftime('%Y-%m-%d %H:%M:%S', "timestamp") THEN "timestamp" ELSE json_extract('{}', 'materialize: "timestamp" is not UTC text YYYY-MM-DD HH:MM:SS: ' || "timestamp") END);
DROP TABLE IF EXISTS "stored";
ALTER TABLE "stored_next" RENAME TO "stored";
CREATE INDEX IF NOT EXISTS "stored_ix" ON "stored" ("after", "_a0");
