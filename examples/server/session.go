package main

import (
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/sql/engine"
)

// Ids of the session's variables. Fixed, so that the endpoint's query can
// name them in a session printed before anything exists.
const (
	sessionEventID = "6f1c8a52-7d0e-4b9a-9c31-2e5f7a8b9c01"
	sessionFromID  = "6f1c8a52-7d0e-4b9a-9c31-2e5f7a8b9c02"
	sessionToID    = "6f1c8a52-7d0e-4b9a-9c31-2e5f7a8b9c03"
)

// sessionSQL is the session endpoint's query: daily events and users of one
// kind in a time range. It holds no quote, so that its JSON fits in a
// single-quoted shell word.
const sessionSQL = "SELECT substr(timestamp, 1, 10) AS day, count(*) AS events, count(DISTINCT distinct_id) AS users" +
	" FROM events WHERE event = {variables.event} AND timestamp >= {variables.from} AND timestamp < {variables.to}" +
	" GROUP BY day ORDER BY day"

// step is one request of the printed session.
type step struct {
	comment string
	method  string
	path    string // under $URL
	body    string // JSON; "" for none
}

var sessionSteps = []step{
	{"Create the variables the query uses (types coerce and check values):", "POST", "/insight_variables/",
		`{"id": "` + sessionEventID + `", "name": "Event", "type": "String"}`},
	{"", "POST", "/insight_variables/", `{"id": "` + sessionFromID + `", "name": "From", "type": "Date"}`},
	{"", "POST", "/insight_variables/", `{"id": "` + sessionToID + `", "name": "To", "type": "Date"}`},
	{"Save an endpoint whose SQL uses them:", "POST", "/endpoints/", `{
    "name": "daily_events",
    "description": "Events and users per day",
    "query": {
      "kind": "HogQLQuery",
      "query": "` + sessionSQL + `",
      "variables": {
        "` + sessionEventID + `": {"variableId": "` + sessionEventID + `", "code_name": "event"},
        "` + sessionFromID + `": {"variableId": "` + sessionFromID + `", "code_name": "from"},
        "` + sessionToID + `": {"variableId": "` + sessionToID + `", "code_name": "to"}
      }
    }
  }`},
	{"Run it; every variable is required, values travel as bound arguments:", "POST", "/endpoints/daily_events/run",
		`{"variables": {"event": "purchase", "from": "-7d", "to": "dStart"}}`},
	{"A missing variable is refused (400), never run unfiltered:", "POST", "/endpoints/daily_events/run",
		`{"variables": {"event": "purchase", "from": "-7d"}}`},
	{"List the project's endpoints:", "GET", "/endpoints/", ""},
}

func printBanner(w io.Writer, cfg config, e engine.Engine, base, metricsURL string, events int, loaded bool) {
	fmt.Fprintf(w, "endpointkit example server on %s\n", base)
	fmt.Fprintf(w, "  database:    %s\n", databaseLine(cfg))
	if loaded {
		fmt.Fprintf(w, "  demo events: %d loaded (the %d days before %s)\n", events, demo.Days, cfg.demoEnd.Format(time.DateOnly))
	} else {
		fmt.Fprintf(w, "  demo events: %d already in the database\n", events)
	}
	describeEvents(w, e, cfg.demoEnd)
	switch cfg.keySource {
	case keyGenerated:
		fmt.Fprintf(w, "  API key:     %s (generated; set -api-key or $%s to choose one)\n", cfg.apiKey, envAPIKey)
	case keyFromEnv:
		fmt.Fprintf(w, "  API key:     from $%s\n", envAPIKey)
	default:
		fmt.Fprintf(w, "  API key:     from -api-key\n")
	}
	fmt.Fprintf(w, "  project:     %s\n", cfg.project)
	switch {
	case cfg.metricsKeyGenerated:
		fmt.Fprintf(w, "  metrics:     %s (Prometheus), key %s (generated; set -metrics-key or -metrics-addr)\n", metricsURL, cfg.metricsKey)
	case cfg.metricsKey != "":
		fmt.Fprintf(w, "  metrics:     %s (Prometheus), key from -metrics-key or $%s\n", metricsURL, envMetricsKey)
	default:
		fmt.Fprintf(w, "  metrics:     %s (Prometheus, on -metrics-addr, no key)\n", metricsURL)
	}
	if cfg.cacheBytes > 0 {
		fmt.Fprintf(w, "  cache:       %d MiB of answers in memory (-cache-bytes)\n", cfg.cacheBytes>>20)
	} else {
		fmt.Fprintf(w, "  cache:       off (-cache-bytes 0)\n")
	}
	fmt.Fprintln(w)
}

