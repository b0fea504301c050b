package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/geolocate-aws/geolocate/pkg/geoapi"
	"github.com/geolocate-aws/geolocate/pkg/secretkey"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
	"github.com/geolocate-aws/geolocate/pkg/shared/metricnames"
)

// The read-only AWS APIs doctor uses besides stackDescriber and queueAPI,
// narrowed so tests can fake them.
type (
	bucketNotificationAPI interface {
		GetBucketNotificationConfiguration(ctx context.Context, in *s3.GetBucketNotificationConfigurationInput, optFns ...func(*s3.Options)) (*s3.GetBucketNotificationConfigurationOutput, error)
	}
	functionAPI interface {
		ListEventSourceMappings(ctx context.Context, in *lambda.ListEventSourceMappingsInput, optFns ...func(*lambda.Options)) (*lambda.ListEventSourceMappingsOutput, error)
		GetFunctionConfiguration(ctx context.Context, in *lambda.GetFunctionConfigurationInput, optFns ...func(*lambda.Options)) (*lambda.GetFunctionConfigurationOutput, error)
	}
	metricAPI interface {
		GetMetricStatistics(ctx context.Context, in *cloudwatch.GetMetricStatisticsInput, optFns ...func(*cloudwatch.Options)) (*cloudwatch.GetMetricStatisticsOutput, error)
	}
	topicAPI interface {
		ListSubscriptionsByTopic(ctx context.Context, in *sns.ListSubscriptionsByTopicInput, optFns ...func(*sns.Options)) (*sns.ListSubscriptionsByTopicOutput, error)
	}
	stackResourceLister interface {
		ListStackResources(ctx context.Context, in *cloudformation.ListStackResourcesInput, optFns ...func(*cloudformation.Options)) (*cloudformation.ListStackResourcesOutput, error)
	}
)

// doctorPermissions are the IAM actions doctor calls, all read-only, with
// what each is for; doctor --help prints them.
var doctorPermissions = [][2]string{
	{"cloudformation:DescribeStacks", "the stack's outputs"},
	{"cloudformation:ListStackResources", "the alarm topic, only when the stack has no " + outputAlarmTopicArn + " output"},
	{"secretsmanager:GetSecretValue", "the API key (plus kms:Decrypt if the secret uses a customer managed key)"},
	{"sqs:GetQueueAttributes", "the queues' ARNs and the dead-letter queue's depth"},
	{"s3:GetBucketNotification", "the bucket's notification to the queue"},
	{"lambda:ListEventSourceMappings", "the queue's trigger of the predictor"},
	{"lambda:GetFunctionConfiguration", "the predictor's " + envvars.ModelID + " and " + envvars.APIURL},
	{"cloudwatch:GetMetricStatistics", "the monitor's " + metricnames.MonitorHealthy + " heartbeat"},
	{"sns:ListSubscriptionsByTopic", "the alarm topic's subscriptions"},
	{"s3:GetBucketLocation", "the bucket's region"},
	{"events:ListRuleNamesByTarget", "with notifications=eventbridge, the rule that sends the uploads to the queue"},
	{"lambda:GetAccountSettings", "with --predeploy, the account's concurrency quota"},
}

// doctorCheck is one check of the list, in the order it is run and printed.
type doctorCheck struct {
	id, title string
	run       func(d *doctor, ctx context.Context) checkResult
}

var doctorChecks = []doctorCheck{
	{"api-key", "API key", (*doctor).checkKey},
	{"bucket-notification", "bucket notification", (*doctor).checkNotification},
	{"queue-trigger", "queue trigger", (*doctor).checkTrigger},
	{"monitor-heartbeat", "monitor heartbeat", (*doctor).checkHeartbeat},
	{"alarm-subscription", "alarm subscription", (*doctor).checkSubscription},
	{"dead-letter-queue", "dead-letter queue", (*doctor).checkDeadLetters},
	{"model-ready", "model ready", (*doctor).checkModel},
	{"bucket-region", "bucket region", (*doctor).checkBucketRegion},
}

// queueAttrs reads the named attributes of the queue behind a stack output.
func (d *doctor) queueAttrs(ctx context.Context, output string, names ...sqstypes.QueueAttributeName) (url string, attrs map[string]string, err error) {
	url, err = d.loc.output(ctx, d.clients, output)
	if err != nil {
		return "", nil, err
	}
	if d.clients.queues == nil {
		return "", nil, errors.New("no SQS client")
	}
	out, err := d.clients.queues.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url), AttributeNames: names})
	if err != nil {
		return "", nil, fmt.Errorf("queue attributes of %s: %w", url, err)
	}
	return url, out.Attributes, nil
}

