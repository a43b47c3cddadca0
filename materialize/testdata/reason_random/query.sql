SELECT count(*) FROM events WHERE abs(random()) % 10 = {variables.r}
