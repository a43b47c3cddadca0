SELECT max("_a0") AS "last" FROM "stored" WHERE "since" >= ? LIMIT ? OFFSET ?
