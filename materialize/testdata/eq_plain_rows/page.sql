SELECT * FROM (SELECT "_c0" AS "uuid", "_c1" AS "timestamp" FROM "stored" WHERE "user" = ? ORDER BY 2 DESC LIMIT 20) AS "stored_page" LIMIT ? OFFSET ?
