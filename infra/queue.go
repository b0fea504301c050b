package main

import (
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"
)

// Retention of the queues. SQS keeps a message's original enqueue time when
// it moves it to the dead-letter queue, so a message dead-lettered late in
// its life expires there as soon as the dead-letter queue's retention since
// its UPLOAD has passed. AWS's guidance is a dead-letter queue retention
// longer than the source queue's: with these, every dead letter waits at
// least deadLetterGraceDays for a person to look at it and redrive it, a
// long weekend, and an upload waits in the queue up to
// uploadQueueRetentionDays, which bounds the longest outage (no credits, no
// key) the backlog survives.
const (
	// maxQueueRetentionDays is SQS's longest retention: the dead-letter
	// queue's and the monitoring failures queue's.
	maxQueueRetentionDays    = 14
	uploadQueueRetentionDays = 10
	deadLetterGraceDays      = maxQueueRetentionDays - uploadQueueRetentionDays
)

// deadLetterAgeAlarm is the age of the oldest dead letter (since it moved to
// the dead-letter queue: ApproximateAgeOfOldestMessage of a dead-letter
// queue counts from the move) that pages a second time: half of the grace
// left before the oldest possible dead letter expires.
const deadLetterAgeAlarm = deadLetterGraceDays * 24 * time.Hour / 2

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
		RetentionPeriod:   awscdk.Duration_Days(jsii.Number(uploadQueueRetentionDays)),
		VisibilityTimeout: awscdk.Duration_Seconds(jsii.Number(cfg.QueueVisibilityTimeout().Seconds())),
		DeadLetterQueue: &awssqs.DeadLetterQueue{
			Queue:           deadLetters,
			MaxReceiveCount: jsii.Number(cfg.DLQMaxReceiveCount),
		},
	})
	return queue, deadLetters
}
