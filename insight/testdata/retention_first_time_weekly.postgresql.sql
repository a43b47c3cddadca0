WITH "e" AS MATERIALIZED (
  SELECT "distinct_id" AS "actor", COALESCE(("properties"::jsonb) ->> $1::text, '') AS "b0", "timestamp" AS "ts", to_char(date_trunc('week', ("timestamp")::timestamp), 'YYYY-MM-DD HH24:MI:SS') AS "period",
    CASE WHEN "event" = $2 THEN 1 ELSE 0 END AS "is_target", CASE WHEN "event" = $3 THEN 1 ELSE 0 END AS "is_return"
  FROM "events"
  WHERE "event" IN ($4, $5) AND COALESCE(("properties"::jsonb) ->> $6::text, '') IN ($7)
),
"starts" AS MATERIALIZED (
  SELECT "actor", "b0", to_char(date_trunc('week', ("first_ts")::timestamp), 'YYYY-MM-DD HH24:MI:SS') AS "cohort"
  FROM (SELECT "actor", "b0", min("ts") AS "first_ts" FROM "e" WHERE "is_target" = 1 GROUP BY "actor", "b0") AS "f"
  WHERE 1 = 1 AND "first_ts" >= $8 AND "first_ts" < $9
),
"returns" AS MATERIALIZED (
  SELECT DISTINCT "actor", "b0", "period" FROM "e" WHERE "is_return" = 1 AND "ts" >= $10 AND "ts" < $11
)
SELECT "b0", "cohort", "cohort" AS "period", count(*) AS "actors" FROM "starts" GROUP BY "cohort", "b0"
UNION ALL
SELECT "s"."b0", "s"."cohort", "r"."period", count(*)
FROM "starts" AS "s" JOIN "returns" AS "r" ON "r"."actor" = "s"."actor" AND "r"."b0" = "s"."b0"
WHERE "r"."period" > "s"."cohort"
GROUP BY "s"."cohort", "r"."period", "s"."b0"
-- args: "$browser" "signed_up" "$pageview" "signed_up" "$pageview" "plan" "enterprise" "2025-03-31 00:00:00" "2025-06-01 00:00:00" "2025-03-31 00:00:00" "2025-06-01 00:00:00"
