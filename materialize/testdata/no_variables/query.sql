SELECT event, count(*) AS n FROM events GROUP BY event
