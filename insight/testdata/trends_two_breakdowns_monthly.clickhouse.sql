SELECT `series`, `bucket`, `k0` AS `b0`, `k1` AS `b1`, sum(`y`) AS `value`, `other` AS `other`
FROM (
  SELECT `series`, `bucket`, CASE WHEN `rank` <= {p1:Int64} THEN `b0` ELSE '' END AS `k0`, CASE WHEN `rank` <= {p2:Int64} THEN `b1` ELSE '' END AS `k1`, CASE WHEN `rank` <= {p3:Int64} THEN 0 ELSE 1 END AS `other`, `y`
  FROM (
    SELECT `series`, `bucket`, `b0`, `b1`, `y`, dense_rank() OVER (PARTITION BY `series` ORDER BY `total` DESC, `b0`, `b1`) AS `rank`
    FROM (
      SELECT `series`, `bucket`, `b0`, `b1`, `value` AS `y`, sum(COALESCE(`value`, 0)) OVER (PARTITION BY `series`, `b0`, `b1`) AS `total`
      FROM (
SELECT 0 AS `series`, `bucket`, `b0`, `b1`, sum(`v`) AS `value`
FROM (SELECT formatDateTime(toDateTime(toStartOfMonth(toDateTime(`timestamp`, 'UTC')), 'UTC'), '%Y-%m-%d %H:%i:%S', 'UTC') AS `bucket`, multiIf(JSONType(ifNull(`properties`, ''), {p4:String}) = 'String', JSONExtractString(ifNull(`properties`, ''), {p5:String}), JSONType(ifNull(`properties`, ''), {p6:String}) = 'Null', '', JSONExtractRaw(ifNull(`properties`, ''), {p7:String})) AS `b0`, multiIf(JSONType(ifNull(`properties`, ''), {p8:String}) = 'String', JSONExtractString(ifNull(`properties`, ''), {p9:String}), JSONType(ifNull(`properties`, ''), {p10:String}) = 'Null', '', JSONExtractRaw(ifNull(`properties`, ''), {p11:String})) AS `b1`, if(JSONType(`properties`, {p12:String}) IN ('Int64', 'UInt64', 'Double'), JSONExtractFloat(`properties`, {p13:String}), NULL) AS `v`
  FROM `events`
  WHERE 1 = 1 AND `event` = {p14:String} AND `timestamp` >= {p15:String} AND `timestamp` < {p16:String}) AS `e`
GROUP BY `bucket`, `b0`, `b1`
      ) AS `r`
    ) AS `t`
  ) AS `k`
) AS `f`
GROUP BY `series`, `bucket`, `k0`, `k1`, `other`
-- args: "25" "25" "25" "$browser" "$browser" "$browser" "$browser" "country" "country" "country" "country" "amount" "amount" "purchase" "2025-03-01 00:00:00" "2025-06-01 00:00:00"
