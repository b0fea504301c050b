package monitor

import (
	"os"
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/local/awscalls"
	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
)

// TestMain checks the calls recorded in monitorCalls (awscalls_test.go)
// against the monitor's golden list (-update-aws-calls rewrites it).
func TestMain(m *testing.M) {
	os.Exit(awscalls.FinishMain(awspartstest.Run(m), "../../testdata/aws-calls/monitor.json", "pkg/monitor", monitorCalls.Calls()))
}
