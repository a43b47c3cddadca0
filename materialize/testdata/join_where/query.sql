SELECT e.event, count(*) AS n FROM events AS e JOIN users AS u ON u.id = e.distinct_id WHERE u.plan = {variables.plan} GROUP BY e.event
