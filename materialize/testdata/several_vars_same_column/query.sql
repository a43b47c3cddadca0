SELECT count(*) AS n FROM events WHERE event = 'purchase' AND (timestamp >= {variables.a} AND timestamp < {variables.b}) AND distinct_id = {variables.user}
