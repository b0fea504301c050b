package awscalls

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The golden lists (testdata/aws-calls/*.json at the repository root) are
// the AWS API calls a function's code makes, as recorded by the tests that
// run it, with the IAM actions each one is authorized as. A test binary
// that records a function's calls checks them against its golden list from
// TestMain (FinishMain), and infra/policy_calls_test.go requires the stack
// to grant every action of every golden list: a new SDK call fails the
// recording package's tests until the list is updated, and then fails the
// infra tests until the stack grants it and the policy check evaluates it.

var updateFlag = flag.Bool("update-aws-calls", false,
	"rewrite this package's share of the golden AWS call lists (testdata/aws-calls) from the calls the tests recorded")

// UpdateEnv, set to 1, is the same as the -update-aws-calls flag (for
// `go test ./...`, where a flag would reach packages that do not define it).
const UpdateEnv = "UPDATE_AWS_CALLS"

// Entry is one line of a golden list: an operation of a service on a kind
// of resource, the IAM actions its calls are authorized as, and the test
// packages that recorded it, with the actions of the calls each recorded
// (so that a package's update replaces exactly its own share).
type Entry struct {
	Service    string              `json:"service"`
	Operation  string              `json:"operation"`
	Resource   string              `json:"resource"`
	IAMActions []string            `json:"iam_actions"`
	RecordedBy map[string][]string `json:"recorded_by"`
}

func (e Entry) key() string { return e.Service + "\x00" + e.Operation + "\x00" + e.Resource }

func (e Entry) String() string {
	return fmt.Sprintf("%s %s (%s) -> %s", e.Service, e.Operation, e.Resource, strings.Join(e.IAMActions, ", "))
}

// ResourceKind is the kind of resource the call names, which decides the
// ARN IAM authorizes it on: "object", "bucket", "table", "table index",
// "secret", "queue" ("" when the input names none).
func (c Call) ResourceKind() string {
	switch {
	case c.Key != "":
		return "object"
	case c.Bucket != "":
		return "bucket"
	case c.IndexName != "":
		return "table index"
	case c.TableName != "":
		return "table"
	case c.SecretID != "":
		return "secret"
	case c.QueueURL != "", c.QueueName != "":
		return "queue"
	}
	return ""
}

// Entries summarises calls as a golden list recorded by by: one entry per
// service, operation and resource kind, with the union of their IAM
// actions, sorted.
func Entries(calls []Call, by string) []Entry {
	byKey := map[string]*Entry{}
	for _, c := range calls {
		e := Entry{Service: c.Service, Operation: c.Operation, Resource: c.ResourceKind()}
		if byKey[e.key()] == nil {
			e.IAMActions = []string{}
			byKey[e.key()] = &e
		}
		p := byKey[e.key()]
		for _, a := range c.IAMActions() {
			if !slices.Contains(p.IAMActions, a) {
				p.IAMActions = append(p.IAMActions, a)
			}
		}
	}
	out := make([]Entry, 0, len(byKey))
	for _, e := range byKey {
		slices.Sort(e.IAMActions)
		e.RecordedBy = map[string][]string{by: e.IAMActions}
		out = append(out, *e)
	}
	sortEntries(out)
	return out
}

func sortEntries(es []Entry) {
	slices.SortFunc(es, func(a, b Entry) int { return strings.Compare(a.key(), b.key()) })
}

// ReadGolden reads a golden list; a missing file is an empty list.
func ReadGolden(path string) ([]Entry, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var es []Entry
	if err := json.Unmarshal(raw, &es); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return es, nil
}

// Missing returns the calls (as entries) the golden list does not cover: a
// call is covered when an entry of the same service, operation and
// resource kind lists each of its IAM actions. A call with no known IAM
// action is never covered.
func Missing(golden []Entry, calls []Call, by string) []Entry {
	var missing []Call
	for _, c := range calls {
		actions := c.IAMActions()
		covered := len(actions) > 0
		for _, a := range actions {
			if !slices.ContainsFunc(golden, func(e Entry) bool {
				return e.Service == c.Service && e.Operation == c.Operation && e.Resource == c.ResourceKind() && slices.Contains(e.IAMActions, a)
			}) {
				covered = false
			}
		}
		if !covered {
			missing = append(missing, c)
		}
	}
	return Entries(missing, by)
}

// CheckGolden checks the calls package by recorded against the golden
// list at path. Without update it fails unless every call is covered (a run
// of some of the tests records fewer calls, which is fine). With update it
// rewrites by's share of the list to exactly calls, keeping what other
// packages recorded.
func CheckGolden(path, by string, calls []Call, update bool) error {
	if update {
		return updateGolden(path, by, calls)
	}
	golden, err := ReadGolden(path)
	if err != nil {
		return err
	}
	missing := Missing(golden, calls, by)
	if len(missing) == 0 {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s made AWS calls that %s does not list:\n", by, path)
	for _, e := range missing {
		if len(e.IAMActions) == 0 {
			fmt.Fprintf(&b, "  %s %s (%s): no IAM action known, extend Call.IAMActions in pkg/local/awscalls\n", e.Service, e.Operation, e.Resource)
			continue
		}
		fmt.Fprintf(&b, "  %s\n", e)
	}
	fmt.Fprintf(&b, "If the code is meant to make them, record them with `go test ./%s -%s` (or %s=1), "+
		"then grant them in the stack and add them to requiredAccesses in infra/policy_test.go: "+
		"`go test -run 'Policy|Access|Call' ./infra/` fails until every listed action is granted and evaluated.", by, "update-aws-calls", UpdateEnv)
	return errors.New(b.String())
}

func updateGolden(path, by string, calls []Call) error {
	for _, c := range calls {
		if len(c.IAMActions()) == 0 {
			return fmt.Errorf("%s made %s %s, which has no known IAM action: extend Call.IAMActions in pkg/local/awscalls", by, c.Service, c.Operation)
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	unlock, err := lock(path + ".lock")
	if err != nil {
		return err
	}
	defer unlock()
	golden, err := ReadGolden(path)
	if err != nil {
		return err
	}
	// Drop by's share, then add what it recorded now; the actions of an
	// entry are those of every package's calls.
	var out []Entry
	for _, e := range golden {
		delete(e.RecordedBy, by)
		if len(e.RecordedBy) > 0 {
			out = append(out, e)
		}
	}
	for _, n := range Entries(calls, by) {
		if i := slices.IndexFunc(out, func(e Entry) bool { return e.key() == n.key() }); i >= 0 {
			out[i].RecordedBy[by] = n.RecordedBy[by]
		} else {
			out = append(out, n)
		}
	}
	for i := range out {
		out[i].IAMActions = []string{}
		for _, actions := range out[i].RecordedBy {
			for _, a := range actions {
				if !slices.Contains(out[i].IAMActions, a) {
					out[i].IAMActions = append(out[i].IAMActions, a)
				}
			}
		}
		slices.Sort(out[i].IAMActions)
	}
	sortEntries(out)
	if out == nil {
		out = []Entry{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// lock serialises updates of one golden list by several test binaries
// (`go test ./...` runs packages in parallel).
func lock(path string) (func(), error) {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err == nil {
			f.Close()
			return func() { os.Remove(path) }, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s is held for over 2 minutes; delete it if no test is updating the golden list", path)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// FinishMain ends a TestMain whose tests recorded calls of the function
// whose golden list is at path: code is m.Run's result. It checks (or with
// -update-aws-calls / UPDATE_AWS_CALLS=1 rewrites) the list and returns the
// exit code: 1 when the check fails.
//
//	func TestMain(m *testing.M) {
//		os.Exit(awscalls.FinishMain(m.Run(), "../../testdata/aws-calls/predictor.json", "pkg/local/soak", rec.Calls()))
//	}
func FinishMain(code int, path, by string, calls []Call) int {
	update := *updateFlag || os.Getenv(UpdateEnv) == "1"
	if update {
		if code != 0 {
			fmt.Fprintf(os.Stderr, "awscalls: the tests failed, %s not updated\n", path)
			return code
		}
		// The list is what the whole suite records: a partial run would
		// drop the calls of the tests it skipped.
		for _, name := range []string{"test.run", "test.skip"} {
			if f := flag.Lookup(name); f != nil && f.Value.String() != "" {
				fmt.Fprintf(os.Stderr, "awscalls: -%s is set: update %s from a run of the whole package (drop -%s)\n", name, path, strings.TrimPrefix(name, "test."))
				return 1
			}
		}
		if testing.Short() {
			fmt.Fprintf(os.Stderr, "awscalls: -short is set: update %s from a full run\n", path)
			return 1
		}
	}
	if err := CheckGolden(path, by, calls, update); err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: awscalls: %v\n", err)
		return 1
	}
	if update {
		fmt.Fprintf(os.Stderr, "awscalls: wrote %s from %d calls recorded by %s\n", path, len(calls), by)
	}
	return code
}
