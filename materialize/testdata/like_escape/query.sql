SELECT count(*) FROM events WHERE event LIKE {variables.pattern} ESCAPE '!'
