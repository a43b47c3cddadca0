DROP TABLE IF EXISTS `stored_next`;
CREATE TABLE `stored_next` ENGINE = MergeTree ORDER BY tuple() AS SELECT `event` AS `_k0`, count() AS `_a0`, toDateTime(toStartOfMonth(toDateTime(`timestamp`, 'UTC')), 'UTC') AS `date_from` FROM `events` GROUP BY `event`, toDateTime(toStartOfMonth(toDateTime(`timestamp`, 'UTC')), 'UTC');
CREATE TABLE IF NOT EXISTS `stored` AS `stored_next`;
EXCHANGE TABLES `stored_next` AND `stored`;
DROP TABLE IF EXISTS `stored_next`;
