SELECT `series`, `bucket`, `k0` AS `b0`, `k1` AS `b1`, sum(`y`) AS `value`, `other` AS `other`
FROM (
  SELECT `series`, `bucket`, CASE WHEN `rank` <= ? THEN `b0` ELSE '' END AS `k0`, CASE WHEN `rank` <= ? THEN `b1` ELSE '' END AS `k1`, CASE WHEN `rank` <= ? THEN 0 ELSE 1 END AS `other`, `y`
  FROM (
    SELECT `series`, `bucket`, `b0`, `b1`, `y`, dense_rank() OVER (PARTITION BY `series` ORDER BY `total` DESC, `b0`, `b1`) AS `rank`
    FROM (
      SELECT `series`, `bucket`, `b0`, `b1`, `value` AS `y`, sum(COALESCE(`value`, 0)) OVER (PARTITION BY `series`, `b0`, `b1`) AS `total`
      FROM (
SELECT 0 AS `series`, `bucket`, `b0`, `b1`, sum(`v`) AS `value`
FROM (SELECT DATE_FORMAT(`timestamp`, '%Y-%m-01 00:00:00') AS `bucket`, CAST(CASE WHEN JSON_TYPE(JSON_EXTRACT(CONVERT(`properties` USING utf8mb4), ?)) <> 'NULL' THEN JSON_UNQUOTE(JSON_EXTRACT(CONVERT(`properties` USING utf8mb4), ?)) ELSE '' END AS BINARY) AS `b0`, CAST(CASE WHEN JSON_TYPE(JSON_EXTRACT(CONVERT(`properties` USING utf8mb4), ?)) <> 'NULL' THEN JSON_UNQUOTE(JSON_EXTRACT(CONVERT(`properties` USING utf8mb4), ?)) ELSE '' END AS BINARY) AS `b1`, (CASE WHEN JSON_TYPE(JSON_EXTRACT(CONVERT(`properties` USING utf8mb4), ?)) IN ('INTEGER', 'UNSIGNED INTEGER', 'DOUBLE', 'DECIMAL') THEN CAST(JSON_EXTRACT(CONVERT(`properties` USING utf8mb4), ?) AS DOUBLE) END) AS `v`
  FROM `events`
  WHERE 1 = 1 AND `event` = ? AND `timestamp` >= ? AND `timestamp` < ?) AS `e`
GROUP BY `bucket`, `b0`, `b1`
      ) AS `r`
    ) AS `t`
  ) AS `k`
) AS `f`
GROUP BY `series`, `bucket`, `k0`, `k1`, `other`
-- args: 25 25 25 "$.\"$browser\"" "$.\"$browser\"" "$.\"country\"" "$.\"country\"" "$.\"amount\"" "$.\"amount\"" "purchase" "2025-03-01 00:00:00" "2025-06-01 00:00:00"
