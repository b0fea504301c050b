package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/geolocate-aws/geolocate/pkg/jobs"
	"github.com/geolocate-aws/geolocate/pkg/lambdarun"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/alarmeval"
	"github.com/geolocate-aws/geolocate/pkg/local/awsapi"
	"github.com/geolocate-aws/geolocate/pkg/local/awsparts"
	"github.com/geolocate-aws/geolocate/pkg/local/pipes"
	"github.com/geolocate-aws/geolocate/pkg/local/sqsqueue"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
	"github.com/geolocate-aws/geolocate/pkg/shared/s3event"
	"github.com/geolocate-aws/geolocate/pkg/shared/settings"
)

// The served stack's names: its outputs name them, as a deployed stack's do.
const (
	// DefaultStackName is the stack DescribeStacks answers for, cdk.json's
	// stackName, so the CLI's default --stack finds it.
	DefaultStackName = "Geolocation"

	servedPredictor      = "geolocate-local-predictor"
	servedMonitor        = "geolocate-local-monitor"
	servedJobFeeder      = "geolocate-local-jobfeeder"
	servedAlarmTopic     = "geolocate-local-alarms"
	servedMonitorRule    = "geolocate-local-monitor-schedule"
	servedJobFeederRule  = "geolocate-local-jobfeeder-schedule"
	servedDeadLetterName = sqsqueue.DefaultName + "-dlq"
	servedResultsBus     = "geolocate-local-results"
	servedUploadRule     = "geolocate-local-uploads"
	servedSecret         = "geolocate-local/api-key"

	// jobFeederSchedule is the feeder's rule, once a minute (PLAN.md).
	jobFeederSchedule = "rate(1 minute)"
)

// The stack's output keys (infra/stack.go; cmd/geolocate reads them).
const (
	OutputBucketName            = "BucketName"
	OutputTableName             = "TableName"
	OutputQueueURL              = "QueueUrl"
	OutputDeadLetterQueueURL    = "DeadLetterQueueUrl"
	OutputAlarmTopicArn         = "AlarmTopicArn"
	OutputJobFeederFunctionName = "JobFeederFunctionName"
	OutputResultEventsBusName   = "ResultEventsBusName"
	OutputSecretArn             = "SecretArn"
)

// ServeOptions configure Serve beyond Options.
type ServeOptions struct {
	// StackName is the stack the CloudFormation stand-in describes.
	// Default DefaultStackName.
	StackName string
	// Alarms are the stack's alarms (from its synthesized template): the
	// CloudWatch stand-in holds them, their actions the alarm topic.
	Alarms []string
	// Ready, if set, receives the export line's environment once every
	// part answers (tests use it instead of reading the printed line).
	Ready func(env map[string]string)
}

