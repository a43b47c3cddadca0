SELECT count(*) FROM events WHERE distinct_id IN (SELECT id FROM users WHERE plan = {variables.plan})
