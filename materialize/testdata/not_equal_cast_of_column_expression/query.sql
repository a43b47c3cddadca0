SELECT count(*) FROM events WHERE timestamp::date <> {variables.d}
