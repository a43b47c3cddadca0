DROP TABLE IF EXISTS `stored_next`;
CREATE TABLE `stored_next` AS SELECT `event` AS `_k0`, count(*) AS `_a0`, DATE_FORMAT(`timestamp`, '%Y-%m-%d 00:00:00') AS `to` FROM `events` GROUP BY `event`, DATE_FORMAT(`timestamp`, '%Y-%m-%d 00:00:00');
CREATE TABLE IF NOT EXISTS `stored` LIKE `stored_next`;
DROP TABLE IF EXISTS `stored_old`;
RENAME TABLE `stored` TO `stored_old`, `stored_next` TO `stored`;
DROP TABLE IF EXISTS `stored_old`;
