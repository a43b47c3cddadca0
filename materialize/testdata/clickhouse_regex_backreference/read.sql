SELECT `_k0` AS `domain`, coalesce(sum(`_a0`), 0) AS `n` FROM `stored` WHERE `from` >= {p1:String} AND `to` < {p2:String} GROUP BY `_k0` ORDER BY 2 DESC, 1 ASC LIMIT 10
