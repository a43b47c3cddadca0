WITH "e" AS MATERIALIZED (
  SELECT DISTINCT "distinct_id" AS "actor", to_char(date_trunc('week', ("timestamp")::timestamp), 'YYYY-MM-DD HH24:MI:SS') AS "period"
  FROM "events"
  WHERE 1 = 1 AND "event" = $1 AND "timestamp" >= $2 AND "timestamp" < $3 AND COALESCE(("properties"::jsonb) ->> $4::text, '') IN ($5)
),
"a" AS MATERIALIZED (
  SELECT "actor", CASE WHEN "period" < $6 THEN CASE WHEN "period" < $7 THEN CASE WHEN "period" < $8 THEN 0 ELSE 1 END ELSE CASE WHEN "period" < $9 THEN 2 ELSE CASE WHEN "period" < $10 THEN 3 ELSE 4 END END END ELSE CASE WHEN "period" < $11 THEN CASE WHEN "period" < $12 THEN 5 ELSE 6 END ELSE CASE WHEN "period" < $13 THEN 7 ELSE CASE WHEN "period" < $14 THEN 8 ELSE 9 END END END END AS "idx", "period" FROM "e"
),
"seen" AS MATERIALIZED (
  SELECT "actor", to_char(date_trunc('week', ("first_ts")::timestamp), 'YYYY-MM-DD HH24:MI:SS') AS "first_period"
  FROM (SELECT "distinct_id" AS "actor", min("timestamp") AS "first_ts" FROM "events" WHERE 1 = 1 AND "distinct_id" IN (SELECT "actor" FROM "e") GROUP BY "distinct_id") AS "f"
),
"m" AS MATERIALIZED (
  SELECT "a"."actor" AS "actor", "a"."idx" AS "idx", 1 AS "here", 0 AS "before", CASE WHEN "s"."first_period" = "a"."period" THEN 1 ELSE 0 END AS "fresh"
  FROM "a" JOIN "seen" AS "s" ON "s"."actor" = "a"."actor"
  UNION ALL
  SELECT "actor", "idx" + 1, 0, 1, 0 FROM "a"
)
SELECT "status", "idx" AS "period", count(*) AS "actors"
FROM (
  SELECT "actor", "idx", CASE WHEN max("here") = 0 THEN 3 WHEN max("fresh") = 1 THEN 0 WHEN max("before") = 1 THEN 1 ELSE 2 END AS "status"
  FROM "m" GROUP BY "actor", "idx"
) AS "g"
WHERE "idx" >= 1 AND "idx" <= 9
GROUP BY "status", "idx"
-- args: "$pageview" "2025-03-24 00:00:00" "2025-06-02 00:00:00" "plan" "enterprise" "2025-04-28 00:00:00" "2025-04-07 00:00:00" "2025-03-31 00:00:00" "2025-04-14 00:00:00" "2025-04-21 00:00:00" "2025-05-12 00:00:00" "2025-05-05 00:00:00" "2025-05-19 00:00:00" "2025-05-26 00:00:00"
