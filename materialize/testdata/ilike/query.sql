SELECT count(*) FROM events WHERE event ILIKE 'p%' AND event = {variables.e}
