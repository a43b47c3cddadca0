SELECT "uuid" AS "_c0", "timestamp" AS "_o0", "event" AS "event" FROM "events"
