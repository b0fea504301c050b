package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSynthAndDeployNeedNoJava runs the Makefile's dependency targets with a
// PATH that has Go and Node.js but no Java: what synth, deploy and destroy
// need (deps-cdk) passes, and only deps, which make run and make test use
// for DynamoDB Local, asks for Java.
func TestSynthAndDeployNeedNoJava(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	// npm ci would reach the registry: only run where it is done already.
	if err := exec.Command("make", "-C", root, "-q", "node_modules/.package-lock.json").Run(); err != nil {
		t.Skip("node_modules is not installed (make deps-cdk first)")
	}
	bin := t.TempDir()
	for _, tool := range []string{"go", "node"} {
		path, err := exec.LookPath(tool)
		if err != nil {
			t.Skipf("%s is not installed", tool)
		}
		if err := os.Symlink(path, filepath.Join(bin, tool)); err != nil {
			t.Fatal(err)
		}
	}
	for _, target := range []string{"synth", "deploy", "destroy", "bootstrap"} {
		out, err := exec.Command("make", "-C", root, "-n", target, "CDK_ARGS=-c apiUrl=https://geo.test.invalid").CombinedOutput()
		if err != nil {
			t.Fatalf("make -n %s: %v\n%s", target, err, out)
		}
		if strings.Contains(string(out), "java") {
			t.Errorf("make %s checks for Java:\n%s", target, out)
		}
	}
	run := func(target string) (string, error) {
		cmd := exec.Command("make", "-C", root, "--no-print-directory", target)
		cmd.Env = append(os.Environ(), "PATH="+bin)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run("deps-cdk"); err != nil {
		t.Errorf("make deps-cdk without Java: %v\n%s", err, out)
	}
	out, err := run("deps")
	if err == nil || !strings.Contains(out, "java (>= 17) is required for DynamoDB Local") {
		t.Errorf("make deps without Java: err %v, want the Java message\n%s", err, out)
	}
}

// TestAWSTargetsCheckCredentialsFirst: make bootstrap, make destroy and
// make deploy check the AWS credentials and region (geolocate doctor, one
// line labelled with the make command) before cdk synthesizes anything;
// bootstrap names the environment, so cdk does not synthesize the app.
func TestAWSTargetsCheckCredentialsFirst(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	for target, cdk := range map[string]string{
		"bootstrap": `cdk bootstrap "$env"`,
		"destroy":   "cdk destroy",
		"deploy":    "cdk deploy",
	} {
		out, err := exec.Command("make", "-C", root, "-n", target, "CDK_ARGS=-c apiUrl=https://geo.test.invalid").CombinedOutput()
		if err != nil {
			t.Fatalf("make -n %s: %v\n%s", target, err, out)
		}
		check := strings.Index(string(out), `bin/geolocate doctor --`)
		label := strings.Index(string(out), `--as "make `+target+`"`)
		run := strings.Index(string(out), cdk)
		if check < 0 || label < 0 || run < 0 || check > run {
			t.Errorf("make %s: want geolocate doctor ... --as \"make %s\" before %s:\n%s", target, target, cdk, out)
		}
	}
}
