WITH `e` AS (
  SELECT `distinct_id` AS `actor`, CAST(CASE WHEN JSON_TYPE(JSON_EXTRACT(CONVERT(`properties` USING utf8mb4), ?)) <> 'NULL' THEN JSON_UNQUOTE(JSON_EXTRACT(CONVERT(`properties` USING utf8mb4), ?)) ELSE '' END AS BINARY) AS `b0`, `timestamp` AS `ts`, DATE_FORMAT(DATE_SUB(`timestamp`, INTERVAL WEEKDAY(`timestamp`) DAY), '%Y-%m-%d 00:00:00') AS `period`,
    CASE WHEN `event` = ? THEN 1 ELSE 0 END AS `is_target`, CASE WHEN `event` = ? THEN 1 ELSE 0 END AS `is_return`
  FROM `events`
  WHERE `event` IN (?, ?) AND CAST(CASE WHEN JSON_TYPE(JSON_EXTRACT(CONVERT(`properties` USING utf8mb4), ?)) <> 'NULL' THEN JSON_UNQUOTE(JSON_EXTRACT(CONVERT(`properties` USING utf8mb4), ?)) ELSE '' END AS BINARY) IN (?)
),
`starts` AS (
  SELECT `actor`, `b0`, DATE_FORMAT(DATE_SUB(`first_ts`, INTERVAL WEEKDAY(`first_ts`) DAY), '%Y-%m-%d 00:00:00') AS `cohort`
  FROM (SELECT `actor`, `b0`, min(`ts`) AS `first_ts` FROM `e` WHERE `is_target` = 1 GROUP BY `actor`, `b0`) AS `f`
  WHERE 1 = 1 AND `first_ts` >= ? AND `first_ts` < ?
),
`returns` AS (
  SELECT DISTINCT `actor`, `b0`, `period` FROM `e` WHERE `is_return` = 1 AND `ts` >= ? AND `ts` < ?
)
SELECT `b0`, `cohort`, `cohort` AS `period`, count(*) AS `actors` FROM `starts` GROUP BY `cohort`, `b0`
UNION ALL
SELECT `s`.`b0`, `s`.`cohort`, `r`.`period`, count(*)
FROM `starts` AS `s` JOIN `returns` AS `r` ON `r`.`actor` = `s`.`actor` AND `r`.`b0` = `s`.`b0`
WHERE `r`.`period` > `s`.`cohort`
GROUP BY `s`.`cohort`, `r`.`period`, `s`.`b0`
-- args: "$.\"$browser\"" "$.\"$browser\"" "signed_up" "$pageview" "signed_up" "$pageview" "$.\"plan\"" "$.\"plan\"" "enterprise" "2025-03-31 00:00:00" "2025-06-01 00:00:00" "2025-03-31 00:00:00" "2025-06-01 00:00:00"
