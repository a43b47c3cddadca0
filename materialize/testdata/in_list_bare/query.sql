SELECT date(timestamp) AS day, count(DISTINCT distinct_id) AS users FROM events WHERE event IN {variables.events} GROUP BY day ORDER BY day
