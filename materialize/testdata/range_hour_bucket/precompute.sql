SELECT max("timestamp") AS "_a0", strftime('%Y-%m-%d %H:00:00', "timestamp") AS "since" FROM "events" GROUP BY strftime('%Y-%m-%d %H:00:00', "timestamp")
