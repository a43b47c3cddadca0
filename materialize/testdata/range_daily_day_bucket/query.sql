SELECT date(timestamp) AS day, count(*) AS events FROM events WHERE timestamp >= {variables.date_from} AND timestamp < {variables.date_to} GROUP BY day ORDER BY day
