SELECT 0 AS `series`, `bucket`, CAST(count(*) AS DOUBLE) AS `value`
FROM (SELECT DATE_FORMAT(`timestamp`, '%Y-%m-%d 00:00:00') AS `bucket`
  FROM `events`
  WHERE 1 = 1 AND `event` = ? AND `timestamp` >= ? AND `timestamp` < ?) AS `e`
GROUP BY `bucket`
-- args: "$pageview" "2025-05-01 00:00:00" "2025-06-01 00:00:00"
