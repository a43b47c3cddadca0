SELECT "_c0" AS "e" FROM "stored" WHERE "_v0" = ? LIMIT ? OFFSET ?
