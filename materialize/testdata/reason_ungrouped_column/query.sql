SELECT event, distinct_id, count(*) FROM events WHERE event = {variables.e} GROUP BY event