// uploadQueueArn is the ARN of the stack's upload queue.
func (d *doctor) uploadQueueArn(ctx context.Context) (string, error) {
	return d.queueArn.get(func() (string, error) {
		url, attrs, err := d.queueAttrs(ctx, outputQueueURL, sqstypes.QueueAttributeNameQueueArn)
		if err != nil {
			return "", err
		}
		arn := attrs[string(sqstypes.QueueAttributeNameQueueArn)]
		if arn == "" {
			return "", fmt.Errorf("queue %s: no QueueArn attribute", url)
		}
		return arn, nil
	})
}

// queueMappings lists the Lambda event source mappings reading the upload
// queue.
func (d *doctor) queueMappings(ctx context.Context) ([]lambdatypes.EventSourceMappingConfiguration, error) {
	return d.mappings.get(func() ([]lambdatypes.EventSourceMappingConfiguration, error) {
		arn, err := d.uploadQueueArn(ctx)
		if err != nil {
			return nil, err
		}
		if d.clients.functions == nil {
			return nil, errors.New("no Lambda client")
		}
		var all []lambdatypes.EventSourceMappingConfiguration
		in := &lambda.ListEventSourceMappingsInput{EventSourceArn: aws.String(arn)}
		for range maxPages {
			out, err := d.clients.functions.ListEventSourceMappings(ctx, in)
			if err != nil {
				return nil, fmt.Errorf("list event source mappings of %s: %w", arn, err)
			}
			all = append(all, out.EventSourceMappings...)
			if aws.ToString(out.NextMarker) == "" {
				break
			}
			in.Marker = out.NextMarker
		}
		return all, nil
	})
}

// predictorEnv is the environment of the function the queue triggers.
func (d *doctor) predictorEnv(ctx context.Context) (map[string]string, error) {
	return d.predictor.get(func() (map[string]string, error) {
		mappings, err := d.queueMappings(ctx)
		if err != nil {
			return nil, err
		}
		fn := ""
		for _, m := range mappings {
			if fn == "" || aws.ToString(m.State) == "Enabled" {
				fn = aws.ToString(m.FunctionArn)
			}
		}
		if fn == "" {
			return nil, errors.New("no event source mapping reads the queue, so the predictor function is unknown")
		}
		out, err := d.clients.functions.GetFunctionConfiguration(ctx, &lambda.GetFunctionConfigurationInput{FunctionName: aws.String(fn)})
		if err != nil {
			return nil, fmt.Errorf("configuration of %s: %w", functionName(fn), err)
		}
		env := map[string]string{}
		if out.Environment != nil && out.Environment.Variables != nil {
			env = out.Environment.Variables
		}
		return env, nil
	})
}

// functionName is the name in a function ARN.
func functionName(arn string) string {
	_, name, ok := strings.Cut(arn, ":function:")
	if !ok {
		return arn
	}
	name, _, _ = strings.Cut(name, ":")
	return name
}

// keyOutcome is the key check's finding, shared with the model check: the
// model list when the key was accepted, else why not.
type keyOutcome struct {
	models *geoapi.ModelsOutput
	fail   *checkResult // the key is missing, malformed or refused
	// publicOnly: the service takes no keys on its model list, so the key
	// was checked on the prediction endpoint (free) and models is the
	// public list.
	publicOnly bool
}

