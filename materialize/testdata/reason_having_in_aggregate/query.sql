SELECT event, count(*) FROM events GROUP BY event HAVING sum(CASE WHEN distinct_id = {variables.user} THEN 1 ELSE 0 END) > 0
