SELECT event, median(length(uuid)) FROM events WHERE timestamp >= {variables.date_from} GROUP BY event
