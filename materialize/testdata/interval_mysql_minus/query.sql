SELECT event, count(*) AS n FROM events WHERE timestamp >= {variables.to} - INTERVAL 90 DAY AND timestamp < {variables.to} GROUP BY event
