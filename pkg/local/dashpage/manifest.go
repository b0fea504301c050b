package dashpage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
)

// WidgetInfo is one widget of a dashboard as a screenshot shows it: its
// type and title, in the dashboard's order. A committed screenshot keeps
// the list it was drawn from beside it (docs/dashboard-demo.widgets.json),
// so a test sees when the dashboard no longer looks like its picture.
type WidgetInfo struct {
	Type  string `json:"type"`
	Title string `json:"title"`
}

// Widgets lists the widgets of every dashboard of a synthesized template,
// in the order the page draws them.
func Widgets(template []byte) ([]WidgetInfo, error) {
	dashboards, err := parseDashboards(template, nil)
	if err != nil {
		return nil, err
	}
	var out []WidgetInfo
	for _, d := range dashboards {
		for _, w := range d.Widgets {
			var p struct {
				Title string `json:"title"`
			}
			_ = json.Unmarshal(w.Properties, &p) // a widget without a title has none
			out = append(out, WidgetInfo{Type: w.Type, Title: p.Title})
		}
	}
	return out, nil
}

// WriteWidgets writes the widget list of template to path as indented
// JSON, one widget a line pair, so that a change reads as a small diff.
func WriteWidgets(path string, template []byte) error {
	ws, err := Widgets(template)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(ws); err != nil {
		return err
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("dashpage: write %s: %w", path, err)
	}
	return nil
}
