SELECT count(DISTINCT "_d0") AS "users" FROM "stored" WHERE "date_from" >= ? LIMIT ? OFFSET ?
