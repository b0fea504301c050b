package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"
)

// maxQueueRetentionDays is SQS's longest retention. Every message is an
// image somebody wants geolocated; letting one expire would lose it silently.
const maxQueueRetentionDays = 14

// newUploadQueues creates the queue of upload notifications and its
// dead-letter queue. Both use SQS-managed encryption: S3 can publish to it
// without a key policy, which a KMS key would need.
func newUploadQueues(stack awscdk.Stack, cfg Config) (queue, deadLetters awssqs.Queue) {
	deadLetters = awssqs.NewQueue(stack, jsii.String("DeadLetterQueue"), &awssqs.QueueProps{
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:      jsii.Bool(true),
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(maxQueueRetentionDays)),
		// Dead letters are uploads nobody has looked at yet: kept with the
		// other stored data when the stack is deleted (a queue's default is
		// to be deleted), and deleted only with removeOnDestroy, whose point
		// is to leave nothing behind.
		RemovalPolicy: cfg.removalPolicy(),
	})
	queue = awssqs.NewQueue(stack, jsii.String("UploadQueue"), &awssqs.QueueProps{
		Encryption:        awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:        jsii.Bool(true),
		RetentionPeriod:   awscdk.Duration_Days(jsii.Number(maxQueueRetentionDays)),
		VisibilityTimeout: awscdk.Duration_Seconds(jsii.Number(cfg.QueueVisibilityTimeout().Seconds())),
		DeadLetterQueue: &awssqs.DeadLetterQueue{
			Queue:           deadLetters,
			MaxReceiveCount: jsii.Number(cfg.DLQMaxReceiveCount),
		},
	})
	return queue, deadLetters
}
