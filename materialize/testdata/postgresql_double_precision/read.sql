SELECT "_k0" AS "event", max("_a0") AS "revenue" FROM "stored" WHERE "date_from" >= $1 AND "_v1" = $2 GROUP BY "_k0"
