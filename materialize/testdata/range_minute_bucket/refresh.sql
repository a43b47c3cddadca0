DROP TABLE IF EXISTS "stored_next";
DROP INDEX IF EXISTS "stored_next_ix";
CREATE TABLE "stored_next" AS SELECT min("timestamp") AS "_a0", CASE WHEN "timestamp" IS NULL OR "timestamp" = strftime('%Y-%m-%d %H:%M:%S', "timestamp") THEN strftime('%Y-%m-%d %H:%M:00', "timestamp") ELSE json_extract('{}', 'materialize: "timestamp" is not UTC text YYYY-MM-DD HH:MM:SS: ' || "timestamp") END AS "after" FROM "events" GROUP BY CASE WHEN "timestamp" IS NULL OR "timestamp" = strftime('%Y-%m-%d %H:%M:%S', "timestamp") THEN strftime('%Y-%m-%d %H:%M:00', "timestamp") ELSE json_extract('{}', 'materialize: "timestamp" is not UTC text YYYY-MM-DD HH:MM:SS: ' || "timestamp") END;
CREATE INDEX "stored_next_ix" ON "stored_next" ("after");
DROP TABLE IF EXISTS "stored";
ALTER TABLE "stored_next" RENAME TO "stored";
