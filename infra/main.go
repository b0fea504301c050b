// Command infra is the CDK app of the geolocation pipeline. The CDK CLI runs
// it (see cdk.json); it reads configuration from CDK context, validates it,
// and synthesizes one stack.
package main

import (
	"fmt"
	"os"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"
)

func main() {
	// Close ends the jsii node process. jsii-runtime-go must stay at
	// v1.142.0 or later: before, two goroutines waited for that process and
	// the loser printed "Runtime process exited abnormally: waitid: no
	// child processes" after a good synth (TestJSIICloseIsSilent).
	defer jsii.Close()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run() error {
	app := awscdk.NewApp(nil)
	all, ok := app.Node().GetAllContext(nil).(map[string]any)
	if !ok {
		return fmt.Errorf("the CDK context is not an object: %T", app.Node().GetAllContext(nil))
	}
	cfg, err := LoadAppConfig(all)
	if err != nil {
		return err
	}
	// Synthesis builds the functions (see assets.go): find what it needs
	// before constructing anything.
	sourceDir, err := findModuleRoot()
	if err != nil {
		return err
	}
	if _, err := lookGo(); err != nil {
		return err
	}
	NewGeolocationStack(app, cfg.StackName, &GeolocationStackProps{
		StackProps: awscdk.StackProps{
			Description: jsii.String("Image geolocation pipeline: S3 uploads -> SQS -> predictor Lambda -> DynamoDB, with credit monitoring"),
		},
		Config:    cfg,
		SourceDir: sourceDir,
	})
	// A deployment that fails AWS Solutions or Serverless checks stops at
	// synth, not in review.
	awscdk.Aspects_Of(app).Add(cdknag.NewAwsSolutionsChecks(&cdknag.NagPackProps{Verbose: jsii.Bool(true)}), nil)
	awscdk.Aspects_Of(app).Add(cdknag.NewServerlessChecks(&cdknag.NagPackProps{Verbose: jsii.Bool(true)}), nil)
	app.Synth(nil)
	return nil
}
