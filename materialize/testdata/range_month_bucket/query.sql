SELECT event, sum(1) AS n FROM events WHERE timestamp >= {variables.since} GROUP BY 1 ORDER BY 2 DESC
