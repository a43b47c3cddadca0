SELECT * FROM (SELECT "_c0" AS "uuid" FROM "stored" WHERE "event" = ? ORDER BY "_o0" ASC, 1 ASC LIMIT 5 OFFSET 10) AS "stored_page" LIMIT ? OFFSET ?
