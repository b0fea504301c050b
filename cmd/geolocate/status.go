package main

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/geolocate-aws/geolocate/pkg/geoapi"
	"github.com/geolocate-aws/geolocate/pkg/jobs"
	"github.com/geolocate-aws/geolocate/pkg/lambdarun"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/monitor"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
)

// The stack's outputs (infra/stack.go), read by results, backfill and
// status to find a deployed pipeline's resources.
const (
	outputBucketName         = "BucketName"
	outputTableName          = "TableName"
	outputSecretArn          = "SecretArn"
	outputQueueURL           = "QueueUrl"
	outputDeadLetterQueueURL = "DeadLetterQueueUrl"
	outputDashboardURL       = "DashboardUrl"
	outputAlarmTopicArn      = "AlarmTopicArn"
)

// defaultStackName is cdk.json's stackName; it is also the stack's
// PIPELINE_NAME, the Pipeline dimension of its metrics and credit history.
const defaultStackName = "Geolocation"

// The AWS APIs the operator commands use, narrowed so tests can fake them.
type (
	stackDescriber interface {
		DescribeStacks(ctx context.Context, in *cloudformation.DescribeStacksInput, optFns ...func(*cloudformation.Options)) (*cloudformation.DescribeStacksOutput, error)
	}
	queueAPI interface {
		SendMessageBatch(ctx context.Context, in *sqs.SendMessageBatchInput, optFns ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error)
		GetQueueAttributes(ctx context.Context, in *sqs.GetQueueAttributesInput, optFns ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error)
	}
	// tableAPI is what the ledger and the job store need of the table
	// (jobs.DynamoDBAPI holds ledger.DynamoDBAPI's methods).
	tableAPI = jobs.DynamoDBAPI
)

// awsClients are the clients of one command run.
type awsClients struct {
	stacks  stackDescriber
	queues  queueAPI
	objects s3.ListObjectVersionsAPIClient
	tables  tableAPI
	// Read by doctor (doctor.go).
	stackResources stackResourceLister
	notifications  bucketNotificationAPI
	functions      functionAPI
	metrics        metricAPI
	topics         topicAPI
	// Read by doctor's bucket and pre-deploy checks (doctor_predeploy.go);
	// region is the one the configuration deploys to.
	locations bucketLocationAPI
	rules     ruleTargetAPI
	account   accountAPI
	region    string
}

// loadAWS builds the clients from the default configuration
// (loadAWSConfig), failing at once without credentials. Tests replace it.
var loadAWS = func(ctx context.Context) (*awsClients, error) {
	cfg, err := loadAWSConfig(ctx, os.Getenv)
	if err != nil {
		return nil, err
	}
	stacks := cloudformation.NewFromConfig(cfg)
	objects := s3.NewFromConfig(cfg, lambdarun.S3Options)
	functions := lambda.NewFromConfig(cfg)
	return &awsClients{
		stacks:         stacks,
		queues:         sqs.NewFromConfig(cfg),
		objects:        objects,
		tables:         dynamodb.NewFromConfig(cfg),
		stackResources: stacks,
		notifications:  objects,
		functions:      functions,
		metrics:        cloudwatch.NewFromConfig(cfg),
		topics:         sns.NewFromConfig(cfg),
		locations:      objects,
		rules:          eventbridge.NewFromConfig(cfg),
		account:        functions,
		region:         cfg.Region,
	}, nil
}

// stackLocator finds a deployed pipeline's resources: explicit flags first,
// then the environment, then the stack's outputs.
type stackLocator struct {
	stack     string
	tableName string

	once    sync.Once
	outputs map[string]string
	err     error
}

func (l *stackLocator) register(fs *flag.FlagSet, withTable bool) {
	fs.StringVar(&l.stack, "stack", defaultStackName, "CloudFormation stack whose outputs name the resources")
	if withTable {
		fs.StringVar(&l.tableName, "table", "", "results table (default: "+envvars.TableName+", else the stack's "+outputTableName+" output)")
	}
}

// output returns one of the stack's outputs, describing the stack once.
func (l *stackLocator) output(ctx context.Context, clients *awsClients, key string) (string, error) {
	l.once.Do(func() { l.outputs, l.err = stackOutputs(ctx, clients.stacks, l.stack) })
	if l.err != nil {
		return "", l.err
	}
	v := l.outputs[key]
	if v == "" {
		return "", fmt.Errorf("stack %s has no %s output", l.stack, key)
	}
	return v, nil
}

