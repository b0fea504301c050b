package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
	"github.com/geolocate-aws/geolocate/pkg/shared/resultevents"
	"github.com/geolocate-aws/geolocate/pkg/shared/s3keyfilter"
	"github.com/geolocate-aws/geolocate/pkg/shared/tableschema"
)

// smokeWorld is a deployed stack as the smoke check sees it: PutObject
// plays the pipeline (a record, then its result event to every rule of
// the results bus with a target), S3's EventBridge event goes to the
// default bus's rules, and SetAlarmState makes the topic count a delivery.
// Every resource the check creates is tracked, so a test can tell what it
// left behind.
type smokeWorld struct {
	mu sync.Mutex
	*doctorWorld
	mode string
	// eventBridgeKey is how S3's EventBridge event spells a key.
	eventBridgeKey func(string) string
	// noRecords: the pipeline never writes a record (uploads are lost).
	noRecords bool
	// failedDeliveries: the topic refuses CloudWatch's publish.
	failedDeliveries bool
	credits          int

	objects  map[string]string // key -> version id
	items    map[string]ledger.Record
	rules    map[string]string // name -> bus
	targets  map[string]string // rule -> queue ARN
	queues   map[string][]string
	policies map[string]string
	alarmSet bool
	puts     int
	versions int
}

const smokeBus = "geo-results"

func newSmokeWorld(t *testing.T, mode string) *smokeWorld {
	w := &smokeWorld{doctorWorld: newDoctorWorld(t), mode: mode, eventBridgeKey: func(k string) string { return k }, credits: 1,
		objects: map[string]string{}, items: map[string]ledger.Record{}, rules: map[string]string{}, targets: map[string]string{},
		queues: map[string][]string{}, policies: map[string]string{}}
	w.outputs["ResultEventsBusName"] = smokeBus
	prefix, suffix := "Photos 2024/", ".jpg"
	if mode == "s3" {
		w.notifications.queues["uploads"] = []s3types.QueueConfiguration{{QueueArn: aws.String(docQueueArn), Events: []s3types.Event{"s3:ObjectCreated:*"},
			Filter: &s3types.NotificationConfigurationFilter{Key: &s3types.S3KeyFilter{FilterRules: []s3types.FilterRule{
				{Name: "prefix", Value: aws.String(s3keyfilter.Encode(prefix))}, {Name: "suffix", Value: aws.String(suffix)}}}}}}
	} else {
		w.notifications.queues = nil
		w.notifications.eventBridge = map[string]bool{"uploads": true}
		w.rules["Geo-UploadRule"] = "default"
	}
	w.clients.tables = w
	useAWS(t, w.clients)
	saved := loadSmokeAWS
	loadSmokeAWS = func(context.Context, *cli) (*smokeClients, error) {
		return &smokeClients{objects: w, notifications: w.notifications, records: w, rules: w, queues: w, alarms: w}, nil
	}
	t.Cleanup(func() { loadSmokeAWS = saved })
	return w
}

// smoke runs geolocate doctor --smoke with args.
func (w *smokeWorld) smoke(t *testing.T, args ...string) result {
	t.Helper()
	r := runCLI(t, w.env, w.secrets, append([]string{"doctor", "--stack", "Geo", "--smoke", "--timeout", "1m"}, args...)...)
	assertNoKey(t, r)
	return r
}

// leftBehind lists what the check created and did not remove.
func (w *smokeWorld) leftBehind() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var left []string
	for k := range w.objects {
		left = append(left, "object "+k)
	}
	for k := range w.items {
		left = append(left, "record "+k)
	}
	for name := range w.rules {
		if name != "Geo-UploadRule" {
			left = append(left, "rule "+name)
		}
	}
	for q := range w.queues {
		left = append(left, "queue "+q)
	}
	return left
}

