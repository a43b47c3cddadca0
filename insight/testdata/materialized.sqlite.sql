DROP TABLE IF EXISTS "insight_endpoint_7_v2"
-- args:;

CREATE TABLE "insight_endpoint_7_v2" ("series" INTEGER, "bucket" TEXT, "b0" TEXT, "b1" TEXT, "value" REAL)
-- args:;

INSERT INTO "insight_endpoint_7_v2" ("series", "bucket", "b0", "b1", "value")
SELECT 0 AS "series", "bucket", "b0", "b1", sum("v") AS "value"
FROM (SELECT strftime('%Y-%m-01 00:00:00', "timestamp") AS "bucket", (CASE json_type("properties", ?) WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' ELSE COALESCE(CAST(json_extract("properties", ?) AS TEXT), '') END) AS "b0", (CASE json_type("properties", ?) WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' ELSE COALESCE(CAST(json_extract("properties", ?) AS TEXT), '') END) AS "b1", (CASE WHEN json_type("properties", ?) IN ('integer', 'real') THEN json_extract("properties", ?) END) AS "v"
  FROM "events"
  WHERE 1 = 1 AND "event" = ? AND "timestamp" >= ? AND "timestamp" < ?) AS "e"
GROUP BY "bucket", "b0", "b1"
-- args: "$.\"$browser\"" "$.\"$browser\"" "$.\"country\"" "$.\"country\"" "$.\"amount\"" "$.\"amount\"" "purchase" "2025-03-01 00:00:00" "2025-06-01 00:00:00";

CREATE INDEX IF NOT EXISTS "insight_endpoint_7_v2_breakdowns" ON "insight_endpoint_7_v2" ("b0", "b1")
-- args:;

SELECT "series", "bucket", "b0", "b1", "value", 0 AS "other" FROM "insight_endpoint_7_v2" WHERE 1 = 1 AND "b0" = ? AND "b1" = ?
-- args: "Chrome" ""