// keyAndModels reads the key from the secret and lists the models with it
// (a free call).
func (d *doctor) keyAndModels(ctx context.Context) (*keyOutcome, error) {
	return d.service.get(func() (*keyOutcome, error) {
		secretID := d.secretID
		if secretID == "" {
			var err error
			if secretID, err = d.loc.output(ctx, d.clients, outputSecretArn); err != nil {
				return nil, err
			}
		}
		putKey := fmt.Sprintf("aws secretsmanager put-secret-value --secret-id %s --secret-string '<your geo_ key>'", secretID)
		raw, err := d.c.secrets.SecretString(ctx, secretID)
		if err != nil {
			return nil, fmt.Errorf("read secret %s: %w", secretID, err)
		}
		key, err := secretkey.Parse(raw)
		switch {
		case errors.Is(err, secretkey.ErrEmptySecret):
			r := fail("the secret "+secretID+" is empty", putKey)
			return &keyOutcome{fail: &r}, nil
		case err != nil:
			// secretkey's errors never quote the secret.
			detail := "the secret holds no geo_ key (still the placeholder the stack created?)"
			if err != secretkey.ErrKeyFormat {
				detail = "the secret holds no geo_ key: " + err.Error()
			}
			r := fail(detail, putKey)
			return &keyOutcome{fail: &r}, nil
		}
		d.c.key = key
		baseURL := strings.TrimSpace(d.c.getenv(envvars.APIURL))
		if baseURL == "" {
			env, err := d.predictorEnv(ctx)
			if err != nil {
				return nil, fmt.Errorf("%s is not set and the predictor's could not be read: %w", envvars.APIURL, err)
			}
			if baseURL = env[envvars.APIURL]; baseURL == "" {
				return nil, fmt.Errorf("%s is not set, neither here nor in the predictor's configuration", envvars.APIURL)
			}
		}
		// The key goes in the header the deployed predictor uses.
		header, err := keyHeaderFromEnv(d.c)
		if err != nil {
			return nil, err
		}
		if env, err := d.predictorEnv(ctx); err == nil && env[envvars.APIKeyHeader] != "" && d.c.getenv(envvars.APIKeyHeader) == "" {
			header = env[envvars.APIKeyHeader]
		}
		client, err := geoapi.New(baseURL, func(o *geoapi.Options) { o.APIKey, o.KeyHeader = key, header })
		if err != nil {
			return nil, fmt.Errorf("%s: %w", envvars.APIURL, err)
		}
		out, err := client.Models(ctx, &geoapi.ModelsInput{})
		publicOnly := geoapi.KeyNotAccepted(err)
		if publicOnly {
			// The model list takes no keys (the service's public backend):
			// the public list, then.
			out, err = client.Models(ctx, &geoapi.ModelsInput{Anonymous: true})
		}
		if err == nil {
			// The key must pass where the pipeline sends it, the prediction
			// endpoint: a model list also answers a request whose key went
			// in a header the service does not read. The probe carries no
			// image, so it costs nothing.
			_, err = client.CheckKey(ctx, nil)
		}
		var unauthorized *geoapi.UnauthorizedError
		switch {
		case errors.As(err, &unauthorized):
			r := fail(fmt.Sprintf("the service refused the secret's key (%d): %s", unauthorized.StatusCode,
				dash(unauthorized.Message)), putKey)
			if unauthorized.Refusal() == geoapi.KeyMissing {
				r = fail(fmt.Sprintf("the service received no key in %s (%d): %s", header, unauthorized.StatusCode, dash(unauthorized.Message)),
					"deploy with -c apiKeyHeader=<the header the service documents>")
			}
			return &keyOutcome{fail: &r}, nil
		case err != nil:
			return nil, fmt.Errorf("model list and key: %w", describe(err))
		}
		return &keyOutcome{models: out, publicOnly: publicOnly}, nil
	})
}

// checkKey: the secret holds a geo_ key the service accepts.
func (d *doctor) checkKey(ctx context.Context) checkResult {
	k, err := d.keyAndModels(ctx)
	switch {
	case err != nil:
		return d.couldNotCheck(err)
	case k.fail != nil:
		return *k.fail
	}
	listed := fmt.Sprintf("%d models listed", len(k.models.Models))
	if k.publicOnly {
		listed = fmt.Sprintf("%d public models listed: the model list takes no keys", len(k.models.Models))
	}
	return pass("the secret holds a geo_ key the service accepts on the prediction endpoint (checked without a prediction; " + listed + ")")
}

// s3ObjectCreated is the event the stack subscribes the queue to.
const s3ObjectCreated = "s3:ObjectCreated:*"

