package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/alarmeval"
	"github.com/geolocate-aws/geolocate/pkg/local/dashpage"
	"github.com/geolocate-aws/geolocate/pkg/local/pipeline"
)

// defaultStackTemplate is the template `make synth` writes for the stack
// named in cdk.json ("stackName": "Geolocation").
const defaultStackTemplate = "cdk.out/Geolocation.template.json"

// localDashboard collects a local run's metrics and, at its end, writes the
// stack's dashboard drawn from them (geolocate local --dashboard).
type localDashboard struct {
	path     string
	template []byte
	refs     map[string]string
	alarms   []*alarmeval.Alarm
	metrics  *alarmeval.Store
	start    time.Time
	// records are the run's, from which the dashboard's map widget is
	// drawn by the widget's own handler (pipeline.MapWidget).
	records []ledger.Record
}

// newLocalDashboard reads the synthesized template before anything starts,
// so a missing template is one clear error rather than a run's worth of
// work with no page at the end.
func newLocalDashboard(path, templatePath string, now time.Time) (*localDashboard, error) {
	template, err := os.ReadFile(templatePath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("--dashboard: no synthesized template at %s: run `make synth` first (or pass --template)", templatePath)
	}
	if err != nil {
		return nil, fmt.Errorf("--dashboard: read template: %w", err)
	}
	// The alarm names and the dashboard's name are built from the stack's
	// name; the region is only shown.
	refs := map[string]string{"AWS::StackName": "Geolocation", "AWS::Region": "local"}
	alarms, err := alarmeval.ParseTemplate(template, func(o *alarmeval.ParseOptions) { o.Refs = refs })
	if err != nil {
		return nil, fmt.Errorf("--dashboard: %s: %w", templatePath, err)
	}
	return &localDashboard{path: path, template: template, refs: refs, alarms: alarms, metrics: alarmeval.NewStore(), start: now}, nil
}

// resolveLocal maps the template's metric dimensions to what a local run
// publishes: the stack's Pipeline is the local pipeline's name. References
// to the stack's queues and functions stay opaque and match by key
// (MatchUnresolvedByKey), as a local run has one of each.
func resolveLocal(d alarmeval.Dimension) (string, bool) {
	if d.Name == "Pipeline" {
		return pipeline.PipelineName, true
	}
	return "", false
}

// write evaluates the alarms over every minute of the run, as CloudWatch
// would have once a minute, and writes the page.
func (d *localDashboard) write(now time.Time, progress io.Writer) error {
	eval, err := alarmeval.NewEvaluator(d.metrics, d.alarms, func(o *alarmeval.Options) {
		o.ResolveDimension = resolveLocal
		o.MatchUnresolvedByKey = true
	})
	if err != nil {
		return fmt.Errorf("dashboard: %w", err)
	}
	// The first call evaluates the run's first minute; the second catches
	// up on every later one, each seeing the datapoints up to its minute,
	// through the minute after the run ends: CloudWatch evaluates once a
	// minute, so that is when it has seen everything the run published (a
	// run of seconds would otherwise be judged before its first datapoint).
	end := now.Truncate(time.Minute).Add(time.Minute)
	if _, err := eval.Evaluate(d.start); err != nil {
		return fmt.Errorf("dashboard: evaluate alarms: %w", err)
	}
	if _, err := eval.Evaluate(end); err != nil {
		return fmt.Errorf("dashboard: evaluate alarms: %w", err)
	}
	to := end
	err = dashpage.WriteFile(d.path, dashpage.Source{Template: d.template, Metrics: d.metrics, Alarms: eval, From: d.start, To: to},
		func(o *dashpage.Options) {
			o.Refs = d.refs
			o.ResolveDimension = resolveLocal
			o.MatchUnresolvedByKey = true
			o.CustomWidget = pipeline.MapWidget(d.records)
		})
	if err != nil {
		return err
	}
	fmt.Fprintf(progress, "dashboard %s (%d metric values)\n", d.path, d.metrics.Len())
	return nil
}
