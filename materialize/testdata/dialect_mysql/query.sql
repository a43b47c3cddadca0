SELECT `event`, count(*) AS n FROM events WHERE timestamp < {variables.date_to} AND event <> 'a\'b' GROUP BY `event` ORDER BY n DESC, `event` LIMIT 10
