SELECT 0 AS `series`, `bucket`, CAST(count(*) AS Float64) AS `value`
FROM (SELECT formatDateTime(toStartOfDay(toDateTime(`timestamp`, 'UTC')), '%Y-%m-%d %H:%i:%S', 'UTC') AS `bucket`
  FROM `events`
  WHERE 1 = 1 AND `event` = {p1:String} AND `timestamp` >= {p2:String} AND `timestamp` < {p3:String}) AS `e`
GROUP BY `bucket`
-- args: "$pageview" "2025-05-01 00:00:00" "2025-06-01 00:00:00"
