SELECT count(*) FROM events WHERE timestamp >= {variables.t} AND created_at < {variables.t}
