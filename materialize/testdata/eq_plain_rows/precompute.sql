SELECT "uuid" AS "_c0", "timestamp" AS "_c1", "distinct_id" AS "user" FROM "events"
