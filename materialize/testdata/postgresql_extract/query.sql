SELECT extract(hour FROM timestamp::timestamp) AS h, count(*) AS n FROM events WHERE timestamp >= {variables.date_from} AND properties::jsonb->>'country' = {variables.country} GROUP BY 1 ORDER BY 1
