SELECT count(*) FROM events WHERE event IN ({variables.events})