// embedRun is what the embedded customer sends: the dates only, the event
// being fixed by the token.
const embedRun = `{"variables": {"from": "-7d", "to": "dStart"}}`

// printEmbed prints how a host's backend mints an embed token that fixes
// the session endpoint's event, and how the customer's browser runs the
// endpoint with it.
func printEmbed(w io.Writer, cfg config, base string) {
	secret := "from -embed-secret"
	if cfg.embedGenerated {
		secret = cfg.embedSecret + " (generated; set -embed-secret to choose one)"
	}
	project := base + "/api/projects/" + url.PathEscape(cfg.project)
	fmt.Fprintf(w, "Embed tokens: HS256, kid default, secret %s.\n", secret)
	fmt.Fprintln(w, "After the session below, a backend mints a token that fixes event=purchase, and a customer runs with it:")
	fmt.Fprintln(w)
	auth := shellQuote("Authorization: Bearer " + cfg.apiKey)
	if cfg.keySource == keyFromEnv {
		auth = `"Authorization: Bearer $` + envAPIKey + `"`
	}
	fmt.Fprintf(w, "TOKEN=$(curl -sS -X POST %s -H %s -H 'Content-Type: application/json' \\\n  -d %s | sed -E %s)\n",
		shellQuote(project+"/embed_tokens/"), auth,
		shellQuote(`{"endpoints": ["daily_events"], "fixed": {"event": "purchase"}, "expires_in": 3600}`),
		shellQuote(`s/.*"token":"([^"]+)".*/\1/`))
	fmt.Fprintf(w, "curl -sS -X POST %s -H \"Authorization: Bearer $TOKEN\" \\\n  -H 'Content-Type: application/json' -d %s; echo\n",
		shellQuote(project+"/endpoints/daily_events/run"), shellQuote(embedRun))
	fmt.Fprintln(w)
}

// printSession prints the curl session, ready to paste into a POSIX shell.
func printSession(w io.Writer, cfg config, base string) {
	fmt.Fprintln(w, "Try it: paste this into a shell (with -db, a second paste answers 409 to the creates).")
	fmt.Fprintln(w)
	key := shellQuote(cfg.apiKey)
	if cfg.keySource == keyFromEnv {
		key = `"$` + envAPIKey + `"`
	}
	fmt.Fprintf(w, "KEY=%s\n", key)
	fmt.Fprintf(w, "URL=%s\n", shellQuote(base+"/api/projects/"+url.PathEscape(cfg.project)))
	for _, s := range sessionSteps {
		if s.comment != "" {
			fmt.Fprintf(w, "\n# %s\n", s.comment)
		}
		fmt.Fprintf(w, "curl -sS -X %s \"$URL%s\" -H \"Authorization: Bearer $KEY\"", s.method, s.path)
		if s.body != "" {
			fmt.Fprintf(w, " \\\n  -H 'Content-Type: application/json' -d %s", shellQuote(s.body))
		}
		fmt.Fprintln(w, "; echo")
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Press Ctrl-C to stop.")
}

// shellQuote makes s one single-quoted POSIX shell word.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// databaseLine says where the server keeps its data and store, and whether
// they outlive it: only a SQLite database without -db (and a ClickHouse
// store without -store) is temporary; a -dsn database persists.
func databaseLine(cfg config) string {
	switch cfg.driver {
	case "sqlite":
		if cfg.dbPath == "" {
			return "temporary (deleted at exit; -db FILE keeps it)"
		}
		return cfg.dbPath + " (store: " + storeFile(cfg) + ")"
	case "postgres", "mysql":
		name := map[string]string{"postgres": "PostgreSQL", "mysql": "MySQL"}[cfg.driver]
		store := "the same database"
		if cfg.storeDSN != "" {
			store = "the -store-dsn database"
		}
		return name + " database of -dsn, kept after exit (store: " + store + "; a restart finds its endpoints and events)"
	default: // clickhouse, chdb
		data := "ClickHouse database of -dsn, kept after exit"
		if cfg.driver == "chdb" {
			data = "chDB data directory " + cfg.dsn + ", kept after exit"
			if cfg.dsn == "" {
				data = "chDB in a temporary directory (deleted at exit; -dsn DIR keeps it)"
			}
		}
		if cfg.storePath != "" {
			return data + " (store: " + cfg.storePath + ")"
		}
		return data + " (store: a temporary SQLite file, deleted at exit; -store FILE keeps it)"
	}
}

// storeFile is the store's file of a configuration with -db.
func storeFile(cfg config) string {
	if cfg.storePath != "" {
		return cfg.storePath
	}
	return storeBeside(cfg.dbPath)
}
