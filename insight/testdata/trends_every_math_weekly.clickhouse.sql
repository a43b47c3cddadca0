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
FROM (SELECT formatDateTime(toDateTime(toMonday(toDateTime(`timestamp`, 'UTC')), 'UTC'), '%Y-%m-%d %H:%i:%S', 'UTC') AS `bucket`, if(JSONType(`properties`, {p7:String}) IN ('Int64', 'UInt64', 'Double'), JSONExtractFloat(`properties`, {p8:String}), NULL) AS `v`
  FROM `events`
  WHERE 1 = 1 AND `event` = {p9:String} AND `timestamp` >= {p10:String} AND `timestamp` < {p11:String}) AS `e`
GROUP BY `bucket`
UNION ALL
SELECT 3 AS `series`, `bucket`, avg(`v`) AS `value`
FROM (SELECT formatDateTime(toDateTime(toMonday(toDateTime(`timestamp`, 'UTC')), 'UTC'), '%Y-%m-%d %H:%i:%S', 'UTC') AS `bucket`, if(JSONType(`properties`, {p12:String}) IN ('Int64', 'UInt64', 'Double'), JSONExtractFloat(`properties`, {p13:String}), NULL) AS `v`
  FROM `events`
  WHERE 1 = 1 AND `event` = {p14:String} AND `timestamp` >= {p15:String} AND `timestamp` < {p16:String}) AS `e`
GROUP BY `bucket`
UNION ALL
SELECT 4 AS `series`, `bucket`, min(`v`) AS `value`
FROM (SELECT formatDateTime(toDateTime(toMonday(toDateTime(`timestamp`, 'UTC')), 'UTC'), '%Y-%m-%d %H:%i:%S', 'UTC') AS `bucket`, if(JSONType(`properties`, {p17:String}) IN ('Int64', 'UInt64', 'Double'), JSONExtractFloat(`properties`, {p18:String}), NULL) AS `v`
  FROM `events`
  WHERE 1 = 1 AND `event` = {p19:String} AND `timestamp` >= {p20:String} AND `timestamp` < {p21:String}) AS `e`
GROUP BY `bucket`
UNION ALL
SELECT 5 AS `series`, `bucket`, max(`v`) AS `value`
FROM (SELECT formatDateTime(toDateTime(toMonday(toDateTime(`timestamp`, 'UTC')), 'UTC'), '%Y-%m-%d %H:%i:%S', 'UTC') AS `bucket`, if(JSONType(`properties`, {p22:String}) IN ('Int64', 'UInt64', 'Double'), JSONExtractFloat(`properties`, {p23:String}), NULL) AS `v`
  FROM `events`
  WHERE 1 = 1 AND `timestamp` >= {p24:String} AND `timestamp` < {p25:String}) AS `e`
GROUP BY `bucket`
-- args: "$pageview" "2025-04-28 00:00:00" "2025-06-02 00:00:00" "$pageview" "2025-04-28 00:00:00" "2025-06-02 00:00:00" "amount" "amount" "purchase" "2025-04-28 00:00:00" "2025-06-02 00:00:00" "amount" "amount" "purchase" "2025-04-28 00:00:00" "2025-06-02 00:00:00" "amount" "amount" "purchase" "2025-04-28 00:00:00" "2025-06-02 00:00:00" "amount" "amount" "2025-04-28 00:00:00" "2025-06-02 00:00:00"
