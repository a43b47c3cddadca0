DROP TABLE IF EXISTS "stored_next";
DROP INDEX IF EXISTS "stored_next_ix";
CREATE TABLE "stored_next" AS SELECT "event" AS "_k0", sum(length("distinct_id")) AS "_a0", count(length("distinct_id")) AS "_a1", sum(length("uuid")) AS "_a2", count(length("uuid")) AS "_a3", CASE WHEN "timestamp" IS NULL OR "timestamp" = strftime('%Y-%m-%d %H:%M:%S', "timestamp") THEN strftime('%Y-%m-%d 00:00:00', "timestamp") ELSE json_extract('{}', 'materialize: "timestamp" is not UTC text YYYY-MM-DD HH:MM:SS: ' || "timestamp") END AS "until" FROM "events" GROUP BY "event", CASE WHEN "timestamp" IS NULL OR "timestamp" = strftime('%Y-%m-%d %H:%M:%S', "timestamp") THEN strftime('%Y-%m-%d 00:00:00', "timestamp") ELSE json_extract('{}', 'materialize: "timestamp" is not UTC text YYYY-MM-DD HH:MM:SS: ' || "timestamp") END;
CREATE INDEX "stored_next_ix" ON "stored_next" ("until");
DROP TABLE IF EXISTS "stored";
ALTER TABLE "stored_next" RENAME TO "stored";
