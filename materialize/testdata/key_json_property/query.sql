SELECT count(*) FROM events WHERE json_extract(properties, '$.country') = {variables.country}
