SELECT "_k0" AS "event", coalesce(sum("_a0"), 0) AS "n" FROM "stored" GROUP BY "_k0" LIMIT ? OFFSET ?
