package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awspipes"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"

	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
	"github.com/geolocate-aws/geolocate/pkg/shared/resultevents"
	"github.com/geolocate-aws/geolocate/pkg/shared/tableschema"
)

// The results pipe: every record that becomes final is one event on an
// EventBridge bus, read from the results table's stream by an EventBridge
// Pipe and never put beside the table write (a second write that could
// fail alone). The contract for consumers is docs/events.md and
// events/schema/; the local rig (pkg/local/pipes) applies this pipe's
// filter and template, read from the synthesized template.

// defaultEventBusName is the account's default bus, the target when cdk.json
// names none.
const defaultEventBusName = "default"

// The pipe's stream settings.
const (
	// eventsMaxRetries bounds the retries of a batch EventBridge refuses,
	// so a lasting fault (a bus deleted, a permission removed) sends the
	// batch to the dead-letter queue and pages, rather than blocking its
	// shard until the records leave the stream after 24 hours.
	eventsMaxRetries = 10
	// eventsMaxRecordAgeSeconds gives up on a record six hours after its
	// write, well inside the stream's 24-hour retention, so what reaches the
	// dead-letter queue can still be read from the stream for a while.
	eventsMaxRecordAgeSeconds = 6 * 3600
)

// The pipe's enrichment function (functions/resultevents): it builds each
// event's detail in Go, so the detail is valid JSON with exact values for
// any key or place name (resultevents.Detail says why a text template
// cannot promise that). It does no I/O, and a batch of 10 records takes
// milliseconds.
const (
	resultEventsAssetDir              = "resultevents"
	resultEventsEnrichmentMemoryMB    = resultevents.EnrichmentMemoryMB
	resultEventsEnrichmentTimeoutSecs = 10
)

// resultEventsTemplate is the target's input template: the enrichment's
// detail, a JSON object, which a template inserts as JSON (never as text to
// escape) under every reading of the documentation.
const resultEventsTemplate = "<$.detail>"

// resultEvents is the events part of the stack; nil with events=false.
type resultEvents struct {
	pipe        awspipes.CfnPipe
	enrichment  awslambda.Function
	role        awsiam.Role
	deadLetters awssqs.Queue
	bus         awsevents.IEventBus
	// counters are rules on the bus, one per detail type and without
	// targets, that match this stack's events: EventBridge publishes their
	// TriggeredRules by RuleName, the dashboard's count of events by type.
	counters map[string]awsevents.Rule
}

