SELECT coalesce(sum("_a0"), 0) AS "count(*)" FROM "stored" WHERE "pattern" LIKE ? ESCAPE '!' LIMIT ? OFFSET ?
