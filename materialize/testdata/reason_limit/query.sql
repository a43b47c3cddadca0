SELECT uuid FROM events LIMIT {variables.n}