// newResultEvents creates the pipe from the table's stream to the bus, its
// role, its dead-letter queue and the counting rules.
func newResultEvents(stack awscdk.Stack, p *pipeline, assets functionAssets) *resultEvents {
	cfg := p.cfg
	if !cfg.Events {
		return nil
	}
	e := &resultEvents{counters: map[string]awsevents.Rule{}}
	busName := cfg.EventBusName
	if busName == "" {
		busName = defaultEventBusName
	}
	e.bus = awsevents.EventBus_FromEventBusName(stack, jsii.String("ResultEventsBus"), jsii.String(busName))
	// The monitor puts its Model Available events on the same bus
	// (pkg/monitor/modelwatch.go), and on no other.
	p.monitor.AddEnvironment(jsii.String(envvars.EventBusName), jsii.String(busName), nil)
	p.monitor.Role().AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings("events:PutEvents"),
		Resources: &[]*string{e.bus.EventBusArn()},
	}))

	e.deadLetters = awssqs.NewQueue(stack, jsii.String("ResultEventsDeadLetterQueue"), &awssqs.QueueProps{
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:      jsii.Bool(true),
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(maxQueueRetentionDays)),
		RemovalPolicy:   cfg.removalPolicy(),
	})

	fnRole := newFunctionRole(stack, "ResultEventsEnrichmentRole", "Results pipe enrichment: builds each result event's detail; no data access")
	fnLogs := newFunctionLogGroup(stack, "ResultEventsEnrichmentLogs", cfg, fnRole)
	e.enrichment = newGoFunction(stack, "ResultEventsEnrichment", &awslambda.FunctionProps{
		Description: jsii.String("Results pipe enrichment: builds each result event's detail from its stream record (docs/events.md)"),
		Code:        assets.code(resultEventsAssetDir),
		Timeout:     awscdk.Duration_Seconds(jsii.Number(resultEventsEnrichmentTimeoutSecs)),
		MemorySize:  jsii.Number(resultEventsEnrichmentMemoryMB),
		Role:        fnRole,
		LogGroup:    fnLogs,
		Environment: &map[string]*string{
			envvars.LogLevel: jsii.String(cfg.LogLevel),
			envGoMemLimit:    jsii.String(goMemLimit(resultEventsEnrichmentMemoryMB)),
		},
	})

	streamArn := p.table.TableStreamArn()
	// Inline policies, part of the role itself: Pipes checks the role when
	// the pipe is created, so the grants must exist before the pipe does,
	// which a separate AWS::IAM::Policy resource does not promise.
	policy := awsiam.NewPolicyDocument(&awsiam.PolicyDocumentProps{Statements: &[]awsiam.PolicyStatement{
		awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid:       jsii.String("ReadTheResultsStream"),
			Actions:   jsii.Strings("dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"),
			Resources: &[]*string{streamArn},
		}),
		// ListStreams has no resource type: it names the account's streams
		// and reads none of them.
		awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid:       jsii.String("ListStreams"),
			Actions:   jsii.Strings("dynamodb:ListStreams"),
			Resources: jsii.Strings("*"),
		}),
		awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid:       jsii.String("BuildResultEvents"),
			Actions:   jsii.Strings("lambda:InvokeFunction"),
			Resources: &[]*string{e.enrichment.FunctionArn()},
		}),
		awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid:       jsii.String("PutResultEvents"),
			Actions:   jsii.Strings("events:PutEvents"),
			Resources: &[]*string{e.bus.EventBusArn()},
		}),
		awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid:       jsii.String("KeepUndeliveredBatches"),
			Actions:   jsii.Strings("sqs:SendMessage"),
			Resources: &[]*string{e.deadLetters.QueueArn()},
		}),
	}})
	// Only pipes of this account may assume the role (and creating one with
	// it takes iam:PassRole on it).
	pipes := awsiam.NewPrincipalWithConditions(awsiam.NewServicePrincipal(jsii.String("pipes.amazonaws.com"), nil), &map[string]any{
		"StringEquals": map[string]any{"aws:SourceAccount": stack.Account()},
		"ArnLike": map[string]any{"aws:SourceArn": stack.FormatArn(&awscdk.ArnComponents{
			Service: jsii.String("pipes"), Resource: jsii.String("pipe"), ResourceName: jsii.String("*"),
			ArnFormat: awscdk.ArnFormat_SLASH_RESOURCE_NAME,
		})},
	})
	e.role = awsiam.NewRole(stack, jsii.String("ResultEventsPipeRole"), &awsiam.RoleProps{
		AssumedBy:      pipes,
		Description:    jsii.String("EventBridge Pipes: reads the results table's stream and puts result events on the bus"),
		InlinePolicies: &map[string]awsiam.PolicyDocument{"ResultEvents": policy},
	})

	filters := make([]any, 0, len(resultEventFilters()))
	for _, f := range resultEventFilters() {
		filters = append(filters, &awspipes.CfnPipe_FilterProperty{Pattern: jsii.String(f)})
	}
	e.pipe = awspipes.NewCfnPipe(stack, jsii.String("ResultEventsPipe"), &awspipes.CfnPipeProps{
		Description: jsii.String("Every record of the results table that becomes final, as one event (docs/events.md)"),
		RoleArn:     e.role.RoleArn(),
		Source:      streamArn,
		SourceParameters: &awspipes.CfnPipe_PipeSourceParametersProperty{
			DynamoDbStreamParameters: &awspipes.CfnPipe_PipeSourceDynamoDBStreamParametersProperty{
				// From the pipe's creation on: earlier records were never
				// promised an event.
				StartingPosition:          jsii.String("LATEST"),
				BatchSize:                 jsii.Number(resultevents.PipeBatchSize),
				MaximumRetryAttempts:      jsii.Number(eventsMaxRetries),
				MaximumRecordAgeInSeconds: jsii.Number(eventsMaxRecordAgeSeconds),
				// A batch EventBridge partly refuses is split until the
				// record at fault is alone, so the others are delivered.
				OnPartialBatchItemFailure: jsii.String("AUTOMATIC_BISECT"),
				DeadLetterConfig:          &awspipes.CfnPipe_DeadLetterConfigProperty{Arn: e.deadLetters.QueueArn()},
			},
			FilterCriteria: &awspipes.CfnPipe_FilterCriteriaProperty{Filters: &filters},
		},
		Enrichment: e.enrichment.FunctionArn(),
		Target:     e.bus.EventBusArn(),
		TargetParameters: &awspipes.CfnPipe_PipeTargetParametersProperty{
			InputTemplate: jsii.String(resultEventsTemplate),
			EventBridgeEventBusParameters: &awspipes.CfnPipe_PipeTargetEventBridgeEventBusParametersProperty{
				// A dynamic path: the record's own event_type, which the
				// ledger writes with the final status. The enrichment's
				// output carries it at the same path, so it resolves alike
				// whether Pipes reads the source record or the enriched one.
				DetailType: jsii.String("$.dynamodb.NewImage." + resultevents.EventTypeAttribute + ".S"),
				Source:     jsii.String(resultevents.Source),
				// The table tells this stack's events from another's on a
				// shared bus.
				Resources: &[]*string{p.table.TableArn()},
			},
		},
	})

	for _, status := range resultevents.FinalStatuses {
		detailType := resultevents.DetailType(status)
		e.counters[detailType] = awsevents.NewRule(stack, jsii.String("ResultEventsCount"+strings.ReplaceAll(detailType, " ", "")), &awsevents.RuleProps{
			EventBus:    e.bus,
			Description: jsii.String("Counts this stack's " + detailType + " events (TriggeredRules, on the dashboard); no target"),
			EventPattern: &awsevents.EventPattern{
				Source:     jsii.Strings(resultevents.Source),
				DetailType: jsii.Strings(detailType),
				Resources:  &[]*string{p.table.TableArn()},
			},
		})
	}
	return e
}

