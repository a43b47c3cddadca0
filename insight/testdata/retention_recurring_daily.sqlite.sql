WITH "e" AS MATERIALIZED (
  SELECT "distinct_id" AS "actor", "timestamp" AS "ts", strftime('%Y-%m-%d 00:00:00', "timestamp") AS "period",
    CASE WHEN "event" = ? THEN 1 ELSE 0 END AS "is_target", CASE WHEN "event" = ? THEN 1 ELSE 0 END AS "is_return"
  FROM "events"
  WHERE "event" IN (?, ?) AND "timestamp" >= ? AND "timestamp" < ?
),
"starts" AS MATERIALIZED (
  SELECT DISTINCT "actor", "period" AS "cohort" FROM "e" WHERE "is_target" = 1
),
"returns" AS MATERIALIZED (
  SELECT DISTINCT "actor", "period" FROM "e" WHERE "is_return" = 1
)
SELECT "cohort", "cohort" AS "period", count(*) AS "actors" FROM "starts" GROUP BY "cohort"
UNION ALL
SELECT "s"."cohort", "r"."period", count(*)
FROM "starts" AS "s" JOIN "returns" AS "r" ON "r"."actor" = "s"."actor"
WHERE "r"."period" > "s"."cohort"
GROUP BY "s"."cohort", "r"."period"
-- args: "$pageview" "purchase" "$pageview" "purchase" "2025-05-01 00:00:00" "2025-05-15 00:00:00"
