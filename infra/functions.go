package main

import (
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdadestinations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"

	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
	"github.com/geolocate-aws/geolocate/pkg/shared/metricnames"
	"github.com/geolocate-aws/geolocate/pkg/shared/settings"
	"github.com/geolocate-aws/geolocate/pkg/shared/tableschema"
)

// The functions: each is built from ./functions/<name> (see assets.go); a
// prebuilt GeolocationStackProps.AssetsDir holds <name>/bootstrap instead.
const (
	predictorAssetDir = "predictor"
	monitorAssetDir   = "monitor"
)

// functionAssetDirs lists every function the stack deploys (mapwidget.go
// adds the third, events.go the results pipe's enrichment, jobfeeder.go
// the job engine).
var functionAssetDirs = []string{predictorAssetDir, monitorAssetDir, mapWidgetAssetDir, resultEventsAssetDir, jobFeederAssetDir}

// monitorTimeoutSeconds covers two service calls with their retries and a
// few table writes; the monitor does no per-image work.
const monitorTimeoutSeconds = 60

// The item operations each function performs on the table; nothing more.
// No Scan and no DeleteItem: nothing reads the whole table or removes records.
var (
	// Claims, records and the budget counter (ledger.Store).
	predictorTableActions = []string{"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem"}
	// Credit history readings (monitor.History); the jobs' figures
	// (jobs.Store.List: the index partition's Query, each job's GetItem).
	monitorTableActions = []string{"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query"}
)

// envGoMemLimit is the Go runtime's soft memory limit variable.
const envGoMemLimit = "GOMEMLIMIT"

// goMemLimit is the GOMEMLIMIT for a function of memoryMB: 90% of it,
// in MiB. Without a limit the Go collector runs when the heap doubles, so a
// downscale whose live set peaks near 250 MB can ask for twice that before
// collecting and the Lambda sandbox kills the process at its memory size.
// With the limit, the collector works harder as the heap nears it instead.
// The 10% left covers what the Go runtime does not manage and the limit
// does not count (the binary's code, the kernel's socket buffers), so the
// limit is met before Lambda's. It is a soft limit: a live set above it
// still runs, with more collection, rather than failing.
func goMemLimit(memoryMB int) string {
	return strconv.Itoa(memoryMB*9/10) + "MiB"
}

// newPredictor creates the function that turns queued upload notifications
// into paid predictions and records them.
func newPredictor(stack awscdk.Stack, p *pipeline, assets functionAssets) (awslambda.Function, awslogs.LogGroup, awsiam.Role) {
	cfg := p.cfg
	// The settings the table gives the predictor (an unset topN or modelId
	// stays unset: the service's default), and what the stack knows.
	env := cfg.functionEnv(settings.Predictor)
	maps.Copy(env, map[string]*string{
		envvars.TableName:       p.table.TableName(),
		envvars.SecretID:        secretID(cfg, p.secret),
		envvars.ClaimLease:      jsii.String(cfg.ClaimLease().String()),
		envvars.BucketName:      p.bucket.BucketName(),
		envvars.MetricNamespace: jsii.String(metricnames.DefaultNamespace),
		envvars.PipelineName:    stack.StackName(),
		// The queue's own count, so the predictor cannot be told another.
		envvars.MaxReceiveCount: jsii.String(strconv.Itoa(redriveMaxReceiveCount(p.queue))),
		envGoMemLimit:           jsii.String(goMemLimit(cfg.PredictorMemoryMB)),
	})

	role := newFunctionRole(stack, "PredictorRole", "Predictor: reads uploads, the API key secret and the results table")
	logs := newFunctionLogGroup(stack, "PredictorLogs", cfg, role)
	fn := newGoFunction(stack, "Predictor", &awslambda.FunctionProps{
		Description: jsii.String("Geolocates each uploaded image once and records the result"),
		Code:        assets.code(predictorAssetDir),
		Timeout:     awscdk.Duration_Seconds(jsii.Number(cfg.PredictorTimeout.Seconds())),
		MemorySize:  jsii.Number(cfg.PredictorMemoryMB),
		Role:        role,
		LogGroup:    logs,
		Environment: &env,
	})

	// Only objects that can trigger a prediction are readable. GetObject and
	// HeadObject with a versionId need s3:GetObjectVersion; without one (an
	// unversioned existing bucket) they need s3:GetObject.
	role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings("s3:GetObject", "s3:GetObjectVersion"),
		Resources: jsii.Strings(*p.bucket.ArnForObjects(jsii.String(cfg.UploadPrefix + "*"))),
	}))
	// Without ListBucket, S3 answers 403 instead of 404 for an object deleted
	// before processing; with it the predictor can tell the two apart.
	role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings("s3:ListBucket"),
		Resources: jsii.Strings(*p.bucket.BucketArn()),
	}))
	grantTableData(role, p, predictorTableActions)
	p.secret.GrantRead(role, nil)
	// S3 decrypts SSE-KMS objects with the reader's permissions: without
	// kms:Decrypt on the bucket's key GetObject is denied.
	grantDecryptVia(role, cfg.ExistingBucketKmsKeyArn, "s3")
	grantDecryptVia(role, cfg.ExistingSecretKmsKeyArn, "secretsmanager")

	// The event source grants receive/delete/change-visibility on the queue.
	fn.AddEventSource(awslambdaeventsources.NewSqsEventSource(p.queue, &awslambdaeventsources.SqsEventSourceProps{
		BatchSize:               jsii.Number(cfg.BatchSize),
		MaxConcurrency:          jsii.Number(cfg.MaxConcurrency),
		ReportBatchItemFailures: jsii.Bool(true),
	}))
	return fn, logs, role
}

