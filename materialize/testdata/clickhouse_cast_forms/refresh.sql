DROP TABLE IF EXISTS `stored_next`;
CREATE TABLE `stored_next` ENGINE = MergeTree ORDER BY tuple() AS SELECT CAST(`UserID`, 'String') AS `_k0`, max(`ResolutionWidth`::Float64) AS `_a0`, max(CAST(JSONExtract(`properties`, 'amount', 'Nullable(Float64)') AS Nullable(Float64))) AS `_a1`, toStartOfDay(toDateTime(`EventDate`, 'UTC')) AS `from`, JSONExtract(`properties`, 'country', 'Nullable(String)') AS `_v1` FROM `hits` GROUP BY CAST(`UserID`, 'String'), toStartOfDay(toDateTime(`EventDate`, 'UTC')), JSONExtract(`properties`, 'country', 'Nullable(String)');
CREATE TABLE IF NOT EXISTS `stored` AS `stored_next`;
EXCHANGE TABLES `stored_next` AND `stored`;
DROP TABLE IF EXISTS `stored_next`;
