SELECT event, count(*) AS n FROM events WHERE event = {variables.event} GROUP BY event