// Serve starts a whole local stack and waits for ctx to end: the service,
// S3 (behind a front that notifies the upload queue of every object
// created in the stack's bucket, as the bucket's notification does) and
// DynamoDB Local with the stack's table, and the pkg/local/awsapi
// stand-ins of SQS, Lambda, EventBridge, CloudWatch, SNS, CloudFormation
// and STS, wired as the stack deploys them: the predictor on the upload
// queue as its event source mapping (batch size, concurrency, visibility
// timeout six times the function's timeout, dead-letter queue after
// MaxReceiveCount receives), the monitor and the job feeder on their
// schedules, the alarms' actions to the alarm topic, and DescribeStacks
// answering the stack's outputs. The images are uploaded first WITHOUT
// being announced. It prints the environment that points the CLI and the
// functions at the stack (the export line), and at the end what ran.
func Serve(ctx context.Context, opts Options, optFns ...func(*ServeOptions)) error {
	so := ServeOptions{StackName: DefaultStackName}
	for _, fn := range optFns {
		fn(&so)
	}
	if opts.Metrics == nil {
		// The CloudWatch stand-in serves the functions' EMF metrics and
		// what the stand-ins publish from one store.
		opts.Metrics = alarmeval.NewStore()
	}
	opts.setDefaults()
	say := func(format string, args ...any) { fmt.Fprintf(opts.Progress, format+"\n", args...) }

	// Inputs first, as in Run. An empty folder is allowed: the events to
	// invoke by hand may name objects uploaded later.
	if err := checkImagesDir(opts.ImagesDir, true); err != nil {
		return err
	}
	svc, err := startService(ctx, opts)
	if err != nil {
		return err
	}
	defer svc.stop()
	local, err := startLocalAWS(ctx, opts)
	if err != nil {
		return err
	}
	defer local.close()

	found, err := scanDir(opts.ImagesDir)
	if err != nil {
		return err
	}
	for _, sk := range found.skipped {
		say("skipped   %s (%s)", sk.Path, sk.Reason)
	}
	for _, rel := range found.paths {
		u, err := putFile(ctx, local.s3.Client(), opts.Bucket, opts.KeyPrefix+rel, localPath(opts.ImagesDir, rel))
		if err != nil {
			return err
		}
		say("uploaded  s3://%s/%s (%d bytes, ETag %s), not yet processed", u.Bucket, u.Key, u.Size, u.ETag)
	}

	st, err := startServedStack(ctx, opts, so, svc, local)
	if err != nil {
		return err
	}
	defer st.close()
	// The results pipe, played over the table's stream onto the results
	// bus, where rules (the smoke check's) receive the result events.
	if opts.Events == nil {
		if opts.Events, err = pipes.ResultsPipe(nil); err != nil {
			return fmt.Errorf("result events: %w", err)
		}
	}
	onEvent := opts.OnEvent
	opts.OnEvent = func(e *pipes.Event) {
		if err := st.svcs.EventBridge.PutEvent(servedResultsBus, e.Source, e.DetailType, e.Detail, e.Resources, e.Time); err != nil {
			say("warning   result event not put on bus %s: %v", servedResultsBus, err)
		}
		if onEvent != nil {
			onEvent(e)
		}
	}
	events, err := startEvents(ctx, opts, local, say)
	if err != nil {
		return err
	}
	defer func() {
		if _, _, err := events.finish(context.WithoutCancel(ctx)); err != nil {
			say("warning   %v", err)
		}
	}()

	say("serving   %s, %s bucket %s, table %s, stack %s (S3 at %s, DynamoDB Local at %s; Ctrl-C to stop)",
		svc.describe(), bucketMode(opts), opts.Bucket, opts.Table, so.StackName, st.env["AWS_ENDPOINT_URL_S3"], local.ddb.Endpoint())
	say("          the predictor on the upload queue (batches of up to %d, %d instance(s)), the monitor every %d minute(s), the job feeder every minute, %d alarm(s) to topic %s",
		opts.BatchSize, opts.Concurrency, int(st.monitorEvery/time.Minute), len(so.Alarms), servedAlarmTopic)
	say("\nIn another shell, paste this line; then the CLI works against this stack as against a deployed one")
	say("(geolocate status, results --json, backfill --bucket %s, reprocess, jobs, doctor), and uploads to s3://%s are processed:\n", opts.Bucket, opts.Bucket)
	say("%s", exportLine(st.env))
	say("\naws s3 cp photo.jpg s3://%s/ --endpoint-url %s   # recorded within seconds", opts.Bucket, st.env["AWS_ENDPOINT_URL_S3"])
	say("go run ./functions/predictor -event events/sqs-s3-put.json   # invoking a function by hand still works")
	if so.Ready != nil {
		so.Ready(maps.Clone(st.env))
	}
	<-ctx.Done()
	st.stop()
	st.report(context.WithoutCancel(ctx), say)
	return nil
}

// servedStack is what Serve runs beyond Run's parts.
type servedStack struct {
	opts   Options
	local  *localAWS
	svcs   *awsapi.Services
	front  *awsapi.Server
	queue  *sqsqueue.Queue
	poller *sqsqueue.Poller
	env    map[string]string
	// monitorEvery is the monitor's schedule.
	monitorEvery time.Duration

	stopPolling context.CancelFunc
	polling     sync.WaitGroup
	// notified counts the uploads the S3 front announced on the queue;
	// notifyErrors the ones it could not (said at once on progress).
	mu                     sync.Mutex
	notified, notifyErrors int
}

