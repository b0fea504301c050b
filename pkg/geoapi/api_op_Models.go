package geoapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
)

// ModelStatus is a model's serving health.
type ModelStatus string

// Model statuses defined by the contract. Anything else is StatusUnknown.
const (
	StatusReady   ModelStatus = "ready"
	StatusDown    ModelStatus = "down"
	StatusUnknown ModelStatus = "unknown"
)

// ModelsInput is the input of Models.
type ModelsInput struct {
	// APIKey is optional: without a key (here or in Options) only public
	// models are listed and no key header is sent.
	APIKey string
	// Anonymous sends no key even when the client has one: the public
	// models only, from a service that refuses keys on this endpoint (see
	// KeyNotAccepted).
	Anonymous bool
}

// Model is one entry of the model list. The contract shows only id and
// status; the other fields are read from the layouts the public backend
// uses ({model_id, model_type, credits_per_use, access_level, status} and
// {id, type, name, version, enabled}) and are empty when absent.
type Model struct {
	ID     string
	Status ModelStatus
	// StatusRaw is the status as received, which may be empty or a value
	// the contract does not define. A record with no status but an enabled
	// flag gets "enabled" or "disabled" here (see Status).
	StatusRaw   string
	AccessClass string
	Type        string
	Name        string
	Version     string
	// CreditsPerUse is the listed cost of one prediction; nil when not listed.
	CreditsPerUse *int
	// Raw is the model record as received.
	Raw json.RawMessage
}

// ModelsOutput is the result of Models.
type ModelsOutput struct {
	Models []Model
	// Refused counts the list's entries left out of Models: an id longer
	// than MaxModelIDBytes, or a record without an id. RefusedExamples
	// describes the first few, each id cut to 32 bytes.
	Refused         int
	RefusedExamples []string
	// Raw is the response body.
	Raw      json.RawMessage
	Attempts int
}

// Find returns the model with the given id.
func (o *ModelsOutput) Find(id string) (Model, bool) {
	for _, m := range o.Models {
		if m.ID == id {
			return m, true
		}
	}
	return Model{}, false
}

// CountByStatus returns how many models have each status; every defined
// status is present in the map, possibly with 0.
func (o *ModelsOutput) CountByStatus() map[ModelStatus]int {
	counts := map[ModelStatus]int{StatusReady: 0, StatusDown: 0, StatusUnknown: 0}
	for _, m := range o.Models {
		counts[m.Status]++
	}
	return counts
}

// Models lists the models the key may use (GET /v1/prediction/models).
func (c *Client) Models(ctx context.Context, in *ModelsInput, optFns ...func(*Options)) (*ModelsOutput, error) {
	const opName = opModels
	if in == nil {
		in = &ModelsInput{}
	}
	o, base, key, err := c.prepare(optFns, in.APIKey, false)
	if err != nil {
		return nil, err
	}
	if in.Anonymous {
		key = ""
	}
	resp, err := c.invoke(ctx, &o, base, &operation{
		name: opName, method: http.MethodGet, path: "/v1/prediction/models", apiKey: key,
	})
	if err != nil {
		return nil, err
	}
	list, err := parseModels(resp.body)
	if err != nil {
		// Described again from a body without the key, so that no excerpt
		// cut short can keep part of it.
		if _, rerr := parseModels(redactBody(resp.body, key)); rerr != nil {
			err = rerr
		}
		return nil, asDecodeError(opName, resp, err, key)
	}
	out := &ModelsOutput{Models: list.models, Refused: list.refused, Raw: resp.body, Attempts: resp.attempts}
	for _, e := range list.examples {
		out.RefusedExamples = append(out.RefusedExamples, redact(e, key))
	}
	if out.Refused > 0 {
		o.Logger.Warn("geoapi: model list entries refused", "field", "id", "refused", out.Refused,
			"value", excerpt(strings.Join(out.RefusedExamples, "; "), maxFigureExcerpt), "listed", len(out.Models))
	}
	return out, nil
}

// asDecodeError keeps a *LayoutError as is (the JSON was fine, its layout
// was not) and wraps anything else in a *DecodeError. Both quote the body,
// which a proxy echoing the request headers fills with the key: key is
// removed from everything they carry.
func asDecodeError(op string, resp *response, err error, key string) error {
	if fe, ok := err.(*FigureError); ok {
		fe.Operation = op
		fe.Refusal.Value = redact(fe.Refusal.Value, key)
		return fe
	}
	if le, ok := err.(*LayoutError); ok {
		le.Operation = op
		le.Missing = redact(le.Missing, key)
		for i, k := range le.Keys {
			le.Keys[i] = redact(k, key)
		}
		return le
	}
	return &DecodeError{Operation: op, StatusCode: resp.status,
		Body: excerpt(redact(string(resp.body), key), maxErrorExcerpt), Err: redactErr(err, key)}
}
