SELECT event, count() AS n FROM events WHERE timestamp >= {variables.date_from} GROUP BY event
