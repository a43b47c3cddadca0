SELECT count(*) AS n FROM events WHERE datetime(timestamp, '+1 hour') >= {variables.date_from} AND date(timestamp) = {variables.day}
