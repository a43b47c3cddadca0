SELECT "uuid" AS "_c1" FROM "events"
