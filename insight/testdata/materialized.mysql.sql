DROP TABLE IF EXISTS `insight_endpoint_7_v2`
-- args:;

CREATE TABLE `insight_endpoint_7_v2` (`series` BIGINT, `bucket` LONGBLOB, `b0` LONGBLOB, `b1` LONGBLOB, `value` DOUBLE)
-- args:;

INSERT INTO `insight_endpoint_7_v2` (`series`, `bucket`, `b0`, `b1`, `value`)
SELECT 0 AS `series`, `bucket`, `b0`, `b1`, sum(`v`) AS `value`
FROM (SELECT DATE_FORMAT(`timestamp`, '%Y-%m-01 00:00:00') AS `bucket`, CAST(CASE WHEN JSON_TYPE(JSON_EXTRACT(CONVERT(`properties` USING utf8mb4), ?)) <> 'NULL' THEN JSON_UNQUOTE(JSON_EXTRACT(CONVERT(`properties` USING utf8mb4), ?)) ELSE '' END AS BINARY) AS `b0`, CAST(CASE WHEN JSON_TYPE(JSON_EXTRACT(CONVERT(`properties` USING utf8mb4), ?)) <> 'NULL' THEN JSON_UNQUOTE(JSON_EXTRACT(CONVERT(`properties` USING utf8mb4), ?)) ELSE '' END AS BINARY) AS `b1`, (CASE WHEN JSON_TYPE(JSON_EXTRACT(CONVERT(`properties` USING utf8mb4), ?)) IN ('INTEGER', 'UNSIGNED INTEGER', 'DOUBLE', 'DECIMAL') THEN CAST(JSON_EXTRACT(CONVERT(`properties` USING utf8mb4), ?) AS DOUBLE) END) AS `v`
  FROM `events`
  WHERE 1 = 1 AND `event` = ? AND `timestamp` >= ? AND `timestamp` < ?) AS `e`
GROUP BY `bucket`, `b0`, `b1`
-- args: "$.\"$browser\"" "$.\"$browser\"" "$.\"country\"" "$.\"country\"" "$.\"amount\"" "$.\"amount\"" "purchase" "2025-03-01 00:00:00" "2025-06-01 00:00:00";

SELECT `series`, `bucket`, `b0`, `b1`, `value`, 0 AS `other` FROM `insight_endpoint_7_v2` WHERE 1 = 1 AND `b0` = ? AND `b1` = ?
-- args: "Chrome" ""
