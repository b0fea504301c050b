package pipes

import (
	_ "embed"
	"fmt"
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
	return found[0], nil
}