// table is --table, else TABLE_NAME, else the stack's TableName output.
func (l *stackLocator) table(ctx context.Context, c *cli, clients *awsClients) (string, error) {
	if l.tableName != "" {
		return l.tableName, nil
	}
	if t := tableFromEnv(c); t != "" {
		return t, nil
	}
	t, err := l.output(ctx, clients, outputTableName)
	if err != nil {
		return "", fmt.Errorf("find the results table (pass --table or set %s): %w", envvars.TableName, err)
	}
	return t, nil
}

// stackOutputs reads a stack's outputs by key.
func stackOutputs(ctx context.Context, d stackDescriber, stack string) (map[string]string, error) {
	out, err := d.DescribeStacks(ctx, &cloudformation.DescribeStacksInput{StackName: aws.String(stack)})
	if err != nil {
		return nil, fmt.Errorf("describe stack %s: %w", stack, err)
	}
	if len(out.Stacks) == 0 {
		return nil, fmt.Errorf("describe stack %s: not found", stack)
	}
	outputs := map[string]string{}
	for _, o := range out.Stacks[0].Outputs {
		outputs[aws.ToString(o.OutputKey)] = aws.ToString(o.OutputValue)
	}
	return outputs, nil
}

// runStatus: geolocate status [--stack NAME] — credits, forecast, model
// health and queue depths of a deployed stack. Each part is reported on its
// own; the command fails if any part could not be read.
func runStatus(ctx context.Context, c *cli, args []string) error {
	fs := c.newFlagSet("status", "")
	var (
		loc  stackLocator
		conn connection
	)
	loc.register(fs, false)
	conn.register(fs)
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	clients, err := loadAWS(ctx)
	if err != nil {
		return err
	}
	if _, err := loc.output(ctx, clients, outputQueueURL); err != nil {
		return err // without the stack nothing else can be found
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	var problems []string
	problem := func(part string, err error) {
		problems = append(problems, part)
		fmt.Fprintf(tw, "%s\tunavailable: %s\n", part, oneLine(err, c.key))
	}
	fmt.Fprintf(tw, "stack\t%s\n", loc.stack)

	// The service: key from GEO_API_KEY, --secret-id, or the stack's secret.
	if conn.secretID == "" && c.getenv(envvars.APIKey) == "" {
		conn.secretID, _ = loc.output(ctx, clients, outputSecretArn)
	}
	if client, err := conn.client(ctx, c, true); err != nil {
		problem("service", err)
	} else {
		statusCredits(ctx, tw, client, problem)
		statusModels(ctx, tw, client, problem)
	}
	statusForecast(ctx, c, tw, clients, &loc, problem)
	statusRecords(ctx, c, tw, clients, &loc, problem)
	for _, q := range []struct{ part, output string }{
		{"queue", outputQueueURL},
		{"dead letters", outputDeadLetterQueueURL},
	} {
		url, err := loc.output(ctx, clients, q.output)
		if err != nil {
			problem(q.part, err)
			continue
		}
		depth, err := queueDepth(ctx, clients.queues, url)
		if err != nil {
			problem(q.part, err)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\n", q.part, depth)
	}
	if url, err := loc.output(ctx, clients, outputDashboardURL); err == nil {
		fmt.Fprintf(tw, "dashboard\t%s\n", url)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(problems) > 0 {
		return fmt.Errorf("could not read: %s", strings.Join(problems, ", "))
	}
	return nil
}

func statusCredits(ctx context.Context, tw *tabwriter.Writer, client *geoapi.Client, problem func(string, error)) {
	out, err := client.Credits(ctx, &geoapi.CreditsInput{})
	if geoapi.KeyNotAccepted(err) {
		// A known state of the service, not a failure: the monitor watches
		// the credits from what the pipeline knows (its forecast below).
		fmt.Fprintf(tw, "credits	not readable with an API key (the service takes keys only for predictions): "+
			"the monitor estimates them from a declared or last read balance (geolocate credits --declare)\n")
		return
	}
	if err != nil {
		problem("credits", describe(err))
		return
	}
	line := "-"
	if out.Remaining != nil {
		line = strconv.FormatFloat(*out.Remaining, 'f', -1, 64) + " remaining"
	}
	if out.SubscriptionRemaining != nil {
		line += ", subscription " + strconv.FormatFloat(*out.SubscriptionRemaining, 'f', -1, 64)
	}
	if out.TopUpBalance != nil {
		line += ", top-up " + strconv.FormatFloat(*out.TopUpBalance, 'f', -1, 64)
	}
	fmt.Fprintf(tw, "credits\t%s\n", line)
}

func statusModels(ctx context.Context, tw *tabwriter.Writer, client *geoapi.Client, problem func(string, error)) {
	out, err := client.Models(ctx, &geoapi.ModelsInput{})
	if err != nil {
		problem("models", describe(err))
		return
	}
	var parts []string
	for _, m := range out.Models {
		parts = append(parts, m.ID+" "+string(m.Status))
	}
	fmt.Fprintf(tw, "models\t%s\n", dash(strings.Join(parts, ", ")))
}

// statusForecast reads the monitor's credit history (the stack name is its
// pipeline name) and applies the monitor's own forecast.
func statusForecast(ctx context.Context, c *cli, tw *tabwriter.Writer, clients *awsClients, loc *stackLocator, problem func(string, error)) {
	table, err := loc.table(ctx, c, clients)
	if err != nil {
		problem("forecast", err)
		return
	}
	now := time.Now()
	history := monitor.NewHistory(clients.tables, table, loc.stack, 0)
	readings, err := history.Since(ctx, now.Add(-monitor.DefaultHistoryWindow), now)
	if err != nil {
		problem("forecast", err)
		return
	}
	f, _ := monitor.Forecast(readings, now)
	// Describe: "not enough readings yet (N of M)" rather than a 0 that
	// reads as credits running out today.
	fmt.Fprintf(tw, "forecast\t%s\n", f.Describe())
}

// statusRecordsLimit bounds how many of the last day's records status
// reads to count them.
const statusRecordsLimit = 20000

// statusRecords counts the last 24 hours' records by status, with the
// causes of the waiting ones and how many wait in the dead-letter queue:
// waiting objects are processed again when their cause clears, failed ones
// need a person.
func statusRecords(ctx context.Context, c *cli, tw *tabwriter.Writer, clients *awsClients, loc *stackLocator, problem func(string, error)) {
	table, err := loc.table(ctx, c, clients)
	if err != nil {
		problem("records", err)
		return
	}
	records, err := ledger.New(clients.tables, table).Query(ctx, ledger.QueryInput{
		Since: time.Now().Add(-24 * time.Hour), Limit: statusRecordsLimit})
	if err != nil {
		problem("records", err)
		return
	}
	fmt.Fprintf(tw, "records (24h)\t%s\n", summarizeRecords(records, len(records) == statusRecordsLimit))
	if a, ok := measureAccuracy(records); ok {
		fmt.Fprintf(tw, "accuracy (24h)\t%s\n", a)
	}
}

// summarizeRecords is "3 succeeded, 2 waiting (out_of_credits 2; 1 in the
// dead-letter queue), 1 failed (outcome_unknown 1)".
func summarizeRecords(records []ledger.Record, truncated bool) string {
	count := map[string]int{}
	reasons := map[string]map[string]int{}
	deadLetters := 0
	for i := range records {
		r := &records[i]
		count[r.Status]++
		if r.DeadLetter {
			deadLetters++
		}
		if r.Status == ledger.StatusWaiting || r.Status == ledger.StatusFailed {
			if reasons[r.Status] == nil {
				reasons[r.Status] = map[string]int{}
			}
			reasons[r.Status][r.ErrorCode]++
		}
	}
	var parts []string
	for _, st := range ledger.Statuses {
		if count[st] == 0 {
			continue
		}
		part := fmt.Sprintf("%d %s", count[st], st)
		var detail []string
		for _, code := range slices.Sorted(maps.Keys(reasons[st])) {
			detail = append(detail, fmt.Sprintf("%s %d", code, reasons[st][code]))
		}
		if st == ledger.StatusWaiting && deadLetters > 0 {
			detail = append(detail, fmt.Sprintf("%d in the dead-letter queue", deadLetters))
		}
		if len(detail) > 0 {
			part += " (" + strings.Join(detail, "; ") + ")"
		}
		parts = append(parts, part)
	}
	if len(parts) == 0 {
		return "none"
	}
	s := strings.Join(parts, ", ")
	if truncated {
		s = "at least: " + s
	}
	return s
}

// queueDepth reads a queue's approximate message counts.
func queueDepth(ctx context.Context, q queueAPI, url string) (string, error) {
	out, err := q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(url),
		AttributeNames: []sqstypes.QueueAttributeName{
			sqstypes.QueueAttributeNameApproximateNumberOfMessages,
			sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
		},
	})
	if err != nil {
		return "", fmt.Errorf("queue attributes of %s: %w", url, err)
	}
	attr := func(name sqstypes.QueueAttributeName) string {
		if v := out.Attributes[string(name)]; v != "" {
			return v
		}
		return "?"
	}
	return fmt.Sprintf("%s waiting, %s in flight",
		attr(sqstypes.QueueAttributeNameApproximateNumberOfMessages),
		attr(sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible)), nil
}

// oneLine flattens an error for a table cell, without the key.
func oneLine(err error, key string) string {
	msg := strings.Join(strings.Fields(err.Error()), " ")
	if key != "" {
		msg = strings.ReplaceAll(msg, key, "[redacted key]")
	}
	return msg
}
