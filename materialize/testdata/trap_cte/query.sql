WITH p AS (SELECT * FROM events) SELECT count(*) FROM p WHERE event = {variables.e}
