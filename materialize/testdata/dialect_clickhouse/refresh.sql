DROP TABLE IF EXISTS `stored_next`;
CREATE TABLE `stored_next` ENGINE = MergeTree ORDER BY tuple() AS SELECT `event` AS `_k0`, count() AS `_a0`, toDateTime(toStartOfMonth(`timestamp`), 'UTC') AS `date_from` FROM `events` GROUP BY `event`, toDateTime(toStartOfMonth(`timestamp`), 'UTC');
DROP TABLE IF EXISTS `stored`;
RENAME TABLE `stored_next` TO `stored`;