// checkNotification: the bucket sends ObjectCreated events to the queue,
// itself (notifications=s3) or through EventBridge and the stack's rule.
func (d *doctor) checkNotification(ctx context.Context) checkResult {
	bucket, err := d.loc.output(ctx, d.clients, outputBucketName)
	if err != nil {
		return d.couldNotCheck(err)
	}
	queueArn, err := d.uploadQueueArn(ctx)
	if err != nil {
		return d.couldNotCheck(err)
	}
	if d.clients.notifications == nil {
		return d.couldNotCheck(errors.New("no S3 client"))
	}
	out, err := d.clients.notifications.GetBucketNotificationConfiguration(ctx, &s3.GetBucketNotificationConfigurationInput{Bucket: aws.String(bucket)})
	if err != nil {
		return d.couldNotCheck(fmt.Errorf("notification configuration of bucket %s: %w", bucket, err))
	}
	var otherEvents []string
	for _, qc := range out.QueueConfigurations {
		if aws.ToString(qc.QueueArn) != queueArn {
			continue
		}
		for _, e := range qc.Events {
			if string(e) == s3ObjectCreated {
				return pass(fmt.Sprintf("bucket %s sends %s events to the queue", bucket, s3ObjectCreated))
			}
			otherEvents = append(otherEvents, string(e))
		}
	}
	// notifications=eventbridge: the bucket sends every event to
	// EventBridge and the stack's rule sends the uploads to the queue.
	if out.EventBridgeConfiguration != nil {
		rule, err := d.uploadRuleOfQueue(ctx, queueArn)
		switch {
		case err != nil:
			return d.couldNotCheck(err)
		case rule != "":
			return pass(fmt.Sprintf("bucket %s sends its events to EventBridge and rule %s sends the uploads to the queue", bucket, rule))
		}
		return fail(fmt.Sprintf("bucket %s sends its events to EventBridge, but no rule sends them to the queue %s: uploads are not processed", bucket, queueArn),
			"run cdk deploy again to recreate the stack's UploadRule")
	}
	const fix = "run cdk deploy again to restore it (S3 keeps one notification configuration per bucket: whatever rewrote it dropped the stack's entry)"
	if len(otherEvents) > 0 {
		return fail(fmt.Sprintf("bucket %s notifies the queue of %s only, not %s", bucket, strings.Join(otherEvents, ", "), s3ObjectCreated), fix)
	}
	return fail(fmt.Sprintf("bucket %s has no %s notification to the queue %s: uploads are not processed", bucket, s3ObjectCreated, queueArn), fix)
}

// checkTrigger: the queue has an Enabled Lambda event source mapping.
func (d *doctor) checkTrigger(ctx context.Context) checkResult {
	mappings, err := d.queueMappings(ctx)
	if err != nil {
		return d.couldNotCheck(err)
	}
	if len(mappings) == 0 {
		queueArn, _ := d.uploadQueueArn(ctx)
		return fail("no Lambda event source mapping reads the queue "+queueArn+": uploads wait in it unprocessed",
			"run cdk deploy again to recreate the predictor's queue trigger")
	}
	for _, m := range mappings {
		if aws.ToString(m.State) == "Enabled" {
			return pass(fmt.Sprintf("the queue triggers %s (event source mapping %s Enabled)", functionName(aws.ToString(m.FunctionArn)), aws.ToString(m.UUID)))
		}
	}
	m := mappings[0]
	uuid, state := aws.ToString(m.UUID), aws.ToString(m.State)
	detail := fmt.Sprintf("the queue's event source mapping %s (%s) is %s", uuid, functionName(aws.ToString(m.FunctionArn)), dash(state))
	if reason := aws.ToString(m.StateTransitionReason); reason != "" {
		detail += ": " + reason
	}
	if state == "Disabled" || state == "Disabling" {
		return fail(detail, "aws lambda update-event-source-mapping --uuid "+uuid+" --enabled")
	}
	return fail(detail, "wait a minute for the mapping to leave "+dash(state)+", then run geolocate doctor again")
}

