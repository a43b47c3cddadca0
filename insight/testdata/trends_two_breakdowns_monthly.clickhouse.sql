SELECT 0 AS `series`, `bucket`, `b0`, `b1`, sum(`v`) AS `value`
FROM (SELECT formatDateTime(toDateTime(toStartOfMonth(toDateTime(`timestamp`, 'UTC')), 'UTC'), '%Y-%m-%d %H:%i:%S', 'UTC') AS `bucket`, JSONExtractString(`properties`, {p1:String}) AS `b0`, JSONExtractString(`properties`, {p2:String}) AS `b1`, JSONExtract(`properties`, {p3:String}, 'Nullable(Float64)') AS `v`
  FROM `events`
  WHERE 1 = 1 AND `event` = {p4:String} AND `timestamp` >= {p5:String} AND `timestamp` < {p6:String}) AS `e`
GROUP BY `bucket`, `b0`, `b1`
-- args: "$browser" "country" "amount" "purchase" "2025-03-01 00:00:00" "2025-06-01 00:00:00"
