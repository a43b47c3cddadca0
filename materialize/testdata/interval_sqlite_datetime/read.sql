SELECT "_k0" AS "event", count(DISTINCT "_d0") AS "users" FROM "stored" WHERE "to" >= ? AND "to" < ? GROUP BY "_k0"
