SELECT coalesce(sum("_a0"), 0) AS "n" FROM "stored" WHERE "date_from" >= ? AND "date_to" < ? LIMIT ? OFFSET ?
