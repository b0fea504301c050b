// Package pipes plays, on the local rig, what an EventBridge Pipe from a
// DynamoDB stream to an event bus does with each stream record: its filter
// criteria (pkg/local/eventpattern), its input template and its dynamic
// target parameters, all read from the synthesized template, so `make run`
// prints the events the deployed pipe would publish. The records come from
// DynamoDB Local's stream (pkg/local/ddbstream). It is test tooling and
// never ships in a Lambda.
//
// What is not played: batching, retries, the dead-letter queue, and
// EventBridge's own delivery (the events are printed or written to a file,
// not put on a bus).
package pipes

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/geolocate-aws/geolocate/pkg/local/cfntemplate"
	"github.com/geolocate-aws/geolocate/pkg/local/eventpattern"
)

// Pipe is what the rig takes of one AWS::Pipes::Pipe.
type Pipe struct {
	// LogicalID is the pipe's id in the template.
	LogicalID string
	// SourceTable is the logical id of the table whose stream the pipe
	// reads, StreamViewType that table's stream view.
	SourceTable    string
	StreamViewType string
	// Filters are the filter criteria's patterns; a record passes if it
	// matches any (every record passes when there are none).
	Filters []*eventpattern.Pattern
	// Enrichment is the pipe's enrichment, a reference kept opaque
	// ("GetAtt:ResultEventsEnrichment....Arn"); "" for none. Enrich plays
	// it: a JSON array of records in, a JSON array of outputs out, as
	// Pipes invokes a Lambda enrichment. A pipe with an enrichment and no
	// Enrich is refused by Apply.
	Enrichment string
	Enrich     func(batch []byte) ([]byte, error)
	// Template is the target's input template; nil passes the payload as
	// is. Substitution is how it puts a string inside quotes.
	Template     *Template
	Substitution Substitution
	// DetailType and Source of the event: a value, or a dynamic JSON path
	// ("$.dynamodb...") resolved against the record.
	DetailType, Source string
	// Resources are the event's resources, references kept opaque
	// ("GetAtt:ResultsTable.Arn").
	Resources []string
}

// Event is one event the pipe would put on its bus: EventBridge's envelope
// as aws-lambda-go declares it, the detail kept as the template made it.
type Event = events.EventBridgeEvent

// Read finds the pipes of a synthesized template whose source is a
// DynamoDB table's stream. An error names what the rig cannot play.
func Read(template []byte) ([]*Pipe, error) {
	doc, err := cfntemplate.Parse(template)
	if err != nil {
		return nil, err
	}
	var out []*Pipe
	var errs []error
	for _, id := range doc.IDs("AWS::Pipes::Pipe") {
		r := doc.Resources[id]
		tableID, attr := getAtt(r.Properties["Source"])
		table, ok := doc.Lookup(tableID, "AWS::DynamoDB::Table")
		if attr != "StreamArn" || !ok {
			continue
		}
		p, err := readPipe(id, r.Properties)
		if err != nil {
			errs = append(errs, fmt.Errorf("pipe %s: %w", id, err))
			continue
		}
		p.SourceTable = tableID
		spec, _ := table.Properties["StreamSpecification"].(map[string]any)
		p.StreamViewType, _ = spec["StreamViewType"].(string)
		out = append(out, p)
	}
	return out, errors.Join(errs...)
}

func readPipe(id string, props map[string]any) (*Pipe, error) {
	p := &Pipe{LogicalID: id}
	src, _ := props["SourceParameters"].(map[string]any)
	fc, _ := src["FilterCriteria"].(map[string]any)
	filters, _ := fc["Filters"].([]any)
	for i, f := range filters {
		m, _ := f.(map[string]any)
		pattern, ok := m["Pattern"].(string)
		if !ok {
			return nil, fmt.Errorf("filter %d has no pattern string", i)
		}
		// As strictly as AWS reads a DynamoDB stream's filter: a pattern on
		// eventName or another poller field is refused here, as AWS would.
		compiled, err := eventpattern.CompilePipeFilter([]byte(pattern))
		if err != nil {
			return nil, fmt.Errorf("filter %d: %w", i, err)
		}
		p.Filters = append(p.Filters, compiled)
	}
	if e, ok := props["Enrichment"]; ok {
		p.Enrichment = cfntemplate.Opaque(e)
	}
	target, _ := props["TargetParameters"].(map[string]any)
	if text, ok := target["InputTemplate"].(string); ok && text != "" {
		t, err := ParseTemplate(text)
		if err != nil {
			return nil, err
		}
		p.Template = t
	}
	bus, _ := target["EventBridgeEventBusParameters"].(map[string]any)
	p.DetailType, _ = bus["DetailType"].(string)
	p.Source, _ = bus["Source"].(string)
	resources, _ := bus["Resources"].([]any)
	for _, r := range resources {
		p.Resources = append(p.Resources, cfntemplate.Opaque(r))
	}
	return p, nil
}

