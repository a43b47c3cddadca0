SELECT event, count(*) AS n FROM events WHERE distinct_id = 'user-1' AND timestamp BETWEEN '2025-01-01 00:00:00' AND {variables.to} GROUP BY event
