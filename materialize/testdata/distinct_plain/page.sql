SELECT DISTINCT "_c0" AS "event" FROM "stored" WHERE "user" = ? ORDER BY 1 ASC LIMIT ? OFFSET ?
