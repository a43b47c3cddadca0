DROP TABLE IF EXISTS `insight_endpoint_7_v2`
-- args:;

CREATE TABLE `insight_endpoint_7_v2` (`series` Int64, `bucket` String, `b0` String, `b1` String, `value` Float64) ENGINE = MergeTree ORDER BY (`series`, `bucket`, `b0`, `b1`)
-- args:;

INSERT INTO `insight_endpoint_7_v2` (`series`, `bucket`, `b0`, `b1`, `value`)
SELECT 0 AS `series`, `bucket`, `b0`, `b1`, sum(`v`) AS `value`
FROM (SELECT formatDateTime(toDateTime(toStartOfMonth(toDateTime(`timestamp`, 'UTC')), 'UTC'), '%Y-%m-%d %H:%i:%S', 'UTC') AS `bucket`, multiIf(JSONType(ifNull(`properties`, ''), {p1:String}) = 'String', JSONExtractString(ifNull(`properties`, ''), {p2:String}), JSONType(ifNull(`properties`, ''), {p3:String}) = 'Null', '', JSONExtractRaw(ifNull(`properties`, ''), {p4:String})) AS `b0`, multiIf(JSONType(ifNull(`properties`, ''), {p5:String}) = 'String', JSONExtractString(ifNull(`properties`, ''), {p6:String}), JSONType(ifNull(`properties`, ''), {p7:String}) = 'Null', '', JSONExtractRaw(ifNull(`properties`, ''), {p8:String})) AS `b1`, if(JSONType(`properties`, {p9:String}) IN ('Int64', 'UInt64', 'Double'), JSONExtractFloat(`properties`, {p10:String}), NULL) AS `v`
  FROM `events`
  WHERE 1 = 1 AND `event` = {p11:String} AND `timestamp` >= {p12:String} AND `timestamp` < {p13:String}) AS `e`
GROUP BY `bucket`, `b0`, `b1`
-- args: "$browser" "$browser" "$browser" "$browser" "country" "country" "country" "country" "amount" "amount" "purchase" "2025-03-01 00:00:00" "2025-06-01 00:00:00";

SELECT `series`, `bucket`, `b0`, `b1`, `value`, 0 AS `other` FROM `insight_endpoint_7_v2` WHERE 1 = 1 AND `b0` = {p1:String} AND `b1` = {p2:String}
-- args: "Chrome" ""
