SELECT count(*) FROM events WHERE rowid = {variables.a}0
