package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
	"github.com/geolocate-aws/geolocate/pkg/shared/resultevents"
	"github.com/geolocate-aws/geolocate/pkg/shared/s3keyfilter"
	"github.com/geolocate-aws/geolocate/pkg/shared/tableschema"
)

// geolocate doctor --smoke: after a deployment, the pipeline proven end to
// end on the account, at a cost stated before anything is spent. It
// uploads a generated photo, one under a key S3 encodes (a space, "+",
// "%", non-ASCII) and a text file the predictor rejects without a call;
// follows each to its record; receives their result events through a
// temporary rule and queue; sets one alarm to ALARM and reads the topic's
// delivery metrics; and prints, for each open reading of the docs, whether
// what it saw settles it. Everything it creates is removed by deferred
// cleanup, whatever step fails.

// The AWS APIs the smoke check uses besides doctor's, narrowed so tests
// can fake them.
type (
	smokeObjectAPI interface {
		PutObject(ctx context.Context, in *s3.PutObjectInput, optFns ...func(*s3.Options)) (*s3.PutObjectOutput, error)
		DeleteObject(ctx context.Context, in *s3.DeleteObjectInput, optFns ...func(*s3.Options)) (*s3.DeleteObjectOutput, error)
	}
	smokeRecordAPI interface {
		DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
	}
	smokeRuleAPI interface {
		ListRuleNamesByTarget(ctx context.Context, in *eventbridge.ListRuleNamesByTargetInput, optFns ...func(*eventbridge.Options)) (*eventbridge.ListRuleNamesByTargetOutput, error)
		DescribeRule(ctx context.Context, in *eventbridge.DescribeRuleInput, optFns ...func(*eventbridge.Options)) (*eventbridge.DescribeRuleOutput, error)
		PutRule(ctx context.Context, in *eventbridge.PutRuleInput, optFns ...func(*eventbridge.Options)) (*eventbridge.PutRuleOutput, error)
		PutTargets(ctx context.Context, in *eventbridge.PutTargetsInput, optFns ...func(*eventbridge.Options)) (*eventbridge.PutTargetsOutput, error)
		RemoveTargets(ctx context.Context, in *eventbridge.RemoveTargetsInput, optFns ...func(*eventbridge.Options)) (*eventbridge.RemoveTargetsOutput, error)
		DeleteRule(ctx context.Context, in *eventbridge.DeleteRuleInput, optFns ...func(*eventbridge.Options)) (*eventbridge.DeleteRuleOutput, error)
	}
	smokeQueueAPI interface {
		CreateQueue(ctx context.Context, in *sqs.CreateQueueInput, optFns ...func(*sqs.Options)) (*sqs.CreateQueueOutput, error)
		GetQueueAttributes(ctx context.Context, in *sqs.GetQueueAttributesInput, optFns ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error)
		SetQueueAttributes(ctx context.Context, in *sqs.SetQueueAttributesInput, optFns ...func(*sqs.Options)) (*sqs.SetQueueAttributesOutput, error)
		ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, optFns ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
		DeleteQueue(ctx context.Context, in *sqs.DeleteQueueInput, optFns ...func(*sqs.Options)) (*sqs.DeleteQueueOutput, error)
	}
	smokeAlarmAPI interface {
		DescribeAlarms(ctx context.Context, in *cloudwatch.DescribeAlarmsInput, optFns ...func(*cloudwatch.Options)) (*cloudwatch.DescribeAlarmsOutput, error)
		SetAlarmState(ctx context.Context, in *cloudwatch.SetAlarmStateInput, optFns ...func(*cloudwatch.Options)) (*cloudwatch.SetAlarmStateOutput, error)
		GetMetricStatistics(ctx context.Context, in *cloudwatch.GetMetricStatisticsInput, optFns ...func(*cloudwatch.Options)) (*cloudwatch.GetMetricStatisticsOutput, error)
	}
)

// smokeClients are the clients of one smoke check.
type smokeClients struct {
	objects       smokeObjectAPI
	notifications bucketNotificationAPI
	records       smokeRecordAPI
	rules         smokeRuleAPI
	queues        smokeQueueAPI
	alarms        smokeAlarmAPI
}

// loadSmokeAWS builds the smoke check's clients; tests replace it.
var loadSmokeAWS = func(ctx context.Context, c *cli) (*smokeClients, error) {
	cfg, err := loadAWSConfig(ctx, c.getenv)
	if err != nil {
		return nil, err
	}
	objects := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = c.getenv("AWS_ENDPOINT_URL_S3") != "" })
	return &smokeClients{
		objects:       objects,
		notifications: objects,
		records:       dynamodb.NewFromConfig(cfg),
		rules:         eventbridge.NewFromConfig(cfg),
		queues:        sqs.NewFromConfig(cfg),
		alarms:        cloudwatch.NewFromConfig(cfg),
	}, nil
}

