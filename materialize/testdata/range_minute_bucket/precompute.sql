SELECT min("timestamp") AS "_a0", strftime('%Y-%m-%d %H:%M:00', "timestamp") AS "after" FROM "events" GROUP BY strftime('%Y-%m-%d %H:%M:00', "timestamp")
