package main

import (
	"maps"
	"strconv"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdadestinations"
	"github.com/aws/jsii-runtime-go"

	"github.com/geolocate-aws/geolocate/pkg/jobs"
	"github.com/geolocate-aws/geolocate/pkg/shared/configrules"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
	"github.com/geolocate-aws/geolocate/pkg/shared/metricnames"
	"github.com/geolocate-aws/geolocate/pkg/shared/settings"
	"github.com/geolocate-aws/geolocate/pkg/shared/tableschema"
)

// The job engine in the account (issue 47, docs/jobs.md):
//
//	geolocate backfill/reprocess ──► job item in the results table ──(async Invoke, once)──┐
//	                                                                                        ▼
//	EventBridge rule rate(1 minute) ─────────────────────────────────────────► jobfeeder Lambda (one at a time)
//	                                                                             │ ListObjectVersions (a bounded step)
//	                                                                             │ manifest chunks, cursor, counters ─► results table
//	                                                                             ▼
//	                                                   upload queue ◄── SendMessageBatch, at most jobWindowMinutes of calls
//	                                                        ▼
//	                                                   predictor (as for an upload; adds the job's counters)
//
// The feeder holds no state between runs: everything it needs is in the
// job's items, so a run that fails, times out or is skipped loses nothing
// and the next minute's run carries on from the stored cursor.
const (
	jobFeederAssetDir = "jobfeeder"
	// jobFeederTimeoutSeconds bounds one run over every active job: a
	// listing step, a window's SendMessageBatch calls and the job writes.
	// The feeder stops starting work before it (FeederOptions.RunBudget)
	// and the next run goes on from the stored cursor.
	jobFeederTimeoutSeconds = 120
	jobFeederMemoryMB       = jobs.FeederMemoryMB
	// jobFeederConcurrency: one feeder at a time, a belt to the lease's
	// braces. Each run leases every job it touches until past its own
	// Lambda deadline (pkg/jobs leaseUntil), so two runs never feed one
	// job; the reservation also keeps a run that overlaps the next minute
	// (or the CLI's kick) from starting at all.
	jobFeederConcurrency = 1
	// jobFeederPeriod is the schedule: a job's window is topped up, its
	// listing advanced and a pause or cancel applied within a minute.
	jobFeederPeriod = time.Minute
)

// jobFeederTableActions are the feeder's item operations on the table:
// read and update job items and read the day's spend (GetItem,
// UpdateItem), write manifest chunks (PutItem), list the active jobs and
// a reprocess's records, read chunks (Query). No Scan; DeleteItem only on
// the active-jobs index (newJobFeeder).
var jobFeederTableActions = []string{"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:Query"}

// jobFeeder is the job engine's part of the stack.
type jobFeeder struct {
	fn       awslambda.Function
	role     awsiam.Role
	schedule awsevents.Rule
}

// feederReservedConcurrency is the feeder's reservation, nil (none) on an
// account whose quota leaves nothing to reserve (a new account starts at
// 10): there the deploy would fail with "Specified
// ReservedConcurrentExecutions for function decreases account's
// UnreservedConcurrentExecution below its minimum value", and the lease
// alone keeps overlapping runs from feeding a job twice.
func feederReservedConcurrency(cfg Config) *float64 {
	if cfg.AccountConcurrencyLimit < jobFeederConcurrency+configrules.MinUnreservedConcurrency {
		return nil
	}
	return jsii.Number(jobFeederConcurrency)
}

