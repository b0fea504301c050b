package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3notifications"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"

	"github.com/geolocate-aws/geolocate/pkg/tableschema"
)

// accessLogRetentionDays bounds how long S3 server access logs are kept: long
// enough to investigate who uploaded or read an image, not forever.
const accessLogRetentionDays = 365

// abortIncompleteUploadsDays removes the parts of multipart uploads nobody
// completed; they are billed as storage yet never become an object.
const abortIncompleteUploadsDays = 7

// newUploadBucket imports the configured bucket or creates a private,
// encrypted, TLS-only, versioned one whose access is logged to a second bucket.
func newUploadBucket(stack awscdk.Stack, cfg Config) awss3.IBucket {
	if cfg.ExistingBucketName != "" {
		// An existing bucket is used exactly as it is: the stack changes
		// neither its versioning nor its lifecycle rules, which belong to
		// whoever owns the bucket. The predictor is correct on an unversioned
		// bucket too: its events carry no versionId (or "null" once versioning
		// is suspended), and it then reads the object by key and tells its
		// uploads apart by ETag.
		return awss3.Bucket_FromBucketName(stack, jsii.String("UploadBucket"), jsii.String(cfg.ExistingBucketName))
	}
	// The log bucket is the destination of access logs, not a source: cdk-nag
	// recognises it by its log-delivery policy and does not ask it to log.
	accessLogs := awss3.NewBucket(stack, jsii.String("AccessLogBucket"), &awss3.BucketProps{
		BlockPublicAccess: awss3.BlockPublicAccess_BLOCK_ALL(),
		// S3 server access logging can only write to SSE-S3 buckets.
		Encryption:      awss3.BucketEncryption_S3_MANAGED,
		EnforceSSL:      jsii.Bool(true),
		ObjectOwnership: awss3.ObjectOwnership_BUCKET_OWNER_ENFORCED,
		LifecycleRules: &[]*awss3.LifecycleRule{{
			Expiration: awscdk.Duration_Days(jsii.Number(accessLogRetentionDays)),
		}},
		RemovalPolicy: cfg.removalPolicy(),
	})
	return awss3.NewBucket(stack, jsii.String("UploadBucket"), &awss3.BucketProps{
		BlockPublicAccess:      awss3.BlockPublicAccess_BLOCK_ALL(),
		Encryption:             awss3.BucketEncryption_S3_MANAGED,
		EnforceSSL:             jsii.Bool(true),
		ObjectOwnership:        awss3.ObjectOwnership_BUCKET_OWNER_ENFORCED,
		ServerAccessLogsBucket: accessLogs,
		ServerAccessLogsPrefix: jsii.String("uploads/"),
		// Versioning gives every S3 event a versionId: an overwritten image
		// is a new version with its own record, and the predictor reads the
		// exact version the event announced, not whatever the key holds now.
		Versioned: jsii.Bool(true),
		LifecycleRules: &[]*awss3.LifecycleRule{{
			Id: jsii.String("ExpireOldVersions"),
			// Overwritten and deleted images are kept this long, then removed.
			NoncurrentVersionExpiration: awscdk.Duration_Days(jsii.Number(cfg.NoncurrentVersionDays)),
			// A delete marker left with no versions behind it is removed too.
			ExpiredObjectDeleteMarker:           jsii.Bool(true),
			AbortIncompleteMultipartUploadAfter: awscdk.Duration_Days(jsii.Number(abortIncompleteUploadsDays)),
		}},
		RemovalPolicy: cfg.removalPolicy(),
	})
}

// subscribeQueueToUploads sends ObjectCreated events for keys matching the
// configured prefix and suffix to the queue. For an imported bucket CDK's
// notification handler adds this configuration and keeps existing ones.
func subscribeQueueToUploads(bucket awss3.IBucket, queue awssqs.IQueue, cfg Config) {
	// CDK rejects an empty filter, so one is passed only when it filters.
	var filters []*awss3.NotificationKeyFilter
	if cfg.UploadPrefix != "" || cfg.UploadSuffix != "" {
		filter := &awss3.NotificationKeyFilter{}
		if cfg.UploadPrefix != "" {
			filter.Prefix = jsii.String(cfg.UploadPrefix)
		}
		if cfg.UploadSuffix != "" {
			filter.Suffix = jsii.String(cfg.UploadSuffix)
		}
		filters = append(filters, filter)
	}
	bucket.AddEventNotification(awss3.EventType_OBJECT_CREATED, awss3notifications.NewSqsDestination(queue), filters...)
}

// newResultsTable creates the table with the key schema and index of
// pkg/tableschema, so the deployed table matches the local one.
func newResultsTable(stack awscdk.Stack, cfg Config) awsdynamodb.Table {
	str := awsdynamodb.AttributeType_STRING
	table := awsdynamodb.NewTable(stack, jsii.String("ResultsTable"), &awsdynamodb.TableProps{
		PartitionKey: &awsdynamodb.Attribute{Name: jsii.String(tableschema.PartitionKey), Type: str},
		SortKey:      &awsdynamodb.Attribute{Name: jsii.String(tableschema.SortKey), Type: str},
		BillingMode:  awsdynamodb.BillingMode_PAY_PER_REQUEST,
		PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{
			PointInTimeRecoveryEnabled: jsii.Bool(true),
		},
		// An AWS managed key makes every use of the table's key visible in CloudTrail.
		Encryption:          awsdynamodb.TableEncryption_AWS_MANAGED,
		TimeToLiveAttribute: jsii.String(tableschema.TTLAttribute),
		RemovalPolicy:       cfg.removalPolicy(),
		// Records prove which images were paid for: guard them against an
		// accidental delete unless this is a disposable stack.
		DeletionProtection: jsii.Bool(!cfg.RemoveOnDestroy),
	})
	table.AddGlobalSecondaryIndex(&awsdynamodb.GlobalSecondaryIndexProps{
		IndexName:      jsii.String(tableschema.StatusIndex),
		PartitionKey:   &awsdynamodb.Attribute{Name: jsii.String(tableschema.StatusIndexPartitionKey), Type: str},
		SortKey:        &awsdynamodb.Attribute{Name: jsii.String(tableschema.StatusIndexSortKey), Type: str},
		ProjectionType: awsdynamodb.ProjectionType_ALL,
	})
	return table
}
