SELECT 0 AS `series`, `bucket`, CAST(count(*) AS DOUBLE) AS `value`
FROM (SELECT DATE_FORMAT(DATE_SUB(`timestamp`, INTERVAL WEEKDAY(`timestamp`) DAY), '%Y-%m-%d 00:00:00') AS `bucket`
  FROM `events`
  WHERE 1 = 1 AND `event` = ? AND `timestamp` >= ? AND `timestamp` < ?) AS `e`
GROUP BY `bucket`
UNION ALL
SELECT 1 AS `series`, `bucket`, CAST(count(DISTINCT `actor`) AS DOUBLE) AS `value`
FROM (SELECT DATE_FORMAT(DATE_SUB(`timestamp`, INTERVAL WEEKDAY(`timestamp`) DAY), '%Y-%m-%d 00:00:00') AS `bucket`, `distinct_id` AS `actor`
  FROM `events`
  WHERE 1 = 1 AND `event` = ? AND `timestamp` >= ? AND `timestamp` < ?) AS `e`
GROUP BY `bucket`
UNION ALL
SELECT 2 AS `series`, `bucket`, sum(`v`) AS `value`
FROM (SELECT DATE_FORMAT(DATE_SUB(`timestamp`, INTERVAL WEEKDAY(`timestamp`) DAY), '%Y-%m-%d 00:00:00') AS `bucket`, (CASE WHEN JSON_TYPE(JSON_EXTRACT(CONVERT(`properties` USING utf8mb4), ?)) IN ('INTEGER', 'UNSIGNED INTEGER', 'DOUBLE', 'DECIMAL') THEN CAST(JSON_EXTRACT(CONVERT(`properties` USING utf8mb4), ?) AS DOUBLE) END) AS `v`
  FROM `events`
  WHERE 1 = 1 AND `event` = ? AND `timestamp` >= ? AND `timestamp` < ?) AS `e`
GROUP BY `bucket`
UNION ALL
SELECT 3 AS `series`, `bucket`, avg(`v`) AS `value`
FROM (SELECT DATE_FORMAT(DATE_SUB(`timestamp`, INTERVAL WEEKDAY(`timestamp`) DAY), '%Y-%m-%d 00:00:00') AS `bucket`, (CASE WHEN JSON_TYPE(JSON_EXTRACT(CONVERT(`properties` USING utf8mb4), ?)) IN ('INTEGER', 'UNSIGNED INTEGER', 'DOUBLE', 'DECIMAL') THEN CAST(JSON_EXTRACT(CONVERT(`properties` USING utf8mb4), ?) AS DOUBLE) END) AS `v`
  FROM `events`
  WHERE 1 = 1 AND `event` = ? AND `timestamp` >= ? AND `timestamp` < ?) AS `e`
GROUP BY `bucket`
UNION ALL
SELECT 4 AS `series`, `bucket`, min(`v`) AS `value`
FROM (SELECT DATE_FORMAT(DATE_SUB(`timestamp`, INTERVAL WEEKDAY(`timestamp`) DAY), '%Y-%m-%d 00:00:00') AS `bucket`, (CASE WHEN JSON_TYPE(JSON_EXTRACT(CONVERT(`properties` USING utf8mb4), ?)) IN ('INTEGER', 'UNSIGNED INTEGER', 'DOUBLE', 'DECIMAL') THEN CAST(JSON_EXTRACT(CONVERT(`properties` USING utf8mb4), ?) AS DOUBLE) END) AS `v`
  FROM `events`
  WHERE 1 = 1 AND `event` = ? AND `timestamp` >= ? AND `timestamp` < ?) AS `e`
GROUP BY `bucket`
UNION ALL
SELECT 5 AS `series`, `bucket`, max(`v`) AS `value`
FROM (SELECT DATE_FORMAT(DATE_SUB(`timestamp`, INTERVAL WEEKDAY(`timestamp`) DAY), '%Y-%m-%d 00:00:00') AS `bucket`, (CASE WHEN JSON_TYPE(JSON_EXTRACT(CONVERT(`properties` USING utf8mb4), ?)) IN ('INTEGER', 'UNSIGNED INTEGER', 'DOUBLE', 'DECIMAL') THEN CAST(JSON_EXTRACT(CONVERT(`properties` USING utf8mb4), ?) AS DOUBLE) END) AS `v`
  FROM `events`
  WHERE 1 = 1 AND `timestamp` >= ? AND `timestamp` < ?) AS `e`
GROUP BY `bucket`
-- args: "$pageview" "2025-04-28 00:00:00" "2025-06-02 00:00:00" "$pageview" "2025-04-28 00:00:00" "2025-06-02 00:00:00" "$.\"amount\"" "$.\"amount\"" "purchase" "2025-04-28 00:00:00" "2025-06-02 00:00:00" "$.\"amount\"" "$.\"amount\"" "purchase" "2025-04-28 00:00:00" "2025-06-02 00:00:00" "$.\"amount\"" "$.\"amount\"" "purchase" "2025-04-28 00:00:00" "2025-06-02 00:00:00" "$.\"amount\"" "$.\"amount\"" "2025-04-28 00:00:00" "2025-06-02 00:00:00"
