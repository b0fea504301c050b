package main

import (
	"strings"
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/geodist"
	"github.com/geolocate-aws/geolocate/pkg/shared/metricnames"
)

func TestDashboard(t *testing.T) {
	s := synthApp(t).created
	_, dash := s.onlyResource(t, "AWS::CloudWatch::Dashboard", nil)
	body := asJSON(dash["DashboardBody"])
	// Dashboard names are account-wide: the region keeps one stack name
	// in two regions apart.
	wantName := asJSON(obj{"Fn::Join": []any{"", []any{s.cfg.StackName + "-", obj{"Ref": "AWS::Region"}}}})
	if got := asJSON(dash["DashboardName"]); got != wantName {
		t.Errorf("DashboardName = %s, want %s", got, wantName)
	}
	// Breakdowns by Reason and ModelId, found by SEARCH within this pipeline.
	for _, search := range []struct{ metric, dim, stat string }{
		{metricnames.ImagesFailed, metricnames.DimReason, "Sum"},
		{metricnames.ImagesRejected, metricnames.DimReason, "Sum"},
		{metricnames.ImagesDeadLettered, metricnames.DimReason, "Sum"},
		{metricnames.ModelReady, metricnames.DimModelID, "Minimum"},
	} {
		// The body is JSON inside a JSON string: a quote in the expression
		// is escaped twice.
		q := `\\\"`
		expr := `SEARCH('{` + metricnames.DefaultNamespace + `,` + metricnames.DimPipeline + `,` + search.dim + `} MetricName=` + q +
			search.metric + q + ` ` + metricnames.DimPipeline + `=` + q + s.cfg.StackName + q + `', '` + search.stat + `', `
		if !strings.Contains(body, `\"expression\":\"`+expr) {
			t.Errorf("dashboard has no SEARCH of %s by %s (want %s)", search.metric, search.dim, expr)
		}
		if !strings.Contains(body, `PROP('Dim.`+search.dim+`')`) {
			t.Errorf("SEARCH lines by %s are not labelled with the %s", search.dim, search.dim)
		}
	}

	metrics := []string{
		metricnames.CreditsRemaining, metricnames.CreditDaysRemaining, metricnames.CreditBurnPerDay,
		metricnames.ImagesSucceeded, metricnames.ImagesRejected, metricnames.ImagesFailed,
		metricnames.CreditsConsumed, metricnames.ServiceLatency, metricnames.RateLimited,
		metricnames.OutOfCredits, metricnames.ConfiguredModelAvailable, metricnames.MonitorHealthy,
		metricnames.PredictionErrorKm, metricnames.PredictionsWithin, metricnames.ImagesFromEXIF, metricnames.ImagesDownscaled,
		metricnames.ImagesReused, metricnames.CreditsSaved,
		"Errors", "Duration", "Throttles",
		"ApproximateNumberOfMessagesVisible", "ApproximateAgeOfOldestMessage",
	}
	for _, m := range metrics {
		// The body is JSON inside a JSON string, hence the escaped quotes.
		if !strings.Contains(body, `\"`+m+`\"`) {
			t.Errorf("dashboard does not graph %s", m)
		}
	}
	for _, stat := range []string{"p50", "p90", "p99"} {
		if !strings.Contains(body, `\"stat\":\"`+stat+`\"`) {
			t.Errorf("dashboard has no %s latency", stat)
		}
	}
	// Accuracy: p50 and p90 of the error, and one share per threshold, over
	// the photos whose upload did not carry the position, as the title says.
	if !strings.Contains(body, "photos sent without it") {
		t.Error("the accuracy graph does not say it counts only photos sent without their position")
	}
	stats := map[string]bool{}
	series := `\"` + metricnames.PredictionErrorKm + `\",\"` + metricnames.DimPipeline + `\",\"` + s.cfg.StackName + `\",{`
	for rest := body; strings.Contains(rest, series); {
		rest = rest[strings.Index(rest, series)+len(series):]
		options := rest[:strings.Index(rest, "}")]
		for _, stat := range []string{"p50", "p90"} {
			if strings.Contains(options, `\"stat\":\"`+stat+`\"`) {
				stats[stat] = true
			}
		}
	}
	if !stats["p50"] || !stats["p90"] {
		t.Errorf("dashboard graphs %s with %v, want p50 and p90", metricnames.PredictionErrorKm, stats)
	}
	for _, th := range geodist.Thresholds {
		if !strings.Contains(body, `\"`+metricnames.DimThreshold+`\",\"`+th.Name+`\"`) {
			t.Errorf("dashboard has no share within the %s threshold", th.Name)
		}
	}
	if n := strings.Count(body, `100 * FILL(`); n != len(geodist.Thresholds) {
		t.Errorf("%d share expressions, want one per threshold (%d)", n, len(geodist.Thresholds))
	}
	if !strings.Contains(body, `\"Pipeline\",\"`+s.cfg.StackName+`\"`) {
		t.Error("pipeline metrics lack the Pipeline dimension")
	}
	if !strings.Contains(body, `\"type\":\"alarm\"`) {
		t.Error("no alarm status widget")
	}
	for id := range s.resources("AWS::CloudWatch::Alarm") {
		if !strings.Contains(body, getAtt(id, "Arn")) {
			t.Errorf("alarm status widget lacks %s", id)
		}
	}

	// Every queue is graphed: the uploads, their dead letters and the
	// monitoring failures, which nothing else surfaces.
	queueID, dlqID := s.uploadQueueIDs(t)
	for _, id := range []string{queueID, dlqID, monitoringFailuresID(t, s)} {
		if !strings.Contains(body, getAtt(id, "QueueName")) {
			t.Errorf("dashboard does not graph queue %s", id)
		}
	}

	_, predictor := s.onlyResource(t, "AWS::Lambda::Function", isPredictor)
	predictorLogs := asJSON(predictor["LoggingConfig"].(obj)["LogGroup"])
	if !strings.Contains(body, `\"type\":\"log\"`) || !strings.Contains(body, predictorLogs) {
		t.Error("no Logs Insights widget on the predictor's log group")
	}
	for _, field := range []string{`msg = \\\"prediction recorded\\\"`, "key", "place", "country", "latitude", "longitude", "sort @timestamp desc"} {
		if !strings.Contains(body, field) {
			t.Errorf("latest predictions query lacks %s", field)
		}
	}
}
