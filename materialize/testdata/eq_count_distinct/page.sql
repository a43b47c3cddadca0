SELECT "_k0" AS "event", coalesce(max("_a0"), 0) AS "users" FROM "stored" WHERE "event" = ? GROUP BY "_k0" LIMIT ? OFFSET ?
