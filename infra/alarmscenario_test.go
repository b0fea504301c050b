package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/jobs"
	"github.com/geolocate-aws/geolocate/pkg/local/alarmeval"
	"github.com/geolocate-aws/geolocate/pkg/local/awsparts"
	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
	"github.com/geolocate-aws/geolocate/pkg/local/dashpage"
	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
	"github.com/geolocate-aws/geolocate/pkg/local/scenario"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
)

// The alarm scenarios deploy the default stack (cdk.json's settings) on the
// local rig (pkg/local/scenario): the real predictor and monitor, configured
// from the template's environment, against the service simulator, gofakes3,
// DynamoDB Local and the local queue, all on one simulated clock, with the
// template's own alarms evaluated over what they publish. Each scenario
// breaks one thing and asserts which alarms fire, when, that each fires once
// while the cause lasts, and that it clears after the fix.

// episode is one expected stay of an alarm in ALARM, in minutes since the
// deployment: it starts within [FiresFrom, FiresBy] and ends (OK again)
// within [ClearsFrom, ClearsBy]; ClearsBy 0 means it is still in ALARM at the
// end of the scenario.
type episode struct {
	FiresFrom, FiresBy   int
	ClearsFrom, ClearsBy int
}

type alarmScenario struct {
	name     string
	duration time.Duration
	// credits is the account's subscription allowance; default plenty.
	credits int
	key     string
	// simulator adjusts the service simulator (a profile, say).
	simulator    []func(*geosim.Config)
	predictorEnv map[string]string
	monitorEnv   map[string]string
	// startAt is the time of day of the deployment (default midnight).
	startAt time.Duration
	// causeAt is the minute the trouble starts, from which docs/operations.md's
	// table counts the minutes to fire.
	causeAt int
	// minute runs at the start of every simulated minute (0 = deployment).
	minute func(t *testing.T, r *scenario.Rig, m int)
	// want lists, by alarm id (the name without "<stack>-"), the ALARM
	// episodes; every other alarm must never leave OK once it got there.
	want map[string][]episode
	// check runs after the scenario for what the table cannot say.
	check func(t *testing.T, r *scenario.Rig)
}

// scenarioResult is one row of the scenario table in docs/operations.md.
type scenarioResult struct {
	Scenario string `json:"scenario"`
	// Fired is, by alarm id, the minutes from the cause to ALARM.
	Fired map[string]int `json:"minutes_to_fire"`
	// AtDeploy counts the notifications of the first evaluation after the
	// deployment (every alarm with data or a missing-data rule goes from
	// INSUFFICIENT_DATA to OK and says so); Notifications the others.
	AtDeploy      int `json:"notifications_at_deploy"`
	Notifications int `json:"notifications"`
	Uploads       int `json:"uploads"`
}

const plentyOfCredits = 1_000_000

// steady uploads n photos every minute.
func steady(n int) func(t *testing.T, r *scenario.Rig, m int) {
	return func(t *testing.T, r *scenario.Rig, m int) {
		upload(t, r, n)
	}
}

func upload(t *testing.T, r *scenario.Rig, n int) {
	t.Helper()
	if err := r.Upload(context.Background(), n); err != nil {
		t.Fatal(err)
	}
}

// between runs fn for minutes [from, to).
func between(from, to int, fn func(t *testing.T, r *scenario.Rig, m int)) func(t *testing.T, r *scenario.Rig, m int) {
	return func(t *testing.T, r *scenario.Rig, m int) {
		if m >= from && m < to {
			fn(t, r, m)
		}
	}
}

// all runs every fn in turn.
func all(fns ...func(t *testing.T, r *scenario.Rig, m int)) func(t *testing.T, r *scenario.Rig, m int) {
	return func(t *testing.T, r *scenario.Rig, m int) {
		for _, fn := range fns {
			fn(t, r, m)
		}
	}
}

// at runs fn once, at minute m.
func at(minute int, fn func(t *testing.T, r *scenario.Rig)) func(t *testing.T, r *scenario.Rig, m int) {
	return func(t *testing.T, r *scenario.Rig, m int) {
		if m == minute {
			fn(t, r)
		}
	}
}

