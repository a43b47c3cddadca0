SELECT event, avg(length(distinct_id)) AS mean, round(avg(length(uuid)), 2) AS r FROM events WHERE timestamp < {variables.until} GROUP BY event
