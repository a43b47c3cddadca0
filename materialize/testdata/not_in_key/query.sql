SELECT count(*) FROM events WHERE event NOT IN {variables.events}
