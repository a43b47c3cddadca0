SELECT `event` AS `_k0`, count() AS `_a0`, toDateTime(toStartOfMonth(`timestamp`), 'UTC') AS `date_from` FROM `events` GROUP BY `event`, toDateTime(toStartOfMonth(`timestamp`), 'UTC')
