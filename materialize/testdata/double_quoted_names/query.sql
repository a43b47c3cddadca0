SELECT "event", count(*) FROM events WHERE "event" = {variables.e} GROUP BY 1
