SELECT count(*) FROM events WHERE timestamp BETWEEN {variables.a} AND {variables.b}
