// Package bench holds the measuring tools behind cmd/benchreport: duration
// statistics, process CPU time, AWS request counters (with DynamoDB's
// consumed capacity) and the list-price cost model. Each piece is small and
// tested on its own, so the report's figures rest on code that is checked.
// Cold starts are timed under pkg/local/lambdaruntime, the rig's one Lambda
// Runtime API.
package bench
