SELECT "series", "bucket", "k0" AS "b0", "k1" AS "b1", sum("y") AS "value", "other" AS "other"
FROM (
  SELECT "series", "bucket", CASE WHEN "rank" <= ? THEN "b0" ELSE '' END AS "k0", CASE WHEN "rank" <= ? THEN "b1" ELSE '' END AS "k1", CASE WHEN "rank" <= ? THEN 0 ELSE 1 END AS "other", "y"
  FROM (
    SELECT "series", "bucket", "b0", "b1", "y", dense_rank() OVER (PARTITION BY "series" ORDER BY "total" DESC, "b0", "b1") AS "rank"
    FROM (
      SELECT "series", "bucket", "b0", "b1", "value" AS "y", sum(COALESCE("value", 0)) OVER (PARTITION BY "series", "b0", "b1") AS "total"
      FROM (
SELECT 0 AS "series", "bucket", "b0", "b1", sum("v") AS "value"
FROM (SELECT strftime('%Y-%m-01 00:00:00', "timestamp") AS "bucket", (CASE json_type("properties", ?) WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' ELSE COALESCE(CAST(json_extract("properties", ?) AS TEXT), '') END) AS "b0", (CASE json_type("properties", ?) WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' ELSE COALESCE(CAST(json_extract("properties", ?) AS TEXT), '') END) AS "b1", (CASE WHEN json_type("properties", ?) IN ('integer', 'real') THEN json_extract("properties", ?) END) AS "v"
  FROM "events"
  WHERE 1 = 1 AND "event" = ? AND "timestamp" >= ? AND "timestamp" < ?) AS "e"
GROUP BY "bucket", "b0", "b1"
      ) AS "r"
    ) AS "t"
  ) AS "k"
) AS "f"
GROUP BY "series", "bucket", "k0", "k1", "other"
-- args: 25 25 25 "$.\"$browser\"" "$.\"$browser\"" "$.\"country\"" "$.\"country\"" "$.\"amount\"" "$.\"amount\"" "purchase" "2025-03-01 00:00:00" "2025-06-01 00:00:00"