// getAtt returns the logical id and attribute of an Fn::GetAtt.
func getAtt(v any) (id, attr string) {
	ref, ok := cfntemplate.ParseReference(cfntemplate.Opaque(v))
	if !ok || ref.Kind != "GetAtt" {
		return "", ""
	}
	return ref.LogicalID, ref.Attribute
}

// Apply runs one stream record (the JSON Pipes receives) through the
// pipe: ok is false when its filters drop it. The event's id, time,
// account and region are the local rig's (see Event).
func (p *Pipe) Apply(record []byte, at time.Time) (*Event, bool, error) {
	dec := json.NewDecoder(bytes.NewReader(record))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false, fmt.Errorf("pipe %s: record: %w", p.LogicalID, err)
	}
	if !p.passes(v) {
		return nil, false, nil
	}
	payload, raw := v, json.RawMessage(record)
	if p.Enrichment != "" {
		var err error
		payload, raw, err = p.enrich(record)
		if err != nil {
			return nil, false, err
		}
	}
	detail := raw
	if p.Template != nil {
		out, err := p.Template.RenderAs(payload, map[string]string{
			"aws.pipes.pipe-name":            p.LogicalID,
			"aws.pipes.event.ingestion-time": at.UTC().Format(time.RFC3339),
		}, p.Substitution)
		if err != nil {
			return nil, false, fmt.Errorf("pipe %s: %w", p.LogicalID, err)
		}
		detail = out
	}
	detailType, err := p.dynamic(v, payload, p.DetailType, "DetailType")
	if err != nil {
		return nil, false, err
	}
	source, err := p.dynamic(v, payload, p.Source, "Source")
	if err != nil {
		return nil, false, err
	}
	id, _ := v.(map[string]any)["eventID"].(string)
	return &Event{
		Version: "0", ID: "local-" + id, DetailType: detailType, Source: source,
		AccountID: LocalAccount, Time: at.UTC().Truncate(time.Second), Region: LocalRegion,
		Resources: append([]string{}, p.Resources...), Detail: detail,
	}, true, nil
}

// The account and region of local events.
const (
	LocalAccount = "000000000000"
	LocalRegion  = "local"
)

func (p *Pipe) passes(v any) bool {
	if len(p.Filters) == 0 {
		return true
	}
	for _, f := range p.Filters {
		if f.Match(v) {
			return true
		}
	}
	return false
}

// enrich plays the enrichment over one record (a batch of one): its one
// output, decoded and as JSON.
func (p *Pipe) enrich(record []byte) (any, json.RawMessage, error) {
	if p.Enrich == nil {
		return nil, nil, fmt.Errorf("pipe %s: enrichment %s has no local stand-in", p.LogicalID, p.Enrichment)
	}
	out, err := p.Enrich(append(append([]byte{'['}, record...), ']'))
	if err != nil {
		return nil, nil, fmt.Errorf("pipe %s: enrichment: %w", p.LogicalID, err)
	}
	var outputs []json.RawMessage
	if err := json.Unmarshal(out, &outputs); err != nil || len(outputs) != 1 {
		return nil, nil, fmt.Errorf("pipe %s: enrichment: want a JSON array of one output, got %.200s (%v)", p.LogicalID, out, err)
	}
	dec := json.NewDecoder(bytes.NewReader(outputs[0]))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, nil, fmt.Errorf("pipe %s: enrichment output: %w", p.LogicalID, err)
	}
	return v, outputs[0], nil
}

// dynamic resolves a target parameter: a JSON path is replaced by the
// value there, which must be a string. With an enrichment, AWS does not say
// whether the path reads the source record or the enriched payload, so
// both must hold the same string: a pipe that works under one reading only
// is refused.
func (p *Pipe) dynamic(record, payload any, value, name string) (string, error) {
	if !strings.HasPrefix(value, "$.") {
		return value, nil
	}
	var found string
	for i, from := range []any{record, payload} {
		got, ok, err := Lookup(from, value)
		if err != nil {
			return "", fmt.Errorf("pipe %s: %s %s: %w", p.LogicalID, name, value, err)
		}
		s, isString := got.(string)
		if !ok || !isString || s == "" {
			return "", fmt.Errorf("pipe %s: %s %s: the %s has no string there", p.LogicalID, name, value, []string{"record", "enriched payload"}[i])
		}
		if i > 0 && s != found {
			return "", fmt.Errorf("pipe %s: %s %s: %q in the record, %q in the enriched payload", p.LogicalID, name, value, found, s)
		}
		found = s
	}
	return found, nil
}