func (w *smokeWorld) PutObject(_ context.Context, in *s3.PutObjectInput, _ ...func(*s3.Options)) (*s3.PutObjectOutput, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	body, _ := io.ReadAll(in.Body)
	w.puts++
	w.versions++
	key, version := aws.ToString(in.Key), fmt.Sprintf("v%d", w.versions)
	w.objects[key] = version
	etag := fmt.Sprintf(`"%x"`, len(body))
	ref := ledger.ObjectRef{Bucket: aws.ToString(in.Bucket), Key: key, VersionID: version}
	if w.mode == "eventbridge" {
		w.deliver("default", "aws.s3", "Object Created", map[string]any{"bucket": map[string]string{"name": *in.Bucket}, "object": map[string]any{"key": w.eventBridgeKey(key)}})
	}
	if w.noRecords {
		return &s3.PutObjectOutput{VersionId: aws.String(version), ETag: aws.String(etag)}, nil
	}
	status, credits := resultevents.StatusSucceeded, w.credits
	if aws.ToString(in.ContentType) != "image/jpeg" {
		status, credits = resultevents.StatusRejected, 0
	}
	w.items[ref.PartitionKey()+"|"+ref.SortKey()] = ledger.Record{PK: ref.PartitionKey(), SK: ref.SortKey(), Bucket: ref.Bucket, Key: key, VersionID: version,
		Status: status, EventType: resultevents.DetailType(status), CreditsConsumed: credits, UpdatedAt: time.Now().Add(1500 * time.Millisecond)}
	w.deliver(smokeBus, resultevents.Source, resultevents.DetailType(status), resultevents.Detail{Bucket: ref.Bucket, Key: key, VersionID: version, Status: status})
	return &s3.PutObjectOutput{VersionId: aws.String(version), ETag: aws.String(etag)}, nil
}

// deliver sends an event to the queue of every targeted rule of bus whose
// source matches (the fake's patterns are the check's own: by source).
func (w *smokeWorld) deliver(bus, source, detailType string, detail any) {
	body, _ := json.Marshal(map[string]any{"version": "0", "source": source, "detail-type": detailType, "detail": detail})
	for rule, ruleBus := range w.rules {
		queue, ok := w.targets[rule]
		if ruleBus != bus || !ok || (source == "aws.s3") != strings.HasSuffix(rule, "-s3") {
			continue
		}
		w.queues[queue] = append(w.queues[queue], string(body))
	}
}

func (w *smokeWorld) DeleteObject(_ context.Context, in *s3.DeleteObjectInput, _ ...func(*s3.Options)) (*s3.DeleteObjectOutput, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.objects[aws.ToString(in.Key)] != aws.ToString(in.VersionId) {
		return nil, errors.New("no such version")
	}
	delete(w.objects, aws.ToString(in.Key))
	return &s3.DeleteObjectOutput{}, nil
}

func (w *smokeWorld) itemKey(key map[string]ddbtypes.AttributeValue) string {
	return key[tableschema.PartitionKey].(*ddbtypes.AttributeValueMemberS).Value + "|" + key[tableschema.SortKey].(*ddbtypes.AttributeValueMemberS).Value
}

func (w *smokeWorld) GetItem(_ context.Context, in *dynamodb.GetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	rec, ok := w.items[w.itemKey(in.Key)]
	if !ok {
		return &dynamodb.GetItemOutput{}, nil
	}
	item, err := attributevalue.MarshalMap(rec)
	return &dynamodb.GetItemOutput{Item: item}, err
}

func (w *smokeWorld) DeleteItem(_ context.Context, in *dynamodb.DeleteItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.items, w.itemKey(in.Key))
	return &dynamodb.DeleteItemOutput{}, nil
}

// The ledger's other calls: the smoke check only reads records.
func (w *smokeWorld) PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	return nil, errors.New("the smoke check writes no record")
}
func (w *smokeWorld) UpdateItem(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	return nil, errors.New("the smoke check writes no record")
}
func (w *smokeWorld) Query(context.Context, *dynamodb.QueryInput, ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	return nil, errors.New("the smoke check queries nothing")
}
func (w *smokeWorld) TransactWriteItems(context.Context, *dynamodb.TransactWriteItemsInput, ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	return nil, errors.New("the smoke check writes no record")
}

func (w *smokeWorld) ListRuleNamesByTarget(_ context.Context, in *eventbridge.ListRuleNamesByTargetInput, _ ...func(*eventbridge.Options)) (*eventbridge.ListRuleNamesByTargetOutput, error) {
	if aws.ToString(in.TargetArn) == docQueueArn && w.mode == "eventbridge" {
		return &eventbridge.ListRuleNamesByTargetOutput{RuleNames: []string{"Geo-UploadRule"}}, nil
	}
	return &eventbridge.ListRuleNamesByTargetOutput{}, nil
}

func (w *smokeWorld) DescribeRule(_ context.Context, in *eventbridge.DescribeRuleInput, _ ...func(*eventbridge.Options)) (*eventbridge.DescribeRuleOutput, error) {
	if aws.ToString(in.Name) != "Geo-UploadRule" {
		return nil, errors.New("no such rule")
	}
	// As infra's uploadKeyMatcher writes it: raw reading first.
	pattern := `{"source":["aws.s3"],"detail-type":["Object Created"],"detail":{"bucket":{"name":["uploads"]},"object":{"key":[{"wildcard":"Photos 2024/*.jpg"},{"wildcard":"Photos+2024/*.jpg"}]}}}`
	return &eventbridge.DescribeRuleOutput{Name: in.Name, EventPattern: aws.String(pattern)}, nil
}

