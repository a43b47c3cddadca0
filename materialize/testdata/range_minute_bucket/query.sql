SELECT min(timestamp) AS first FROM events WHERE timestamp > {variables.after}
