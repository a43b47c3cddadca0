SELECT "event" || '!' AS "_c0", "event" AS "_v0" FROM "events"
