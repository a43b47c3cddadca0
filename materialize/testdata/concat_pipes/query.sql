SELECT event || '!' AS e FROM events WHERE event = {variables.e}
