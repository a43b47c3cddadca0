WITH `e` AS (
  SELECT `distinct_id` AS `actor`, multiIf(JSONType(ifNull(`properties`, ''), {p1:String}) = 'String', JSONExtractString(ifNull(`properties`, ''), {p2:String}), JSONType(ifNull(`properties`, ''), {p3:String}) = 'Null', '', JSONExtractRaw(ifNull(`properties`, ''), {p4:String})) AS `b0`, `timestamp` AS `ts`, formatDateTime(toDateTime(toMonday(toDateTime(`timestamp`, 'UTC')), 'UTC'), '%Y-%m-%d %H:%i:%S', 'UTC') AS `period`,
    CASE WHEN `event` = {p5:String} THEN 1 ELSE 0 END AS `is_target`, CASE WHEN `event` = {p6:String} THEN 1 ELSE 0 END AS `is_return`
  FROM `events`
  WHERE `event` IN ({p7:String}, {p8:String}) AND multiIf(JSONType(ifNull(`properties`, ''), {p9:String}) = 'String', JSONExtractString(ifNull(`properties`, ''), {p10:String}), JSONType(ifNull(`properties`, ''), {p11:String}) = 'Null', '', JSONExtractRaw(ifNull(`properties`, ''), {p12:String})) IN ({p13:String})
),
`starts` AS (
  SELECT `actor`, `b0`, formatDateTime(toDateTime(toMonday(toDateTime(`first_ts`, 'UTC')), 'UTC'), '%Y-%m-%d %H:%i:%S', 'UTC') AS `cohort`
  FROM (SELECT `actor`, `b0`, min(`ts`) AS `first_ts` FROM `e` WHERE `is_target` = 1 GROUP BY `actor`, `b0`) AS `f`
  WHERE 1 = 1 AND `first_ts` >= {p14:String} AND `first_ts` < {p15:String}
),
`returns` AS (
  SELECT DISTINCT `actor`, `b0`, `period` FROM `e` WHERE `is_return` = 1 AND `ts` >= {p16:String} AND `ts` < {p17:String}
)
SELECT `b0`, `cohort`, `cohort` AS `period`, count(*) AS `actors` FROM `starts` GROUP BY `cohort`, `b0`
UNION ALL
SELECT `s`.`b0`, `s`.`cohort`, `r`.`period`, count(*)
FROM `starts` AS `s` JOIN `returns` AS `r` ON `r`.`actor` = `s`.`actor` AND `r`.`b0` = `s`.`b0`
WHERE `r`.`period` > `s`.`cohort`
GROUP BY `s`.`cohort`, `r`.`period`, `s`.`b0`
-- args: "$browser" "$browser" "$browser" "$browser" "signed_up" "$pageview" "signed_up" "$pageview" "plan" "plan" "plan" "plan" "enterprise" "2025-03-31 00:00:00" "2025-06-01 00:00:00" "2025-03-31 00:00:00" "2025-06-01 00:00:00"
