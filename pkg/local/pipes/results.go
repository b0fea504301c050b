package pipes

import (
	_ "embed"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-lambda-go/events"

	"github.com/geolocate-aws/geolocate/pkg/shared/resultevents"
)

// resultsPipeTemplate is the results pipe of the default configuration and
// its table's stream, as the stack synthesizes them. infra's
// TestResultsPipeLocalCopy keeps it equal to the synthesized template (and
// rewrites it with -update-local-pipe), so a local run needs no synthesis.
//
//go:embed resultspipe.template.json
var resultsPipeTemplate []byte

// ResultsPipe returns the stack's results pipe: from template when given
// (a synthesized stack, `make synth`), else from the copy of the default
// configuration's.
func ResultsPipe(template []byte) (*Pipe, error) {
	if template == nil {
		template = resultsPipeTemplate
	}
	found, err := Read(template)
	if err != nil {
		return nil, err
	}
	if len(found) != 1 {
		return nil, fmt.Errorf("want the results pipe, the template has %d pipes reading a table's stream (events=false?)", len(found))
	}
	p := found[0]
	if p.Enrichment != "" {
		p.Enrich = EnrichResults
	}
	return p, nil
}

// EnrichResults plays the results pipe's enrichment (functions/resultevents)
// in process: the same resultevents.Enrich over the same JSON, so the
// decoding of the records is the function's own.
func EnrichResults(batch []byte) ([]byte, error) {
	var records []events.DynamoDBEventRecord
	if err := json.Unmarshal(batch, &records); err != nil {
		return nil, fmt.Errorf("results enrichment: %w", err)
	}
	return json.Marshal(resultevents.Enrich(records))
}