// smokePermissions are the IAM actions the smoke check calls besides
// doctor's; doctor --help and docs/cli.md list them.
var smokePermissions = [][2]string{
	{"s3:PutObject", "the three test uploads, under the stack's prefix"},
	{"s3:DeleteObjectVersion", "removing them (by version: no delete marker is left)"},
	{"dynamodb:GetItem", "following each upload to its record"},
	{"dynamodb:DeleteItem", "removing the three records"},
	{"events:ListRuleNamesByTarget, events:DescribeRule", "with notifications=eventbridge, the upload rule's prefix and suffix"},
	{"events:PutRule, events:PutTargets", "the temporary rules (geolocate-smoke-*) on the results bus and, with notifications=eventbridge, the default bus"},
	{"events:RemoveTargets, events:DeleteRule", "removing them"},
	{"sqs:CreateQueue, sqs:GetQueueAttributes, sqs:SetQueueAttributes, sqs:ReceiveMessage, sqs:DeleteQueue", "the temporary queue (geolocate-smoke-*) the rules deliver to"},
	{"cloudwatch:DescribeAlarms, cloudwatch:SetAlarmState", "setting the stack's " + smokeAlarmID + " alarm to ALARM"},
	{"cloudwatch:GetMetricStatistics", "the alarm topic's NumberOfNotificationsDelivered and NumberOfNotificationsFailed, and the rules' TriggeredRules"},
	{"kms:GenerateDataKey, kms:Decrypt", "only when the bucket or the table uses a customer managed key"},
}

// Smoke check defaults and bounds.
const (
	defaultSmokeMaxCredits = 2
	defaultSmokeTimeout    = 10 * time.Minute
	// smokePaidUploads are the uploads that call the service (the text
	// file is rejected before any call).
	smokePaidUploads = 2
	// smokePoll is how often records and metrics are read again.
	smokePoll = 3 * time.Second
	// smokeReceiveWait is one long poll of the temporary queue (SQS's
	// maximum is 20 s).
	smokeReceiveWait = 10
	// smokeAlarmID is the alarm set to ALARM: MonitorHeartbeat pages on
	// a silent monitor and clears itself at the next evaluation of a
	// healthy one, so a false ALARM costs one notification and no state.
	smokeAlarmID = "MonitorHeartbeat"
	// smokeResourcePrefix names everything the check creates, so a run
	// killed before its cleanup leaves resources anyone can find.
	smokeResourcePrefix = "geolocate-smoke-"
)

// smokeOptions are the flags of one smoke check.
type smokeOptions struct {
	yes        bool
	maxCredits int
	timeout    time.Duration
	stdin      io.Reader
	// now is the one clock of the check; sleep waits on it (tests advance
	// a fake one).
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error
}

// smokeUpload is one test object and what became of it.
type smokeUpload struct {
	name, key   string
	body        []byte
	contentType string
	paid        bool   // the predictor calls the service for it
	wantStatus  string // "" for any final status

	versionID, etag string
	uploaded        time.Time
	record          *ledger.Record
	recordSeen      time.Time
	event           *smokeEvent
}

// smokeEvent is a result event as the temporary queue received it.
type smokeEvent struct {
	detailType string
	detail     resultevents.Detail
	raw        string
}

// smokeRun is one smoke check's state; cleanup undoes what it created.
type smokeRun struct {
	d       *doctor
	clients *smokeClients
	opts    smokeOptions
	out     io.Writer
	local   bool // the local rig's export line: readings are assumed, never settled
	id      string

	bucket, table, busName, topicArn string
	// inbox is the temporary queue the rules deliver to.
	inbox                string
	mode, prefix, suffix string

	uploads []*smokeUpload
	encoded *smokeUpload // the upload under the key S3 encodes
	// s3Key is the object key S3's own EventBridge event carried, when
	// the bucket sends events to EventBridge; "" when none arrived.
	s3Key       string
	resultsRule string
	s3Rule      string
	quietRule   string // a rule without a target, for TriggeredRules
	alarm       string
	alarmAt     time.Time
	delivered   float64
	failed      float64
	triggered   float64

	steps    []checkResult
	cleanups []func(ctx context.Context) string
}

// runSmoke runs the smoke check against d's stack and prints its report.
func runSmoke(ctx context.Context, d *doctor, opts smokeOptions) error {
	if opts.maxCredits < smokePaidUploads {
		return usageError{fmt.Errorf("--max-credits %d: the smoke check makes %d paid predictions, so at least %d", opts.maxCredits, smokePaidUploads, smokePaidUploads)}
	}
	if opts.timeout < time.Minute {
		return usageError{fmt.Errorf("--timeout %s: want at least 1m", opts.timeout)}
	}
	clients, err := loadSmokeAWS(ctx, d.c)
	if err != nil {
		return err
	}
	r := &smokeRun{d: d, clients: clients, opts: opts, out: d.c.stdout, id: smokeID(),
		local: d.c.getenv(envAccessKeyID) == envvars.LocalRigAccessKeyID}
	if err := r.locate(ctx); err != nil {
		return err
	}
	if err := r.confirm(); err != nil {
		return err
	}
	// Cleanup runs on every exit, also when the context is cancelled
	// (Ctrl-C): it gets a context of its own.
	defer r.cleanup()
	r.run(ctx)
	return r.report()
}

