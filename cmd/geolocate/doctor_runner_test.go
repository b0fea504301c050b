package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
)

// unreachableStacks fails every DescribeStacks as the SDK does when AWS
// cannot be reached.
type unreachableStacks struct{ err error }

func (u unreachableStacks) DescribeStacks(context.Context, *cloudformation.DescribeStacksInput, ...func(*cloudformation.Options)) (*cloudformation.DescribeStacksOutput, error) {
	return nil, u.err
}

// Issue 46 point 5: with AWS unreachable, doctor printed the same long
// "DescribeStacks ... no such host" on every check that needs the stack.
// The cause is said once, each check pointing at it; a cause only one
// check met stays on its line; --json keeps every check's own detail.
func TestDoctorSaysASharedCauseOnce(t *testing.T) {
	const noHost = "operation error CloudFormation: DescribeStacks, https response error StatusCode: 0, RequestID: , request send failed, " +
		`Post "https://cloudformation.eu-west-1.amazonaws.com/": dial tcp: lookup cloudformation.eu-west-1.amazonaws.com: no such host`
	w := newDoctorWorld(t)
	w.clients.stacks = unreachableStacks{errors.New(noHost)}
	w.metrics.err = errors.New("operation error CloudWatch: GetMetricStatistics: lookup monitoring.eu-west-1.amazonaws.com: no such host")
	useAWS(t, w.clients)
	r := runCLI(t, w.env, w.secrets, "doctor", "--stack", "Geo")
	if r.code != exitError {
		t.Fatalf("exit %d, want %d:\n%s%s", r.code, exitError, r.stdout, r.stderr)
	}
	if n := strings.Count(r.stdout, "no such host"); n != 2 {
		t.Errorf("%d lines say no such host, want 2 (the stack's cause once, the metrics' once):\n%s", n, r.stdout)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	pointing := 0
	for _, l := range lines {
		if strings.HasPrefix(l, "ERROR") && strings.HasSuffix(l, "could not check: cause 1 below") {
			pointing++
		}
	}
	if pointing != len(doctorChecks)-1 {
		t.Errorf("%d checks point at the shared cause, want %d:\n%s", pointing, len(doctorChecks)-1, r.stdout)
	}
	wantCause := "cause 1, of 7 checks: describe stack Geo: " + noHost
	if !strings.Contains(r.stdout, wantCause+"\n") {
		t.Errorf("output lacks %q:\n%s", wantCause, r.stdout)
	}
	if !strings.Contains(r.stdout, "ERROR  monitor heartbeat    could not check: ") || !strings.Contains(r.stdout, "monitoring.eu-west-1.amazonaws.com") {
		t.Errorf("the heartbeat's own cause is not on its line:\n%s", r.stdout)
	}
	if !strings.HasSuffix(r.stdout, "8 checks: 0 passed, 0 failed, 8 could not be checked\n") {
		t.Errorf("summary:\n%s", r.stdout)
	}

	rep, _ := w.doctor(t)
	for _, c := range rep.Checks {
		if c.ID != "monitor-heartbeat" && !strings.Contains(c.Detail, "no such host") {
			t.Errorf("--json %s = %+v, want its own detail", c.ID, c)
		}
	}
}

func TestSharedCausesKeepTheCommonContext(t *testing.T) {
	root := errors.New("no such host")
	stack := fmt.Errorf("describe stack Geo: %w", root)
	results := []checkResult{
		{Status: checkError, cause: fmt.Errorf("read secret: %w", stack)},
		{Status: checkPass},
		{Status: checkError, cause: stack},
		{Status: checkError, cause: errors.New("throttled")},
	}
	shared, causes := sharedCauses(results)
	if len(causes) != 1 || causes[0].err.Error() != stack.Error() || causes[0].checks != 2 {
		t.Fatalf("causes %+v, want the stack's error of 2 checks", causes)
	}
	if len(shared) != 2 || shared[0] != 0 || shared[2] != 0 {
		t.Errorf("shared %v, want checks 0 and 2", shared)
	}
}
