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

SELECT "series", "bucket", "b0", "b1", "value", 0 AS "other" FROM "insight_endpoint_7_v2" WHERE 1 = 1 AND "b0" = $1 AND "b1" = $2
-- args: "Chrome" ""
