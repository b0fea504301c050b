package main

import (
	"regexp"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"
)

// bucketNotificationsHandlerID is the id CDK gives the singleton Lambda
// function that writes S3 bucket notification configurations at deploy time.
const bucketNotificationsHandlerID = "BucketNotificationsHandler050a0587b7544547bf325f094a3db834"

// suppressJustifiedFindings records, next to each exception, why cdk-nag's
// AwsSolutions finding does not apply. Everything else must pass the checks.
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

	// CDK's own handler for S3 notifications (needed to subscribe the queue,
	// and the only way to do so on an imported bucket). CDK generates its
	// role; its s3:PutBucketNotification grant is scoped to the bucket.
	path := *stack.Node().Path() + "/" + bucketNotificationsHandlerID
	cdknag.NagSuppressions_AddResourceSuppressionsByPath(stack, jsii.String(path), &[]*cdknag.NagPackSuppression{
		{
			Id:        jsii.String("AwsSolutions-IAM4"),
			Reason:    jsii.String("CDK's BucketNotificationsHandler role uses AWSLambdaBasicExecutionRole only to write its own deployment-time logs; CDK does not let the role be replaced for imported buckets."),
			AppliesTo: &[]any{jsii.String("Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole")},
		},
	}, jsii.Bool(true))
}
