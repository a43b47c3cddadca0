SELECT CAST(coalesce(sum("_a0"), 0) AS bigint) AS "count(*)" FROM "stored" WHERE "_v0" <> $1
