package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cfntypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/smithy-go"

	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
	"github.com/geolocate-aws/geolocate/pkg/shared/metricnames"
)

// fakeNotifications answers GetBucketNotificationConfiguration from queue
// configurations by bucket.
type fakeNotifications struct {
	queues map[string][]s3types.QueueConfiguration
	topics map[string][]s3types.TopicConfiguration
	// eventBridge marks the buckets that send their events to EventBridge.
	eventBridge map[string]bool
	err         error
}

func (f *fakeNotifications) GetBucketNotificationConfiguration(_ context.Context, in *s3.GetBucketNotificationConfigurationInput, _ ...func(*s3.Options)) (*s3.GetBucketNotificationConfigurationOutput, error) {
	if f.err != nil {
		return nil, f.err
	}
	out := &s3.GetBucketNotificationConfigurationOutput{QueueConfigurations: f.queues[aws.ToString(in.Bucket)], TopicConfigurations: f.topics[aws.ToString(in.Bucket)]}
	if f.eventBridge[aws.ToString(in.Bucket)] {
		out.EventBridgeConfiguration = &s3types.EventBridgeConfiguration{}
	}
	return out, nil
}

// fakeFunctions holds event source mappings by source ARN and function
// environments by function ARN. Mappings are listed one per page, to walk
// the pagination.
type fakeFunctions struct {
	mappings map[string][]lambdatypes.EventSourceMappingConfiguration
	env      map[string]map[string]string
	listErr  error
}

func (f *fakeFunctions) ListEventSourceMappings(_ context.Context, in *lambda.ListEventSourceMappingsInput, _ ...func(*lambda.Options)) (*lambda.ListEventSourceMappingsOutput, error) {
	if f.listErr != nil {
		return nil, f.listErr
	}
	all := f.mappings[aws.ToString(in.EventSourceArn)]
	i := 0
	if in.Marker != nil {
		i = len(aws.ToString(in.Marker))
	}
	out := &lambda.ListEventSourceMappingsOutput{}
	if i < len(all) {
		out.EventSourceMappings = all[i : i+1]
		if i+1 < len(all) {
			out.NextMarker = aws.String(strings.Repeat("x", i+1))
		}
	}
	return out, nil
}

func (f *fakeFunctions) GetFunctionConfiguration(_ context.Context, in *lambda.GetFunctionConfigurationInput, _ ...func(*lambda.Options)) (*lambda.GetFunctionConfigurationOutput, error) {
	env, ok := f.env[aws.ToString(in.FunctionName)]
	if !ok {
		return nil, &smithy.GenericAPIError{Code: "ResourceNotFoundException", Message: "Function not found: " + aws.ToString(in.FunctionName)}
	}
	return &lambda.GetFunctionConfigurationOutput{Environment: &lambdatypes.EnvironmentResponse{Variables: env}}, nil
}

// fakeMetrics answers GetMetricStatistics from datapoints of one metric,
// honouring the namespace, name, dimensions and time range asked for.
type fakeMetrics struct {
	pipeline string
	points   []cwtypes.Datapoint
	err      error
}

func (f *fakeMetrics) GetMetricStatistics(_ context.Context, in *cloudwatch.GetMetricStatisticsInput, _ ...func(*cloudwatch.Options)) (*cloudwatch.GetMetricStatisticsOutput, error) {
	if f.err != nil {
		return nil, f.err
	}
	out := &cloudwatch.GetMetricStatisticsOutput{}
	if aws.ToString(in.Namespace) != metricnames.DefaultNamespace || aws.ToString(in.MetricName) != metricnames.MonitorHealthy ||
		len(in.Dimensions) != 1 || aws.ToString(in.Dimensions[0].Name) != metricnames.DimPipeline || aws.ToString(in.Dimensions[0].Value) != f.pipeline {
		return out, nil
	}
	if p := aws.ToInt32(in.Period); p < 60 || p%60 != 0 {
		return nil, &smithy.GenericAPIError{Code: "InvalidParameterValue", Message: "bad period"}
	}
	for _, p := range f.points {
		if !p.Timestamp.Before(*in.StartTime) && !p.Timestamp.After(*in.EndTime) {
			out.Datapoints = append(out.Datapoints, p)
		}
	}
	return out, nil
}

