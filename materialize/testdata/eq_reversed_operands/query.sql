SELECT count(*) FROM events WHERE {variables.event} = event
