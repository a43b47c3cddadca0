SELECT event, count(*) FROM events GROUP BY event HAVING count(*) > {variables.min}
