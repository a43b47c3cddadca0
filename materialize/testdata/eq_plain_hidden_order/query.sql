SELECT uuid FROM events WHERE event = {variables.event} ORDER BY timestamp, uuid LIMIT 5 OFFSET 10
