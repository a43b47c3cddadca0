SELECT "_k0" AS "event", coalesce(sum("_a0"), 0) AS "count(*)" FROM "stored" WHERE "e" = ? GROUP BY "_k0" LIMIT ? OFFSET ?
