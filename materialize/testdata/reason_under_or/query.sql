SELECT count(*) FROM events WHERE event = 'purchase' OR event = {variables.e}
