// Package bench holds the measuring tools behind cmd/benchreport: duration
// statistics, process CPU time, AWS request counters (with DynamoDB's
// consumed capacity), a fake Lambda Runtime API for cold-start timing, and
// the list-price cost model. Each piece is small and tested on its own, so
// the report's figures rest on code that is checked.
package bench
