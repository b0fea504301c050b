package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/local/awscalls"
)

// recordedCallLists are the golden lists of the AWS calls each function's
// code makes, recorded by its tests (pkg/local/soak, pkg/predictor, pkg/monitor,
// pkg/geomap/widget, functions/jobfeeder: see pkg/local/awscalls), by the
// principal that makes them.
var recordedCallLists = []struct{ principal, path string }{
	{"predictor", "../testdata/aws-calls/predictor.json"},
	{"monitor", "../testdata/aws-calls/monitor.json"},
	{"mapwidget", "../testdata/aws-calls/mapwidget.json"},
	{"jobfeeder", "../testdata/aws-calls/jobfeeder.json"},
}

// recordedResource reports whether arn, a row's resource in s, is of the
// kind of resource a recorded call names.
func recordedResource(s *policySystem, kind, arn string) (bool, error) {
	switch kind {
	case "object":
		return strings.HasPrefix(arn, s.bucket+"/"), nil
	case "bucket":
		return arn == s.bucket, nil
	case "table":
		return arn == s.table, nil
	case "table index":
		return strings.HasPrefix(arn, s.table+"/index/"), nil
	case "secret":
		return arn == s.secret, nil
	case "queue":
		return arn == s.queue, nil
	}
	return false, fmt.Errorf("resource kind %q: teach recordedResource (infra/policy_calls_test.go) its ARN", kind)
}

// TestPolicyCoversRecordedCalls requires every IAM action of every call
// the functions' code was recorded making to be a required access of
// policy_test.go, for the function's principal, on that kind of resource,
// wanted Allowed, in every configuration: TestPolicyRequiredAccess then
// evaluates it. The list of required accesses comes from the code: a new
// SDK call fails its package's tests until its golden list is updated, and
// then this test until the stack grants it and requiredAccesses checks it.
func TestPolicyCoversRecordedCalls(t *testing.T) {
	golden := map[string][]awscalls.Entry{}
	for _, l := range recordedCallLists {
		es, err := awscalls.ReadGolden(l.path)
		if err != nil {
			t.Fatal(err)
		}
		if len(es) == 0 {
			t.Fatalf("%s is missing or empty: record it with `UPDATE_AWS_CALLS=1 go test ./pkg/local/soak/ ./pkg/predictor/ ./pkg/monitor/ ./pkg/geomap/widget/ ./functions/jobfeeder/`", l.path)
		}
		for _, e := range es {
			if len(e.IAMActions) == 0 {
				t.Errorf("%s: %s %s has no IAM action", l.path, e.Service, e.Operation)
			}
		}
		golden[l.principal] = es
	}

	// granted: principal -> action -> the rows' sources, for the report.
	granted := map[string]map[string][]string{}
	for _, tpl := range policyTemplates(t) {
		s := newPolicySystem(t, tpl)
		rows := s.rows(t)
		for _, r := range rows {
			if r.want != "Allowed" || golden[r.who] == nil {
				continue
			}
			if granted[r.who] == nil {
				granted[r.who] = map[string][]string{}
			}
			if !slices.Contains(granted[r.who][r.action], r.from) {
				granted[r.who][r.action] = append(granted[r.who][r.action], r.from)
			}
		}
		for _, l := range recordedCallLists {
			for _, e := range golden[l.principal] {
				for _, action := range e.IAMActions {
					covered := false
					for _, r := range rows {
						if r.who != l.principal || r.action != action || r.want != "Allowed" {
							continue
						}
						ok, err := recordedResource(s, e.Resource, r.resource)
						if err != nil {
							t.Fatalf("%s: %v", l.path, err)
						}
						covered = covered || ok
					}
					if !covered {
						t.Errorf("%s: the %s calls %s %s (%s, recorded by %s), which IAM authorizes as %s, "+
							"but no row of requiredAccesses (infra/policy_test.go) evaluates %s for the %s on its %s: "+
							"grant it in the stack and add the row",
							tpl.name, l.principal, e.Service, e.Operation, l.path, strings.Join(slices.Sorted(maps.Keys(e.RecordedBy)), ", "),
							action, action, l.principal, e.Resource)
					}
				}
			}
		}
	}

	// The other way: required accesses of the functions that no recorded
	// call uses. Expected there: what Lambda does with the function's role
	// (the SQS event source mapping, logs, the on-failure destination) and
	// what a service does with the caller's rights (KMS behind S3 and
	// Secrets Manager, s3:ListBucket for a 404 rather than a 403).
	for _, l := range recordedCallLists {
		used := map[string]bool{}
		for _, e := range golden[l.principal] {
			for _, a := range e.IAMActions {
				used[a] = true
			}
		}
		var lines []string
		for _, action := range slices.Sorted(maps.Keys(granted[l.principal])) {
			if !used[action] {
				lines = append(lines, fmt.Sprintf("  %s: %s", action, strings.Join(granted[l.principal][action], " | ")))
			}
		}
		t.Logf("%s: required accesses no recorded call makes (%d):\n%s", l.principal, len(lines), strings.Join(lines, "\n"))
	}
}
