package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// GeolocationStackProps configures NewGeolocationStack.
type GeolocationStackProps struct {
	awscdk.StackProps
	// Config is the validated context (see LoadConfig).
	Config Config
	// SourceDir is the root of the module the functions are built from
	// during synthesis; empty: the module containing the working directory.
	SourceDir string
	// AssetsDir, for tests, holds <function>/bootstrap for each of
	// functionAssetDirs, used as they are instead of building the functions.
	AssetsDir string
}

// pipeline holds the resources the alarms, dashboard and outputs refer to.
type pipeline struct {
	cfg         Config
	bucket      awss3.IBucket
	queue       awssqs.Queue
	deadLetters awssqs.Queue
	// uploadRule routes the bucket's EventBridge events to the queue; nil
	// when the bucket notifies the queue itself (notifications=s3).
	uploadRule    awsevents.Rule
	table         awsdynamodb.Table
	secret        awssecretsmanager.ISecret
	createdSecret awssecretsmanager.Secret // nil when the secret is imported
	predictor     awslambda.Function
	predictorLogs awslogs.LogGroup
	predictorRole awsiam.Role
	monitor       awslambda.Function
	// jobs is the job engine: the feeder and its schedule (jobfeeder.go).
	jobs      *jobFeeder
	mapWidget awslambda.Function // the dashboard's map (custom widget)
	// monitorSchedule runs the monitor; its AWS/Events metrics show the
	// monitor was due, which MonitorHeartbeat compares with its reports.
	monitorSchedule awsevents.Rule
	// monitoringFailures keeps undelivered schedule events, failed monitor
	// runs and undeliverable alarm notifications.
	monitoringFailures awssqs.Queue
	topic              awssns.Topic
	metrics            pipelineMetrics
	// events is the results pipe and what goes with it; nil with events=false.
	events *resultEvents
}

// NewGeolocationStack provisions the whole pipeline: uploads bucket, queue
// and dead-letter queue, results table, API key secret, predictor and
// monitor functions, the job feeder running backfills and reprocess runs, the results pipe publishing an event per final record,
// alarms to an SNS topic, and a dashboard with a map drawn by a third
// function.
func NewGeolocationStack(scope constructs.Construct, id string, props *GeolocationStackProps) awscdk.Stack {
	stack := awscdk.NewStack(scope, &id, &props.StackProps)
	cfg := props.Config

	p := &pipeline{cfg: cfg, metrics: newPipelineMetrics(*stack.StackName())}
	handlerRole, immutableHandlerRole := newNotificationsHandlerRole(stack)
	p.bucket = newUploadBucket(stack, cfg, immutableHandlerRole)
	p.queue, p.deadLetters = newUploadQueues(stack, cfg)
	p.uploadRule = subscribeQueueToUploads(stack, p.bucket, p.queue, p.deadLetters, cfg)
	configureNotificationsHandler(stack, cfg, p.bucket, handlerRole)
	routeAutoDeleteLogs(stack, cfg)
	p.table = newResultsTable(stack, cfg)
	p.secret, p.createdSecret = apiKeySecret(stack, cfg)
	assets := newFunctionAssets(props)
	p.predictor, p.predictorLogs, p.predictorRole = newPredictor(stack, p, assets)
	p.monitor = newMonitor(stack, p, assets)
	p.jobs = newJobFeeder(stack, p, assets)
	p.mapWidget = newMapWidget(stack, p, assets)
	p.events = newResultEvents(stack, p, assets)

	p.topic = newAlarmTopic(stack, cfg, p.monitoringFailures)
	alarms := newAlarms(stack, p)
	dashboard := newDashboard(stack, p, alarms)

	addOutputs(stack, p, dashboard)
	suppressJustifiedFindings(stack, p)
	return stack
}

func addOutputs(stack awscdk.Stack, p *pipeline, dashboard dashboardRef) {
	output := func(id, description string, value *string) {
		awscdk.NewCfnOutput(stack, jsii.String(id), &awscdk.CfnOutputProps{
			Description: jsii.String(description),
			Value:       value,
		})
	}
	output("BucketName", "Upload images here (within the prefix/suffix filters) to have them geolocated", p.bucket.BucketName())
	output("TableName", "Prediction records", p.table.TableName())
	output("SecretArn", "Put the geo_ API key here: aws secretsmanager put-secret-value --secret-id <this> --secret-string ...", p.secret.SecretArn())
	output("QueueUrl", "Upload notifications waiting for the predictor", p.queue.QueueUrl())
	output("DeadLetterQueueUrl", "Uploads that failed repeatedly; inspect, then redrive to the queue", p.deadLetters.QueueUrl())
	output("DashboardUrl", "CloudWatch dashboard of the pipeline", dashboard.url)
	output("JobFeederFunctionName", "Runs backfill and reprocess jobs each minute; the CLI invokes it once when it creates a job", p.jobs.fn.FunctionName())
	output("AlarmTopicArn", "SNS topic that receives every alarm; subscribe to it", p.topic.TopicArn())
	if p.events != nil {
		output("ResultEventsBusName", "Bus of the result events (source geolocate, docs/events.md); add rules there", p.events.bus.EventBusName())
		output("ResultEventsDeadLetterQueueUrl", "Batches of result events the pipe could not deliver (stream positions, not the events)", p.events.deadLetters.QueueUrl())
	}
}

// removalPolicy keeps stored data when the stack is deleted unless the
// removeOnDestroy context switch is set (development stacks).
func (c Config) removalPolicy() awscdk.RemovalPolicy {
	if c.RemoveOnDestroy {
		return awscdk.RemovalPolicy_DESTROY
	}
	return awscdk.RemovalPolicy_RETAIN
}
