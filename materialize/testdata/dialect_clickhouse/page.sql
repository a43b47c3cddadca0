SELECT `_k0` AS `event`, coalesce(sum(`_a0`), 0) AS `n` FROM `stored` WHERE `date_from` >= {p1:String} GROUP BY `_k0` LIMIT {p2:Int64} OFFSET {p3:Int64}
