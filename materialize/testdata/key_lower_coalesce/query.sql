SELECT event, count(*) AS n FROM events WHERE lower(coalesce(json_extract(properties, '$.country'), 'none')) = {variables.country} GROUP BY event ORDER BY event
