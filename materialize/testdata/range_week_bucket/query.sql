SELECT count(*) AS n FROM events WHERE timestamp >= {variables.date_from} AND timestamp < {variables.date_to}
