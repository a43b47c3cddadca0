SELECT * FROM events WHERE event = {variables.e}
