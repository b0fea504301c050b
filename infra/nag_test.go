package main

import (
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"
)

// TestAwsSolutionsChecksPass requires zero unsuppressed cdk-nag AwsSolutions
// findings, errors or warnings, for a new and an imported bucket and secret.
func TestAwsSolutionsChecksPass(t *testing.T) {
	for name, s := range synthApp(t).scenarios() {
		t.Run(name, func(t *testing.T) {
			annotations := assertions.Annotations_FromStack(s.stack)
			rule := assertions.Match_StringLikeRegexp(jsii.String("AwsSolutions-.*"))
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
	stack := awscdk.NewStack(app, jsii.String("Insecure"), nil)
	awss3.NewBucket(stack, jsii.String("Bare"), nil)
	app.Synth(nil)

	errs := *assertions.Annotations_FromStack(stack).FindError(jsii.String("*"),
		assertions.Match_StringLikeRegexp(jsii.String("AwsSolutions-S(1|10)")))
	if len(errs) == 0 {
		t.Fatal("a bucket without access logs or TLS enforcement passed the AwsSolutions checks")
	}
}