// everyN runs fn at every nth minute.
func everyN(n int, fn func(t *testing.T, r *scenario.Rig, m int)) func(t *testing.T, r *scenario.Rig, m int) {
	return func(t *testing.T, r *scenario.Rig, m int) {
		if m%n == 0 {
			fn(t, r, m)
		}
	}
}

// nothingLost checks that every upload was geolocated once and nothing is
// left in the queue or dead-lettered.
func nothingLost(t *testing.T, r *scenario.Rig) {
	t.Helper()
	if n := len(r.Queue().DeadLetters()); n != 0 {
		t.Errorf("%d dead letters", n)
	}
	if n := r.Queue().Len(); n != 0 {
		t.Errorf("%d messages still queued at the end", n)
	}
	ok := 0
	for _, c := range r.Sim.Calls() {
		if c.Endpoint == geosim.PathPredict && c.Status == http.StatusOK {
			ok++
		}
	}
	if ok != r.Uploads() {
		t.Errorf("%d predictions for %d uploads, want one each", ok, r.Uploads())
	}
}

// firstStatus is the minute of the service's first answer with status, -1
// if none.
func firstStatus(r *scenario.Rig, status int) int {
	for _, c := range r.Sim.Calls() {
		if c.Status == status {
			return int(c.Time.Sub(r.Start()) / time.Minute)
		}
	}
	return -1
}

// scenarioStart is when each scenario's stack is deployed: a Monday.
var scenarioStart = time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)

// placeholderKey is what a new stack's secret holds until the operator puts
// the real key in: random letters and digits, no geo_ prefix.
const placeholderKey = "Qx7PlaceholderNotAKey9mZ2v"

// stalledJob is the "job stalled" scenario: a backfill created at minute
// 30 that nothing feeds (the rig runs no feeder: as in the account with a
// feeder failing every run, its role stripped of s3:ListBucketVersions,
// say), so none of its objects ends; the operator cancels it at minute
// 120. Uploads go on meanwhile and are unaffected.
func stalledJob() alarmScenario {
	var id string
	return alarmScenario{
		name:     "job stalled",
		causeAt:  30,
		duration: 3 * time.Hour,
		minute: all(steady(1),
			at(30, func(t *testing.T, r *scenario.Rig) {
				job, err := r.Jobs().Create(context.Background(), jobs.Spec{Kind: jobs.KindBackfill, Bucket: "archive", RatePerMinute: 20})
				if err != nil {
					t.Fatal(err)
				}
				id = job.ID
			}),
			at(120, func(t *testing.T, r *scenario.Rig) {
				if err := r.Jobs().Cancel(context.Background(), id); err != nil {
					t.Fatal(err)
				}
			}),
		),
		want: map[string][]episode{
			// Half an hour without progress, seen at the next monitor
			// run; a cancelled job is no longer running, so the next run
			// publishes 0.
			"JobStalled": {{FiresFrom: 60, FiresBy: 66, ClearsFrom: 120, ClearsBy: 126}},
		},
		check: nothingLost,
	}
}

