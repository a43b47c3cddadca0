SELECT "_k0" AS "day", count(DISTINCT "_d0") AS "users" FROM "stored" WHERE "events" IN (?) GROUP BY "_k0" ORDER BY 1 ASC