// smokeID is a short random id naming this run's objects and resources.
func smokeID() string {
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	return strings.ToLower(base32.StdEncoding.EncodeToString(b))
}

// locate reads the stack's outputs and how uploads reach its queue.
func (r *smokeRun) locate(ctx context.Context) error {
	out := func(key string) (string, error) { return r.d.loc.output(ctx, r.d.clients, key) }
	var err error
	if r.bucket, err = out(outputBucketName); err != nil {
		return err
	}
	if r.table, err = out(outputTableName); err != nil {
		return err
	}
	if r.topicArn, err = out(outputAlarmTopicArn); err != nil {
		return err
	}
	// Without the result events the stack has no bus output: the events
	// step then says so.
	r.busName, _ = out("ResultEventsBusName")
	queueArn, err := r.d.uploadQueueArn(ctx)
	if err != nil {
		return err
	}
	conf, err := r.clients.notifications.GetBucketNotificationConfiguration(ctx, &s3.GetBucketNotificationConfigurationInput{Bucket: aws.String(r.bucket)})
	if err != nil {
		return fmt.Errorf("notification configuration of bucket %s: %w", r.bucket, err)
	}
	for _, q := range conf.QueueConfigurations {
		if aws.ToString(q.QueueArn) == queueArn {
			r.mode = "s3"
			p, s := filterRules(q.Filter)
			// S3 holds the filter URL-encoded (s3keyfilter.Encode).
			if r.prefix, err = decodeFilter(p); err == nil {
				r.suffix, err = decodeFilter(s)
			}
			return err
		}
	}
	if conf.EventBridgeConfiguration == nil {
		return fmt.Errorf("bucket %s neither notifies queue %s nor sends its events to EventBridge: run geolocate doctor first", r.bucket, queueArn)
	}
	r.mode = "eventbridge"
	r.prefix, r.suffix, err = r.uploadRuleFilter(ctx, queueArn)
	return err
}

// decodeFilter is a notification filter value as a key fragment.
func decodeFilter(v string) (string, error) {
	s, err := url.QueryUnescape(v)
	if err != nil {
		return "", fmt.Errorf("notification filter %q: %w", v, err)
	}
	return s, nil
}

// uploadRuleFilter reads the raw prefix and suffix of the stack's upload
// rule: its key's first matcher (infra's uploadKeyMatcher writes the raw
// reading first).
func (r *smokeRun) uploadRuleFilter(ctx context.Context, queueArn string) (prefix, suffix string, err error) {
	names, err := r.clients.rules.ListRuleNamesByTarget(ctx, &eventbridge.ListRuleNamesByTargetInput{TargetArn: aws.String(queueArn)})
	if err != nil {
		return "", "", fmt.Errorf("rules sending to %s: %w", queueArn, err)
	}
	for _, name := range names.RuleNames {
		rule, err := r.clients.rules.DescribeRule(ctx, &eventbridge.DescribeRuleInput{Name: aws.String(name)})
		if err != nil {
			return "", "", fmt.Errorf("rule %s: %w", name, err)
		}
		var pattern struct {
			Source []string `json:"source"`
			Detail struct {
				Object struct {
					Key []map[string]string `json:"key"`
				} `json:"object"`
			} `json:"detail"`
		}
		if json.Unmarshal([]byte(aws.ToString(rule.EventPattern)), &pattern) != nil || len(pattern.Source) != 1 || pattern.Source[0] != "aws.s3" {
			continue
		}
		if len(pattern.Detail.Object.Key) == 0 {
			return "", "", nil
		}
		m := pattern.Detail.Object.Key[0]
		if w, ok := m["wildcard"]; ok {
			prefix, suffix = splitWildcard(w)
			return prefix, suffix, nil
		}
		return m["prefix"], m["suffix"], nil
	}
	return "", "", fmt.Errorf("no rule sends the bucket's uploads to %s: run geolocate doctor first", queueArn)
}

// splitWildcard splits "prefix*suffix" at its unescaped "*", unescaping
// "\*" and "\\".
func splitWildcard(w string) (prefix, suffix string) {
	var parts [2]strings.Builder
	part := 0
	for i := 0; i < len(w); i++ {
		switch {
		case w[i] == '\\' && i+1 < len(w):
			i++
			parts[part].WriteByte(w[i])
		case w[i] == '*' && part == 0:
			part = 1
		default:
			parts[part].WriteByte(w[i])
		}
	}
	return parts[0].String(), parts[1].String()
}

