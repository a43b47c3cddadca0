SELECT event, count(DISTINCT distinct_id) AS users FROM events WHERE timestamp >= datetime({variables.to}, '-7 days') AND timestamp < {variables.to} GROUP BY event
