SELECT `_k0` AS `event`, CAST(coalesce(sum(`_a0`), 0) AS SIGNED) AS `n` FROM `stored` WHERE `to` >= ? AND `to` < ? GROUP BY `_k0` LIMIT ? OFFSET ?
