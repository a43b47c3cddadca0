SELECT uuid FROM events WHERE event = {variables.e} UNION SELECT uuid FROM archive
