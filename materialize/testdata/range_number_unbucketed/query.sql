SELECT event, count(*) FROM events WHERE length(uuid) > 3 AND rowid <= {variables.max_id} GROUP BY event
