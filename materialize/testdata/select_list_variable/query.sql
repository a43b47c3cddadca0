SELECT {variables.x} AS v, count(*) FROM events