// redriveMaxReceiveCount reads the receive count after which the queue moves
// a message to its dead-letter queue from the queue itself, so the value the
// predictor is told cannot differ from the one the queue enforces.
func redriveMaxReceiveCount(queue awssqs.Queue) int {
	dlq := queue.DeadLetterQueue()
	if dlq == nil || dlq.MaxReceiveCount == nil {
		panic("the upload queue has no dead-letter queue with a maxReceiveCount")
	}
	return int(*dlq.MaxReceiveCount)
}

// newMonitor creates the scheduled function that reads credits and model
// health and publishes them as metrics.
func newMonitor(stack awscdk.Stack, p *pipeline, assets functionAssets) awslambda.Function {
	cfg := p.cfg
	// The monitor reports whether the model the predictor will use is
	// ready, so it gets modelId too (settings.ModelID.Functions).
	env := cfg.functionEnv(settings.Monitor)
	maps.Copy(env, map[string]*string{
		envvars.TableName:       p.table.TableName(),
		envvars.SecretID:        secretID(cfg, p.secret),
		envvars.MetricNamespace: jsii.String(metricnames.DefaultNamespace),
		envvars.PipelineName:    stack.StackName(),
	})

	role := newFunctionRole(stack, "MonitorRole", "Monitor: reads the API key secret and keeps credit history in the results table")
	logs := newFunctionLogGroup(stack, "MonitorLogs", cfg, role)
	failures := newMonitoringFailuresQueue(stack)
	p.monitoringFailures = failures
	fn := newGoFunction(stack, "Monitor", &awslambda.FunctionProps{
		Description: jsii.String("Publishes credit balance, forecast and model health metrics"),
		Code:        assets.code(monitorAssetDir),
		Timeout:     awscdk.Duration_Seconds(jsii.Number(monitorTimeoutSeconds)),
		MemorySize:  jsii.Number(128),
		Role:        role,
		LogGroup:    logs,
		Environment: &env,
		// A failed run is reported by the heartbeat alarm and the next
		// scheduled run comes soon; retries would only pile up overlapping runs.
		RetryAttempts: jsii.Number(0),
		// An event Lambda could not run within a schedule period (throttled)
		// is dropped, and a failed run's record (request and error) is kept
		// in the failures queue for diagnosis.
		MaxEventAge: monitorMaxEventAge(cfg, maxLambdaEventAge),
		OnFailure:   awslambdadestinations.NewSqsDestination(failures),
	})
	grantTableData(role, p, monitorTableActions)
	// While the service refuses API keys on its credit summary, the credit
	// estimate reads the pipeline's records through the by-status index
	// (pkg/monitor/estimate.go).
	role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings("dynamodb:Query"),
		Resources: jsii.Strings(*p.table.TableArn() + "/index/" + tableschema.StatusIndex),
	}))
	p.secret.GrantRead(role, nil)
	// The monitor reads the API key too (GetSecretValue).
	grantDecryptVia(role, cfg.ExistingSecretKmsKeyArn, "secretsmanager")

	// EventBridge invokes the monitor asynchronously. Its retry policy covers
	// failed deliveries (throttled or failed Invoke calls), not function
	// errors: a few retries with backoff, for no longer than one schedule
	// period, since the next scheduled run supersedes a late one. An event
	// still undelivered then goes to the failures queue, so a monitor that
	// is silent because it was never invoked leaves a trace.
	p.monitorSchedule = awsevents.NewRule(stack, jsii.String("MonitorSchedule"), &awsevents.RuleProps{
		Description: jsii.String("Runs the monitor"),
		Schedule:    awsevents.Schedule_Rate(awscdk.Duration_Minutes(jsii.Number(cfg.MonitorSchedule.Minutes()))),
		Targets: &[]awsevents.IRuleTarget{awseventstargets.NewLambdaFunction(fn, &awseventstargets.LambdaFunctionProps{
			RetryAttempts:   jsii.Number(monitorDeliveryRetries),
			MaxEventAge:     monitorMaxEventAge(cfg, maxEventBridgeEventAge),
			DeadLetterQueue: failures,
		})},
	})
	return fn
}

// monitorDeliveryRetries is how often EventBridge retries delivering a
// scheduled event to the monitor after a failed Invoke.
const monitorDeliveryRetries = 2

// Longest event ages EventBridge targets and Lambda's asynchronous
// invocation configuration accept.
const (
	maxEventBridgeEventAge = 24 * time.Hour
	maxLambdaEventAge      = 6 * time.Hour
)

