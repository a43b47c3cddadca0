SELECT `_k0` AS `u`, max(`_a0`) AS `w`, max(`_a1`) AS `a` FROM `stored` WHERE `from` >= {p1:String} AND `_v1` = {p2:String} GROUP BY `_k0` LIMIT {p3:Int64} OFFSET {p4:Int64}
