SELECT count(*) FROM events AS e JOIN users AS u ON u.id = e.distinct_id AND u.plan = {variables.plan}
