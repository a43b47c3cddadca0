SELECT min("_a0") AS "min(timestamp)", max("_a1") AS "max(timestamp)", total("_a2") AS "total(length(uuid))" FROM "stored" WHERE "event" = ? AND "date_from" >= ? LIMIT ? OFFSET ?