// monitorMaxEventAge is one schedule period, within [1 minute, limit]: an
// event older than that would only run the monitor next to the newer one.
func monitorMaxEventAge(cfg Config, limit time.Duration) awscdk.Duration {
	age := min(max(cfg.MonitorSchedule, time.Minute), limit)
	return awscdk.Duration_Seconds(jsii.Number(age.Seconds()))
}

// newMonitoringFailuresQueue is the dead-letter queue of monitoring: it
// keeps the scheduled events EventBridge could not deliver to the monitor,
// the records of monitor runs that failed, and alarm notifications SNS could
// not deliver to a subscriber. Like the other queues it is encrypted (SSE-SQS
// needs no key policy for EventBridge, Lambda or SNS), TLS-only and keeps
// messages 14 days.
func newMonitoringFailuresQueue(stack awscdk.Stack) awssqs.Queue {
	return awssqs.NewQueue(stack, jsii.String("MonitoringFailuresQueue"), &awssqs.QueueProps{
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:      jsii.Bool(true),
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(maxQueueRetentionDays)),
	})
}

// grantDecryptVia lets role use the customer managed key keyArn (empty: no
// grant) to decrypt, only in requests that service (s3, secretsmanager)
// makes on its behalf, in the key's region, which is the data's region.
func grantDecryptVia(role awsiam.IRole, keyArn, service string) {
	if keyArn == "" {
		return
	}
	region := strings.Split(keyArn, ":")[3] // arn:partition:kms:region:account:key/id
	role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings("kms:Decrypt"),
		Resources: jsii.Strings(keyArn),
		Conditions: &map[string]any{
			"StringEquals": map[string]any{"kms:ViaService": service + "." + region + ".amazonaws.com"},
		},
	}))
}

// newGoFunction fills in what every Go function shares.
func newGoFunction(stack awscdk.Stack, id string, props *awslambda.FunctionProps) awslambda.Function {
	props.Runtime = awslambda.Runtime_PROVIDED_AL2023()
	props.Architecture = awslambda.Architecture_ARM_64()
	props.Handler = jsii.String("bootstrap")
	return awslambda.NewFunction(stack, jsii.String(id), props)
}

// newFunctionRole creates an execution role with no managed policy: the
// grants below and the log group's write grant are all it gets, instead of
// AWSLambdaBasicExecutionRole's account-wide log permissions.
func newFunctionRole(stack awscdk.Stack, id, description string) awsiam.Role {
	return awsiam.NewRole(stack, jsii.String(id), &awsiam.RoleProps{
		AssumedBy:   awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil),
		Description: jsii.String(description),
	})
}

// newFunctionLogGroup creates a function's log group with the configured
// retention and lets role write to it, and only to it.
func newFunctionLogGroup(stack awscdk.Stack, id string, cfg Config, role awsiam.IRole) awslogs.LogGroup {
	group := awslogs.NewLogGroup(stack, jsii.String(id), &awslogs.LogGroupProps{
		Retention:     logRetentions[cfg.LogRetentionDays],
		RemovalPolicy: cfg.removalPolicy(),
	})
	group.GrantWrite(role)
	return group
}

// grantTableData lets role work on the table's items. Unlike Table.Grant it
// leaves out the indexes: only the CLI queries them, with its own credentials.
func grantTableData(role awsiam.IRole, p *pipeline, actions []string) {
	role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings(actions...),
		Resources: jsii.Strings(*p.table.TableArn()),
	}))
}

// logRetentions maps every retention CloudWatch Logs accepts to CDK's enum;
// LoadConfig accepts exactly these keys.
var logRetentions = map[int]awslogs.RetentionDays{
	1: awslogs.RetentionDays_ONE_DAY, 3: awslogs.RetentionDays_THREE_DAYS,
	5: awslogs.RetentionDays_FIVE_DAYS, 7: awslogs.RetentionDays_ONE_WEEK,
	14: awslogs.RetentionDays_TWO_WEEKS, 30: awslogs.RetentionDays_ONE_MONTH,
	60: awslogs.RetentionDays_TWO_MONTHS, 90: awslogs.RetentionDays_THREE_MONTHS,
	120: awslogs.RetentionDays_FOUR_MONTHS, 150: awslogs.RetentionDays_FIVE_MONTHS,
	180: awslogs.RetentionDays_SIX_MONTHS, 365: awslogs.RetentionDays_ONE_YEAR,
	400: awslogs.RetentionDays_THIRTEEN_MONTHS, 545: awslogs.RetentionDays_EIGHTEEN_MONTHS,
	731: awslogs.RetentionDays_TWO_YEARS, 1096: awslogs.RetentionDays_THREE_YEARS,
	1827: awslogs.RetentionDays_FIVE_YEARS, 2192: awslogs.RetentionDays_SIX_YEARS,
	2557: awslogs.RetentionDays_SEVEN_YEARS, 2922: awslogs.RetentionDays_EIGHT_YEARS,
	3288: awslogs.RetentionDays_NINE_YEARS, 3653: awslogs.RetentionDays_TEN_YEARS,
}