func (w *smokeWorld) PutRule(_ context.Context, in *eventbridge.PutRuleInput, _ ...func(*eventbridge.Options)) (*eventbridge.PutRuleOutput, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !json.Valid([]byte(aws.ToString(in.EventPattern))) {
		return nil, errors.New("InvalidEventPatternException")
	}
	w.rules[aws.ToString(in.Name)] = aws.ToString(in.EventBusName)
	return &eventbridge.PutRuleOutput{RuleArn: aws.String("arn:aws:events:us-east-1:000000000000:rule/" + aws.ToString(in.Name))}, nil
}

func (w *smokeWorld) PutTargets(_ context.Context, in *eventbridge.PutTargetsInput, _ ...func(*eventbridge.Options)) (*eventbridge.PutTargetsOutput, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	arn := aws.ToString(in.Targets[0].Arn)
	if !strings.Contains(w.policies[arn], "rule/"+aws.ToString(in.Rule)) {
		return nil, fmt.Errorf("the queue's policy does not let rule %s send", aws.ToString(in.Rule))
	}
	w.targets[aws.ToString(in.Rule)] = arn
	return &eventbridge.PutTargetsOutput{}, nil
}

func (w *smokeWorld) RemoveTargets(_ context.Context, in *eventbridge.RemoveTargetsInput, _ ...func(*eventbridge.Options)) (*eventbridge.RemoveTargetsOutput, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.targets, aws.ToString(in.Rule))
	return &eventbridge.RemoveTargetsOutput{}, nil
}

func (w *smokeWorld) DeleteRule(_ context.Context, in *eventbridge.DeleteRuleInput, _ ...func(*eventbridge.Options)) (*eventbridge.DeleteRuleOutput, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.targets[aws.ToString(in.Name)]; ok {
		return nil, errors.New("ValidationException: Rule can't be deleted since it has targets")
	}
	delete(w.rules, aws.ToString(in.Name))
	return &eventbridge.DeleteRuleOutput{}, nil
}

// Queue URLs and ARNs of the fake are the same string.
func (w *smokeWorld) CreateQueue(_ context.Context, in *sqs.CreateQueueInput, _ ...func(*sqs.Options)) (*sqs.CreateQueueOutput, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	arn := "arn:aws:sqs:us-east-1:000000000000:" + aws.ToString(in.QueueName)
	w.queues[arn] = nil
	return &sqs.CreateQueueOutput{QueueUrl: aws.String(arn)}, nil
}

func (w *smokeWorld) GetQueueAttributes(ctx context.Context, in *sqs.GetQueueAttributesInput, optFns ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error) {
	if strings.Contains(aws.ToString(in.QueueUrl), smokeResourcePrefix) {
		return &sqs.GetQueueAttributesOutput{Attributes: map[string]string{"QueueArn": aws.ToString(in.QueueUrl)}}, nil
	}
	return w.doctorWorld.queues.GetQueueAttributes(ctx, in, optFns...)
}

func (w *smokeWorld) SetQueueAttributes(_ context.Context, in *sqs.SetQueueAttributesInput, _ ...func(*sqs.Options)) (*sqs.SetQueueAttributesOutput, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.policies[aws.ToString(in.QueueUrl)] = in.Attributes[string(sqstypes.QueueAttributeNamePolicy)]
	return &sqs.SetQueueAttributesOutput{}, nil
}

func (w *smokeWorld) ReceiveMessage(_ context.Context, in *sqs.ReceiveMessageInput, _ ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	url := aws.ToString(in.QueueUrl)
	var out []sqstypes.Message
	for _, body := range w.queues[url] {
		out = append(out, sqstypes.Message{Body: aws.String(body)})
	}
	w.queues[url] = nil
	return &sqs.ReceiveMessageOutput{Messages: out}, nil
}

func (w *smokeWorld) DeleteQueue(_ context.Context, in *sqs.DeleteQueueInput, _ ...func(*sqs.Options)) (*sqs.DeleteQueueOutput, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.queues, aws.ToString(in.QueueUrl))
	return &sqs.DeleteQueueOutput{}, nil
}

