SELECT count(*) AS "_a0" FROM "events"
