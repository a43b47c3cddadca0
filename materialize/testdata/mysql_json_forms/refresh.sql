DROP TABLE IF EXISTS `stored_next`;
CREATE TABLE `stored_next` AS SELECT `properties` ->> '$.plan' AS `_k0`, count(*) AS `_a0`, max(CAST(JSON_UNQUOTE(JSON_EXTRACT(`properties`, '$.amount')) AS DOUBLE)) AS `_a1`, DATE_FORMAT(`timestamp`, '%Y-%m-%d 00:00:00') AS `date_from`, JSON_UNQUOTE(JSON_EXTRACT(`properties`, '$.country')) AS `_v1` FROM `events` WHERE `event` <> 'it\'s' GROUP BY `properties` ->> '$.plan', DATE_FORMAT(`timestamp`, '%Y-%m-%d 00:00:00'), JSON_UNQUOTE(JSON_EXTRACT(`properties`, '$.country'));
CREATE TABLE IF NOT EXISTS `stored` LIKE `stored_next`;
DROP TABLE IF EXISTS `stored_old`;
RENAME TABLE `stored` TO `stored_old`, `stored_next` TO `stored`;
DROP TABLE IF EXISTS `stored_old`;
