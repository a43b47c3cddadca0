SELECT count(*) FROM events WHERE event = 'a\\' AND distinct_id = {variables.u}