func (w *smokeWorld) DescribeAlarms(_ context.Context, in *cloudwatch.DescribeAlarmsInput, _ ...func(*cloudwatch.Options)) (*cloudwatch.DescribeAlarmsOutput, error) {
	if len(in.AlarmNames) == 1 && in.AlarmNames[0] == "Geo/"+smokeAlarmID {
		return &cloudwatch.DescribeAlarmsOutput{MetricAlarms: []cwtypes.MetricAlarm{{AlarmName: aws.String(in.AlarmNames[0])}}}, nil
	}
	return &cloudwatch.DescribeAlarmsOutput{}, nil
}

func (w *smokeWorld) SetAlarmState(_ context.Context, in *cloudwatch.SetAlarmStateInput, _ ...func(*cloudwatch.Options)) (*cloudwatch.SetAlarmStateOutput, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if in.StateValue != cwtypes.StateValueAlarm {
		return nil, errors.New("the check only sets ALARM")
	}
	w.alarmSet = true
	return &cloudwatch.SetAlarmStateOutput{}, nil
}

func (w *smokeWorld) GetMetricStatistics(_ context.Context, in *cloudwatch.GetMetricStatisticsInput, _ ...func(*cloudwatch.Options)) (*cloudwatch.GetMetricStatisticsOutput, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0.0
	switch aws.ToString(in.MetricName) {
	case "NumberOfNotificationsDelivered":
		if w.alarmSet && !w.failedDeliveries && aws.ToString(in.Dimensions[0].Value) == "Geo-AlarmTopic" {
			n = 1
		}
	case "NumberOfNotificationsFailed":
		if w.alarmSet && w.failedDeliveries {
			n = 1
		}
	case "TriggeredRules":
		if strings.HasSuffix(aws.ToString(in.Dimensions[0].Value), "-quiet") {
			n = 3
		}
	}
	return &cloudwatch.GetMetricStatisticsOutput{Datapoints: []cwtypes.Datapoint{{Sum: aws.Float64(n)}}}, nil
}

// reading is the report line of an open reading.
func reading(t *testing.T, out, id string) string {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == id {
			return line
		}
	}
	t.Fatalf("no line for reading %s in\n%s", id, out)
	return ""
}

func TestSmokeProvesTheStackAndLeavesNothing(t *testing.T) {
	for _, mode := range []string{"s3", "eventbridge"} {
		t.Run(mode, func(t *testing.T) {
			w := newSmokeWorld(t, mode)
			w.eventBridgeKey = s3keyfilter.Encode
			r := w.smoke(t, "--yes")
			if r.code != exitOK {
				t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			for _, want := range []string{
				`PASS   record of photo        "Photos 2024/geolocate-smoke-`,
				`photo.jpg" succeeded, 1 credits, upload to record`,
				`a b+c%20d é.jpg" succeeded, 1 credits`,
				`notes.jpg" rejected, 0 credits`,
				`"Photo Geolocated", valid JSON naming its key exactly`,
				`"Photo Rejected", valid JSON naming its key exactly`,
				"alarm Geo/MonitorHeartbeat set to ALARM; topic Geo-AlarmTopic: 1 delivered, 0 failed",
				"notifications=" + mode + `, uploadPrefix "Photos 2024/", uploadSuffix ".jpg"`,
				"geolocate ", // the version line, for a bug report
			} {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("report lacks %q:\n%s", want, r.stdout)
				}
			}
			if !strings.Contains(reading(t, r.stdout, "kms-cloudwatch-publish"), "settled") ||
				!strings.Contains(reading(t, r.stdout, "dynamic-detail-type"), `settled             the event of "Photos 2024/`) ||
				!strings.Contains(reading(t, r.stdout, "exists-false-no-old-image"), "settled") ||
				!strings.Contains(reading(t, r.stdout, "triggered-rules"), "without a target, counted TriggeredRules 3") ||
				!strings.Contains(reading(t, r.stdout, "mapping-receives-count"), "still open") {
				t.Errorf("readings:\n%s", r.stdout)
			}
			if mode == "s3" {
				if line := reading(t, r.stdout, "s3-filter-encoding"); !strings.Contains(line, `settled             the encoded filter (prefix "Photos+2024/"`) {
					t.Errorf("s3 filter reading: %s", line)
				}
			} else if line := reading(t, r.stdout, "eventbridge-key-encoding"); !strings.Contains(line, `URL-encoded: "Photos+2024/geolocate-smoke-`) {
				t.Errorf("EventBridge key reading: %s", line)
			}
			if left := w.leftBehind(); len(left) > 0 {
				t.Errorf("left behind: %v", left)
			}
			if w.puts != 3 {
				t.Errorf("%d uploads, want 3", w.puts)
			}
		})
	}
}

