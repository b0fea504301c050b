package main

import (
	"maps"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/jsii-runtime-go"

	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
	"github.com/geolocate-aws/geolocate/pkg/shared/settings"
)

// TestJobFeeder: the job engine's function, schedule and output, in every
// scenario (issue 47).
func TestJobFeeder(t *testing.T) {
	for name, s := range synthApp(t).scenarios() {
		t.Run(name, func(t *testing.T) {
			cfg := s.cfg
			tableID, _ := s.onlyResource(t, "AWS::DynamoDB::Table", nil)
			queueID, _ := s.uploadQueueIDs(t)
			failures := getAtt(monitoringFailuresID(t, s), "Arn")
			fnID, fn := s.onlyResource(t, "AWS::Lambda::Function", isJobFeeder)

			if fn["Runtime"] != "provided.al2023" || fn["Handler"] != "bootstrap" || asJSON(fn["Architectures"]) != `["arm64"]` {
				t.Errorf("runtime %v handler %v architectures %v", fn["Runtime"], fn["Handler"], fn["Architectures"])
			}
			if fn["Timeout"] != float64(120) || fn["MemorySize"] != float64(256) {
				t.Errorf("timeout %v s, memory %v MB; want 120 s, 256 MB", fn["Timeout"], fn["MemorySize"])
			}
			// One feeder at a time (the default account quota, 1,000, can
			// reserve it): a belt to the lease.
			if fn["ReservedConcurrentExecutions"] != float64(1) {
				t.Errorf("reserved concurrency %v, want 1", fn["ReservedConcurrentExecutions"])
			}
			logGroup := fn["LoggingConfig"].(obj)["LogGroup"].(obj)["Ref"].(string)
			if got := s.resources("AWS::Logs::LogGroup")[logGroup]["Properties"].(obj)["RetentionInDays"]; got != float64(cfg.LogRetentionDays) {
				t.Errorf("logs to %s with retention %v, want %d", logGroup, got, cfg.LogRetentionDays)
			}

			env := environment(fn)
			want := map[string]string{
				envvars.TableName:        ref(tableID),
				envvars.QueueURL:         ref(queueID),
				envvars.JobWindowMinutes: `"` + strconv.Itoa(int(cfg.JobWindow.Minutes())) + `"`,
				envvars.RatePerMinute:    `"` + strconv.Itoa(cfg.RatePerMinute) + `"`,
				envvars.MaxConcurrency:   `"` + strconv.Itoa(cfg.MaxConcurrency) + `"`,
				envvars.DailyBudget:      `"` + strconv.Itoa(cfg.DailyCreditBudget) + `"`,
				envvars.MaxReceiveCount:  `"` + strconv.Itoa(cfg.DLQMaxReceiveCount) + `"`,
				envvars.QueueVisibility:  `"` + cfg.QueueVisibilityTimeout().String() + `"`,
				envvars.PipelineName:     `"` + cfg.StackName + `"`,
				envGoMemLimit:            `"230MiB"`,
			}
			for k, v := range want {
				if got := asJSON(env[k]); got != v {
					t.Errorf("%s = %s, want %s", k, got, v)
				}
			}
			// Nothing of the predictor's or the monitor's: no key, no
			// service URL (the feeder never calls the service).
			for _, k := range []string{envvars.SecretID, envvars.APIURL, envvars.APIKeyHeader, envvars.ClaimLease} {
				if v, ok := env[k]; ok {
					t.Errorf("the feeder is given %s = %v, which it does not use", k, v)
				}
			}

			// A failed or late run is superseded by the next minute's:
			// no retry, no event older than a minute.
			check(t, "asynchronous invocation", func() {
				s.template.HasResourceProperties(jsii.String("AWS::Lambda::EventInvokeConfig"), obj{
					"FunctionName":             obj{"Ref": fnID},
					"MaximumRetryAttempts":     0,
					"MaximumEventAgeInSeconds": 60,
				})
			})
			_, rule := s.onlyResource(t, "AWS::Events::Rule", isJobFeederSchedule)
			if rule["ScheduleExpression"] != "rate(1 minute)" || rule["State"] != "ENABLED" {
				t.Errorf("schedule %v state %v, want rate(1 minute), enabled", rule["ScheduleExpression"], rule["State"])
			}
			targets := asList(rule["Targets"])
			if len(targets) != 1 {
				t.Fatalf("%d targets", len(targets))
			}
			target := targets[0].(obj)
			if asJSON(target["Arn"]) != getAtt(fnID, "Arn") {
				t.Errorf("the schedule targets %v, want the feeder", target["Arn"])
			}
			if asJSON(target["DeadLetterConfig"]) != asJSON(obj{"Arn": obj{"Fn::GetAtt": []any{monitoringFailuresID(t, s), "Arn"}}}) {
				t.Errorf("dead-letter config %v, want the monitoring failures queue %s", target["DeadLetterConfig"], failures)
			}
			if asJSON(target["RetryPolicy"]) != asJSON(obj{"MaximumEventAgeInSeconds": 60, "MaximumRetryAttempts": monitorDeliveryRetries}) {
				t.Errorf("retry policy %v, want %d retries within a minute", target["RetryPolicy"], monitorDeliveryRetries)
			}

			out, ok := s.doc["Outputs"].(obj)["JobFeederFunctionName"].(obj)
			if !ok || asJSON(out["Value"]) != ref(fnID) {
				t.Errorf("output JobFeederFunctionName = %v, want the feeder's name", out)
			}
		})
	}
}

