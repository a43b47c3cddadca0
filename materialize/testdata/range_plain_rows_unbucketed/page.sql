SELECT * FROM (SELECT "_c0" AS "uuid" FROM "stored" WHERE "date_from" >= ? ORDER BY 1 ASC LIMIT 3) AS "stored_page" LIMIT ? OFFSET ?
