SELECT count(*) FROM events WHERE (SELECT max(id) FROM users) = {variables.m}
