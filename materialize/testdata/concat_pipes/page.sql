SELECT "_c0" AS "e" FROM "stored" WHERE "e" = ? LIMIT ? OFFSET ?
