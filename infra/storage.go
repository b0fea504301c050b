package main

import (
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/aws-cdk-go/awscdk/v2/interfaces/interfacesawss3"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/geolocate-aws/geolocate/pkg/shared/s3keyfilter"
	"github.com/geolocate-aws/geolocate/pkg/shared/tableschema"
)

// accessLogRetentionDays bounds how long S3 server access logs are kept: long
// enough to investigate who uploaded or read an image, not forever.
const accessLogRetentionDays = 365

// abortIncompleteUploadsDays removes the parts of multipart uploads nobody
// completed; they are billed as storage yet never become an object.
const abortIncompleteUploadsDays = 7

// newUploadBucket imports the configured bucket or creates a private,
// encrypted, TLS-only, versioned one whose access is logged to a second bucket.
//
// handlerRole is the role of CDK's bucket-notifications handler (see
// newNotificationsHandlerRole).
func newUploadBucket(stack awscdk.Stack, cfg Config, handlerRole awsiam.IRole) awss3.IBucket {
	if cfg.ExistingBucketName != "" {
		// An existing bucket is used exactly as it is: the stack changes
		// neither its versioning nor its lifecycle rules, which belong to
		// whoever owns the bucket. The predictor is correct on an unversioned
		// bucket too: its events carry no versionId (or "null" once versioning
		// is suspended), and it then reads the object by key and tells its
		// uploads apart by ETag.
		return awss3.Bucket_FromBucketAttributes(stack, jsii.String("UploadBucket"), &awss3.BucketAttributes{
			BucketName:               jsii.String(cfg.ExistingBucketName),
			NotificationsHandlerRole: handlerRole,
		})
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
		// A bucket must be empty to be deleted. CDK empties it just before
		// (a custom resource). S3 delivers access logs late, up to hours
		// after the requests, so a record written between the emptying and
		// the delete can still fail the delete (BucketNotEmpty); nothing in
		// the template can wait for S3's last delivery. Deleting the stack
		// again, or emptying the bucket by hand, finishes the job.
		AutoDeleteObjects: jsii.Bool(cfg.RemoveOnDestroy),
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
		// A versioned bucket keeps every version: emptied by CDK, or its
		// delete fails.
		AutoDeleteObjects:        jsii.Bool(cfg.RemoveOnDestroy),
		NotificationsHandlerRole: handlerRole,
	})
}

// subscribeQueueToUploads routes the new objects matching the configured
// prefix and suffix to the queue, as cfg.Notifications says:
//
//   - s3: a queue configuration in the bucket's own notification
//     configuration. S3 refuses a configuration whose event types and
//     prefix/suffix overlap another's, so on a shared bucket that already
//     notifies someone of every new object the deployment fails.
//   - eventbridge: the bucket sends its events to EventBridge (a switch of
//     the bucket that overlaps nothing; AWS service events on the default
//     bus cost nothing) and a rule of this stack picks the uploads and sends
//     them to the queue. An event EventBridge cannot deliver after its
//     retries goes to the dead-letter queue, as an EventBridge event the
//     predictor reads once redriven.
//
// For an imported bucket CDK's notification handler adds this stack's
// configuration and keeps every existing one. It returns the uploads rule,
// nil in s3 mode.
func subscribeQueueToUploads(stack awscdk.Stack, bucket awss3.IBucket, queue, deadLetters awssqs.IQueue, cfg Config) awsevents.Rule {
	if cfg.Notifications == notificationsEventBridge {
		bucket.EnableEventBridgeNotification()
		object := map[string]any{}
		if key := uploadKeyMatcher(cfg.UploadPrefix, cfg.UploadSuffix); key != nil {
			object["key"] = key
		}
		detail := map[string]any{"bucket": map[string]any{"name": []any{bucket.BucketName()}}}
		if len(object) > 0 {
			detail["object"] = object
		}
		return awsevents.NewRule(stack, jsii.String("UploadRule"), &awsevents.RuleProps{
			Description: jsii.String("Sends the uploads (Object Created events of the upload bucket under the upload prefix and suffix) to the upload queue"),
			EventPattern: &awsevents.EventPattern{
				Source:     jsii.Strings("aws.s3"),
				DetailType: jsii.Strings(s3ObjectCreatedDetailType),
				Detail:     &detail,
			},
			Targets: &[]awsevents.IRuleTarget{awseventstargets.NewSqsQueue(queue, &awseventstargets.SqsQueueProps{
				DeadLetterQueue: deadLetters,
				// EventBridge's longest retry window: an upload is never
				// dropped while the queue is briefly unreachable.
				MaxEventAge:   awscdk.Duration_Hours(jsii.Number(24)),
				RetryAttempts: jsii.Number(185),
			})},
		})
	}
	bucket.AddEventNotification(awss3.EventType_OBJECT_CREATED, &queueDestination{queue: queue, account: stack.Account()}, notificationKeyFilters(cfg.UploadPrefix, cfg.UploadSuffix)...)
	return nil
}

