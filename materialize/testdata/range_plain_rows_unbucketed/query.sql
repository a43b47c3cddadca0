SELECT uuid FROM events WHERE timestamp >= {variables.date_from} ORDER BY uuid LIMIT 3
