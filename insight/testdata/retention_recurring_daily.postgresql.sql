WITH "e" AS MATERIALIZED (
  SELECT "distinct_id" AS "actor", "timestamp" AS "ts", to_char(date_trunc('day', ("timestamp")::timestamp), 'YYYY-MM-DD HH24:MI:SS') AS "period",
    CASE WHEN "event" = $1 THEN 1 ELSE 0 END AS "is_target", CASE WHEN "event" = $2 THEN 1 ELSE 0 END AS "is_return"
  FROM "events"
  WHERE "event" IN ($3, $4) AND "timestamp" >= $5 AND "timestamp" < $6
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
