SELECT coalesce(sum("_a0"), 0) AS "n" FROM "stored" WHERE "_v0" >= ? AND "_v1" = ? LIMIT ? OFFSET ?
