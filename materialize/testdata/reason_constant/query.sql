SELECT count(*) FROM events WHERE 1 = {variables.one}
