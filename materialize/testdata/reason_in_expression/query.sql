SELECT count(*) FROM events WHERE timestamp >= date({variables.day}, '-1 day')
