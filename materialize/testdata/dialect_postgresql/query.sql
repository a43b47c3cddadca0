SELECT date_trunc('day', timestamp) AS day, count(*) AS n FROM events WHERE timestamp >= {variables.date_from} AND event = 'it''s' GROUP BY 1
