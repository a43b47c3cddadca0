SELECT uuid FROM events WHERE event = {variables.e} LIMIT 10