// checkHeartbeat: MonitorHealthy has a datapoint within two schedule
// periods and the latest is 1.
func (d *doctor) checkHeartbeat(ctx context.Context) checkResult {
	if d.clients.metrics == nil {
		return d.couldNotCheck(errors.New("no CloudWatch client"))
	}
	now := d.now()
	window := 2 * d.monitorPeriod
	// One-minute datapoints, coarser when the window would exceed the 1440
	// datapoints one call returns.
	period := max(time.Minute, (window/1440+time.Minute-1)/time.Minute*time.Minute)
	out, err := d.clients.metrics.GetMetricStatistics(ctx, &cloudwatch.GetMetricStatisticsInput{
		Namespace:  aws.String(metricnames.DefaultNamespace),
		MetricName: aws.String(metricnames.MonitorHealthy),
		Dimensions: []cwtypes.Dimension{{Name: aws.String(metricnames.DimPipeline), Value: aws.String(d.loc.stack)}},
		StartTime:  aws.Time(now.Add(-window)),
		EndTime:    aws.Time(now),
		Period:     aws.Int32(int32(period / time.Second)),
		Statistics: []cwtypes.Statistic{cwtypes.StatisticMinimum},
	})
	if err != nil {
		return d.couldNotCheck(fmt.Errorf("%s statistics: %w", metricnames.MonitorHealthy, err))
	}
	var latest *cwtypes.Datapoint
	for i := range out.Datapoints {
		p := &out.Datapoints[i]
		if p.Timestamp == nil || p.Minimum == nil {
			continue
		}
		if latest == nil || p.Timestamp.After(*latest.Timestamp) {
			latest = p
		}
	}
	periods := fmt.Sprintf("2 schedule periods of %s", shortDuration(d.monitorPeriod))
	if latest == nil {
		return fail(fmt.Sprintf("no %s datapoint (namespace %s, %s=%s) in the last %s (%s): the monitor has not reported",
			metricnames.MonitorHealthy, metricnames.DefaultNamespace, metricnames.DimPipeline, d.loc.stack, shortDuration(window), periods),
			"check that the stack's MonitorSchedule rule is enabled and read the monitor function's logs (pass --monitor-period if the schedule is not "+shortDuration(defaultMonitorPeriod)+")")
	}
	at := latest.Timestamp.UTC()
	when := fmt.Sprintf("%s ago (%s)", shortDuration(max(0, now.Sub(at)).Round(time.Minute)), at.Format("15:04 UTC"))
	if *latest.Minimum < 1 {
		return fail(fmt.Sprintf("the monitor's latest run, %s, was unhealthy (%s %g)", when, metricnames.MonitorHealthy, *latest.Minimum),
			"read the monitor function's latest logs for the step that failed (key, credits or model list); geolocate status makes the same reads")
	}
	return pass(fmt.Sprintf("the monitor reported healthy %s, within %s", when, periods))
}

