SELECT coalesce(max("_a0"), 0) AS "users" FROM "stored" WHERE "event" = ? LIMIT ? OFFSET ?
