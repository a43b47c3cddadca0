SELECT event, count(*) AS n FROM events WHERE timestamp BETWEEN CAST({variables.to} AS timestamp) - INTERVAL '7' DAY AND {variables.to} GROUP BY event
