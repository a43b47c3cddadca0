WITH "e" AS MATERIALIZED (
  SELECT "distinct_id" AS "actor", (CASE json_type("properties", ?) WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' ELSE COALESCE(CAST(json_extract("properties", ?) AS TEXT), '') END) AS "b0", "timestamp" AS "ts", strftime('%Y-%m-%d 00:00:00', "timestamp", 'weekday 0', '-6 days') AS "period",
    CASE WHEN "event" = ? THEN 1 ELSE 0 END AS "is_target", CASE WHEN "event" = ? THEN 1 ELSE 0 END AS "is_return"
  FROM "events"
  WHERE "event" IN (?, ?) AND (CASE json_type("properties", ?) WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' ELSE COALESCE(CAST(json_extract("properties", ?) AS TEXT), '') END) IN (?)
),
"starts" AS MATERIALIZED (
  SELECT "actor", "b0", strftime('%Y-%m-%d 00:00:00', "first_ts", 'weekday 0', '-6 days') AS "cohort"
  FROM (SELECT "actor", "b0", min("ts") AS "first_ts" FROM "e" WHERE "is_target" = 1 GROUP BY "actor", "b0") AS "f"
  WHERE 1 = 1 AND "first_ts" >= ? AND "first_ts" < ?
),
"returns" AS MATERIALIZED (
  SELECT DISTINCT "actor", "b0", "period" FROM "e" WHERE "is_return" = 1 AND "ts" >= ? AND "ts" < ?
)
SELECT "b0", "cohort", "cohort" AS "period", count(*) AS "actors" FROM "starts" GROUP BY "cohort", "b0"
UNION ALL
SELECT "s"."b0", "s"."cohort", "r"."period", count(*)
FROM "starts" AS "s" JOIN "returns" AS "r" ON "r"."actor" = "s"."actor" AND "r"."b0" = "s"."b0"
WHERE "r"."period" > "s"."cohort"
GROUP BY "s"."cohort", "r"."period", "s"."b0"
-- args: "$.\"$browser\"" "$.\"$browser\"" "signed_up" "$pageview" "signed_up" "$pageview" "$.\"plan\"" "$.\"plan\"" "enterprise" "2025-03-31 00:00:00" "2025-06-01 00:00:00" "2025-03-31 00:00:00" "2025-06-01 00:00:00"
