package soak

import (
	"os"
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/local/awscalls"
	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
)

// predictorCalls records the AWS calls of the predictor's code (its S3 and
// DynamoDB clients and its Secrets Manager), not the rig's own set-up and
// inspection calls.
var predictorCalls awscalls.Recorder

// TestMain checks the recorded calls against the predictor's golden list,
// which infra/policy_calls_test.go requires the stack to grant
// (-update-aws-calls rewrites it).
func TestMain(m *testing.M) {
	os.Exit(awscalls.FinishMain(awspartstest.Run(m), "../../../testdata/aws-calls/predictor.json", "pkg/local/soak", predictorCalls.Calls()))
}
