package endpointtest

// DailyPurchases is a SQL endpoint's query over the demo events (SQLite):
// daily purchases and revenue of one country between two dates, with the
// variables country (String), from and to (Date). Its country and amount
// are columns of a derived table, so that it can be materialized; the
// amount is cast to the integer the demo's amounts are, so that its sum
// is exact over any buckets (a sum the analysis cannot tell is not
// floating point is materialized only where a read adds up no stored
// sums of one group).
const DailyPurchases = `SELECT date(timestamp) AS day, count(*) AS purchases, sum(amount) AS revenue
FROM (SELECT timestamp, json_extract(properties, '$.country') AS country, CAST(json_extract(properties, '$.amount') AS INTEGER) AS amount
      FROM events WHERE event = 'purchase') AS p
WHERE country = {variables.country} AND timestamp >= {variables.from} AND timestamp < {variables.to}
GROUP BY day ORDER BY day`
