SELECT count(*) FROM events WHERE event REGEXP {variables.pattern}
