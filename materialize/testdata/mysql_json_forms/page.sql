SELECT `_k0` AS `plan`, CAST(coalesce(sum(`_a0`), 0) AS SIGNED) AS `n`, max(`_a1`) AS `s` FROM `stored` WHERE `date_from` >= ? AND `_v1` = ? GROUP BY `_k0` LIMIT ? OFFSET ?
