SELECT "event" || '!' AS "_c0", "event" AS "e" FROM "events"
