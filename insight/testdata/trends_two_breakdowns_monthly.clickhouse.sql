SELECT `series`, `bucket`, `k0` AS `b0`, `k1` AS `b1`, sum(`y`) AS `value`, `other` AS `other`
FROM (
  SELECT `series`, `bucket`, CASE WHEN `rank` <= {p1:Int64} THEN `b0` ELSE '' END AS `k0`, CASE WHEN `rank` <= {p2:Int64} THEN `b1` ELSE '' END AS `k1`, CASE WHEN `rank` <= {p3:Int64} THEN 0 ELSE 1 END AS `other`, `y`
  FROM (
    SELECT `series`, `bucket`, `b0`, `b1`, `y`, dense_rank() OVER (PARTITION BY `series` ORDER BY `total` DESC, `b0`, `b1`) AS `rank`
    FROM (
      SELECT `series`, `bucket`, `b0`, `b1`, `value` AS `y`, sum(COALESCE(`value`, 0)) OVER (PARTITION BY `series`, `b0`, `b1`) AS `total`
      FROM (
SELECT 0 AS `series`, `bucket`, `b0`, `b1`, sum(`v`) AS `value`
FROM (SELECT formatDateTime(toDateTime(toStartOfMonth(toDateTime(`timestamp`, 'UTC')), 'UTC'), '%Y-%m-%d %H:%i:%S', 'UTC') AS `bucket`, JSONExtractString(`properties`, {p4:String}) AS `b0`, JSONExtractString(`properties`, {p5:String}) AS `b1`, JSONExtract(`properties`, {p6:String}, 'Nullable(Float64)') AS `v`
  FROM `events`
  WHERE 1 = 1 AND `event` = {p7:String} AND `timestamp` >= {p8:String} AND `timestamp` < {p9:String}) AS `e`
GROUP BY `bucket`, `b0`, `b1`
      ) AS `r`
    ) AS `t`
  ) AS `k`
) AS `f`
GROUP BY `series`, `bucket`, `k0`, `k1`, `other`
-- args: "25" "25" "25" "$browser" "country" "amount" "purchase" "2025-03-01 00:00:00" "2025-06-01 00:00:00"