// confirm states what the check costs and creates, and asks unless --yes.
func (r *smokeRun) confirm() error {
	fmt.Fprintf(r.out, "geolocate doctor --smoke on stack %s: %d paid predictions (one service call each; the check fails if the records charge more than %d credits in all), 3 test objects under s3://%s/%s, a temporary queue and rules named %s%s, and alarm %s set to ALARM once (one notification to the alarm topic's subscribers). Everything is removed at the end.\n",
		r.d.loc.stack, smokePaidUploads, r.opts.maxCredits, r.bucket, r.prefix, smokeResourcePrefix, r.id, alarmNameOf(r.d.loc.stack))
	if r.opts.yes {
		return nil
	}
	fmt.Fprint(r.out, "Go on? [y/N] ")
	line, _ := readLine(r.opts.stdin)
	if answer := strings.ToLower(strings.TrimSpace(line)); answer != "y" && answer != "yes" {
		return errors.New("smoke check not started: answer y, or pass --yes")
	}
	return nil
}

// readLine reads up to a newline, without buffering past it.
func readLine(in io.Reader) (string, error) {
	if in == nil {
		return "", io.EOF
	}
	var b strings.Builder
	buf := make([]byte, 1)
	for {
		n, err := in.Read(buf)
		if n == 1 {
			if buf[0] == '\n' {
				return b.String(), nil
			}
			b.WriteByte(buf[0])
		}
		if err != nil {
			return b.String(), err
		}
	}
}

// alarmNameOf is the name infra gives the smoke check's alarm.
func alarmNameOf(stack string) string { return stack + "/" + smokeAlarmID }

// step records one line of the report.
func (r *smokeRun) step(title string, res checkResult) {
	res.Title = title
	res.Detail, res.Fix = r.d.scrub(res.Detail), r.d.scrub(res.Fix)
	r.steps = append(r.steps, res)
}

// defer registers an undo step; cleanup runs them last first.
func (r *smokeRun) onCleanup(f func(ctx context.Context) string) { r.cleanups = append(r.cleanups, f) }

// run makes the steps in order; a step that cannot run says so and the
// next ones that do not depend on it still run.
func (r *smokeRun) run(ctx context.Context) {
	deadline := r.opts.now().Add(r.opts.timeout)
	haveQueue := r.listen(ctx)
	r.upload(ctx)
	// The alarm is set before the uploads are followed: SNS's metrics
	// take minutes to show a delivery, which the records' wait overlaps.
	alarmSet := r.ring(ctx)
	r.follow(ctx, deadline)
	if haveQueue {
		r.receive(ctx, deadline)
	}
	if alarmSet {
		r.readDeliveries(ctx, deadline)
	}
}

// testKeys are the three uploads under the stack's prefix and suffix (a
// suffix of its own for the photos when the stack has none).
func (r *smokeRun) testUploads() ([]*smokeUpload, error) {
	suffix := r.suffix
	if suffix == "" {
		suffix = ".jpg"
	}
	photo := func() ([]byte, error) {
		// Noise, so no earlier answer for the same content is reused.
		img := image.NewRGBA(image.Rect(0, 0, 64, 48))
		noise := make([]byte, len(img.Pix))
		_, _ = rand.Read(noise)
		for i := 0; i < len(noise); i += 4 {
			img.Set((i/4)%64, (i/4)/64, color.RGBA{noise[i], noise[i+1], noise[i+2], 255})
		}
		var b bytes.Buffer
		err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 85})
		return b.Bytes(), err
	}
	dir := r.prefix + smokeResourcePrefix + r.id + "/"
	var out []*smokeUpload
	for _, u := range []struct{ name, key string }{
		{"photo", dir + "photo" + suffix},
		{"encoded key", dir + "a b+c%20d é" + suffix},
	} {
		body, err := photo()
		if err != nil {
			return nil, fmt.Errorf("generate a test photo: %w", err)
		}
		out = append(out, &smokeUpload{name: u.name, key: u.key, body: body, contentType: "image/jpeg", paid: true})
	}
	r.encoded = out[1]
	// Not an image: rejected before any call, and written final without
	// a claim (the open reading on exists:false with no OldImage).
	out = append(out, &smokeUpload{name: "not a photo", key: dir + "notes" + suffix, body: []byte("geolocate doctor --smoke: not an image\n"),
		contentType: "text/plain", wantStatus: resultevents.StatusRejected})
	return out, nil
}

