WITH `e` AS (
  SELECT DISTINCT `distinct_id` AS `actor`, formatDateTime(toDateTime(toMonday(toDateTime(`timestamp`, 'UTC')), 'UTC'), '%Y-%m-%d %H:%i:%S', 'UTC') AS `period`
  FROM `events`
  WHERE 1 = 1 AND `event` = {p1:String} AND `timestamp` >= {p2:String} AND `timestamp` < {p3:String} AND multiIf(JSONType(ifNull(`properties`, ''), {p4:String}) = 'String', JSONExtractString(ifNull(`properties`, ''), {p5:String}), JSONType(ifNull(`properties`, ''), {p6:String}) = 'Null', '', JSONExtractRaw(ifNull(`properties`, ''), {p7:String})) IN ({p8:String})
),
`a` AS (
  SELECT `actor`, CASE WHEN `period` < {p9:String} THEN CASE WHEN `period` < {p10:String} THEN CASE WHEN `period` < {p11:String} THEN 0 ELSE 1 END ELSE CASE WHEN `period` < {p12:String} THEN 2 ELSE CASE WHEN `period` < {p13:String} THEN 3 ELSE 4 END END END ELSE CASE WHEN `period` < {p14:String} THEN CASE WHEN `period` < {p15:String} THEN 5 ELSE 6 END ELSE CASE WHEN `period` < {p16:String} THEN 7 ELSE CASE WHEN `period` < {p17:String} THEN 8 ELSE 9 END END END END AS `idx`, `period` FROM `e`
),
`seen` AS (
  SELECT `actor`, formatDateTime(toDateTime(toMonday(toDateTime(`first_ts`, 'UTC')), 'UTC'), '%Y-%m-%d %H:%i:%S', 'UTC') AS `first_period`
  FROM (SELECT `distinct_id` AS `actor`, min(`timestamp`) AS `first_ts` FROM `events` WHERE 1 = 1 AND `distinct_id` IN (SELECT `actor` FROM `e`) GROUP BY `distinct_id`) AS `f`
),
`m` AS (
  SELECT `a`.`actor` AS `actor`, `a`.`idx` AS `idx`, 1 AS `here`, 0 AS `before`, CASE WHEN `s`.`first_period` = `a`.`period` THEN 1 ELSE 0 END AS `fresh`
  FROM `a` JOIN `seen` AS `s` ON `s`.`actor` = `a`.`actor`
  UNION ALL
  SELECT `actor`, `idx` + 1, 0, 1, 0 FROM `a`
)
SELECT `status`, `idx` AS `period`, count(*) AS `actors`
FROM (
  SELECT `actor`, `idx`, CASE WHEN max(`here`) = 0 THEN 3 WHEN max(`fresh`) = 1 THEN 0 WHEN max(`before`) = 1 THEN 1 ELSE 2 END AS `status`
  FROM `m` GROUP BY `actor`, `idx`
) AS `g`
WHERE `idx` >= 1 AND `idx` <= 9
GROUP BY `status`, `idx`
-- args: "$pageview" "2025-03-24 00:00:00" "2025-06-02 00:00:00" "plan" "plan" "plan" "plan" "enterprise" "2025-04-28 00:00:00" "2025-04-07 00:00:00" "2025-03-31 00:00:00" "2025-04-14 00:00:00" "2025-04-21 00:00:00" "2025-05-12 00:00:00" "2025-05-05 00:00:00" "2025-05-19 00:00:00" "2025-05-26 00:00:00"
