SELECT count(DISTINCT distinct_id) AS users FROM events WHERE timestamp >= {variables.date_from}
