SELECT count(*) AS "_a0", json_extract("properties", '$.country') AS "_v0" FROM "events" GROUP BY json_extract("properties", '$.country')