func alarmScenarios() []alarmScenario {
	return []alarmScenario{
		stalledJob(),
		{
			name:     "busy day",
			duration: 24 * time.Hour,
			minute: func(t *testing.T, r *scenario.Rig, m int) {
				// Office hours are busier than the night.
				if hour := m / 60; (hour >= 8 && hour < 18) || m%4 == 0 {
					upload(t, r, 1)
				}
			},
		},
		{
			// 400 credits at one photo a minute: the forecast says so at
			// once, the balance goes under 100 at minute ~300, the first
			// 402 comes at minute ~400.
			name:     "credits running down",
			duration: 7 * time.Hour,
			credits:  400,
			minute:   steady(1),
			want: map[string][]episode{
				"CreditsRunningOut": {{FiresFrom: 10, FiresBy: 20}},
				"CreditsLow":        {{FiresFrom: 300, FiresBy: 306}},
				"OutOfCredits":      {{FiresFrom: 400, FiresBy: 402}},
			},
			check: func(t *testing.T, r *scenario.Rig) {
				if m := firstStatus(r, 402); m < 400 {
					t.Errorf("first 402 at minute %d, want after the credit alarms", m)
				}
			},
		},
		{
			// The same account behind the public backend, whose credit
			// summary refuses API keys: the operator declared the 400
			// credits at deployment. The credit alarms fire as when the
			// balance could be read, from the monitor's estimate, and the
			// refusal never makes MonitorHeartbeat page.
			name:     "credits running down, summary refusing API keys",
			duration: 7 * time.Hour,
			credits:  400,
			simulator: []func(*geosim.Config){
				geosim.WithProfile(geosim.ProfileBackend), geosim.WithKeyHeader(geosim.KeyHeader),
			},
			minute: all(at(0, func(t *testing.T, r *scenario.Rig) {
				if err := r.DeclareCredits(context.Background(), 400); err != nil {
					t.Fatal(err)
				}
			}), steady(1)),
			want: map[string][]episode{
				"CreditsRunningOut": {{FiresFrom: 10, FiresBy: 20}},
				"CreditsLow":        {{FiresFrom: 300, FiresBy: 306}},
				"OutOfCredits":      {{FiresFrom: 400, FiresBy: 402}},
			},
			check: func(t *testing.T, r *scenario.Rig) {
				for _, c := range r.Sim.Calls() {
					if c.Endpoint == geosim.PathCredits && c.Status != 401 {
						t.Fatalf("the credit summary answered %d: the scenario is not the backend's", c.Status)
					}
				}
			},
		},
		{
			// Out of credits at minute ~200; topped up an hour later. The
			// messages refused meanwhile come back after their visibility
			// timeout and go through.
			name:     "out of credits then topped up",
			duration: 6 * time.Hour,
			credits:  200,
			minute: all(steady(1), at(260, func(t *testing.T, r *scenario.Rig) {
				r.Sim.AddAccount(geosim.DefaultOrg, 200, 100_000)
			})),
			want: map[string][]episode{
				"CreditsRunningOut": {{FiresFrom: 10, FiresBy: 20, ClearsFrom: 260, ClearsBy: 275}},
				"CreditsLow":        {{FiresFrom: 100, FiresBy: 106, ClearsFrom: 260, ClearsBy: 266}},
				"OutOfCredits":      {{FiresFrom: 200, FiresBy: 202, ClearsFrom: 260, ClearsBy: 300}},
			},
		},
		{
			// The pinned model is retired at minute 60; predictions fall
			// back to the default model meanwhile. The stack is redeployed
			// without the pin at minute 180.
			name:         "configured model retired then unpinned",
			causeAt:      60,
			duration:     4 * time.Hour,
			predictorEnv: map[string]string{envvars.ModelID: geosim.ModelHighAccuracy},
			monitorEnv:   map[string]string{envvars.ModelID: geosim.ModelHighAccuracy},
			minute: all(steady(1),
				at(60, func(t *testing.T, r *scenario.Rig) {
					if err := r.Sim.RetireModel(geosim.ModelHighAccuracy); err != nil {
						t.Fatal(err)
					}
				}),
				at(180, func(t *testing.T, r *scenario.Rig) { r.Redeploy(nil, nil) }),
			),
			want: map[string][]episode{
				"ConfiguredModelUnavailable": {{FiresFrom: 60, FiresBy: 71, ClearsFrom: 180, ClearsBy: 191}},
			},
		},
		{
			name:     "service 5xx for 30 minutes",
			causeAt:  60,
			duration: 4 * time.Hour,
			minute: all(steady(1),
				at(60, func(t *testing.T, r *scenario.Rig) { r.Sim.SetFaults(geosim.Faults{ServerErrorRate: 1}) }),
				at(90, func(t *testing.T, r *scenario.Rig) { r.Sim.ResetFaults() }),
			),
			want: map[string][]episode{
				// Ten images into the outage, 100% of them failed.
				"FailedPredictionRate": {{FiresFrom: 60, FiresBy: 72, ClearsFrom: 90, ClearsBy: 105}},
			},
		},
		{
			// The secret still holds the placeholder a new stack writes;
			// the operator puts the key in 90 minutes after the deployment.
			name:     "placeholder key after deploy",
			duration: 3 * time.Hour,
			key:      placeholderKey,
			minute: all(steady(1), at(90, func(t *testing.T, r *scenario.Rig) {
				r.PutSecret(r.Sim.DemoKey())
			})),
			want: map[string][]episode{
				"MonitorHeartbeat": {{FiresFrom: 5, FiresBy: 11, ClearsFrom: 90, ClearsBy: 101}},
				"QueueStalled":     {{FiresFrom: 15, FiresBy: 25, ClearsFrom: 90, ClearsBy: 106}},
			},
			check: func(t *testing.T, r *scenario.Rig) {
				if n := len(r.Queue().DeadLetters()); n != 0 {
					t.Errorf("%d dead letters: every upload should go through once the key is in", n)
				}
			},
		},
		{
			name:     "monitor failing",
			causeAt:  60,
			duration: 3 * time.Hour,
			minute: all(steady(1),
				at(60, func(t *testing.T, r *scenario.Rig) { r.MonitorBroken = true }),
				at(120, func(t *testing.T, r *scenario.Rig) { r.MonitorBroken = false }),
			),
			want: map[string][]episode{
				"MonitorHeartbeat": {{FiresFrom: 60, FiresBy: 71, ClearsFrom: 120, ClearsBy: 126}},
			},
		},
		{
			// A message no handler can read is retried until the redrive
			// policy moves it (dlqMaxReceiveCount 20 receives, 12 minutes
			// apart: 240 minutes); the operator purges the dead-letter
			// queue over an hour later.
			name:     "poison message",
			causeAt:  30,
			duration: 6 * time.Hour,
			minute: all(steady(1),
				at(30, func(t *testing.T, r *scenario.Rig) {
					if err := r.SendPoison(); err != nil {
						t.Fatal(err)
					}
				}),
				at(340, func(t *testing.T, r *scenario.Rig) { r.Queue().PurgeDeadLetters() }),
			),
			want: map[string][]episode{
				"DeadLetters": {{FiresFrom: 30 + 230, FiresBy: 30 + 245, ClearsFrom: 340, ClearsBy: 346}},
			},
		},
		{
			// A deployment with a setting the function refuses at init, fixed
			// by the next deployment two hours later.
			name:     "predictor crashing at cold start",
			causeAt:  60,
			duration: 4 * time.Hour,
			minute: all(steady(1),
				at(60, func(t *testing.T, r *scenario.Rig) {
					r.Redeploy(map[string]string{envvars.RatePerMinute: "fast"}, nil)
					if r.PredictorInitError() == nil {
						t.Fatal("the bad setting did not fail the predictor's init")
					}
				}),
				// Fixed before the first messages reach their tenth receive.
				at(150, func(t *testing.T, r *scenario.Rig) { r.Redeploy(nil, nil) }),
			),
			want: map[string][]episode{
				// Clears once a whole window (a visibility timeout and a
				// period) has passed without an error.
				"PredictorErrors": {{FiresFrom: 60, FiresBy: 61, ClearsFrom: 150, ClearsBy: 175}},
			},
			check: func(t *testing.T, r *scenario.Rig) {
				if n := len(r.Queue().DeadLetters()); n != 0 {
					t.Errorf("%d dead letters after the fix", n)
				}
			},
		},
		{
			// Other functions use up the account's concurrency for 100
			// minutes: every message is received and refused again and
			// again, so SQS leaves it out of the age of the oldest message
			// after its third receive.
			name:     "backlog retried many times",
			causeAt:  30,
			duration: 4 * time.Hour,
			minute: all(steady(1),
				at(30, func(t *testing.T, r *scenario.Rig) { r.Throttled = true }),
				at(130, func(t *testing.T, r *scenario.Rig) { r.Throttled = false }),
			),
			want: map[string][]episode{
				// QueueBacklogAge cannot see it (messages received three
				// times or more leave the age metric) and QueueStalled leaves
				// throttled periods to this alarm.
				"PredictorThrottles": {{FiresFrom: 30, FiresBy: 31, ClearsFrom: 130, ClearsBy: 155}},
			},
		},
		{
			// The account runs out of credits at minute 10 and is topped up
			// a day later; uploads keep coming every quarter of an hour
			// (sparser than QueueStalled's 20-minute window, that alarm
			// flaps once the credits are back: the messages still hidden by
			// their backoff count as in flight). A message
			// refused meanwhile waits a backoff that doubles with each
			// receive, up to 12 hours: none reaches its last receive, and
			// all go through within 12 hours of the top-up. The credit
			// alarms say so from the start (10 credits are below
			// CreditsLow) and OutOfCredits while it lasts.
			name:     "a day without credits",
			causeAt:  10,
			duration: 37 * time.Hour,
			credits:  10,
			minute: all(between(0, 11, steady(1)), between(11, 10+24*60, everyN(15, steady(1))),
				at(10+24*60, func(t *testing.T, r *scenario.Rig) { r.Sim.AddAccount(geosim.DefaultOrg, 1000, 0) })),
			want: map[string][]episode{
				"CreditsLow":        {{FiresFrom: 5, FiresBy: 6, ClearsFrom: 10 + 24*60, ClearsBy: 10 + 24*60 + 6}},
				"CreditsRunningOut": {{FiresFrom: 5, FiresBy: 20}},
				"OutOfCredits":      {{FiresFrom: 10, FiresBy: 12, ClearsFrom: 10 + 24*60, ClearsBy: 10 + 24*60 + 30}},
			},
			check: nothingLost,
		},
		{
			// The credits run out at minute 10 and nothing new is uploaded:
			// the five photos refused come back 15, 30, 60, 120 and 240
			// minutes apart, so 402s alone would let the alarm turn OK
			// within the hour; the monitor's balance (0) keeps it in ALARM
			// until the top-up six hours later (before their sixth receive,
			// after gaps of one and two hours without a 402), and keeps
			// QueueStalled quiet: its cause is known.
			name:     "credits out, nothing new uploaded",
			causeAt:  10,
			duration: 9 * time.Hour,
			credits:  5,
			// Once topped up, an upload every quarter of an hour: the
			// messages still hidden by their backoff count as in flight,
			// and without deletions QueueStalled would see a stall (as in
			// "a day without credits").
			minute: all(between(0, 10, steady(1)), between(10+6*60, 9*60, everyN(15, steady(1))),
				// Plenty, so the forecast of the sparse uploads after it
				// stays far from CreditsRunningOut's threshold.
				at(10+6*60, func(t *testing.T, r *scenario.Rig) { r.Sim.AddAccount(geosim.DefaultOrg, plentyOfCredits, 0) })),
			want: map[string][]episode{
				"CreditsLow":   {{FiresFrom: 0, FiresBy: 6, ClearsFrom: 10 + 6*60, ClearsBy: 10 + 6*60 + 6}},
				"OutOfCredits": {{FiresFrom: 5, FiresBy: 12, ClearsFrom: 10 + 6*60, ClearsBy: 10 + 6*60 + 30}},
			},
			check: nothingLost,
		},
		{
			// A new stack's secret holds its placeholder for a day before
			// the operator puts the key in; uploads come every quarter of
			// an hour.
			// They wait, their backoff doubling per receive up to 12 hours,
			// and all go through within 12 hours of the key. The monitor
			// cannot read the service meanwhile (MonitorHeartbeat) and the
			// queue makes no progress (QueueStalled).
			name:     "a day before the key",
			duration: 37 * time.Hour,
			key:      placeholderKey,
			minute: all(everyN(15, steady(1)),
				at(24*60, func(t *testing.T, r *scenario.Rig) { r.PutSecret(r.Sim.DemoKey()) })),
			want: map[string][]episode{
				"MonitorHeartbeat": {{FiresFrom: 5, FiresBy: 11, ClearsFrom: 24 * 60, ClearsBy: 24*60 + 11}},
				"QueueStalled":     {{FiresFrom: 15, FiresBy: 25, ClearsFrom: 24 * 60, ClearsBy: 24*60 + 16}},
			},
			check: nothingLost,
		},
		{
			// Deployed at 20:00, the daily credit budget of 150 is spent by
			// 22:30; later uploads wait for midnight, received once or
			// twice, so their age shows. The new day's budget drains them.
			name:         "daily budget spent",
			duration:     6 * time.Hour,
			startAt:      20 * time.Hour,
			predictorEnv: map[string]string{envvars.DailyBudget: "150"},
			minute:       between(0, 240, steady(1)),
			want: map[string][]episode{
				"QueueBacklogAge": {{FiresFrom: 205, FiresBy: 215, ClearsFrom: 240, ClearsBy: 250}},
			},
		},
	}
}

