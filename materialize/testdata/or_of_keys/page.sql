SELECT "_k0" AS "event", coalesce(sum("_a0"), 0) AS "n" FROM "stored" WHERE ("e" = ? OR "users" IN (?)) AND "from" >= ? GROUP BY "_k0" LIMIT ? OFFSET ?
