SELECT event, count(*) AS n FROM events WHERE timestamp >= {variables.date_from} GROUP BY event HAVING n > 10 AND max(timestamp) > '2025-01-01' ORDER BY count(*) DESC
