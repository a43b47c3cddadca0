DROP TABLE IF EXISTS "stored_next";
CREATE TABLE "stored_next" AS SELECT replace("event", '\.', '/') AS "_k0", count(*) AS "_a0", strftime('%Y-%m-%d 00:00:00', CASE WHEN "timestamp" IS NULL OR "timestamp" = strftime('%Y-%m-%d %H:%M:%S', "timestamp") THEN "timestamp" ELSE json_extract('{}', 'materialize: "timestamp" is not UTC text YYYY-MM-DD HH:MM:SS: ' || "timestamp") END) AS "date_from" FROM "events" WHERE "distinct_id" LIKE 'u\_%' GROUP BY replace("event", '\.', '/'), strftime('%Y-%m-%d 00:00:00', CASE WHEN "timestamp" IS NULL OR "timestamp" = strftime('%Y-%m-%d %H:%M:%S', "timestamp") THEN "timestamp" ELSE json_extract('{}', 'materialize: "timestamp" is not UTC text YYYY-MM-DD HH:MM:SS: ' || "timestamp") END);
DROP TABLE IF EXISTS "stored";
ALTER TABLE "stored_next" RENAME TO "stored";
CREATE INDEX IF NOT EXISTS "stored_ix" ON "stored" ("date_from", "_k0", "_a0");
