package dashpage

import (
	"encoding/json"
	"fmt"
	"html/template"
	"strings"
)

// A custom widget (type "custom") shows the HTML a Lambda function returns.
// CloudWatch calls the function with the widget's params and a
// widgetContext; the page does the same through Options.CustomWidget, with
// the page's time range and the widget's size at a nominal page width.
const nominalPageWidth = 1600 // pixels, for the widgetContext's width

// customEvent is the invocation CloudWatch would send: the params at the
// top level and again in the widgetContext.
func (b *builder) customEvent(w widget, title string, params json.RawMessage) ([]byte, error) {
	ctx := map[string]any{
		"dashboardName": b.dashboard,
		"widgetId":      fmt.Sprintf("widget-%d", b.customs),
		"timeRange": map[string]any{
			"mode": "absolute", "start": b.from.UnixMilli(), "end": b.to.UnixMilli(),
		},
		"title":  title,
		"width":  w.Width*nominalPageWidth/24 - 18,
		"height": w.Height*rowHeight - 44,
		"params": params,
	}
	event := map[string]any{}
	if len(params) > 0 {
		if err := json.Unmarshal(params, &event); err != nil {
			return nil, fmt.Errorf("params: %w", err)
		}
	}
	event["widgetContext"] = ctx
	return json.Marshal(event)
}

// custom fills a custom widget's view from its function's answer: HTML, or
// {"markdown": ...} shown as written.
func (b *builder) custom(v *widgetView, w widget) error {
	var p struct {
		Title    string          `json:"title"`
		Endpoint string          `json:"endpoint"`
		Params   json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(w.Properties, &p); err != nil {
		return fmt.Errorf("properties: %w", err)
	}
	v.Title = p.Title
	if b.opts.CustomWidget == nil {
		v.Notes = append(v.Notes, fmt.Sprintf("A custom widget drawn by the Lambda function %s in CloudWatch; no local function was given.", p.Endpoint))
		return nil
	}
	b.customs++
	event, err := b.customEvent(w, p.Title, p.Params)
	if err != nil {
		return err
	}
	out, err := b.opts.CustomWidget(p.Endpoint, event)
	if err != nil {
		v.Notes = append(v.Notes, fmt.Sprintf("The widget's function failed: %v", err))
		return nil
	}
	var md struct {
		Markdown *string `json:"markdown"`
	}
	var html string
	switch {
	case json.Unmarshal(out, &html) == nil:
	case json.Unmarshal(out, &md) == nil && md.Markdown != nil:
		v.Code = *md.Markdown
		return nil
	default:
		v.Notes = append(v.Notes, fmt.Sprintf("The widget's function answered neither HTML nor Markdown: %.200s", out))
		return nil
	}
	// CloudWatch removes scripts from a custom widget's HTML; a page that
	// ran them would show what the console does not.
	if strings.Contains(strings.ToLower(html), "<script") {
		v.Notes = append(v.Notes, "The widget's HTML holds a script, which CloudWatch removes: not shown.")
		return nil
	}
	v.HTML = template.HTML(html)
	return nil
}
