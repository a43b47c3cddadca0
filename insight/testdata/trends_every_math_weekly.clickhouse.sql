SELECT 0 AS `series`, `bucket`, CAST(count(*) AS Float64) AS `value`
FROM (SELECT formatDateTime(toDateTime(toMonday(toDateTime(`timestamp`, 'UTC')), 'UTC'), '%Y-%m-%d %H:%i:%S', 'UTC') AS `bucket`
  FROM `events`
  WHERE 1 = 1 AND `event` = {p1:String} AND `timestamp` >= {p2:String} AND `timestamp` < {p3:String}) AS `e`
GROUP BY `bucket`
UNION ALL
SELECT 1 AS `series`, `bucket`, CAST(count(DISTINCT `actor`) AS Float64) AS `value`
FROM (SELECT formatDateTime(toDateTime(toMonday(toDateTime(`timestamp`, 'UTC')), 'UTC'), '%Y-%m-%d %H:%i:%S', 'UTC') AS `bucket`, `distinct_id` AS `actor`
  FROM `events`
  WHERE 1 = 1 AND `event` = {p4:String} AND `timestamp` >= {p5:String} AND `timestamp` < {p6:String}) AS `e`
GROUP BY `bucket`
UNION ALL
SELECT 2 AS `series`, `bucket`, sum(`v`) AS `value`
FROM (SELECT formatDateTime(toDateTime(toMonday(toDateTime(`timestamp`, 'UTC')), 'UTC'), '%Y-%m-%d %H:%i:%S', 'UTC') AS `bucket`, JSONExtract(`properties`, {p7:String}, 'Nullable(Float64)') AS `v`
  FROM `events`
  WHERE 1 = 1 AND `event` = {p8:String} AND `timestamp` >= {p9:String} AND `timestamp` < {p10:String}) AS `e`
GROUP BY `bucket`
UNION ALL
SELECT 3 AS `series`, `bucket`, avg(`v`) AS `value`
FROM (SELECT formatDateTime(toDateTime(toMonday(toDateTime(`timestamp`, 'UTC')), 'UTC'), '%Y-%m-%d %H:%i:%S', 'UTC') AS `bucket`, JSONExtract(`properties`, {p11:String}, 'Nullable(Float64)') AS `v`
  FROM `events`
  WHERE 1 = 1 AND `event` = {p12:String} AND `timestamp` >= {p13:String} AND `timestamp` < {p14:String}) AS `e`
GROUP BY `bucket`
UNION ALL
SELECT 4 AS `series`, `bucket`, min(`v`) AS `value`
FROM (SELECT formatDateTime(toDateTime(toMonday(toDateTime(`timestamp`, 'UTC')), 'UTC'), '%Y-%m-%d %H:%i:%S', 'UTC') AS `bucket`, JSONExtract(`properties`, {p15:String}, 'Nullable(Float64)') AS `v`
  FROM `events`
  WHERE 1 = 1 AND `event` = {p16:String} AND `timestamp` >= {p17:String} AND `timestamp` < {p18:String}) AS `e`
GROUP BY `bucket`
UNION ALL
SELECT 5 AS `series`, `bucket`, max(`v`) AS `value`
FROM (SELECT formatDateTime(toDateTime(toMonday(toDateTime(`timestamp`, 'UTC')), 'UTC'), '%Y-%m-%d %H:%i:%S', 'UTC') AS `bucket`, JSONExtract(`properties`, {p19:String}, 'Nullable(Float64)') AS `v`
  FROM `events`
  WHERE 1 = 1 AND `timestamp` >= {p20:String} AND `timestamp` < {p21:String}) AS `e`
GROUP BY `bucket`
-- args: "$pageview" "2025-04-28 00:00:00" "2025-06-02 00:00:00" "$pageview" "2025-04-28 00:00:00" "2025-06-02 00:00:00" "amount" "purchase" "2025-04-28 00:00:00" "2025-06-02 00:00:00" "amount" "purchase" "2025-04-28 00:00:00" "2025-06-02 00:00:00" "amount" "purchase" "2025-04-28 00:00:00" "2025-06-02 00:00:00" "amount" "2025-04-28 00:00:00" "2025-06-02 00:00:00"