func startServedStack(ctx context.Context, opts Options, so ServeOptions, svc *service, local *localAWS) (_ *servedStack, err error) {
	logger := lambdarun.NewLogger(opts.FunctionLogs, "info")
	svcs, err := awsapi.Start(opts.Metrics, func(o *awsapi.ServicesOptions) { o.Logger = logger })
	if err != nil {
		return nil, err
	}
	st := &servedStack{opts: opts, local: local, svcs: svcs}
	defer func() {
		if err != nil {
			st.close()
		}
	}()

	// The upload queue and its dead-letter queue, as the stack makes them.
	st.queue, err = sqsqueue.Create(
		sqsqueue.WithVisibilityTimeout(6*opts.FunctionTimeout),
		sqsqueue.WithMaxReceiveCount(opts.MaxReceiveCount),
		sqsqueue.Duplicate(opts.DuplicateRate),
	)
	if err != nil {
		return nil, err
	}
	svcs.SQS.AddQueue(sqsqueue.DefaultName, st.queue, opts.MaxReceiveCount, servedDeadLetterName)
	sqsEndpoint := svcs.Endpoint(awsapi.EnvEndpointSQS)
	queueURL := svcs.SQS.QueueURL(sqsEndpoint, sqsqueue.DefaultName)

	// The bucket's notification, as the notifications setting deploys it:
	// to the queue, or to EventBridge, whose uploads rule sends them on.
	notification := awsapi.NotificationConfiguration{QueueArn: st.queue.ARN()}
	if opts.Notifications == NotificationsEventBridge {
		notification = awsapi.NotificationConfiguration{EventBridge: true}
	}
	front, err := awsapi.NewS3Notifications(local.s3.Endpoint(), map[string]awsapi.NotificationConfiguration{opts.Bucket: notification},
		func(o awsapi.CreatedObject) { st.notify(ctx, o) })
	if err != nil {
		return nil, err
	}
	if st.front, err = awsapi.Listen(front.Handler()); err != nil {
		return nil, err
	}

	env := functionEnv(opts, svc)
	// The stack's name is its pipeline's (the Pipeline dimension, the
	// credit history's key): status reads them under --stack.
	env[envvars.PipelineName] = so.StackName
	env[envvars.QueueURL] = queueURL
	env[envvars.QueueVisibility] = st.queue.VisibilityTimeout().String()
	env[envvars.MaxReceiveCount] = strconv.Itoa(opts.MaxReceiveCount)
	// The local S3 has no IAM to hold the predictor to the stack's bucket:
	// the served predictor reads any bucket of it (BUCKET_NAME unset), so a
	// backfill job may back up any local bucket. Uploads are announced for
	// the stack's bucket only, by the front, as its notification would.
	predictorEnv := maps.Clone(env)
	delete(predictorEnv, envvars.BucketName)
	cfg := aws.Config{
		Region:       awsparts.Region,
		Credentials:  credentials.NewStaticCredentialsProvider(RigAccessKeyID, RigAccessKeyID, ""),
		BaseEndpoint: aws.String(sqsEndpoint),
	}

	predictor, err := newPredictor(predictorEnv, local, st.queue, opts)
	if err != nil {
		return nil, err
	}
	monitor, err := newMonitor(env, local, opts)
	if err != nil {
		return nil, err
	}
	feederCfg, err := jobs.LoadConfig(getenvFrom(env))
	if err != nil {
		return nil, err
	}
	jobStore := jobs.New(local.ddb.Client(), opts.Table)
	// The feeder sends through the SQS API, as deployed: DelaySeconds and
	// the batch limits are the stand-in's.
	sender := sqs.NewFromConfig(cfg)
	timeout := opts.FunctionTimeout
	for _, f := range []awsapi.Function{
		{Name: servedPredictor, Timeout: timeout, Environment: predictorEnv, Handler: func(ctx context.Context, p []byte) ([]byte, error) {
			return lambdarun.Invoke(ctx, predictor.Handle, p, timeout)
		}},
		{Name: servedMonitor, Timeout: time.Minute, Environment: env, Handler: func(ctx context.Context, p []byte) ([]byte, error) {
			return lambdarun.Invoke(ctx, monitor.Handle, p, time.Minute)
		}},
		{Name: servedJobFeeder, Timeout: time.Minute, Environment: env, Handler: func(ctx context.Context, _ []byte) ([]byte, error) {
			feeder := jobs.NewFeeder(jobStore, local.s3.Client(), sender, queueURL, feederCfg.Options,
				func(o *jobs.FeederOptions) { o.Logger = lambdarun.WithRequestID(ctx, logger) })
			rep, err := feeder.Run(ctx)
			if err != nil {
				return nil, fmt.Errorf("job feeder: %w", err)
			}
			return json.Marshal(rep)
		}},
	} {
		svcs.Lambda.Register(f)
	}
	svcs.Lambda.AddEventSourceMapping(awsapi.EventSourceMapping{Function: servedPredictor, EventSourceArn: st.queue.ARN(), BatchSize: opts.BatchSize})

	// The schedules, put through the EventBridge API as the stack's rules.
	schedule := settings.FromEnv(opts.Getenv)
	st.monitorEvery = time.Duration(schedule.Int(settings.MonitorScheduleMinutes)) * time.Minute
	if err := schedule.Err(); err != nil {
		return nil, fmt.Errorf("the monitor's schedule: %w", err)
	}
	rules := eventbridge.NewFromConfig(cfg, func(o *eventbridge.Options) {
		o.BaseEndpoint = aws.String(svcs.Endpoint(awsapi.EnvEndpointEventBridge))
	})
	if opts.Notifications == NotificationsEventBridge {
		pattern, err := json.Marshal(map[string]any{"source": []string{"aws.s3"}, "detail-type": []string{"Object Created"},
			"detail": map[string]any{"bucket": map[string]any{"name": []string{opts.Bucket}}}})
		if err != nil {
			return nil, err
		}
		if _, err := rules.PutRule(ctx, &eventbridge.PutRuleInput{Name: aws.String(servedUploadRule), EventPattern: aws.String(string(pattern))}); err != nil {
			return nil, fmt.Errorf("rule %s: %w", servedUploadRule, err)
		}
		if _, err := rules.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: aws.String(servedUploadRule),
			Targets: []ebtypes.Target{{Id: aws.String("queue"), Arn: aws.String(st.queue.ARN())}}}); err != nil {
			return nil, fmt.Errorf("rule %s: %w", servedUploadRule, err)
		}
	}
	for _, r := range []struct{ name, schedule, function string }{
		{servedMonitorRule, rateExpression(st.monitorEvery), servedMonitor},
		{servedJobFeederRule, jobFeederSchedule, servedJobFeeder},
	} {
		if _, err := rules.PutRule(ctx, &eventbridge.PutRuleInput{Name: aws.String(r.name), ScheduleExpression: aws.String(r.schedule)}); err != nil {
			return nil, fmt.Errorf("schedule %s: %w", r.name, err)
		}
		if _, err := rules.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: aws.String(r.name),
			Targets: []ebtypes.Target{{Id: aws.String("function"), Arn: aws.String(svcs.Lambda.FunctionARN(r.function))}}}); err != nil {
			return nil, fmt.Errorf("schedule %s: %w", r.name, err)
		}
	}

	topic := svcs.SNS.AddTopic(servedAlarmTopic, awsapi.Subscription{Protocol: "email", Endpoint: "operator@example.com"})
	for _, name := range so.Alarms {
		svcs.CloudWatch.AddAlarm(awsapi.Alarm{Name: name, Actions: []string{topic}, OKActions: []string{topic}})
	}
	svcs.EventBridge.AddBus(servedResultsBus)
	svcs.CloudFormation.AddStack(so.StackName, map[string]string{
		OutputResultEventsBusName: servedResultsBus,
		// The key the functions use, held in memory only, as the stack's
		// secret holds it (doctor and status read it through this output).
		OutputSecretArn:             svcs.SecretsManager.AddSecret(servedSecret, svc.key),
		OutputBucketName:            opts.Bucket,
		OutputTableName:             opts.Table,
		OutputQueueURL:              queueURL,
		OutputDeadLetterQueueURL:    svcs.SQS.QueueURL(sqsEndpoint, servedDeadLetterName),
		OutputAlarmTopicArn:         topic,
		OutputJobFeederFunctionName: servedJobFeeder,
	}, []awsapi.StackResource{{LogicalID: "AlarmTopic", PhysicalID: topic, Type: "AWS::SNS::Topic"}})

	// The event source mapping: the rig's poller, as in Run.
	published := newAWSPublisher(opts.Metrics, st.queue)
	st.poller = &sqsqueue.Poller{
		Queue:       st.queue,
		Handler:     predictor.Handle,
		Concurrency: opts.Concurrency,
		BatchSize:   opts.BatchSize,
		Timeout:     opts.FunctionTimeout,
		RetryDelay:  opts.RetryDelay,
		// What SQS and Lambda publish for the queue and the invocations
		// lands in the store CloudWatch serves.
		OnBatch: published.batch,
	}
	pollCtx, stopPolling := context.WithCancel(context.WithoutCancel(ctx))
	st.stopPolling = stopPolling
	st.polling.Add(2)
	go func() {
		defer st.polling.Done()
		_ = st.poller.Run(pollCtx) // ends with pollCtx
	}()
	go func() {
		defer st.polling.Done()
		published.readQueueEveryMinute(pollCtx)
	}()

	// A first reading at once, as the stack's first scheduled run takes
	// one within minutes of the deploy: doctor's heartbeat and status's
	// forecast have it from the start.
	if _, err := published.runMonitor(ctx, monitor); err != nil {
		fmt.Fprintf(opts.Progress, "monitor   first reading failed: %v\n", err)
	}

	st.env = serveEnv(env, svc, local, st.front, svcs)
	return st, nil
}

