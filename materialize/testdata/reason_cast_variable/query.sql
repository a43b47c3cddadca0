SELECT count(*) FROM events WHERE timestamp >= {variables.d}::date
