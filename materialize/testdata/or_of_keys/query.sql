SELECT event, count(*) AS n FROM events WHERE (event = {variables.e} OR distinct_id IN {variables.users}) AND timestamp >= {variables.from} GROUP BY event