// serveEnv is the export line's environment: the functions' own, the
// endpoints of every served service, the fake credentials and the region.
func serveEnv(env map[string]string, svc *service, local *localAWS, front *awsapi.Server, svcs *awsapi.Services) map[string]string {
	out := maps.Clone(env)
	maps.Copy(out, svcs.Endpoints())
	out["AWS_ENDPOINT_URL_S3"] = front.Endpoint()
	out["AWS_ENDPOINT_URL_DYNAMODB"] = local.ddb.Endpoint()
	out["AWS_REGION"] = awsparts.Region
	out["AWS_DEFAULT_REGION"] = awsparts.Region
	out["AWS_ACCESS_KEY_ID"] = RigAccessKeyID
	out["AWS_SECRET_ACCESS_KEY"] = RigAccessKeyID
	// The functions' settings that only they read stay out: the line is
	// for the CLI and for invoking the functions by hand.
	delete(out, envvars.QueueVisibility)
	if svc.sim == nil {
		// The real key is never printed: the user's shell already has it.
		out[envvars.APIKey] = "$" + envvars.APIKey
	}
	return out
}

// notify announces a created object of the stack's bucket on the upload
// queue, as the bucket's notification (or, with notifications=eventbridge,
// the uploads rule) would: with its size, read back as S3 reports it.
func (st *servedStack) notify(ctx context.Context, o awsapi.CreatedObject) {
	if o.Bucket != st.opts.Bucket {
		return // another bucket of the local S3: no notification, as on AWS
	}
	err := func() error {
		in := &s3.HeadObjectInput{Bucket: aws.String(o.Bucket), Key: aws.String(o.Key)}
		if o.VersionID != "" {
			in.VersionId = aws.String(o.VersionID)
		}
		head, err := st.local.s3.Client().HeadObject(ctx, in)
		if err != nil {
			return fmt.Errorf("read back s3://%s/%s: %w", o.Bucket, o.Key, err)
		}
		created := s3event.ObjectCreated{Bucket: o.Bucket, Key: o.Key, Size: aws.ToInt64(head.ContentLength),
			ETag: aws.ToString(head.ETag), VersionID: o.VersionID, EventName: o.EventName, Time: time.Now()}
		if st.opts.Notifications == NotificationsEventBridge {
			// S3's event on the default bus; the uploads rule sends it on.
			body, err := EventBridgeEventBody(created)
			if err != nil {
				return err
			}
			var e struct {
				Resources []string        `json:"resources"`
				Detail    json.RawMessage `json:"detail"`
			}
			if err := json.Unmarshal([]byte(body), &e); err != nil {
				return err
			}
			return st.svcs.EventBridge.PutEvent("", "aws.s3", "Object Created", e.Detail, e.Resources, created.Time)
		}
		body, err := s3event.Body(created)
		if err != nil {
			return err
		}
		_, err = st.queue.SendMessage(body)
		return err
	}()
	st.mu.Lock()
	defer st.mu.Unlock()
	if err != nil {
		st.notifyErrors++
		fmt.Fprintf(st.opts.Progress, "warning   the upload of s3://%s/%s was not announced on the queue: %v\n", o.Bucket, o.Key, err)
		return
	}
	st.notified++
	fmt.Fprintf(st.opts.Progress, "notified  s3://%s/%s (%s)\n", o.Bucket, o.Key, o.EventName)
}

