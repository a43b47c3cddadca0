SELECT "_k0" AS "event", coalesce(sum("_a0"), 0) AS "n" FROM "stored" WHERE "_v0" = ? GROUP BY "_k0" ORDER BY 1 ASC LIMIT ? OFFSET ?
