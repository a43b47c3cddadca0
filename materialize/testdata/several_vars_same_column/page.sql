SELECT coalesce(sum("_a0"), 0) AS "n" FROM "stored" WHERE "a" >= ? AND "b" < ? AND "user" = ? LIMIT ? OFFSET ?
