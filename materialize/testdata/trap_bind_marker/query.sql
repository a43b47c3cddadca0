SELECT count(*) FROM events WHERE event = ? AND distinct_id = {variables.u}