// listen creates the temporary queue and rules: one on the results bus for
// the test objects' result events, one on the default bus for S3's own
// event of the encoded key (with notifications=eventbridge), and one
// without a target for TriggeredRules.
func (r *smokeRun) listen(ctx context.Context) bool {
	name := smokeResourcePrefix + r.id
	if r.busName == "" {
		r.step("result events", fail("the stack has no ResultEventsBusName output (events=false): no result event to receive", "deploy with -c events=true to have result events"))
		return false
	}
	created, err := r.clients.queues.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: map[string]string{
		string(sqstypes.QueueAttributeNameSqsManagedSseEnabled):          "true",
		string(sqstypes.QueueAttributeNameMessageRetentionPeriod):        "3600",
		string(sqstypes.QueueAttributeNameReceiveMessageWaitTimeSeconds): "0",
	}})
	if err != nil {
		r.step("result events", r.d.couldNotCheck(fmt.Errorf("create queue %s: %w", name, err)))
		return false
	}
	queueURL := aws.ToString(created.QueueUrl)
	r.onCleanup(func(ctx context.Context) string {
		if _, err := r.clients.queues.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(queueURL)}); err != nil {
			return fmt.Sprintf("queue %s NOT deleted: %v", name, err)
		}
		return "queue " + name + " deleted"
	})
	r.inbox = queueURL
	attrs, err := r.clients.queues.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(queueURL), AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		r.step("result events", r.d.couldNotCheck(fmt.Errorf("queue %s: %w", name, err)))
		return false
	}
	queueArn := attrs.Attributes[string(sqstypes.QueueAttributeNameQueueArn)]
	dir := r.prefix + smokeResourcePrefix + r.id + "/"
	results, _ := json.Marshal(map[string]any{"source": []string{resultevents.Source}, "detail": map[string]any{
		"bucket": []string{r.bucket}, "key": []any{map[string]string{"prefix": dir}}}})
	var arns []string
	add := func(rule *string, ruleName, bus string, pattern []byte, target bool) bool {
		out, err := r.clients.rules.PutRule(ctx, &eventbridge.PutRuleInput{Name: aws.String(ruleName), EventBusName: aws.String(bus),
			EventPattern: aws.String(string(pattern)), State: ebtypes.RuleStateEnabled,
			Description: aws.String("geolocate doctor --smoke " + r.id + ": temporary, deleted when the check ends")})
		if err != nil {
			r.step("result events", r.d.couldNotCheck(fmt.Errorf("create rule %s: %w", ruleName, err)))
			return false
		}
		*rule = ruleName
		r.onCleanup(func(ctx context.Context) string {
			if target {
				if _, err := r.clients.rules.RemoveTargets(ctx, &eventbridge.RemoveTargetsInput{Rule: aws.String(ruleName), EventBusName: aws.String(bus), Ids: []string{"queue"}}); err != nil {
					return fmt.Sprintf("rule %s NOT deleted (its target stays): %v", ruleName, err)
				}
			}
			if _, err := r.clients.rules.DeleteRule(ctx, &eventbridge.DeleteRuleInput{Name: aws.String(ruleName), EventBusName: aws.String(bus)}); err != nil {
				return fmt.Sprintf("rule %s NOT deleted: %v", ruleName, err)
			}
			return "rule " + ruleName + " deleted"
		})
		if !target {
			return true
		}
		arns = append(arns, aws.ToString(out.RuleArn))
		return true
	}
	if !add(&r.resultsRule, name, r.busName, results, true) {
		return false
	}
	add(&r.quietRule, name+"-quiet", r.busName, results, false)
	if r.mode == "eventbridge" {
		s3events, _ := json.Marshal(map[string]any{"source": []string{"aws.s3"}, "detail-type": []string{"Object Created"}, "detail": map[string]any{
			"bucket": map[string]any{"name": []string{r.bucket}},
			"object": map[string]any{"key": []any{map[string]string{"prefix": dir}, map[string]string{"prefix": s3keyfilter.Encode(dir)}}}}})
		add(&r.s3Rule, name+"-s3", "default", s3events, true)
	}
	// Only the rules of this run may send to the queue.
	policy, _ := json.Marshal(map[string]any{"Version": "2012-10-17", "Statement": []any{map[string]any{
		"Effect": "Allow", "Principal": map[string]string{"Service": "events.amazonaws.com"}, "Action": "sqs:SendMessage",
		"Resource": queueArn, "Condition": map[string]any{"ArnEquals": map[string]any{"aws:SourceArn": arns}}}}})
	if _, err := r.clients.queues.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(queueURL),
		Attributes: map[string]string{string(sqstypes.QueueAttributeNamePolicy): string(policy)}}); err != nil {
		r.step("result events", r.d.couldNotCheck(fmt.Errorf("policy of queue %s: %w", name, err)))
		return false
	}
	for _, t := range []struct{ rule, bus string }{{r.resultsRule, r.busName}, {r.s3Rule, "default"}} {
		if t.rule == "" {
			continue
		}
		if _, err := r.clients.rules.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: aws.String(t.rule), EventBusName: aws.String(t.bus),
			Targets: []ebtypes.Target{{Id: aws.String("queue"), Arn: aws.String(queueArn)}}}); err != nil {
			r.step("result events", r.d.couldNotCheck(fmt.Errorf("target of rule %s: %w", t.rule, err)))
			return false
		}
	}
	return true
}

