SELECT event, count(*) AS n FROM events WHERE timestamp BETWEEN {variables.from} AND {variables.to} GROUP BY event
