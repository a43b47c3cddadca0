// Package memstore keeps what a Service stores in memory: endpoints and
// their versions with refresh leases (Store), the run log (RunLog), the
// result cache (ResultCache) and API keys (KeyStore). They implement the
// interfaces of endpoint/driver for tests, examples and single-process
// servers that need no persistence; endpoint/sqlstore is their
// persistent sibling. Each is safe for concurrent use, and each passes
// the conformance suite of endpoint/storetest.
package memstore