// fakeTopics holds subscriptions by topic ARN.
type fakeTopics struct {
	subs map[string][]snstypes.Subscription
}

func (f *fakeTopics) ListSubscriptionsByTopic(_ context.Context, in *sns.ListSubscriptionsByTopicInput, _ ...func(*sns.Options)) (*sns.ListSubscriptionsByTopicOutput, error) {
	subs, ok := f.subs[aws.ToString(in.TopicArn)]
	if !ok {
		return nil, &smithy.GenericAPIError{Code: "NotFound", Message: "Topic does not exist"}
	}
	return &sns.ListSubscriptionsByTopicOutput{Subscriptions: subs}, nil
}

// fakeStackResources lists fixed resources.
type fakeStackResources struct {
	resources []cfntypes.StackResourceSummary
}

func (f fakeStackResources) ListStackResources(_ context.Context, _ *cloudformation.ListStackResourcesInput, _ ...func(*cloudformation.Options)) (*cloudformation.ListStackResourcesOutput, error) {
	return &cloudformation.ListStackResourcesOutput{StackResourceSummaries: f.resources}, nil
}

const (
	docQueueArn  = "arn:aws:sqs:us-east-1:000000000000:Geo-Queue"
	docDLQArn    = "arn:aws:sqs:us-east-1:000000000000:Geo-DeadLetters"
	docTopicArn  = "arn:aws:sns:us-east-1:000000000000:Geo-AlarmTopic"
	docSecretArn = "arn:aws:secretsmanager:us-east-1:000000000000:secret:geo-key"
	docFnArn     = "arn:aws:lambda:us-east-1:000000000000:function:Geo-Predictor"
)

// doctorWorld is a deployed stack whose every check passes; tests break
// one part of it.
type doctorWorld struct {
	sim           *geosim.Server
	simURL        string
	env           map[string]string
	secrets       *recordingSecrets
	outputs       map[string]string
	queues        *fakeQueues
	notifications *fakeNotifications
	functions     *fakeFunctions
	metrics       *fakeMetrics
	topics        *fakeTopics
	locations     *fakeLocations
	rules         *fakeRules
	clients       *awsClients
}

func newDoctorWorld(t *testing.T) *doctorWorld {
	t.Helper()
	sim, url := startSim(t)
	now := time.Now()
	w := &doctorWorld{
		sim:     sim,
		simURL:  url,
		env:     map[string]string{envvars.APIURL: url},
		secrets: &recordingSecrets{id: docSecretArn, value: `{"api_key":"` + sim.DemoKey() + `"}`},
		outputs: map[string]string{
			outputBucketName:         "uploads",
			outputQueueURL:           "https://sqs/queue",
			outputDeadLetterQueueURL: "https://sqs/dlq",
			outputSecretArn:          docSecretArn,
			outputAlarmTopicArn:      docTopicArn,
			outputTableName:          "results",
		},
		queues: &fakeQueues{attrs: map[string]map[string]string{
			"https://sqs/queue": {"QueueArn": docQueueArn, "ApproximateNumberOfMessages": "4"},
			"https://sqs/dlq":   {"QueueArn": docDLQArn, "ApproximateNumberOfMessages": "0"},
		}},
		notifications: &fakeNotifications{queues: map[string][]s3types.QueueConfiguration{
			"uploads": {
				{QueueArn: aws.String("arn:aws:sqs:us-east-1:000000000000:other"), Events: []s3types.Event{"s3:ObjectRemoved:*"}},
				{QueueArn: aws.String(docQueueArn), Events: []s3types.Event{"s3:ObjectCreated:*"}},
			},
		}},
		functions: &fakeFunctions{
			mappings: map[string][]lambdatypes.EventSourceMappingConfiguration{docQueueArn: {
				{UUID: aws.String("esm-1"), State: aws.String("Enabled"), FunctionArn: aws.String(docFnArn), EventSourceArn: aws.String(docQueueArn)},
			}},
			env: map[string]map[string]string{docFnArn: {envvars.APIURL: url, envvars.PipelineName: "Geo"}},
		},
		metrics: &fakeMetrics{pipeline: "Geo", points: []cwtypes.Datapoint{
			{Timestamp: aws.Time(now.Add(-3 * time.Minute)), Minimum: aws.Float64(1)},
			{Timestamp: aws.Time(now.Add(-8 * time.Minute)), Minimum: aws.Float64(0)},
		}},
		locations: &fakeLocations{regions: map[string]string{"uploads": ""}}, // us-east-1
		rules:     &fakeRules{},
		topics: &fakeTopics{subs: map[string][]snstypes.Subscription{docTopicArn: {
			{SubscriptionArn: aws.String("PendingConfirmation"), Protocol: aws.String("sms")},
			{SubscriptionArn: aws.String(docTopicArn + ":0b6c1f1e"), Protocol: aws.String("email")},
		}}},
	}
	w.clients = &awsClients{
		stacks:        fakeStacks{name: "Geo", outputs: w.outputs},
		queues:        w.queues,
		notifications: w.notifications,
		functions:     w.functions,
		metrics:       w.metrics,
		topics:        w.topics,
		locations:     w.locations,
		rules:         w.rules,
		account:       &fakeAccount{quota: 1000},
		region:        "us-east-1",
	}
	return w
}