// upload puts the three test objects.
func (r *smokeRun) upload(ctx context.Context) {
	uploads, err := r.testUploads()
	if err != nil {
		r.step("uploads", r.d.couldNotCheck(err))
		return
	}
	for _, u := range uploads {
		out, err := r.clients.objects.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(r.bucket), Key: aws.String(u.key),
			Body: bytes.NewReader(u.body), ContentType: aws.String(u.contentType)})
		if err != nil {
			r.step("upload "+u.name, r.d.couldNotCheck(fmt.Errorf("put s3://%s/%s: %w", r.bucket, u.key, err)))
			continue
		}
		u.uploaded = r.opts.now()
		u.versionID, u.etag = aws.ToString(out.VersionId), aws.ToString(out.ETag)
		r.uploads = append(r.uploads, u)
		r.onCleanup(func(ctx context.Context) string {
			in := &s3.DeleteObjectInput{Bucket: aws.String(r.bucket), Key: aws.String(u.key)}
			if u.versionID != "" {
				in.VersionId = aws.String(u.versionID)
			}
			if _, err := r.clients.objects.DeleteObject(ctx, in); err != nil {
				return fmt.Sprintf("object %q NOT deleted: %v", u.key, err)
			}
			return fmt.Sprintf("object %q deleted", u.key)
		})
		r.onCleanup(func(ctx context.Context) string {
			ref := ledger.ObjectRef{Bucket: r.bucket, Key: u.key, VersionID: u.versionID, ETag: u.etag}
			if _, err := r.clients.records.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(r.table), Key: map[string]ddbtypes.AttributeValue{
				tableschema.PartitionKey: &ddbtypes.AttributeValueMemberS{Value: ref.PartitionKey()},
				tableschema.SortKey:      &ddbtypes.AttributeValueMemberS{Value: ref.SortKey()},
			}}); err != nil {
				return fmt.Sprintf("record of %q NOT deleted: %v", u.key, err)
			}
			return fmt.Sprintf("record of %q deleted", u.key)
		})
	}
}

// follow reads each upload's record until it is final or the deadline.
func (r *smokeRun) follow(ctx context.Context, deadline time.Time) {
	if r.d.clients.tables == nil {
		r.step("records", r.d.couldNotCheck(errors.New("no DynamoDB client")))
		return
	}
	store := ledger.New(r.d.clients.tables, r.table)
	pending := len(r.uploads)
	for pending > 0 && r.opts.now().Before(deadline) {
		pending = 0
		for _, u := range r.uploads {
			if u.record != nil && u.record.Final() {
				continue
			}
			rec, err := store.Lookup(ctx, ledger.ObjectRef{Bucket: r.bucket, Key: u.key, VersionID: u.versionID, ETag: u.etag})
			if err != nil {
				r.step("record of "+u.name, r.d.couldNotCheck(err))
				return
			}
			if rec != nil && rec.Final() {
				u.record, u.recordSeen = rec, r.opts.now()
				continue
			}
			u.record = rec
			pending++
		}
		if pending > 0 && r.opts.sleep(ctx, smokePoll) != nil {
			break
		}
	}
	credits := 0
	for _, u := range r.uploads {
		switch {
		case u.record == nil:
			r.step("record of "+u.name, fail(fmt.Sprintf("no record of %q within %s of its upload", u.key, r.opts.timeout),
				"geolocate doctor shows why uploads do not reach the predictor; docs/deploy.md lists what pages after a deployment"))
		case !u.record.Final():
			r.step("record of "+u.name, fail(fmt.Sprintf("%q is still %s after %s", u.key, u.record.Status, r.opts.timeout), "rerun with a longer --timeout, or read the record: geolocate results --stack "+r.d.loc.stack))
		case u.wantStatus != "" && u.record.Status != u.wantStatus, u.paid && u.record.Status != resultevents.StatusSucceeded:
			r.step("record of "+u.name, fail(fmt.Sprintf("%q ended %s (%s)", u.key, u.record.Status, u.record.ErrorCode), "geolocate results --stack "+r.d.loc.stack+" --since 1h shows the record"))
		default:
			credits += u.record.CreditsConsumed
			r.step("record of "+u.name, pass(fmt.Sprintf("%q %s, %d credits, upload to record %s", u.key, u.record.Status, u.record.CreditsConsumed, r.latency(u))))
		}
	}
	if credits > r.opts.maxCredits {
		r.step("credits", fail(fmt.Sprintf("the records charged %d credits, more than --max-credits %d", credits, r.opts.maxCredits), "check the model's price: geolocate models"))
	}
}

// latency is from the upload to the record's final write, as the record
// says (its clock is the predictor's; the poll would add up to smokePoll).
func (r *smokeRun) latency(u *smokeUpload) string {
	at := u.recordSeen
	if u.record != nil && !u.record.UpdatedAt.IsZero() && u.record.UpdatedAt.After(u.uploaded) {
		at = u.record.UpdatedAt
	}
	return at.Sub(u.uploaded).Round(100 * time.Millisecond).String()
}

