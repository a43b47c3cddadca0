SELECT min("_a0") AS "first" FROM (SELECT "_a0" FROM "stored" WHERE "after" >= ? UNION ALL SELECT min("timestamp") AS "_a0" FROM "events" WHERE "timestamp" > ? AND "timestamp" < ?) AS "stored_parts"
