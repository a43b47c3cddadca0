SELECT "_c0" AS "event", "_c1" AS "count(*) OVER (PARTITION BY event)" FROM "stored" WHERE "e" = ?
