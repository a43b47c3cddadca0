SELECT max(timestamp) AS last FROM events WHERE {variables.since} <= timestamp