// stop ends the polling and the schedules; what ran stays readable.
func (st *servedStack) stop() {
	if st.stopPolling != nil {
		st.stopPolling()
	}
	st.polling.Wait()
	if st.svcs != nil {
		st.svcs.EventBridge.Close()
	}
}

func (st *servedStack) close() {
	st.stop()
	if st.front != nil {
		_ = st.front.Close()
	}
	if st.svcs != nil {
		_ = st.svcs.Close()
	}
}

// reportTimeout bounds the last read of the records for the report.
const reportTimeout = 10 * time.Second

// report prints what ran while the stack was served.
func (st *servedStack) report(ctx context.Context, say func(string, ...any)) {
	say("\nstopped   what ran while served:")
	counts := st.svcs.Lambda.Invocations()
	for _, name := range slices.Sorted(maps.Keys(counts)) {
		c := counts[name]
		say("function  %s: %d invocation(s) (%d by Invoke, %d Event), %d failed", name, c.Sync+c.Async, c.Sync, c.Async, c.Errors)
	}
	ps := st.poller.Stats()
	say("function  %s on the upload queue: %d batch invocation(s), %d message(s) deleted, %d returned", servedPredictor, ps.Invocations, ps.Acked, ps.Failed)
	m := st.queue.Metrics()
	st.mu.Lock()
	say("queue     %d sent (%d by the S3 front, %d not announced), %d received, %d deleted, %d waiting, %d in flight, %d delayed, %d dead-lettered",
		m.Sent, st.notified, st.notifyErrors, m.Received, m.Deleted, m.Visible, m.NotVisible, m.Delayed, m.DeadLetterVisible)
	st.mu.Unlock()
	for rule, n := range st.svcs.EventBridge.Deliveries() {
		say("rule      %s: %d delivery(ies)", rule, n)
	}
	if msgs := st.svcs.SNS.Messages(); len(msgs) > 0 {
		say("topic     %d message(s) published", len(msgs))
	}
	states := st.svcs.CloudWatch.States()
	var alarming []string
	for name, s := range states {
		if s == awsapi.StateAlarm {
			alarming = append(alarming, name)
		}
	}
	sort.Strings(alarming)
	if len(alarming) > 0 {
		say("alarms    in ALARM: %s", strings.Join(alarming, ", "))
	}
	ctx, cancel := context.WithTimeout(ctx, reportTimeout)
	defer cancel()
	records, err := ledger.New(st.local.ddb.Client(), st.opts.Table).Query(ctx, ledger.QueryInput{Since: time.Now().Add(-7 * 24 * time.Hour)})
	if err != nil {
		say("records   unreadable: %v", err)
		return
	}
	byStatus := map[string]int{}
	for _, r := range records {
		byStatus[string(r.Status)]++
	}
	var parts []string
	for _, s := range slices.Sorted(maps.Keys(byStatus)) {
		parts = append(parts, fmt.Sprintf("%d %s", byStatus[s], s))
	}
	say("records   %d in table %s: %s", len(records), st.opts.Table, dashIfEmpty(strings.Join(parts, ", ")))
}

func dashIfEmpty(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// rateExpression is EventBridge's schedule for every d (whole minutes).
func rateExpression(d time.Duration) string {
	n := int(d / time.Minute)
	if n == 1 {
		return "rate(1 minute)"
	}
	return "rate(" + strconv.Itoa(n) + " minutes)"
}

// RigAccessKeyID is the fake AWS access key id of Serve's export line: a
// shell that holds it holds the local rig's environment, which the CLI's
// AWS commands recognise and say (through envvars, as they never import
// the rig).
const RigAccessKeyID = envvars.LocalRigAccessKeyID

// exportLine renders env as one shell export command, in name order.
func exportLine(env map[string]string) string {
	names := make([]string, 0, len(env))
	for name := range env {
		names = append(names, name)
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names))
	for _, name := range names {
		parts = append(parts, name+"="+env[name])
	}
	return "export " + strings.Join(parts, " ")
}
