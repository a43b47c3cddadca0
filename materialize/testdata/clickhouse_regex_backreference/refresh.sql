DROP TABLE IF EXISTS `stored_next`;
CREATE TABLE `stored_next` ENGINE = MergeTree ORDER BY tuple() AS SELECT REGEXP_REPLACE(`Referer`, '^https?://(?:www\.)?([^/]+)/.*$', '\1') AS `_k0`, count() AS `_a0`, toStartOfDay(toDateTime(`EventDate`, 'UTC')) AS `from`, toStartOfDay(toDateTime(`EventDate`, 'UTC')) AS `to` FROM `hits` GROUP BY REGEXP_REPLACE(`Referer`, '^https?://(?:www\.)?([^/]+)/.*$', '\1'), toStartOfDay(toDateTime(`EventDate`, 'UTC'));
CREATE TABLE IF NOT EXISTS `stored` AS `stored_next`;
EXCHANGE TABLES `stored_next` AND `stored`;
DROP TABLE IF EXISTS `stored_next`;