// notificationKeyFilters is the bucket notification's key filter: the
// prefix and suffix URL-encoded as S3 requires (s3keyfilter), so "Photos
// 2024/" is written "Photos+2024/" and "été/" "%C3%A9t%C3%A9/"; raw, S3
// would match no key and the queue would stay empty. CDK rejects an empty
// filter, so none is passed when nothing filters.
func notificationKeyFilters(prefix, suffix string) []*awss3.NotificationKeyFilter {
	if prefix == "" && suffix == "" {
		return nil
	}
	filter := &awss3.NotificationKeyFilter{}
	if prefix != "" {
		filter.Prefix = jsii.String(s3keyfilter.Encode(prefix))
	}
	if suffix != "" {
		filter.Suffix = jsii.String(s3keyfilter.Encode(suffix))
	}
	return []*awss3.NotificationKeyFilter{filter}
}

// s3ObjectCreatedDetailType is the detail-type of S3's EventBridge event for
// a new object (any way it was created: put, post, copy, multipart).
const s3ObjectCreatedDetailType = "Object Created"

// uploadKeyMatcher is the event pattern of an object key with prefix and
// suffix (nil: any key). Whether S3's EventBridge events carry the key as
// stored or URL-encoded as its direct notifications do is an open reading
// (docs/local-rig.md; geolocate doctor --smoke settles it), so the pattern
// matches both: a matcher for the raw spelling and one for the encoded
// (s3keyfilter.Encode), which EventBridge ORs. A key is spelled wholly one way, so prefix and suffix
// pair within a reading. EventBridge ANDs fields but ORs the matchers of
// one field, so prefix and suffix together are one wildcard, its literal
// parts escaped ("\*" is a literal asterisk, "\\" a backslash). Unlike
// S3's filter pair it needs the key to hold both whole: with prefix "ab"
// and suffix "bc" the key "abc" is not matched.
func uploadKeyMatcher(prefix, suffix string) []any {
	matcher := func(p, s string) map[string]any {
		switch {
		case p != "" && s != "":
			return map[string]any{"wildcard": escapeWildcard(p) + "*" + escapeWildcard(s)}
		case p != "":
			return map[string]any{"prefix": p}
		case s != "":
			return map[string]any{"suffix": s}
		}
		return nil
	}
	raw := matcher(prefix, suffix)
	if raw == nil {
		return nil
	}
	encPrefix, encSuffix := s3keyfilter.Encode(prefix), s3keyfilter.Encode(suffix)
	if encPrefix == prefix && encSuffix == suffix {
		return []any{raw}
	}
	return []any{raw, matcher(encPrefix, encSuffix)}
}