// receive reads the temporary queue until each final record's event and
// S3's event of the encoded key arrived, or the deadline.
func (r *smokeRun) receive(ctx context.Context, deadline time.Time) {
	want := func() bool {
		for _, u := range r.uploads {
			if u.record != nil && u.record.Final() && u.event == nil {
				return true
			}
		}
		return r.s3Rule != "" && r.s3Key == ""
	}
	var bad []string
	for want() && r.opts.now().Before(deadline) {
		out, err := r.clients.queues.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(r.inbox), MaxNumberOfMessages: 10, WaitTimeSeconds: smokeReceiveWait})
		if err != nil {
			r.step("result events", r.d.couldNotCheck(fmt.Errorf("receive from the temporary queue: %w", err)))
			return
		}
		if len(out.Messages) == 0 && r.opts.sleep(ctx, smokePoll) != nil {
			break
		}
		for _, m := range out.Messages {
			if problem := r.take(aws.ToString(m.Body)); problem != "" {
				bad = append(bad, problem)
			}
		}
	}
	for _, u := range r.uploads {
		switch {
		case u.record == nil || !u.record.Final():
			continue // its record step failed already
		case u.event == nil:
			r.step("event of "+u.name, fail(fmt.Sprintf("no result event named %q within %s", u.key, r.opts.timeout), "docs/events.md: when the pipe cannot deliver"))
		case u.event.detailType != resultevents.DetailType(u.record.Status):
			r.step("event of "+u.name, fail(fmt.Sprintf("detail-type %q for a %s record, want %q", u.event.detailType, u.record.Status, resultevents.DetailType(u.record.Status)), "a bug: paste this report into an issue"))
		default:
			r.step("event of "+u.name, pass(fmt.Sprintf("%q, valid JSON naming its key exactly", u.event.detailType)))
		}
	}
	if len(bad) > 0 {
		r.step("event bodies", fail(strings.Join(bad, "; "), "a bug: paste this report into an issue"))
	}
}

// take files one message of the temporary queue; it returns what is wrong
// with it, "" when nothing is.
func (r *smokeRun) take(body string) string {
	var ev struct {
		Source     string          `json:"source"`
		DetailType string          `json:"detail-type"`
		Detail     json.RawMessage `json:"detail"`
	}
	if err := json.Unmarshal([]byte(body), &ev); err != nil {
		return fmt.Sprintf("an event that is not valid JSON (%v): %.200q", err, body)
	}
	if ev.Source == "aws.s3" {
		var d struct {
			Object struct {
				Key string `json:"key"`
			} `json:"object"`
		}
		if json.Unmarshal(ev.Detail, &d) == nil && r.encoded != nil {
			if k := d.Object.Key; k == r.encoded.key || k == s3keyfilter.Encode(r.encoded.key) {
				r.s3Key = k
			}
		}
		return ""
	}
	var detail resultevents.Detail
	if err := json.Unmarshal(ev.Detail, &detail); err != nil {
		return fmt.Sprintf("a %q event whose detail is not the contract's (%v)", ev.DetailType, err)
	}
	for _, u := range r.uploads {
		if detail.Key == u.key && detail.Bucket == r.bucket {
			u.event = &smokeEvent{detailType: ev.DetailType, detail: detail, raw: body}
			return ""
		}
	}
	return fmt.Sprintf("a %q event naming %q, which is none of the test objects' keys exactly", ev.DetailType, detail.Key)
}

// ring sets the smoke alarm to ALARM; false when it could not.
func (r *smokeRun) ring(ctx context.Context) bool {
	r.alarm = alarmNameOf(r.d.loc.stack)
	alarms, err := r.clients.alarms.DescribeAlarms(ctx, &cloudwatch.DescribeAlarmsInput{AlarmNames: []string{r.alarm}})
	if err != nil || len(alarms.MetricAlarms) == 0 {
		r.step("alarm delivery", r.d.couldNotCheck(fmt.Errorf("alarm %s: %v", r.alarm, errOr(err, "not found"))))
		return false
	}
	r.alarmAt = r.opts.now()
	if _, err := r.clients.alarms.SetAlarmState(ctx, &cloudwatch.SetAlarmStateInput{AlarmName: aws.String(r.alarm), StateValue: cwtypes.StateValueAlarm,
		StateReason: aws.String("geolocate doctor --smoke " + r.id + ": testing that the alarm topic delivers; the alarm returns to its state at its next evaluation")}); err != nil {
		r.step("alarm delivery", r.d.couldNotCheck(fmt.Errorf("set %s to ALARM: %w", r.alarm, err)))
		return false
	}
	return true
}

