SELECT "uuid" AS "_c0", "timestamp" AS "date_from" FROM "events"
