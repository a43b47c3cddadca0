SELECT ? AS "v", "_c1" AS "uuid" FROM "stored" LIMIT ? OFFSET ?
