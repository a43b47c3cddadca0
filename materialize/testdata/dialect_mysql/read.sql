SELECT `_k0` AS `event`, CAST(coalesce(sum(`_a0`), 0) AS SIGNED) AS `n` FROM `stored` WHERE `date_to` < ? GROUP BY `_k0` ORDER BY 2 DESC, 1 ASC LIMIT 10
