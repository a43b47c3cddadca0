SELECT `_k0` AS `m`, coalesce(sum(`_a0`), 0) AS `n` FROM `stored` WHERE `from` >= {p1:String} AND `counter` = {p2:String} GROUP BY `_k0` ORDER BY 1 ASC LIMIT {p3:Int64} OFFSET {p4:Int64}