// metricSum is the sum of a metric since a minute before the alarm was set.
func (r *smokeRun) metricSum(ctx context.Context, namespace, metric string, dims []cwtypes.Dimension) (float64, error) {
	out, err := r.clients.alarms.GetMetricStatistics(ctx, &cloudwatch.GetMetricStatisticsInput{Namespace: aws.String(namespace), MetricName: aws.String(metric),
		Dimensions: dims, StartTime: aws.Time(r.alarmAt.Add(-time.Minute)), EndTime: aws.Time(r.opts.now().Add(time.Minute)),
		Period: aws.Int32(60), Statistics: []cwtypes.Statistic{cwtypes.StatisticSum}})
	if err != nil {
		return 0, fmt.Errorf("%s %s: %w", namespace, metric, err)
	}
	total := 0.0
	for _, p := range out.Datapoints {
		total += aws.ToFloat64(p.Sum)
	}
	return total, nil
}

// readDeliveries reads the alarm topic's delivery metrics until a
// delivery or a failure is counted, at least once and then until the
// deadline; then the quiet rule's TriggeredRules.
func (r *smokeRun) readDeliveries(ctx context.Context, deadline time.Time) {
	topic := r.topicArn[strings.LastIndex(r.topicArn, ":")+1:]
	topicDim := []cwtypes.Dimension{{Name: aws.String("TopicName"), Value: aws.String(topic)}}
	for {
		var err error
		if r.delivered, err = r.metricSum(ctx, "AWS/SNS", "NumberOfNotificationsDelivered", topicDim); err == nil {
			r.failed, err = r.metricSum(ctx, "AWS/SNS", "NumberOfNotificationsFailed", topicDim)
		}
		if err != nil {
			r.step("alarm delivery", r.d.couldNotCheck(err))
			return
		}
		if r.delivered+r.failed > 0 || !r.opts.now().Before(deadline) || r.opts.sleep(ctx, smokePoll) != nil {
			break
		}
	}
	switch {
	case r.failed > 0:
		r.step("alarm delivery", fail(fmt.Sprintf("alarm %s set to ALARM; topic %s: %g delivered, %g failed", r.alarm, topic, r.delivered, r.failed),
			"the topic refused CloudWatch's publish or a subscriber's delivery failed: docs/operations.md, and paste this report into an issue"))
	case r.delivered == 0:
		r.step("alarm delivery", fail(fmt.Sprintf("alarm %s set to ALARM; topic %s counted no delivery within %s", r.alarm, topic, r.opts.timeout),
			"confirm the topic's subscription (geolocate doctor), then rerun; without one SNS delivers nothing"))
	default:
		r.step("alarm delivery", pass(fmt.Sprintf("alarm %s set to ALARM; topic %s: %g delivered, 0 failed", r.alarm, topic, r.delivered)))
	}
	if r.quietRule != "" {
		dims := []cwtypes.Dimension{{Name: aws.String("RuleName"), Value: aws.String(r.quietRule)}}
		if r.busName != "default" {
			dims = append(dims, cwtypes.Dimension{Name: aws.String("EventBusName"), Value: aws.String(r.busName)})
		}
		r.triggered, _ = r.metricSum(ctx, "AWS/Events", "TriggeredRules", dims)
	}
}

func errOr(err error, otherwise string) string {
	if err != nil {
		return err.Error()
	}
	return otherwise
}

// cleanup undoes what the run created, last first, with a context of its
// own so that Ctrl-C does not leave resources behind.
func (r *smokeRun) cleanup() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	fmt.Fprintln(r.out, "cleanup:")
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		fmt.Fprintf(r.out, "  %s\n", r.d.scrub(r.cleanups[i](ctx)))
	}
	fmt.Fprintf(r.out, "  left as any upload leaves them: the day's credit counter, and the content ledger's entries of the two photos (reuseResults=content)\n")
}

// report prints the steps and the readings; the error is errReported
// when a step did not pass.
func (r *smokeRun) report() error {
	fmt.Fprintf(r.out, "%s\nnotifications=%s, uploadPrefix %q, uploadSuffix %q, run %s at %s\n", versionLine(), r.mode, r.prefix, r.suffix, r.id, r.opts.now().UTC().Format(time.RFC3339))
	if err := printChecklist(r.out, r.d.loc.stack, r.d.c.key, r.steps); err != nil {
		return err
	}
	fmt.Fprintln(r.out, "open readings (docs/local-rig.md, events.md, waiting.md):")
	for _, rd := range openReadings {
		status, evidence := rd.judge(r)
		if r.local {
			status, evidence = "assumed by the rig", rd.rig
		}
		fmt.Fprintf(r.out, "  %-26s %-19s %s\n", rd.id, status, r.d.scrub(evidence))
	}
	for _, s := range r.steps {
		if s.Status != checkPass {
			return errReported
		}
	}
	return nil
}

// sleepCtx waits d, or less when ctx ends (its error then).
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