// shortDuration is "5m" rather than "5m0s".
func shortDuration(dur time.Duration) string {
	s := dur.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// alarmTopic is the stack's AlarmTopicArn output, else the SNS topic among
// its resources.
func (d *doctor) alarmTopic(ctx context.Context) (string, error) {
	arn, err := d.loc.output(ctx, d.clients, outputAlarmTopicArn)
	if err == nil || d.loc.err != nil {
		return arn, err // found, or the stack itself is unreadable
	}
	unknown := func(reason error) error {
		return fmt.Errorf("alarm topic unknown: the stack has no %s output and %w", outputAlarmTopicArn, reason)
	}
	if d.clients.stackResources == nil {
		return "", unknown(errors.New("its resources cannot be listed"))
	}
	var topics []string
	in := &cloudformation.ListStackResourcesInput{StackName: aws.String(d.loc.stack)}
	for range maxPages {
		out, err := d.clients.stackResources.ListStackResources(ctx, in)
		if err != nil {
			return "", unknown(fmt.Errorf("listing its resources failed: %w", err))
		}
		for _, r := range out.StackResourceSummaries {
			if aws.ToString(r.ResourceType) != "AWS::SNS::Topic" || aws.ToString(r.PhysicalResourceId) == "" {
				continue
			}
			// The physical id of a topic is its ARN.
			if strings.HasPrefix(aws.ToString(r.LogicalResourceId), "AlarmTopic") {
				return aws.ToString(r.PhysicalResourceId), nil
			}
			topics = append(topics, aws.ToString(r.PhysicalResourceId))
		}
		if aws.ToString(out.NextToken) == "" {
			break
		}
		in.NextToken = out.NextToken
	}
	if len(topics) == 1 {
		return topics[0], nil
	}
	return "", unknown(fmt.Errorf("it has %d SNS topics", len(topics)))
}

// checkSubscription: the alarm topic has a confirmed subscription.
func (d *doctor) checkSubscription(ctx context.Context) checkResult {
	topic, err := d.alarmTopic(ctx)
	if err != nil {
		return d.couldNotCheck(err)
	}
	if d.clients.topics == nil {
		return d.couldNotCheck(errors.New("no SNS client"))
	}
	var confirmed, pending int
	var protocols []string
	in := &sns.ListSubscriptionsByTopicInput{TopicArn: aws.String(topic)}
	for range maxPages {
		out, err := d.clients.topics.ListSubscriptionsByTopic(ctx, in)
		if err != nil {
			return d.couldNotCheck(fmt.Errorf("subscriptions of %s: %w", topic, err))
		}
		for _, s := range out.Subscriptions {
			switch aws.ToString(s.SubscriptionArn) {
			case "PendingConfirmation":
				pending++
			case "Deleted", "":
			default:
				confirmed++
				if p := aws.ToString(s.Protocol); p != "" && !slices.Contains(protocols, p) {
					protocols = append(protocols, p)
				}
			}
		}
		if aws.ToString(out.NextToken) == "" {
			break
		}
		in.NextToken = out.NextToken
	}
	subscribe := "aws sns subscribe --topic-arn " + topic + " --protocol email --notification-endpoint YOU@EXAMPLE.COM"
	switch {
	case confirmed > 0:
		slices.Sort(protocols)
		return pass(fmt.Sprintf("the alarm topic has %d confirmed subscription(s) (%s)", confirmed, strings.Join(protocols, ", ")))
	case pending > 0:
		return fail(fmt.Sprintf("the alarm topic's %d subscription(s) wait for confirmation: alarms reach nobody", pending),
			"confirm from the message SNS sent to the endpoint (links expire after 3 days; "+subscribe+" sends a new one)")
	}
	return fail("the alarm topic "+topic+" has no subscription: alarms reach nobody", subscribe+", then confirm from the email")
}

// checkDeadLetters: no message waits in the dead-letter queue.
func (d *doctor) checkDeadLetters(ctx context.Context) checkResult {
	url, attrs, err := d.queueAttrs(ctx, outputDeadLetterQueueURL,
		sqstypes.QueueAttributeNameApproximateNumberOfMessages, sqstypes.QueueAttributeNameQueueArn)
	if err != nil {
		return d.couldNotCheck(err)
	}
	raw := attrs[string(sqstypes.QueueAttributeNameApproximateNumberOfMessages)]
	n, err := strconv.Atoi(raw)
	if err != nil {
		return d.couldNotCheck(fmt.Errorf("queue %s: ApproximateNumberOfMessages %q", url, raw))
	}
	if n == 0 {
		return pass("the dead-letter queue is empty")
	}
	arn := attrs[string(sqstypes.QueueAttributeNameQueueArn)]
	if arn == "" {
		arn = "<dead-letter queue ARN>"
	}
	return fail(fmt.Sprintf("%d message(s) wait in the dead-letter queue", n),
		"see why (geolocate results --status waiting), then redrive them: aws sqs start-message-move-task --source-arn "+arn)
}

// checkModel: the predictor's configured model is listed and ready; with
// none configured, some model is.
func (d *doctor) checkModel(ctx context.Context) checkResult {
	k, err := d.keyAndModels(ctx)
	switch {
	case err != nil:
		return d.couldNotCheck(err)
	case k.fail != nil:
		return d.couldNotCheck(errors.New("the model list needs a key the service accepts (see the API key check)"))
	}
	env, envErr := d.predictorEnv(ctx)
	if id := env[envvars.ModelID]; id != "" {
		m, ok := k.models.Find(id)
		switch {
		case !ok && k.publicOnly:
			return pass("the configured model " + id + " is not in the public model list, the only one the service shows without a key: " +
				"a whitelist model, or retired (the predictor falls back to the default model on the service's 422)")
		case !ok:
			return fail("the configured model "+id+" (the predictor's "+envvars.ModelID+") is not in the key's model list",
				"deploy with a listed modelId (geolocate models) or without one for the service's default model")
		case m.Status != geoapi.StatusReady:
			status := m.StatusRaw
			if status == "" {
				status = string(m.Status)
			}
			return fail(fmt.Sprintf("the configured model %s is %s, not ready", id, status),
				"wait for the service to bring "+id+" back, or deploy with another modelId (geolocate models lists them)")
		}
		return pass("the configured model " + id + " is ready")
	}
	ready := k.models.CountByStatus()[geoapi.StatusReady]
	configured := "no model configured (the service's default)"
	if envErr != nil {
		configured = "configured model unknown (" + oneLine(envErr, d.c.key) + ")"
	}
	if ready == 0 {
		return fail(fmt.Sprintf("%s, and none of the %d listed models is ready", configured, len(k.models.Models)),
			"wait for the service to recover (geolocate models shows each model's status)")
	}
	return pass(fmt.Sprintf("%s; %d of %d listed models ready", configured, ready, len(k.models.Models)))
}