// S3's EventBridge event carrying the key as stored settles the reading
// the other way.
func TestSmokeEventBridgeKeyAsStored(t *testing.T) {
	w := newSmokeWorld(t, "eventbridge")
	r := w.smoke(t, "--yes")
	if line := reading(t, r.stdout, "eventbridge-key-encoding"); !strings.Contains(line, `carries the key as stored: "Photos 2024/geolocate-smoke-`) {
		t.Errorf("EventBridge key reading: %s\n%s", line, r.stdout)
	}
}

func TestSmokeAsksFirst(t *testing.T) {
	w := newSmokeWorld(t, "s3")
	var out bytes.Buffer
	d := &doctor{c: &cli{stdout: &out, stderr: io.Discard, getenv: func(string) string { return "" }}, clients: w.clients}
	d.loc.stack = "Geo"
	err := runSmoke(context.Background(), d, smokeOptions{maxCredits: 2, timeout: time.Minute, stdin: strings.NewReader("n\n"), now: time.Now, sleep: sleepCtx})
	if err == nil || !strings.Contains(err.Error(), "pass --yes") {
		t.Errorf("err = %v, want a refusal naming --yes", err)
	}
	if !strings.Contains(out.String(), "2 paid predictions") || !strings.Contains(out.String(), "Go on? [y/N]") {
		t.Errorf("the cost was not stated before asking:\n%s", out.String())
	}
	if w.puts != 0 || len(w.leftBehind()) != 0 {
		t.Errorf("%d uploads, left %v: nothing may happen before the answer", w.puts, w.leftBehind())
	}
	if r := w.smoke(t, "--yes", "--max-credits", "1"); r.code != exitUsage || !strings.Contains(r.stderr, "--max-credits 1") {
		t.Errorf("--max-credits 1: exit %d, %s", r.code, r.stderr)
	}
}

// Lost uploads: the check waits until its deadline on its own clock, fails
// the steps, and still removes everything.
func TestSmokeLostUploadsFailAndCleanUp(t *testing.T) {
	w := newSmokeWorld(t, "s3")
	w.noRecords, w.failedDeliveries = true, true
	var out bytes.Buffer
	d := &doctor{c: &cli{stdout: &out, stderr: io.Discard, getenv: func(string) string { return "" }}, clients: w.clients}
	d.loc.stack = "Geo"
	clock := time.Date(2026, 12, 2, 5, 0, 0, 0, time.UTC)
	slept := time.Duration(0)
	opts := smokeOptions{yes: true, maxCredits: 2, timeout: 2 * time.Minute, now: func() time.Time { return clock },
		sleep: func(_ context.Context, d time.Duration) error { clock = clock.Add(d); slept += d; return nil }}
	if err := runSmoke(context.Background(), d, opts); !errors.Is(err, errReported) {
		t.Fatalf("err = %v, want errReported\n%s", err, out.String())
	}
	for _, want := range []string{`FAIL   record of photo`, "within 2m0s of its upload", "topic Geo-AlarmTopic: 0 delivered, 1 failed"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	if line := reading(t, out.String(), "kms-cloudwatch-publish"); !strings.Contains(line, "NOT as the stack assumes") {
		t.Errorf("kms reading: %s", line)
	}
	if slept < 2*time.Minute || slept > 2*time.Minute+smokePoll {
		t.Errorf("waited %s on the check's clock, want its 2m timeout", slept)
	}
	if left := w.leftBehind(); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// With the local rig's export line every reading is what the rig assumes.
func TestSmokeLocallyAssumesEveryReading(t *testing.T) {
	w := newSmokeWorld(t, "s3")
	var out bytes.Buffer
	env := map[string]string{envAccessKeyID: envvars.LocalRigAccessKeyID}
	d := &doctor{c: &cli{stdout: &out, stderr: io.Discard, getenv: func(k string) string { return env[k] }}, clients: w.clients}
	d.loc.stack = "Geo"
	if err := runSmoke(context.Background(), d, smokeOptions{yes: true, maxCredits: 2, timeout: time.Minute, now: time.Now, sleep: sleepCtx}); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, rd := range openReadings {
		if line := reading(t, out.String(), rd.id); !strings.Contains(line, "assumed by the rig") || strings.Contains(line, "settled") {
			t.Errorf("locally: %s", line)
		}
	}
}