// provenElsewhere names, by alarm id, the test that fires an alarm whose
// cause takes days to show: the rig plays every minute of a scenario with
// the monitor and DynamoDB Local, which for days is minutes of test time.
var provenElsewhere = map[string]string{
	"DeadLetterAge": "TestDeadLetterAgeAlarm",
	// The rig does not run the results pipe, whose failure is EventBridge
	// refusing its events.
	"ResultEventsUndelivered": "TestResultEventsUndeliveredAlarm",
}

func TestAlarmScenarios(t *testing.T) {
	if testing.Short() {
		t.Skip("alarm scenarios run DynamoDB Local for simulated days")
	}
	s := synthApp(t).disposable
	template, err := json.Marshal(s.doc)
	if err != nil {
		t.Fatal(err)
	}
	// The scenarios run in parallel: each has its own rig, clock, bucket
	// and table, and most of a scenario's time is DynamoDB Local's, so two
	// overlap well. The group returns once every scenario has finished;
	// results keeps the scenarios' order for ALARM_SCENARIOS_OUT.
	scenarios := alarmScenarios()
	results := make([]*scenarioResult, len(scenarios))
	t.Run("scenario", func(t *testing.T) {
		for i, sc := range scenarios {
			t.Run(strings.ReplaceAll(sc.name, " ", "_"), func(t *testing.T) {
				t.Parallel()
				res := runAlarmScenario(t, s.cfg.StackName, template, sc)
				results[i] = &res
			})
		}
	})
	// Every alarm of the template fires in some scenario: an alarm no
	// scenario can fire is either dead or untested. (Only when all ran:
	// -run may pick one.)
	exercised := map[string]bool{}
	for _, res := range results {
		if res == nil {
			return
		}
		for id := range res.Fired {
			exercised[id] = true
		}
	}
	for id, res := range s.resources("AWS::CloudWatch::Alarm") {
		props, _ := res["Properties"].(map[string]any)
		name, _ := props["AlarmName"].(string)
		name = strings.TrimPrefix(name, alarmName(s.cfg.StackName, ""))
		if !exercised[name] && provenElsewhere[name] == "" {
			t.Errorf("alarm %s (%s) fires in no scenario", name, id)
		}
	}
	if out := os.Getenv("ALARM_SCENARIOS_OUT"); out != "" {
		raw, _ := json.MarshalIndent(results, "", "  ")
		if err := os.WriteFile(out, raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func runAlarmScenario(t *testing.T, stackName string, template []byte, sc alarmScenario) scenarioResult {
	s3c, bucket := awspartstest.S3Unversioned(t)
	// The rig never reads the table's stream (it publishes the result
	// events itself, see scenario.Rig.PublishResultEvents), and DynamoDB
	// Local's writes slow down with every stream record it keeps, for the
	// whole package's run (see awsparts.TableOptions.Stream).
	ddb, table := awspartstest.DynamoDB(t, awsparts.WithoutStream)
	start := scenarioStart.Add(sc.startAt)
	credits := sc.credits
	if credits == 0 {
		credits = plentyOfCredits
	}
	rig, err := scenario.New(scenario.Options{
		Template: template, StackName: stackName, Start: start,
		S3: s3c, Bucket: bucket, DynamoDB: ddb, Table: table,
		PredictorEnv: sc.predictorEnv, MonitorEnv: sc.monitorEnv, Key: sc.key,
		Simulator: append([]func(*geosim.Config){func(c *geosim.Config) { c.Allowance = credits }}, sc.simulator...),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer rig.Close()

	m := 0
	err = rig.Run(context.Background(), sc.duration, func(now time.Time) {
		if sc.minute != nil {
			sc.minute(t, rig, m)
		}
		m++
	})
	if err != nil {
		t.Fatal(err)
	}

	minute := func(at time.Time) int { return int(at.Sub(start) / time.Minute) }
	prefix := alarmName(stackName, "")
	res := scenarioResult{Scenario: sc.name, Fired: map[string]int{}, Uploads: rig.Uploads()}
	episodes := map[string][]episode{}
	for _, n := range rig.Notifications() {
		if n.From == alarmeval.StateInsufficientData && n.To == alarmeval.StateOK {
			res.AtDeploy++
		} else {
			res.Notifications++
		}
		id := strings.TrimPrefix(n.Alarm, prefix)
		t.Logf("minute %4d  %-28s %s -> %s  %s", minute(n.Time), id, n.From, n.To, n.Reason)
		switch {
		case n.To == alarmeval.StateAlarm:
			episodes[id] = append(episodes[id], episode{FiresFrom: minute(n.Time)})
			if _, ok := res.Fired[id]; !ok {
				res.Fired[id] = minute(n.Time) - sc.causeAt
			}
		case n.From == alarmeval.StateAlarm && len(episodes[id]) > 0:
			episodes[id][len(episodes[id])-1].ClearsFrom = minute(n.Time)
		}
	}

	for _, a := range rig.Eval.Alarms() {
		id := strings.TrimPrefix(a.Name, prefix)
		got, want := episodes[id], sc.want[id]
		if len(got) != len(want) {
			t.Errorf("%s: %d ALARM episodes %v, want %d %v", id, len(got), got, len(want), want)
			continue
		}
		for i, w := range want {
			g := got[i]
			if g.FiresFrom < w.FiresFrom || g.FiresFrom > w.FiresBy {
				t.Errorf("%s: fired at minute %d, want between %d and %d", id, g.FiresFrom, w.FiresFrom, w.FiresBy)
			}
			switch {
			case w.ClearsBy == 0 && g.ClearsFrom != 0:
				t.Errorf("%s: cleared at minute %d while the cause lasts", id, g.ClearsFrom)
			case w.ClearsBy != 0 && (g.ClearsFrom < w.ClearsFrom || g.ClearsFrom > w.ClearsBy):
				t.Errorf("%s: cleared at minute %d, want between %d and %d", id, g.ClearsFrom, w.ClearsFrom, w.ClearsBy)
			}
		}
		// Whatever happened, every alarm ends the scenario in a known state.
		state, _ := rig.Eval.State(a.Name)
		wantState := alarmeval.StateOK
		if len(want) > 0 && want[len(want)-1].ClearsBy == 0 {
			wantState = alarmeval.StateAlarm
		}
		if state != wantState {
			t.Errorf("%s: ends in %s, want %s", id, state, wantState)
		}
	}
	if sc.check != nil {
		sc.check(t, rig)
	}
	// ALARM_SCENARIO_PAGES=dir keeps each scenario's dashboard, drawn from
	// its metrics and alarm states, to look at.
	if dir := os.Getenv("ALARM_SCENARIO_PAGES"); dir != "" {
		path := filepath.Join(dir, strings.ReplaceAll(sc.name, " ", "-")+".html")
		err := dashpage.WriteFile(path, dashpage.Source{Template: template, Metrics: rig.Store, Alarms: rig.Eval, From: start, To: rig.Now()},
			func(o *dashpage.Options) {
				o.Refs = map[string]string{"AWS::StackName": stackName, "AWS::Region": "local"}
			})
		if err != nil {
			t.Error(err)
		}
	}
	t.Logf("%d uploads, %d notifications, fired: %v", res.Uploads, res.Notifications, fmt.Sprint(res.Fired))
	return res
}
