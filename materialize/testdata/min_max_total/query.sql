SELECT min(timestamp), max(timestamp), total(length(uuid)) FROM events WHERE event = {variables.event} AND timestamp >= {variables.date_from}
