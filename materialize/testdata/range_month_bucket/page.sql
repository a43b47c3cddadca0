SELECT "_k0" AS "event", sum("_a0") AS "n" FROM "stored" WHERE "since" >= ? GROUP BY "_k0" ORDER BY 2 DESC LIMIT ? OFFSET ?
