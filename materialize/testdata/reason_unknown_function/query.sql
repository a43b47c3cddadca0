SELECT count(*) FROM events WHERE my_udf(properties) = {variables.u}
