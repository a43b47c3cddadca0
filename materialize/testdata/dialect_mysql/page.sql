SELECT * FROM (SELECT `_k0` AS `event`, coalesce(sum(`_a0`), 0) AS `n` FROM `stored` WHERE `date_to` < ? GROUP BY `_k0` ORDER BY 2 DESC, 1 ASC LIMIT 10) AS `stored_page` LIMIT ? OFFSET ?
