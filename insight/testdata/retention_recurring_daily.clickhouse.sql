WITH `e` AS (
  SELECT `distinct_id` AS `actor`, `timestamp` AS `ts`, formatDateTime(toStartOfDay(toDateTime(`timestamp`, 'UTC')), '%Y-%m-%d %H:%i:%S', 'UTC') AS `period`,
    CASE WHEN `event` = {p1:String} THEN 1 ELSE 0 END AS `is_target`, CASE WHEN `event` = {p2:String} THEN 1 ELSE 0 END AS `is_return`
  FROM `events`
  WHERE `event` IN ({p3:String}, {p4:String}) AND `timestamp` >= {p5:String} AND `timestamp` < {p6:String}
),
`starts` AS (
  SELECT DISTINCT `actor`, `period` AS `cohort` FROM `e` WHERE `is_target` = 1
),
`returns` AS (
  SELECT DISTINCT `actor`, `period` FROM `e` WHERE `is_return` = 1
)
SELECT `cohort`, `cohort` AS `period`, count(*) AS `actors` FROM `starts` GROUP BY `cohort`
UNION ALL
SELECT `s`.`cohort`, `r`.`period`, count(*)
FROM `starts` AS `s` JOIN `returns` AS `r` ON `r`.`actor` = `s`.`actor`
WHERE `r`.`period` > `s`.`cohort`
GROUP BY `s`.`cohort`, `r`.`period`
-- args: "$pageview" "purchase" "$pageview" "purchase" "2025-05-01 00:00:00" "2025-05-15 00:00:00"
