package main

import (
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"
)

// TestAwsSolutionsChecksPass requires zero unsuppressed cdk-nag AwsSolutions
// and Serverless findings, errors or warnings, in every scenario.
func TestAwsSolutionsChecksPass(t *testing.T) {
	for name, s := range synthApp(t).scenarios() {
		t.Run(name, func(t *testing.T) {
			annotations := assertions.Annotations_FromStack(s.stack)
			rule := assertions.Match_StringLikeRegexp(jsii.String("(AwsSolutions|Serverless)-.*"))
			// The message type's accessors are marked deprecated (moved to
			// another jsii package); printing the whole message is enough.
			for _, m := range *annotations.FindError(jsii.String("*"), rule) {
				t.Errorf("error: %+v", m)
			}
			for _, m := range *annotations.FindWarning(jsii.String("*"), rule) {
				t.Errorf("warning: %+v", m)
			}
		})
	}
}

// TestAwsSolutionsChecksCatchAnInsecureBucket proves the harness above can
// fail: the same checks on a bare bucket must report errors.
func TestAwsSolutionsChecksCatchAnInsecureBucket(t *testing.T) {
	synthApp(t) // share the jsii runtime start-up
	app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(t.TempDir())})
	awscdk.Aspects_Of(app).Add(cdknag.NewAwsSolutionsChecks(nil), nil)
	awscdk.Aspects_Of(app).Add(cdknag.NewServerlessChecks(nil), nil)
	stack := awscdk.NewStack(app, jsii.String("Insecure"), nil)
	awss3.NewBucket(stack, jsii.String("Bare"), nil)
	awssqs.NewQueue(stack, jsii.String("NoRedrive"), nil)
	// cdk-nag errors fail the synthesis; the annotations are what is checked.
	func() {
		defer func() { _ = recover() }()
		app.Synth(nil)
	}()

	annotations := assertions.Annotations_FromStack(stack)
	if errs := *annotations.FindError(jsii.String("*"), assertions.Match_StringLikeRegexp(jsii.String("AwsSolutions-S(1|10)"))); len(errs) == 0 {
		t.Error("a bucket without access logs or TLS enforcement passed the AwsSolutions checks")
	}
	if errs := *annotations.FindError(jsii.String("*"), assertions.Match_StringLikeRegexp(jsii.String("Serverless-SQSRedrivePolicy"))); len(errs) == 0 {
		t.Error("a queue without a redrive policy passed the Serverless checks")
	}
}
