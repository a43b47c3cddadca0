SELECT `event` AS `_k0`, count(*) AS `_a0`, DATE_FORMAT(`timestamp`, '%Y-%m-%d 00:00:00') AS `to` FROM `events` GROUP BY `event`, DATE_FORMAT(`timestamp`, '%Y-%m-%d 00:00:00')
