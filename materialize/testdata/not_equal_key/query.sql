SELECT count(*) FROM events WHERE event != {variables.e}