type doctorReport struct {
	Stack  string        `json:"stack"`
	Passed bool          `json:"passed"`
	Checks []checkResult `json:"checks"`
}

// doctor runs geolocate doctor --json on the world and returns its report.
func (w *doctorWorld) doctor(t *testing.T, args ...string) (doctorReport, result) {
	t.Helper()
	useAWS(t, w.clients)
	r := runCLI(t, w.env, w.secrets, append([]string{"doctor", "--stack", "Geo", "--json"}, args...)...)
	assertNoKey(t, r)
	var rep doctorReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("not JSON (exit %d): %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	if len(rep.Checks) != len(doctorChecks) {
		t.Fatalf("%d checks, want %d: %+v", len(rep.Checks), len(doctorChecks), rep.Checks)
	}
	// Exit 0 exactly when every check passed.
	if rep.Passed != (r.code == exitOK) || (!rep.Passed && r.code != exitError) {
		t.Errorf("passed %v with exit %d", rep.Passed, r.code)
	}
	return rep, r
}

func (rep doctorReport) check(t *testing.T, id string) checkResult {
	t.Helper()
	for _, c := range rep.Checks {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("no check %s in %+v", id, rep.Checks)
	return checkResult{}
}

// expect asserts check id has status, with detail and fix containing the
// given texts, and that every other check passed.
func (rep doctorReport) expect(t *testing.T, id, status, detail, fix string) {
	t.Helper()
	c := rep.check(t, id)
	if c.Status != status || !strings.Contains(c.Detail, detail) || !strings.Contains(c.Fix, fix) {
		t.Errorf("%s = %+v; want status %s, detail containing %q, fix containing %q", id, c, status, detail, fix)
	}
	if status != checkPass && c.Fix == "" && status == checkFail {
		t.Errorf("%s failed without a fix", id)
	}
	for _, other := range rep.Checks {
		if other.ID != id && other.Status != checkPass {
			t.Errorf("%s = %+v, want pass", other.ID, other)
		}
	}
}

func TestDoctorAllPass(t *testing.T) {
	w := newDoctorWorld(t)
	rep, r := w.doctor(t)
	if r.code != exitOK || !rep.Passed || rep.Stack != "Geo" {
		t.Fatalf("exit %d, report %+v\n%s", r.code, rep, r.stderr)
	}
	want := map[string]string{
		"api-key":             "the secret holds a geo_ key the service accepts on the prediction endpoint (checked without a prediction; 4 models listed)",
		"bucket-notification": "bucket uploads sends s3:ObjectCreated:* events to the queue",
		"queue-trigger":       "the queue triggers Geo-Predictor (event source mapping esm-1 Enabled)",
		"monitor-heartbeat":   "the monitor reported healthy 3m ago",
		"alarm-subscription":  "the alarm topic has 1 confirmed subscription(s) (email)",
		"dead-letter-queue":   "the dead-letter queue is empty",
		"model-ready":         "no model configured (the service's default); 4 of 4 listed models ready",
	}
	for i, c := range rep.Checks {
		if c.ID != doctorChecks[i].id {
			t.Errorf("check %d is %s, want %s", i, c.ID, doctorChecks[i].id)
		}
		if c.Status != checkPass || !strings.Contains(c.Detail, want[c.ID]) || c.Fix != "" {
			t.Errorf("%s = %+v, want a pass with %q", c.ID, c, want[c.ID])
		}
	}
	// The key came from the stack's secret, and only the free model list
	// and the key's probe (no image, refused with 422) were called: nothing
	// charged.
	if len(w.secrets.asked) != 1 || w.secrets.asked[0] != docSecretArn {
		t.Errorf("secrets asked %v", w.secrets.asked)
	}
	for _, call := range w.sim.Calls() {
		probe := call.Endpoint == geosim.PathPredict && call.Status == 422 && call.BytesReceived == 0
		if (call.Endpoint != geosim.PathModels && !probe) || call.Charged != 0 {
			t.Errorf("service call %+v, want the model list and the key's probe only", call)
		}
	}
	if w.sim.CallCount() != 2 {
		t.Errorf("%d service calls, want 2 (the model list, shared by two checks, and the probe)", w.sim.CallCount())
	}
}

func TestDoctorTextOutput(t *testing.T) {
	w := newDoctorWorld(t)
	useAWS(t, w.clients)
	r := runCLI(t, w.env, w.secrets, "doctor", "--stack", "Geo")
	if r.code != exitOK {
		t.Fatalf("exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	n := len(doctorChecks)
	if len(lines) != n+2 || lines[0] != "stack Geo" || lines[n+1] != fmt.Sprintf("%d checks: %d passed, 0 failed, 0 could not be checked", n, n) {
		t.Fatalf("want the stack, %d check lines and a summary:\n%s", n, r.stdout)
	}
	for _, l := range lines[1 : n+1] {
		if !strings.HasPrefix(l, "PASS ") {
			t.Errorf("line %q", l)
		}
	}

	w.queues.attrs["https://sqs/dlq"]["ApproximateNumberOfMessages"] = "2"
	w.functions.listErr = &smithy.GenericAPIError{Code: "AccessDeniedException", Message: "not authorized to perform lambda:ListEventSourceMappings"}
	r = runCLI(t, w.env, w.secrets, "doctor", "--stack", "Geo")
	if r.code != exitError {
		t.Fatalf("exit %d, want %d", r.code, exitError)
	}
	for _, want := range []string{
		"FAIL   dead-letter queue    2 message(s) wait in the dead-letter queue\n",
		"                            fix: see why (geolocate results --status waiting), then redrive them: aws sqs start-message-move-task --source-arn " + docDLQArn + "\n",
		"ERROR  queue trigger        could not check: list event source mappings of " + docQueueArn,
		"fix: grant your credentials the read-only permissions that geolocate doctor --help lists",
		"PASS   API key ",
		"8 checks: 6 passed, 1 failed, 1 could not be checked",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	if r.stderr != "" {
		t.Errorf("stderr %q", r.stderr)
	}
	assertNoKey(t, r)
}

func TestDoctorHelpListsPermissions(t *testing.T) {
	useAWS(t, &awsClients{})
	r := runCLI(t, nil, nil, "doctor", "--help")
	if r.code != exitOK {
		t.Errorf("exit %d", r.code)
	}
	for _, want := range []string{
		"usage: geolocate doctor", "read-only",
		"cloudformation:DescribeStacks", "cloudformation:ListStackResources", "secretsmanager:GetSecretValue",
		"sqs:GetQueueAttributes", "s3:GetBucketNotification", "lambda:ListEventSourceMappings",
		"lambda:GetFunctionConfiguration", "cloudwatch:GetMetricStatistics", "sns:ListSubscriptionsByTopic",
		"-monitor-period", "-json", "-stack", "-secret-id",
		// --smoke writes, and lists what it needs for it.
		"-smoke", "-yes", "-max-credits", "-timeout", "s3:PutObject", "s3:DeleteObjectVersion", "dynamodb:DeleteItem",
		"events:PutRule", "events:DeleteRule", "sqs:CreateQueue", "sqs:DeleteQueue", "cloudwatch:SetAlarmState",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("help lacks %q:\n%s", want, r.stdout)
		}
	}
	if r := runCLI(t, nil, nil, "doctor", "--monitor-period", "30s"); r.code != exitUsage {
		t.Errorf("--monitor-period 30s: exit %d", r.code)
	}
	if r := runCLI(t, nil, nil, "help"); !strings.Contains(r.stdout, "doctor") {
		t.Errorf("doctor not in the command list:\n%s", r.stderr)
	}
}

func TestDoctorAPIKey(t *testing.T) {
	putKey := "aws secretsmanager put-secret-value --secret-id " + docSecretArn + " --secret-string"
	t.Run("pass with the predictor's service URL", func(t *testing.T) {
		w := newDoctorWorld(t)
		delete(w.env, envvars.APIURL)
		rep, _ := w.doctor(t)
		rep.expect(t, "api-key", checkPass, "the service accepts", "")
	})
	t.Run("placeholder", func(t *testing.T) {
		w := newDoctorWorld(t)
		w.secrets.value = "Q7kz2PlaceholderWithoutPrefix"
		rep, r := w.doctor(t)
		if !strings.Contains(r.stdout, `--secret-string '<your geo_ key>'`) {
			t.Errorf("the fix is escaped:\n%s", r.stdout)
		}
		c := rep.check(t, "api-key")
		if c.Status != checkFail || c.Detail != "the secret holds no geo_ key (still the placeholder the stack created?)" || !strings.Contains(c.Fix, putKey) {
			t.Errorf("api-key = %+v", c)
		}
		if strings.Contains(c.Detail, "Q7kz2") {
			t.Errorf("the secret's value was printed: %q", c.Detail)
		}
		// The model check needs the key; the others are unaffected.
		if m := rep.check(t, "model-ready"); m.Status != checkError || !strings.Contains(m.Detail, "needs a key the service accepts") {
			t.Errorf("model-ready = %+v", m)
		}
		if b := rep.check(t, "bucket-notification"); b.Status != checkPass {
			t.Errorf("bucket-notification = %+v", b)
		}
		if w.sim.CallCount() != 0 {
			t.Errorf("a placeholder was sent to the service")
		}
	})
	t.Run("refused", func(t *testing.T) {
		w := newDoctorWorld(t)
		w.secrets.value = `{"api_key":"geo_test_fake_key_refused"}`
		rep, r := w.doctor(t)
		c := rep.check(t, "api-key")
		if c.Status != checkFail || !strings.Contains(c.Detail, "the service refused the secret's key (401)") || !strings.Contains(c.Fix, putKey) {
			t.Errorf("api-key = %+v", c)
		}
		if strings.Contains(r.stdout, "geo_test_fake_key_refused") {
			t.Errorf("the key was printed")
		}
	})
	t.Run("secret unreadable", func(t *testing.T) {
		w := newDoctorWorld(t)
		w.secrets.id = "another-secret"
		rep, _ := w.doctor(t)
		if c := rep.check(t, "api-key"); c.Status != checkError || !strings.Contains(c.Detail, "could not check: read secret "+docSecretArn) {
			t.Errorf("api-key = %+v", c)
		}
	})
}

func TestDoctorBucketNotification(t *testing.T) {
	const fix = "run cdk deploy again to restore it"
	t.Run("missing", func(t *testing.T) {
		w := newDoctorWorld(t)
		w.notifications.queues["uploads"] = w.notifications.queues["uploads"][:1] // another queue's only
		rep, _ := w.doctor(t)
		rep.expect(t, "bucket-notification", checkFail, "bucket uploads has no s3:ObjectCreated:* notification to the queue "+docQueueArn, fix)
	})
	t.Run("other events", func(t *testing.T) {
		w := newDoctorWorld(t)
		w.notifications.queues["uploads"][1].Events = []s3types.Event{"s3:ObjectCreated:Put"}
		rep, _ := w.doctor(t)
		rep.expect(t, "bucket-notification", checkFail, "notifies the queue of s3:ObjectCreated:Put only", fix)
	})
	t.Run("unreadable", func(t *testing.T) {
		w := newDoctorWorld(t)
		w.notifications.err = &smithy.GenericAPIError{Code: "AccessDenied", Message: "Access Denied"}
		rep, _ := w.doctor(t)
		rep.expect(t, "bucket-notification", checkError, "could not check: notification configuration of bucket uploads", "grant your credentials")
	})
}

func TestDoctorQueueTrigger(t *testing.T) {
	t.Run("enabled among several", func(t *testing.T) {
		w := newDoctorWorld(t)
		m := w.functions.mappings[docQueueArn]
		w.functions.mappings[docQueueArn] = []lambdatypes.EventSourceMappingConfiguration{
			{UUID: aws.String("esm-0"), State: aws.String("Disabled"), FunctionArn: aws.String(docFnArn + "-old")}, m[0]}
		rep, _ := w.doctor(t)
		rep.expect(t, "queue-trigger", checkPass, "event source mapping esm-1 Enabled", "")
	})
	t.Run("no mapping", func(t *testing.T) {
		w := newDoctorWorld(t)
		delete(w.functions.mappings, docQueueArn)
		rep, _ := w.doctor(t)
		// Without a mapping the predictor (and its settings) are unknown, but
		// GEO_API_URL is set and the model check falls back to any ready model.
		c := rep.check(t, "queue-trigger")
		if c.Status != checkFail || !strings.Contains(c.Detail, "no Lambda event source mapping reads the queue "+docQueueArn) ||
			c.Fix != "run cdk deploy again to recreate the predictor's queue trigger" {
			t.Errorf("queue-trigger = %+v", c)
		}
		if m := rep.check(t, "model-ready"); m.Status != checkPass || !strings.Contains(m.Detail, "configured model unknown") {
			t.Errorf("model-ready = %+v", m)
		}
	})
	t.Run("disabled", func(t *testing.T) {
		w := newDoctorWorld(t)
		m := &w.functions.mappings[docQueueArn][0]
		m.State, m.StateTransitionReason = aws.String("Disabled"), aws.String("USER_INITIATED")
		rep, _ := w.doctor(t)
		rep.expect(t, "queue-trigger", checkFail, "the queue's event source mapping esm-1 (Geo-Predictor) is Disabled: USER_INITIATED",
			"aws lambda update-event-source-mapping --uuid esm-1 --enabled")
	})
	t.Run("unreadable", func(t *testing.T) {
		w := newDoctorWorld(t)
		w.functions.listErr = errors.New("connection reset")
		rep, _ := w.doctor(t)
		c := rep.check(t, "queue-trigger")
		if c.Status != checkError || !strings.Contains(c.Detail, "could not check: list event source mappings") || c.Fix != "" {
			t.Errorf("queue-trigger = %+v", c)
		}
	})
}

func TestDoctorMonitorHeartbeat(t *testing.T) {
	t.Run("no datapoint", func(t *testing.T) {
		w := newDoctorWorld(t)
		w.metrics.points = nil
		rep, _ := w.doctor(t)
		rep.expect(t, "monitor-heartbeat", checkFail,
			"no MonitorHealthy datapoint (namespace Geolocation, Pipeline=Geo) in the last 10m (2 schedule periods of 5m)",
			"MonitorSchedule rule is enabled")
	})
	t.Run("another pipeline only", func(t *testing.T) {
		w := newDoctorWorld(t)
		w.metrics.pipeline = "Other"
		rep, _ := w.doctor(t)
		rep.expect(t, "monitor-heartbeat", checkFail, "no MonitorHealthy datapoint", "")
	})
	t.Run("stale, and --monitor-period", func(t *testing.T) {
		w := newDoctorWorld(t)
		w.metrics.points = w.metrics.points[:1]
		w.metrics.points[0].Timestamp = aws.Time(time.Now().Add(-15 * time.Minute))
		rep, _ := w.doctor(t)
		rep.expect(t, "monitor-heartbeat", checkFail, "in the last 10m", "")
		// A 10-minute schedule: 15 minutes is within 2 periods.
		rep, _ = w.doctor(t, "--monitor-period", "10m")
		rep.expect(t, "monitor-heartbeat", checkPass, "within 2 schedule periods of 10m", "")
		// A daily schedule: the query stays within CloudWatch's 1440 datapoints.
		rep, _ = w.doctor(t, "--monitor-period", "24h")
		rep.expect(t, "monitor-heartbeat", checkPass, "within 2 schedule periods of 24h", "")
	})
	t.Run("latest unhealthy", func(t *testing.T) {
		w := newDoctorWorld(t)
		w.metrics.points[0].Minimum = aws.Float64(0)
		w.metrics.points[1].Minimum = aws.Float64(1)
		rep, _ := w.doctor(t)
		rep.expect(t, "monitor-heartbeat", checkFail, "the monitor's latest run, 3m ago", "read the monitor function's latest logs")
		if c := rep.check(t, "monitor-heartbeat"); !strings.Contains(c.Detail, "was unhealthy (MonitorHealthy 0)") {
			t.Errorf("detail %q", c.Detail)
		}
	})
}

func TestDoctorAlarmSubscription(t *testing.T) {
	t.Run("topic from the stack's resources", func(t *testing.T) {
		w := newDoctorWorld(t)
		delete(w.outputs, outputAlarmTopicArn)
		w.clients.stackResources = fakeStackResources{resources: []cfntypes.StackResourceSummary{
			{LogicalResourceId: aws.String("AlarmTopicKey1A2B"), ResourceType: aws.String("AWS::KMS::Key"), PhysicalResourceId: aws.String("key-1")},
			{LogicalResourceId: aws.String("AlarmTopicD01E77F9"), ResourceType: aws.String("AWS::SNS::Topic"), PhysicalResourceId: aws.String(docTopicArn)},
		}}
		rep, _ := w.doctor(t)
		rep.expect(t, "alarm-subscription", checkPass, "1 confirmed subscription(s)", "")
	})
	t.Run("topic unknown", func(t *testing.T) {
		w := newDoctorWorld(t)
		delete(w.outputs, outputAlarmTopicArn)
		w.clients.stackResources = fakeStackResources{}
		rep, _ := w.doctor(t)
		rep.expect(t, "alarm-subscription", checkError, "could not check: alarm topic unknown: the stack has no AlarmTopicArn output and it has 0 SNS topics", "")
	})
	t.Run("pending only", func(t *testing.T) {
		w := newDoctorWorld(t)
		w.topics.subs[docTopicArn] = w.topics.subs[docTopicArn][:1]
		rep, _ := w.doctor(t)
		rep.expect(t, "alarm-subscription", checkFail, "the alarm topic's 1 subscription(s) wait for confirmation: alarms reach nobody",
			"confirm from the message SNS sent to the endpoint")
	})
	t.Run("none", func(t *testing.T) {
		w := newDoctorWorld(t)
		w.topics.subs[docTopicArn] = nil
		rep, _ := w.doctor(t)
		rep.expect(t, "alarm-subscription", checkFail, "the alarm topic "+docTopicArn+" has no subscription",
			"aws sns subscribe --topic-arn "+docTopicArn+" --protocol email --notification-endpoint")
	})
}

func TestDoctorDeadLetterQueue(t *testing.T) {
	t.Run("waiting messages", func(t *testing.T) {
		w := newDoctorWorld(t)
		w.queues.attrs["https://sqs/dlq"]["ApproximateNumberOfMessages"] = "3"
		rep, _ := w.doctor(t)
		rep.expect(t, "dead-letter-queue", checkFail, "3 message(s) wait in the dead-letter queue",
			"aws sqs start-message-move-task --source-arn "+docDLQArn)
	})
	t.Run("unreadable", func(t *testing.T) {
		w := newDoctorWorld(t)
		delete(w.queues.attrs, "https://sqs/dlq")
		rep, _ := w.doctor(t)
		rep.expect(t, "dead-letter-queue", checkError, "could not check: queue attributes of https://sqs/dlq", "")
	})
}

func TestDoctorModelReady(t *testing.T) {
	configure := func(w *doctorWorld, id string) { w.functions.env[docFnArn][envvars.ModelID] = id }
	t.Run("configured and ready", func(t *testing.T) {
		w := newDoctorWorld(t)
		configure(w, geosim.ModelHighAccuracy)
		rep, _ := w.doctor(t)
		rep.expect(t, "model-ready", checkPass, "the configured model "+geosim.ModelHighAccuracy+" is ready", "")
	})
	t.Run("configured and down", func(t *testing.T) {
		w := newDoctorWorld(t)
		configure(w, geosim.ModelHighAccuracy)
		if err := w.sim.SetModelStatus(geosim.ModelHighAccuracy, geosim.StatusDown); err != nil {
			t.Fatal(err)
		}
		rep, _ := w.doctor(t)
		rep.expect(t, "model-ready", checkFail, "the configured model "+geosim.ModelHighAccuracy+" is down, not ready",
			"deploy with another modelId (geolocate models lists them)")
	})
	t.Run("configured and retired", func(t *testing.T) {
		w := newDoctorWorld(t)
		configure(w, geosim.ModelRetired)
		rep, _ := w.doctor(t)
		rep.expect(t, "model-ready", checkFail, "the configured model "+geosim.ModelRetired+" (the predictor's GEO_MODEL_ID) is not in the key's model list",
			"deploy with a listed modelId")
	})
	t.Run("none configured, none ready", func(t *testing.T) {
		w := newDoctorWorld(t)
		for _, m := range w.sim.Models() {
			if err := w.sim.SetModelStatus(m.ID, geosim.StatusDown); err != nil {
				t.Fatal(err)
			}
		}
		rep, _ := w.doctor(t)
		rep.expect(t, "model-ready", checkFail, "no model configured (the service's default), and none of the 4 listed models is ready", "wait for the service")
	})
}

func TestDoctorChecksAreIndependent(t *testing.T) {
	t.Run("unknown stack", func(t *testing.T) {
		w := newDoctorWorld(t)
		w.clients.stacks = fakeStacks{name: "Other"}
		rep, _ := w.doctor(t)
		for _, c := range rep.Checks {
			switch {
			case c.ID == "monitor-heartbeat":
				// Needs only the stack name.
				if c.Status != checkPass {
					t.Errorf("%s = %+v", c.ID, c)
				}
			case c.Status != checkError || !strings.Contains(c.Detail, "could not check: describe stack Geo"):
				t.Errorf("%s = %+v, want could not check", c.ID, c)
			}
		}
	})
	t.Run("several failures", func(t *testing.T) {
		w := newDoctorWorld(t)
		w.notifications.err = errors.New("timeout")
		w.metrics.err = errors.New("throttled")
		w.topics.subs = nil
		w.queues.attrs["https://sqs/dlq"]["ApproximateNumberOfMessages"] = "1"
		rep, r := w.doctor(t)
		want := map[string]string{
			"api-key": checkPass, "bucket-notification": checkError, "queue-trigger": checkPass, "monitor-heartbeat": checkError,
			"alarm-subscription": checkError, "dead-letter-queue": checkFail, "model-ready": checkPass,
			"bucket-region": checkPass,
		}
		for _, c := range rep.Checks {
			if c.Status != want[c.ID] {
				t.Errorf("%s = %+v, want %s", c.ID, c, want[c.ID])
			}
		}
		if r.code != exitError {
			t.Errorf("exit %d", r.code)
		}
	})
}
