SELECT "event" AS "_c0", "distinct_id" AS "user" FROM "events"
