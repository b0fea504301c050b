package main

import (
	"strings"
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/local/pipeline"
)

// TestSmokeAgainstTheServedLocalStack runs doctor --smoke with local
// --serve's export line: every step runs against the stand-ins (S3, the
// predictor on the simulator, DynamoDB Local, the results bus, SQS,
// CloudWatch alarms to SNS), every reading is "assumed by the rig", and
// nothing is left behind.
func TestSmokeAgainstTheServedLocalStack(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the whole local stack")
	}
	stack := serveLocalStack(t, "cli-smoke", nil, func(o *pipeline.ServeOptions) {
		o.Alarms = []string{alarmNameOf(pipeline.DefaultStackName)}
	})
	env, progress := stack.env, stack.progress
	r := runCLI(t, env, nil, "doctor", "--stack", pipeline.DefaultStackName, "--smoke", "--yes", "--timeout", "2m")
	if r.code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s\nrig:\n%s", r.code, r.stdout, r.stderr, progress.String())
	}
	for _, rd := range openReadings {
		if line := reading(t, r.stdout, rd.id); !strings.Contains(line, "assumed by the rig") {
			t.Errorf("locally: %s", line)
		}
	}
	if strings.Contains(r.stdout, "NOT deleted") {
		t.Errorf("left something behind:\n%s", r.stdout)
	}
}
