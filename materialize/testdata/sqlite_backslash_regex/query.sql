SELECT replace(event, '\.', '/') AS e, count(*) AS n FROM events WHERE timestamp >= {variables.date_from} AND distinct_id LIKE 'u\_%' GROUP BY 1
