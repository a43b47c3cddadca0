SELECT extract(minute FROM EventTime) AS m, count() AS n FROM hits WHERE EventTime >= {variables.from} AND CounterID = {variables.counter} GROUP BY m ORDER BY m
