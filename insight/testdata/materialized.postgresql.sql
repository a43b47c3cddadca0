DROP TABLE IF EXISTS "insight_endpoint_7_v2"
-- args:;

CREATE TABLE "insight_endpoint_7_v2" ("series" bigint, "bucket" text, "b0" text, "b1" text, "value" double precision)
-- args:;

INSERT INTO "insight_endpoint_7_v2" ("series", "bucket", "b0", "b1", "value")
SELECT 0 AS "series", "bucket", "b0", "b1", sum("v") AS "value"
FROM (SELECT to_char(date_trunc('month', ("timestamp")::timestamp), 'YYYY-MM-DD HH24:MI:SS') AS "bucket", COALESCE(("properties"::jsonb) ->> $1::text, '') AS "b0", COALESCE(("properties"::jsonb) ->> $2::text, '') AS "b1", (CASE WHEN jsonb_typeof(("properties"::jsonb) -> $3::text) = 'number' THEN (("properties"::jsonb) ->> $4::text)::double precision END) AS "v"
  FROM "events"
  WHERE 1 = 1 AND "event" = $5 AND "timestamp" >= $6 AND "timestamp" < $7) AS "e"
GROUP BY "bucket", "b0", "b1"
-- args: "$browser" "country" "amount" "amount" "purchase" "2025-03-01 00:00:00" "2025-06-01 00:00:00";

CREATE INDEX IF NOT EXISTS "insight_endpoint_7_v2_breakdowns" ON "insight_endpoint_7_v2" ("b0", "b1")
-- args:;

SELECT "series", "bucket", "k0" AS "b0", "k1" AS "b1", sum("y") AS "value", "other" AS "other"
FROM (
  SELECT "series", "bucket", CASE WHEN "rank" <= $1 THEN "b0" ELSE '' END AS "k0", CASE WHEN "rank" <= $2 THEN "b1" ELSE '' END AS "k1", CASE WHEN "rank" <= $3 THEN 0 ELSE 1 END AS "other", "y"
  FROM (
    SELECT "series", "bucket", "b0", "b1", "y", dense_rank() OVER (PARTITION BY "series" ORDER BY "total" DESC, "b0", "b1") AS "rank"
    FROM (
      SELECT "series", "bucket", "b0", "b1", "value" AS "y", sum(COALESCE("value", 0)) OVER (PARTITION BY "series", "b0", "b1") AS "total"
      FROM (
SELECT "series", "bucket", "b0", "b1", "value" FROM "insight_endpoint_7_v2" WHERE 1 = 1 AND "b0" = $4 AND "b1" = $5
      ) AS "r"
    ) AS "t"
  ) AS "k"
) AS "f"
GROUP BY "series", "bucket", "k0", "k1", "other"
-- args: 25 25 25 "Chrome" ""
