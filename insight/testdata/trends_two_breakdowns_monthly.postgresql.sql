SELECT "series", "bucket", "k0" AS "b0", "k1" AS "b1", sum("y") AS "value", "other" AS "other"
FROM (
  SELECT "series", "bucket", CASE WHEN "rank" <= $1 THEN "b0" ELSE '' END AS "k0", CASE WHEN "rank" <= $2 THEN "b1" ELSE '' END AS "k1", CASE WHEN "rank" <= $3 THEN 0 ELSE 1 END AS "other", "y"
  FROM (
    SELECT "series", "bucket", "b0", "b1", "y", dense_rank() OVER (PARTITION BY "series" ORDER BY "total" DESC, "b0", "b1") AS "rank"
    FROM (
      SELECT "series", "bucket", "b0", "b1", "value" AS "y", sum(COALESCE("value", 0)) OVER (PARTITION BY "series", "b0", "b1") AS "total"
      FROM (
SELECT 0 AS "series", "bucket", "b0", "b1", sum("v") AS "value"
FROM (SELECT to_char(date_trunc('month', ("timestamp")::timestamp), 'YYYY-MM-DD HH24:MI:SS') AS "bucket", COALESCE(("properties"::jsonb) ->> $4::text, '') AS "b0", COALESCE(("properties"::jsonb) ->> $5::text, '') AS "b1", (CASE WHEN jsonb_typeof(("properties"::jsonb) -> $6::text) = 'number' THEN (("properties"::jsonb) ->> $7::text)::double precision END) AS "v"
  FROM "events"
  WHERE 1 = 1 AND "event" = $8 AND "timestamp" >= $9 AND "timestamp" < $10) AS "e"
GROUP BY "bucket", "b0", "b1"
      ) AS "r"
    ) AS "t"
  ) AS "k"
) AS "f"
GROUP BY "series", "bucket", "k0", "k1", "other"
-- args: 25 25 25 "$browser" "country" "amount" "amount" "purchase" "2025-03-01 00:00:00" "2025-06-01 00:00:00"
