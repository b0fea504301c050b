package main

import (
	"regexp"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"
)

// bucketNotificationsHandlerID is the id CDK gives the singleton Lambda
// function that writes S3 bucket notification configurations at deploy time
// (aws-s3 NotificationsResourceHandler).
const bucketNotificationsHandlerID = "BucketNotificationsHandler050a0587b7544547bf325f094a3db834"

// suppressJustifiedFindings records, next to each exception, why cdk-nag's
// AwsSolutions or Serverless finding does not apply. Everything else must pass the checks.
func suppressJustifiedFindings(stack awscdk.Stack, p *pipeline) {
	suppress := func(construct any, id, reason string, appliesTo ...any) {
		s := &cdknag.NagPackSuppression{Id: jsii.String(id), Reason: jsii.String(reason)}
		if len(appliesTo) > 0 {
			s.AppliesTo = &appliesTo
		}
		cdknag.NagSuppressions_AddResourceSuppressions(construct, &[]*cdknag.NagPackSuppression{s}, jsii.Bool(true))
	}

	if p.createdSecret != nil {
		suppress(p.createdSecret, "AwsSolutions-SMG4",
			"The secret holds a third-party API key that only the service's web console can issue. Rotation means regenerating the key there and putting the new value into this secret; a rotation Lambda has no way to obtain a new key.")
	}

	// S3 object ARNs cannot be listed in advance; the wildcard covers only the
	// objects under the upload prefix of the one bucket, and only for reads.
	objects := `<UploadBucket[0-9A-F]{8}\.Arn>`
	if p.cfg.ExistingBucketName != "" {
		objects = regexp.QuoteMeta("arn:<AWS::Partition>:s3:::" + p.cfg.ExistingBucketName)
	}
	suppress(p.predictorRole, "AwsSolutions-IAM5",
		"s3:GetObject and s3:GetObjectVersion on the objects under the upload prefix of the upload bucket: object keys are not known in advance.",
		&cdknag.RegexAppliesTo{Regex: jsii.String("/^Resource::" + objects + "/" + regexp.QuoteMeta(p.cfg.UploadPrefix) + `\*$/`)})

	// CDK's bucket-notifications handler has its own role without managed
	// policies (newNotificationsHandlerRole), so AwsSolutions-IAM4 has
	// nothing to report there any more.

	// Serverless checks.
	suppress(p.predictor, "Serverless-LambdaDLQ",
		"The predictor is invoked synchronously by its SQS event source mapping, never asynchronously, so a function dead-letter queue would receive nothing; failed messages go to the upload queue's dead-letter queue through its redrive policy.")
	suppress(p.predictor, "Serverless-LambdaEventSourceMappingDestination",
		"Lambda supports on-failure destinations for stream and Kafka event sources, not for SQS; for SQS the queue's redrive policy (maxReceiveCount, then the dead-letter queue) is the failure destination, and it is configured.")
	suppress(p.monitor, "Serverless-LambdaDLQ",
		"The monitor's asynchronous invocations have an on-failure destination (the monitoring failures queue), which records the request and the error and is Lambda's recommended replacement for a function dead-letter queue.")
	suppress(p.mapWidget, "Serverless-LambdaDLQ",
		"The map widget is invoked synchronously by the CloudWatch console to draw a dashboard widget, never asynchronously, so a dead-letter queue would receive nothing; a failure shows in the widget and in the function's Errors metric.")
	suppress(p.jobs.fn, "Serverless-LambdaDLQ",
		"The job feeder's asynchronous invocations (its schedule, the CLI's kick) have an on-failure destination (the monitoring failures queue), Lambda's recommended replacement for a function dead-letter queue.")
	for _, fn := range []any{p.predictor, p.monitor, p.mapWidget, p.jobs.fn} {
		suppress(fn, "Serverless-LambdaTracing",
			"The Go functions carry no X-Ray instrumentation, so active tracing would record only Lambda's own invoke segments, which the dashboard already shows as Lambda metrics; their work is followed through structured logs and EMF metrics. It would also need xray:PutTraceSegments on \"*\".")
	}
	for _, q := range []any{p.deadLetters, p.monitoringFailures} {
		suppress(q, "Serverless-SQSRedrivePolicy",
			"This queue is itself a dead-letter queue; its messages wait (14 days, alarmed or inspected) for a person, and a redrive policy would only move them further from where they are looked for.")
	}
	if e := p.events; e != nil {
		suppress(e.role, "AwsSolutions-IAM5",
			"dynamodb:ListStreams, which EventBridge Pipes requires for a DynamoDB stream source, has no resource type: it lists the account's stream ARNs and reads no stream; the reads themselves are granted on the results table's stream only.",
			"Resource::*")
		suppress(e.deadLetters, "Serverless-SQSRedrivePolicy",
			"This queue is itself the results pipe's dead-letter queue; its messages (stream positions of undelivered batches) wait 14 days, alarmed, for a person.")
		for _, rule := range e.counters {
			suppress(rule, "CdkNagValidationFailure",
				"Serverless-EventBusDLQ checks the dead-letter queues of a rule's targets; the counting rules have no target (they exist for their TriggeredRules metric), so there is nothing to deliver or to lose.",
				"Serverless-EventBusDLQ")
		}
		suppress(e.enrichment, "Serverless-LambdaDLQ",
			"The results pipe invokes its enrichment synchronously (it waits for the details), never asynchronously, so a function dead-letter queue would receive nothing; a batch that keeps failing goes to the pipe's own dead-letter queue, alarmed.")
		suppress(e.enrichment, "Serverless-LambdaTracing",
			"The enrichment carries no X-Ray instrumentation and does no I/O: active tracing would record only Lambda's own invoke segment. It would also need xray:PutTraceSegments on \"*\".")
		suppress(e.deadLetters, "AwsSolutions-SQS3",
			"This queue is the dead-letter queue of the results pipe (its DynamoDB stream source's DeadLetterConfig), which cdk-nag does not recognise as such.")
	}
	suppress(p.monitoringFailures, "AwsSolutions-SQS3",
		"This queue is a dead-letter queue: of the monitor's and the job feeder's schedule targets, of both functions' asynchronous invocations (on-failure destination) and of the alarm e-mail subscription, none of which cdk-nag recognises as such.")
}
