package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTemplatesPassCfnLint runs AWS's CloudFormation linter, cfn-lint, on
// every synthesized scenario: 0 errors (its E rules: invalid properties,
// values, references and resource specifications, as CloudFormation's own
// schemas define them). Warnings and informational findings are logged.
// Where cfn-lint is not installed the test is skipped, except on CI (CI
// set), where the linter is part of the machine and a skip would hide it.
func TestTemplatesPassCfnLint(t *testing.T) {
	lint, err := exec.LookPath("cfn-lint")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("cfn-lint is not installed on CI: .ci/run must install it (pip install cfn-lint==1.51.0)")
		}
		t.Skip("cfn-lint is not installed (pip install cfn-lint==1.51.0 to run this check)")
	}
	dir := t.TempDir()
	var files []string
	for name, s := range synthApp(t).scenarios() {
		raw, err := json.MarshalIndent(s.doc, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name+".template.json")
		if err := os.WriteFile(path, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, path)
	}
	// -f json lists every finding with its level; the exit status is a bit
	// mask (2 = errors, 4 = warnings, 8 = informational), so it is read
	// from the findings rather than from the status.
	out, err := exec.Command(lint, append([]string{"-f", "json", "--"}, files...)...).Output()
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatalf("cfn-lint: %v", err)
		}
	}
	var findings []struct {
		Level    string `json:"Level"`
		Message  string `json:"Message"`
		Filename string `json:"Filename"`
		Rule     struct {
			ID string `json:"Id"`
		} `json:"Rule"`
		Location struct {
			Path []any `json:"Path"`
		} `json:"Location"`
	}
	if err := json.Unmarshal(out, &findings); err != nil {
		t.Fatalf("cfn-lint output is not its JSON report: %v\n%s", err, out)
	}
	for _, f := range findings {
		line := filepath.Base(f.Filename) + ": " + f.Rule.ID + " " + f.Message + " at " + strings.Trim(asJSON(f.Location.Path), "[]")
		if f.Level == "Error" {
			t.Error(line)
		} else {
			t.Log(f.Level + ": " + line)
		}
	}
	t.Logf("cfn-lint on %d templates: %d findings", len(files), len(findings))
}
