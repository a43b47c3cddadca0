SELECT DISTINCT event FROM events WHERE distinct_id = {variables.user} ORDER BY event