// newJobFeeder creates the feeder function, its role, log group and
// 1-minute schedule. The monitoring failures queue (created with the
// monitor) keeps the schedule events EventBridge could not deliver and the
// records of failed runs.
func newJobFeeder(stack awscdk.Stack, p *pipeline, assets functionAssets) *jobFeeder {
	cfg := p.cfg
	// The settings the table gives the feeder (settings.JobFeeder: rate,
	// concurrency, budget, window, log level), and what the stack knows.
	env := cfg.functionEnv(settings.JobFeeder)
	maps.Copy(env, map[string]*string{
		envvars.TableName:       p.table.TableName(),
		envvars.QueueURL:        p.queue.QueueUrl(),
		envvars.MetricNamespace: jsii.String(metricnames.DefaultNamespace),
		envvars.PipelineName:    stack.StackName(),
		// The queue's own count, as for the predictor (redriveMaxReceiveCount),
		// and its visibility timeout: the feeder settles a job by them.
		envvars.MaxReceiveCount: jsii.String(strconv.Itoa(redriveMaxReceiveCount(p.queue))),
		envvars.QueueVisibility: jsii.String(cfg.QueueVisibilityTimeout().String()),
		envGoMemLimit:           jsii.String(goMemLimit(jobFeederMemoryMB)),
	})

	f := &jobFeeder{}
	f.role = newFunctionRole(stack, "JobFeederRole", "Job feeder: lists the upload bucket, keeps jobs in the results table, feeds the upload queue")
	logs := newFunctionLogGroup(stack, "JobFeederLogs", cfg, f.role)
	f.fn = newGoFunction(stack, "JobFeeder", &awslambda.FunctionProps{
		Description:                  jsii.String("Advances every active backfill and reprocess job a step and feeds the upload queue (docs/jobs.md)"),
		Code:                         assets.code(jobFeederAssetDir),
		Timeout:                      awscdk.Duration_Seconds(jsii.Number(jobFeederTimeoutSeconds)),
		MemorySize:                   jsii.Number(jobFeederMemoryMB),
		ReservedConcurrentExecutions: feederReservedConcurrency(cfg),
		Role:                         f.role,
		LogGroup:                     logs,
		Environment:                  &env,
		// As the monitor's: the next minute's run supersedes a failed or
		// late one, so no retry and no event older than a period; a failed
		// run's record (request and error) is kept in the failures queue.
		// A failure also shows as the feeder's Errors on the dashboard, as
		// the job's Error (geolocate jobs) and, once a job stops moving,
		// as JobStalled.
		RetryAttempts: jsii.Number(0),
		MaxEventAge:   awscdk.Duration_Seconds(jsii.Number(jobFeederPeriod.Seconds())),
		OnFailure:     awslambdadestinations.NewSqsDestination(p.monitoringFailures),
	})

	// ListObjectVersions (every version of a backfill's prefix) needs
	// s3:ListBucketVersions on the bucket; on a bucket that was never
	// versioned it lists the objects and still needs only that. Listing
	// reads names, sizes and ETags, never an object: no s3:GetObject and,
	// for an SSE-KMS bucket, no kms:Decrypt. Not limited by s3:prefix: a
	// job may list any prefix of the bucket, as the predictor may
	// (s3:ListBucket), and only the predictor reads objects, under the
	// upload prefix.
	f.role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings("s3:ListBucketVersions"),
		Resources: jsii.Strings(*p.bucket.BucketArn()),
	}))
	grantTableData(f.role, p, jobFeederTableActions)
	// A job that ends leaves the feeder's list: its item in the active
	// jobs' partition is deleted (jobs.Store). Only there: the feeder
	// deletes no record, no job and no chunk.
	f.role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings("dynamodb:DeleteItem"),
		Resources: jsii.Strings(*p.table.TableArn()),
		Conditions: &map[string]any{
			"ForAllValues:StringEquals": map[string]any{"dynamodb:LeadingKeys": []string{jobs.ActivePartition}},
		},
	}))
	// A reprocess job selects records as the CLI's results command does,
	// through the by-status index (ledger.Store.Query).
	f.role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings("dynamodb:Query"),
		Resources: jsii.Strings(*p.table.TableArn() + "/index/" + tableschema.StatusIndex),
	}))
	// SendMessageBatch is authorized as sqs:SendMessage. The queue is
	// SSE-SQS: no key to grant.
	f.role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings("sqs:SendMessage"),
		Resources: jsii.Strings(*p.queue.QueueArn()),
	}))

	// Delivery as the monitor's schedule (newMonitor): a few retries within
	// one period, then the failures queue.
	age := awscdk.Duration_Seconds(jsii.Number(jobFeederPeriod.Seconds()))
	f.schedule = awsevents.NewRule(stack, jsii.String("JobFeederSchedule"), &awsevents.RuleProps{
		Description: jsii.String("Runs the job feeder every minute (it does nothing while no job is active)"),
		Schedule:    awsevents.Schedule_Rate(awscdk.Duration_Minutes(jsii.Number(jobFeederPeriod.Minutes()))),
		Targets: &[]awsevents.IRuleTarget{awseventstargets.NewLambdaFunction(f.fn, &awseventstargets.LambdaFunctionProps{
			RetryAttempts:   jsii.Number(monitorDeliveryRetries),
			MaxEventAge:     age,
			DeadLetterQueue: p.monitoringFailures,
		})},
	})
	return f
}
