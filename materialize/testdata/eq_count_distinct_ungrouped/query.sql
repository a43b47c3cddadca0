SELECT count(DISTINCT distinct_id) AS users FROM events WHERE event = {variables.event}
