package dashpage

import (
	"encoding/json"
	"fmt"

	"github.com/geolocate-aws/geolocate/pkg/local/cfntemplate"
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
// cfntemplate.ParseReference).
func parseDashboards(template []byte, refs map[string]string) ([]dashboard, error) {
	t, err := cfntemplate.Parse(template)
	if err != nil {
		return nil, fmt.Errorf("dashpage: %w", err)
	}
	resolver := cfntemplate.Keeping(refs)
	var out []dashboard
	for _, id := range t.IDs("AWS::CloudWatch::Dashboard") {
		r := t.Resources[id]
		body, err := resolveBody(r.Properties["DashboardBody"], resolver)
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
			if name, _, err := resolver.String(v); err == nil {
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
	return out, nil
}

// resolveBody turns a DashboardBody (a string, or the Fn::Join CDK writes
// around the references in it) into the body's JSON text. A reference
// always sits inside a JSON string of the body, so its value is inserted
// JSON-escaped, while the Join's literal parts are the body's own JSON.
func resolveBody(v any, resolver *cfntemplate.Resolver) (string, error) {
	if s, ok := v.(string); ok {
		return s, nil
	}
	m, _ := v.(map[string]any)
	join, ok := m["Fn::Join"].([]any)
	if !ok || len(join) != 2 {
		return "", fmt.Errorf("want a string or Fn::Join, got %v", v)
	}
	parts, ok := join[1].([]any)
	if !ok {
		return "", fmt.Errorf("Fn::Join of %v, want [separator, [values]]", join)
	}
	escaped := make([]any, 0, len(parts))
	for i, p := range parts {
		if _, literal := p.(string); literal {
			escaped = append(escaped, p)
			continue
		}
		s, _, err := resolver.String(p)
		if err != nil {
			return "", fmt.Errorf("Fn::Join part %d: %w", i, err)
		}
		quoted, _ := json.Marshal(s)
		escaped = append(escaped, string(quoted[1:len(quoted)-1]))
	}
	body, _, err := resolver.String(map[string]any{"Fn::Join": []any{join[0], escaped}})
	return body, err
}