// resultEventFilters are the pipe's filter patterns; a record passes if it
// matches any. They read only the record's dynamodb key: Pipes refuses the
// fields its poller adds (eventName among them, see
// pkg/local/eventpattern's PollerFields) and Lambda's DynamoDB filtering supports only
// that key, so a transition is read from the images alone. Each passes a
// change INTO a final status only: a new image final with an old one whose
// status differs (a MODIFY), or a new image already final with no old
// status (an INSERT, a rejection written without a claim: the record has
// no OldImage, and "exists": false matches a field the record lacks,
// parent included). A rewrite of a final record with the same status (a
// retried Complete or Fail of the same claim, a repeated object_not_found
// rejection) matches none, so redeliveries and duplicates publish nothing.
// A late Complete after MarkOutcomeUnknown (failed -> succeeded) does
// publish: the record's outcome did change. A REMOVE has no new image and
// matches none. Only object records (pk "OBJ#...") pass; pacer and budget
// items have no status anyway. Each also requires the event_type the pipe
// takes its detail type from. The stream view must carry both images
// (NEW_AND_OLD_IMAGES, storage.go), or the first filter matches nothing.
func resultEventFilters() []string {
	keys := map[string]any{tableschema.PartitionKey: map[string]any{"S": []any{map[string]any{"prefix": resultevents.RecordKeyPrefix}}}}
	var out []string
	add := func(images map[string]any) {
		images["Keys"] = keys
		raw, err := json.Marshal(map[string]any{"dynamodb": images})
		if err != nil {
			panic(fmt.Sprintf("result event filter: %v", err))
		}
		out = append(out, string(raw))
	}
	for _, status := range resultevents.FinalStatuses {
		add(map[string]any{
			"NewImage": map[string]any{
				resultevents.StatusAttribute:    map[string]any{"S": []any{status}},
				resultevents.EventTypeAttribute: map[string]any{"S": []any{resultevents.DetailType(status)}},
			},
			"OldImage": map[string]any{
				resultevents.StatusAttribute: map[string]any{"S": []any{map[string]any{"anything-but": []any{status}}}},
			},
		})
	}
	add(map[string]any{
		"NewImage": map[string]any{
			resultevents.StatusAttribute:    map[string]any{"S": resultevents.FinalStatuses},
			resultevents.EventTypeAttribute: map[string]any{"S": []any{map[string]any{"exists": true}}},
		},
		"OldImage": map[string]any{
			resultevents.StatusAttribute: map[string]any{"S": []any{map[string]any{"exists": false}}},
		},
	})
	return out
}
