// Command resultevents is the results pipe's enrichment: EventBridge Pipes
// invokes it with a batch of the results table's stream records (those the
// pipe's filter passed) and puts what it returns on the bus, one event per
// record. It builds each event's detail in Go (resultevents.Enrich), so
// the detail is valid JSON with exact values whatever characters a key or
// a place name holds (docs/events.md says why a text template cannot
// promise that). It reads nothing and calls nothing: no AWS client, no
// permission beyond its logs.
//
// Outside Lambda, `go run ./functions/resultevents -event FILE` enriches
// once a JSON array of stream records and prints the result.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/events"

	"github.com/geolocate-aws/geolocate/pkg/lambdarun"
	"github.com/geolocate-aws/geolocate/pkg/shared/resultevents"
)

func main() {
	lambdarun.Main("resultevents", usage, func(context.Context) (any, error) {
		return handle, nil
	})
}

// handle returns one output per record, in the records' order: Pipes pairs
// them by position.
func handle(_ context.Context, records []events.DynamoDBEventRecord) ([]resultevents.Enriched, error) {
	return resultevents.Enrich(records), nil
}

// usage precedes the flags in -h's output.
const usage = `usage: resultevents [-event FILE|-] [-timeout D]

The results pipe's enrichment (EventBridge Pipes). Under Lambda it serves
the runtime; outside, -event enriches once a JSON array of DynamoDB stream
records and prints the outputs.

`