// TestJobWindowAndBacklogAlarm: jobWindowMinutes reaches the feeder within
// SQS's DelaySeconds limit, and queueAgeAlarmSeconds is refused where a
// job's planned backlog would page QueueBacklogAge.
func TestJobWindowAndBacklogAlarm(t *testing.T) {
	load := func(overrides map[string]any) (Config, error) {
		ctx := defaultContext(t)
		maps.Copy(ctx, overrides)
		return LoadConfig(lookupIn(ctx))
	}
	for _, w := range []string{"1", "15"} {
		cfg, err := load(map[string]any{settings.JobWindowMinutes.Key: w})
		if err != nil || strconv.Itoa(int(cfg.JobWindow.Minutes())) != w {
			t.Errorf("jobWindowMinutes %s: %v, window %v", w, err, cfg.JobWindow)
		}
	}
	for _, w := range []string{"0", "16"} {
		_, err := load(map[string]any{settings.JobWindowMinutes.Key: w})
		if err == nil || !strings.Contains(err.Error(), `context key "jobWindowMinutes"`) || !strings.Contains(err.Error(), "900 s") {
			t.Errorf("jobWindowMinutes %s: err = %v, want it refused with SQS's 900 s delay limit", w, err)
		}
	}

	// The planned wait of a job's message: its window, plus the minute its
	// delay is spread over.
	if got := jobBacklogAge(15 * time.Minute); got != 16*time.Minute {
		t.Errorf("planned backlog age of a 15-minute window = %v, want 16m", got)
	}
	tests := []struct {
		window, age string
		refused     bool
	}{
		{"15", "961", false},
		{"15", "960", true},
		{"15", "600", true},
		{"1", "121", false},
		{"1", "120", true},
	}
	for _, tt := range tests {
		_, err := load(map[string]any{settings.JobWindowMinutes.Key: tt.window, settings.QueueAgeAlarmSeconds.Key: tt.age})
		switch {
		case tt.refused && err == nil:
			t.Errorf("window %s, queueAgeAlarmSeconds %s accepted: a job's steady backlog would page", tt.window, tt.age)
		case tt.refused && (!strings.Contains(err.Error(), `context key "queueAgeAlarmSeconds"`) || !strings.Contains(err.Error(), "jobWindowMinutes="+tt.window)):
			t.Errorf("window %s, queueAgeAlarmSeconds %s: err = %v, want it on queueAgeAlarmSeconds naming the window", tt.window, tt.age, err)
		case !tt.refused && err != nil:
			t.Errorf("window %s, queueAgeAlarmSeconds %s refused: %v", tt.window, tt.age, err)
		}
	}
}

// An account whose quota leaves nothing to reserve above Lambda's 100
// unreserved gets no reservation (the deploy would fail), one at 101 gets it.
func TestFeederReservesConcurrencyOnlyWhereTheAccountCan(t *testing.T) {
	for limit, want := range map[int]bool{10: false, 100: false, 101: true, 1000: true} {
		got := feederReservedConcurrency(Config{AccountConcurrencyLimit: limit})
		if (got != nil) != want || (got != nil && *got != jobFeederConcurrency) {
			t.Errorf("accountConcurrencyLimit %d: reserved %v, want reserved %v", limit, got, want)
		}
	}
}
