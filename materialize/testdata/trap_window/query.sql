SELECT event, count(*) OVER (PARTITION BY event) FROM events WHERE event = {variables.e}
