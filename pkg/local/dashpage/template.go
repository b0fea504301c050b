package dashpage

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/geolocate-aws/geolocate/pkg/local/alarmeval"
)

// dashboard is one AWS::CloudWatch::Dashboard of a template.
type dashboard struct {
	LogicalID string
	Name      string
	Widgets   []widget
}

// widget is one entry of a dashboard body's "widgets", placed on the
// dashboard's grid of 24 columns.
type widget struct {
	Type       string          `json:"type"`
	X          *int            `json:"x"`
	Y          *int            `json:"y"`
	Width      int             `json:"width"`
	Height     int             `json:"height"`
	Properties json.RawMessage `json:"properties"`
}

// parseDashboards reads every dashboard of a synthesized template, sorted
// by logical id. refs resolves Refs (AWS::StackName, AWS::Region); other
// references stay opaque ("Ref:<id>", "GetAtt:<id>.<attr>", see
// alarmeval.ParseReference).
func parseDashboards(template []byte, refs map[string]string) ([]dashboard, error) {
	var t struct {
		Resources map[string]struct {
			Type       string         `json:"Type"`
			Properties map[string]any `json:"Properties"`
		} `json:"Resources"`
	}
	if err := json.Unmarshal(template, &t); err != nil {
		return nil, fmt.Errorf("dashpage: read template: %w", err)
	}
	var out []dashboard
	for id, r := range t.Resources {
		if r.Type != "AWS::CloudWatch::Dashboard" {
			continue
		}
		body, err := resolveBody(r.Properties["DashboardBody"], refs)
		if err != nil {
			return nil, fmt.Errorf("dashpage: dashboard %s: DashboardBody: %w", id, err)
		}
		var parsed struct {
			Widgets []widget `json:"widgets"`
		}
		if err := json.Unmarshal([]byte(body), &parsed); err != nil {
			return nil, fmt.Errorf("dashpage: dashboard %s: DashboardBody is not a dashboard body: %w", id, err)
		}
		d := dashboard{LogicalID: id, Name: id, Widgets: parsed.Widgets}
		if v, ok := r.Properties["DashboardName"]; ok {
			if name, _, err := alarmeval.ResolveString(v, refs); err == nil {
				d.Name = name
			}
		}
		for i := range d.Widgets {
			// CloudWatch's defaults for a widget without a size.
			if d.Widgets[i].Width <= 0 {
				d.Widgets[i].Width = 6
			}
			if d.Widgets[i].Height <= 0 {
				d.Widgets[i].Height = 6
			}
		}
		out = append(out, d)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("dashpage: the template has no AWS::CloudWatch::Dashboard")
	}
	slices.SortFunc(out, func(a, b dashboard) int { return strings.Compare(a.LogicalID, b.LogicalID) })
	return out, nil
}

// resolveBody turns a DashboardBody (a string, or the Fn::Join CDK writes
// around the references in it) into the body's JSON text. A reference
// always sits inside a JSON string of the body, so its value is inserted
// JSON-escaped.
func resolveBody(v any, refs map[string]string) (string, error) {
	if s, ok := v.(string); ok {
		return s, nil
	}
	join, ok := v.(map[string]any)["Fn::Join"].([]any)
	if !ok || len(join) != 2 {
		return "", fmt.Errorf("want a string or Fn::Join, got %v", v)
	}
	sep, ok := join[0].(string)
	parts, ok2 := join[1].([]any)
	if !ok || !ok2 {
		return "", fmt.Errorf("Fn::Join of %v, want [separator, [values]]", join)
	}
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteString(sep)
		}
		if s, ok := p.(string); ok {
			b.WriteString(s)
			continue
		}
		s, _, err := alarmeval.ResolveString(p, refs)
		if err != nil {
			return "", fmt.Errorf("Fn::Join part %d: %w", i, err)
		}
		quoted, _ := json.Marshal(s)
		b.Write(quoted[1 : len(quoted)-1])
	}
	return b.String(), nil
}
