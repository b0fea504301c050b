package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awspipes"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"

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
	// eventsBatchSize records per PutEvents: at most 10 entries per call.
	eventsBatchSize = 10
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

// resultEvents is the events part of the stack; nil with events=false.
type resultEvents struct {
	pipe        awspipes.CfnPipe
	role        awsiam.Role
	deadLetters awssqs.Queue
	bus         awsevents.IEventBus
	// counters are rules on the bus, one per detail type and without
	// targets, that match this stack's events: EventBridge publishes their
	// MatchedEvents, which is the dashboard's count of events by type.
	counters map[string]awsevents.Rule
}

// newResultEvents creates the pipe from the table's stream to the bus, its
// role, its dead-letter queue and the counting rules.
func newResultEvents(stack awscdk.Stack, p *pipeline) *resultEvents {
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

	e.deadLetters = awssqs.NewQueue(stack, jsii.String("ResultEventsDeadLetterQueue"), &awssqs.QueueProps{
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:      jsii.Bool(true),
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(maxQueueRetentionDays)),
		RemovalPolicy:   cfg.removalPolicy(),
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
				BatchSize:                 jsii.Number(eventsBatchSize),
				MaximumRetryAttempts:      jsii.Number(eventsMaxRetries),
				MaximumRecordAgeInSeconds: jsii.Number(eventsMaxRecordAgeSeconds),
				// A batch EventBridge partly refuses is split until the
				// record at fault is alone, so the others are delivered.
				OnPartialBatchItemFailure: jsii.String("AUTOMATIC_BISECT"),
				DeadLetterConfig:          &awspipes.CfnPipe_DeadLetterConfigProperty{Arn: e.deadLetters.QueueArn()},
			},
			FilterCriteria: &awspipes.CfnPipe_FilterCriteriaProperty{Filters: &filters},
		},
		Target: e.bus.EventBusArn(),
		TargetParameters: &awspipes.CfnPipe_PipeTargetParametersProperty{
			InputTemplate: jsii.String(resultEventTemplate),
			EventBridgeEventBusParameters: &awspipes.CfnPipe_PipeTargetEventBridgeEventBusParametersProperty{
				// A dynamic path: the record's own event_type, which the
				// ledger writes with the final status.
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
			Description: jsii.String("Counts this stack's " + detailType + " events (MatchedEvents, on the dashboard); no target"),
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
// matches any. Each passes a change INTO a final status only: a MODIFY
// whose old status differs from the new one, or an INSERT already final (a
// rejection written without a claim). A rewrite of a final record with the
// same status (a retried Complete or Fail of the same claim, a repeated
// object_not_found rejection) matches none, so redeliveries and duplicates
// publish nothing. A late Complete after MarkOutcomeUnknown (failed ->
// succeeded) does publish: the record's outcome did change. Only object
// records (pk "OBJ#...") pass; pacer and budget items have no status anyway.
// Each also requires the event_type the pipe takes its detail type from.
func resultEventFilters() []string {
	keys := map[string]any{tableschema.PartitionKey: map[string]any{"S": []any{map[string]any{"prefix": resultevents.RecordKeyPrefix}}}}
	var out []string
	add := func(pattern map[string]any) {
		raw, err := json.Marshal(pattern)
		if err != nil {
			panic(fmt.Sprintf("result event filter: %v", err))
		}
		out = append(out, string(raw))
	}
	for _, status := range resultevents.FinalStatuses {
		add(map[string]any{
			"eventName": []any{"MODIFY"},
			"dynamodb": map[string]any{
				"Keys": keys,
				"NewImage": map[string]any{
					resultevents.StatusAttribute:    map[string]any{"S": []any{status}},
					resultevents.EventTypeAttribute: map[string]any{"S": []any{resultevents.DetailType(status)}},
				},
				"OldImage": map[string]any{
					resultevents.StatusAttribute: map[string]any{"S": []any{map[string]any{"anything-but": []any{status}}}},
				},
			},
		})
	}
	add(map[string]any{
		"eventName": []any{"INSERT"},
		"dynamodb": map[string]any{
			"Keys": keys,
			"NewImage": map[string]any{
				resultevents.StatusAttribute:    map[string]any{"S": resultevents.FinalStatuses},
				resultevents.EventTypeAttribute: map[string]any{"S": []any{map[string]any{"exists": true}}},
			},
		},
	})
	return out
}

// resultEventTemplate is the pipe's input template: the event's detail.
// Every placeholder is inside quotes, so the detail is valid JSON for every
// final record shape: a value the record lacks (no place, no EXIF, a
// rejection) renders as an empty string, never as a hole in the JSON. The
// price is that numbers and booleans arrive as strings ("48.8566",
// "true"), as the stream carries them; "" means absent. The schema of each
// detail type is events/schema/; nothing of the API key or of any header is
// in a record, and of the photo's EXIF only the comparison (error_km and
// position_sent) is published, never its position (docs/privacy.md).
const resultEventTemplate = `{
  "schema_version": "1",
  "event_id": "<$.eventID>",
  "bucket": "<$.dynamodb.NewImage.bucket.S>",
  "key": "<$.dynamodb.NewImage.key.S>",
  "version_id": "<$.dynamodb.NewImage.version_id.S>",
  "etag": "<$.dynamodb.NewImage.etag.S>",
  "status": "<$.dynamodb.NewImage.status.S>",
  "reason": "<$.dynamodb.NewImage.error_code.S>",
  "recorded_at": "<$.dynamodb.NewImage.updated_at.S>",
  "model_id": "<$.dynamodb.NewImage.model_id.S>",
  "credits_charged": "<$.dynamodb.NewImage.credits_consumed.N>",
  "reused_from": "<$.dynamodb.NewImage.reused_from.S>",
  "position_source": "<$.dynamodb.NewImage.source.S>",
  "place": {
    "name": "<$.dynamodb.NewImage.place.S>",
    "admin1": "<$.dynamodb.NewImage.admin1.S>",
    "admin2": "<$.dynamodb.NewImage.admin2.S>",
    "country_code": "<$.dynamodb.NewImage.country_code.S>",
    "latitude": "<$.dynamodb.NewImage.latitude.N>",
    "longitude": "<$.dynamodb.NewImage.longitude.N>",
    "radius_km": "<$.dynamodb.NewImage.radius_km.N>",
    "confidence": "<$.dynamodb.NewImage.confidence.N>"
  },
  "exif": {
    "error_km": "<$.dynamodb.NewImage.error_km.N>",
    "position_sent": "<$.dynamodb.NewImage.position_sent.BOOL>"
  }
}`
