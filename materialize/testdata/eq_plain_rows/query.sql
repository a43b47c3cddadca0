SELECT uuid, timestamp FROM events WHERE distinct_id = {variables.user} ORDER BY timestamp DESC LIMIT 20