func escapeWildcard(s string) string {
	return strings.NewReplacer(`\`, `\\`, `*`, `\*`).Replace(s)
}

// queueDestination is awss3notifications.SqsDestination with the confused
// deputy guard S3's documentation asks for: a bucket ARN carries no account
// id, so aws:SourceArn alone would also match a bucket of that name in
// another account (after this one's is deleted); aws:SourceAccount pins the
// owner. The bucket, created or imported, is this account's: CDK's handler
// configures its notifications with this account's credentials.
type queueDestination struct {
	queue   awssqs.IQueue
	account *string
}

// Bind lets S3 send this bucket's events to the queue (sqs:SendMessage is
// all S3 needs) and has the notification configuration wait for that
// permission: S3 validates the destination when it is configured. The
// queues use SQS-managed encryption, so no key policy is involved.
func (d *queueDestination) Bind(_ constructs.Construct, bucket interfacesawss3.IBucketRef) *awss3.BucketNotificationDestinationConfig {
	d.queue.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Principals: &[]awsiam.IPrincipal{awsiam.NewServicePrincipal(jsii.String("s3.amazonaws.com"), nil)},
		Actions:    jsii.Strings("sqs:SendMessage"),
		Resources:  jsii.Strings(*d.queue.QueueArn()),
		Conditions: &map[string]any{
			"ArnLike":      map[string]any{"aws:SourceArn": bucket.BucketRef().BucketArn},
			"StringEquals": map[string]any{"aws:SourceAccount": d.account},
		},
	}))
	return &awss3.BucketNotificationDestinationConfig{
		Arn:          d.queue.QueueArn(),
		Type:         awss3.BucketNotificationDestinationType_QUEUE,
		Dependencies: &[]constructs.IDependable{d.queue},
	}
}

// newNotificationsHandlerRole creates the role of CDK's handler that writes
// the bucket's notification configuration at deploy time. CDK attaches
// AWSLambdaBasicExecutionRole to any role it is given (account-wide log
// permissions) and its own s3:PutBucketNotification policy, so it gets an
// immutable view of this role (CDK's additions are dropped) and the role
// grants exactly what the handler does: write the bucket's notification
// configuration (and read it first for an imported bucket, whose other
// notifications it keeps), and log to its own log group.
func newNotificationsHandlerRole(stack awscdk.Stack) (role awsiam.Role, immutable awsiam.IRole) {
	role = awsiam.NewRole(stack, jsii.String("BucketNotificationsHandlerRole"), &awsiam.RoleProps{
		AssumedBy:   awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil),
		Description: jsii.String("CDK's S3 bucket notifications handler: configures the upload bucket's notifications at deploy time"),
	})
	return role, role.WithoutPolicyUpdates(nil)
}

// configureNotificationsHandler finishes CDK's bucket-notifications handler
// once AddEventNotification has created it: its role's grants, and a log
// group with the configured retention (and removal policy) instead of the
// /aws/lambda/<name> group Lambda would create, keep forever and leave
// behind when the stack is deleted.
func configureNotificationsHandler(stack awscdk.Stack, cfg Config, bucket awss3.IBucket, role awsiam.Role) {
	actions := []string{"s3:PutBucketNotification"}
	if cfg.ExistingBucketName != "" {
		actions = append(actions, "s3:GetBucketNotification")
	}
	role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings(actions...),
		Resources: jsii.Strings(*bucket.BucketArn()),
	}))
	logs := newFunctionLogGroup(stack, "BucketNotificationsHandlerLogs", cfg, role)

	handler := stack.Node().TryFindChild(jsii.String(bucketNotificationsHandlerID))
	if handler == nil {
		panic("CDK's bucket notifications handler was not created")
	}
	fn, ok := handler.Node().DefaultChild().(awscdk.CfnResource)
	if !ok {
		panic("CDK's bucket notifications handler has no function resource")
	}
	fn.AddPropertyOverride(jsii.String("LoggingConfig.LogGroup"), logs.LogGroupName())
	// The function must not run before its role may write the notification
	// configuration and its logs (CDK's own dependency is on the immutable
	// view, which carries none of these grants).
	handler.Node().AddDependency(role)
}

// newResultsTable creates the table with the key schema and index of
// pkg/shared/tableschema, so the deployed table matches the local one.
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
		// Always on (tableschema.StreamViewType says why); the results pipe
		// reads it when events are on.
		Stream:        awsdynamodb.StreamViewType(tableschema.StreamViewType),
		RemovalPolicy: cfg.removalPolicy(),
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

// autoDeleteProviderID is the id of CDK's stack-singleton provider behind
// autoDeleteObjects (CustomResourceProvider, a raw Lambda function).
const autoDeleteProviderID = "Custom::S3AutoDeleteObjectsCustomResourceProvider"

// routeAutoDeleteLogs gives CDK's auto-delete-objects handler, when
// removeOnDestroy created it, a log group with the configured retention that
// is deleted with the stack; otherwise Lambda creates /aws/lambda/<name> at
// the handler's last run, during the stack's deletion, and keeps it forever.
// Its CDK-made role (AWSLambdaBasicExecutionRole) may write to any group.
func routeAutoDeleteLogs(stack awscdk.Stack, cfg Config) {
	provider := stack.Node().TryFindChild(jsii.String(autoDeleteProviderID))
	if provider == nil {
		return
	}
	fn, ok := provider.Node().TryFindChild(jsii.String("Handler")).(awscdk.CfnResource)
	if !ok {
		panic("CDK's auto-delete-objects provider has no Handler function")
	}
	logs := awslogs.NewLogGroup(stack, jsii.String("AutoDeleteObjectsHandlerLogs"), &awslogs.LogGroupProps{
		Retention:     logRetentions[cfg.LogRetentionDays],
		RemovalPolicy: cfg.removalPolicy(),
	})
	fn.AddPropertyOverride(jsii.String("LoggingConfig.LogGroup"), logs.LogGroupName())
}
