DROP TABLE IF EXISTS `stored_next`;
CREATE TABLE `stored_next` ENGINE = MergeTree ORDER BY tuple() AS SELECT extract(minute FROM `EventTime`) AS `_k0`, count() AS `_a0`, toStartOfDay(toDateTime(`EventTime`, 'UTC')) AS `from`, `CounterID` AS `counter` FROM `hits` GROUP BY extract(minute FROM `EventTime`), toStartOfDay(toDateTime(`EventTime`, 'UTC')), `CounterID`;
CREATE TABLE IF NOT EXISTS `stored` AS `stored_next`;
EXCHANGE TABLES `stored_next` AND `stored`;
DROP TABLE IF EXISTS `stored_next`;
