// Package functions holds no code: only the tests that keep the local rig
// out of what ships: the Lambda functions, the packages under pkg/ beside
// them (test helpers included), and the operator CLI's AWS-facing commands.
package functions

import (
	"go/parser"
	"go/token"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// module is the module path, the prefix of every package of the project.
const module = "github.com/geolocate-aws/geolocate/"

// rigPrefix is the local rig: it may import what ships, never the reverse.
const rigPrefix = module + "pkg/local/"

// forbidden are import-path prefixes that must never be linked into a
// function: the local rig, and the libraries only the rig uses.
var forbidden = []string{
	rigPrefix,
	"github.com/johannesboyne/gofakes3",
	"github.com/go-echarts/go-echarts",
}

// shipsNot reports the forbidden prefix dep falls under, if any.
func shipsNot(dep string) (string, bool) {
	for _, prefix := range forbidden {
		if strings.HasPrefix(dep, prefix) || dep == strings.TrimSuffix(prefix, "/") {
			return prefix, true
		}
	}
	return "", false
}

// depsOf lists each package matched by patterns (in go list's syntax,
// relative to this directory) with its transitive non-test dependencies.
func depsOf(t *testing.T, patterns ...string) map[string][]string {
	t.Helper()
	args := append([]string{"list", "-f", "{{.ImportPath}}{{range .Deps}} {{.}}{{end}}"}, patterns...)
	out, err := exec.Command("go", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	deps := map[string][]string{}
	for line := range strings.Lines(string(out)) {
		if f := strings.Fields(line); len(f) > 0 {
			deps[f[0]] = f[1:]
		}
	}
	return deps
}

// TestFunctionsShipNoLocalRig fails when any function depends, directly or
// through another package, on code that must never ship.
func TestFunctionsShipNoLocalRig(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "./...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps ./functions/...: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps printed %d packages; expected the functions' dependencies:\n%s", len(deps), out)
	}
	for _, dep := range deps {
		if prefix, bad := shipsNot(dep); bad {
			t.Errorf("a function depends on %s, which must never ship (rule: %s)", dep, prefix)
		}
	}
}

// TestPackagesShipNoLocalRig fails when a package under pkg/ outside the rig
// depends on the rig. The packages beside the shipped code include test
// helpers (pkg/secretkey/secretkeytest, pkg/photo/photoexif/exiftest): a
// helper that imports the rig drags it into every test of the shipped code
// that uses it, and one step later into the code itself.
func TestPackagesShipNoLocalRig(t *testing.T) {
	checked := 0
	for pkg, deps := range depsOf(t, "../pkg/...") {
		if strings.HasPrefix(pkg, rigPrefix) {
			continue
		}
		checked++
		for _, dep := range deps {
			if prefix, bad := shipsNot(dep); bad {
				t.Errorf("%s depends on %s, which must never ship (rule: %s)", pkg, dep, prefix)
			}
		}
	}
	if checked < 10 {
		t.Fatalf("checked %d packages under pkg/; expected every package outside pkg/local", checked)
	}
}

// cliDir is the operator CLI: one package main holding both the AWS-facing
// commands and the local rig's (`geolocate local`, `simulate`).
const cliDir = "../cmd/geolocate"

// cliRigFiles are the CLI's files that run the local rig: local*.go (the
// `local` command, its dashboard, demo and events) and these. Every other
// file is an AWS-facing command (backfill, status, results, doctor,
// credits, ...) or is shared with them, and must not reach the rig; a new
// file is AWS-facing unless it is named here.
var cliRigFiles = []string{"samples.go", "simulate.go"}

// TestCLICommandsShipNoLocalRig fails when a file of the CLI's AWS-facing
// commands imports the rig, directly or through a package it imports. The
// CLI is one package, so the rule is per file: its imports, read with
// go/parser, and their dependencies.
func TestCLICommandsShipNoLocalRig(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(cliDir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	importedBy := map[string][]string{} // import path -> the files importing it
	for _, path := range files {
		name := filepath.Base(path)
		if strings.HasSuffix(name, "_test.go") || strings.HasPrefix(name, "local") || slices.Contains(cliRigFiles, name) {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatalf("parse %s: %v", path, err)
		}
		for _, imp := range f.Imports {
			p, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				t.Fatalf("%s: import %s: %v", name, imp.Path.Value, err)
			}
			importedBy[p] = append(importedBy[p], name)
		}
	}
	if len(importedBy) < 10 {
		t.Fatalf("the CLI's AWS-facing files import %d packages; expected its commands' imports", len(importedBy))
	}
	for pkg, deps := range depsOf(t, slices.Collect(maps.Keys(importedBy))...) {
		for _, dep := range append([]string{pkg}, deps...) {
			if prefix, bad := shipsNot(dep); bad {
				t.Errorf("%v import %s, which is or depends on %s: must never ship (rule: %s)", importedBy[pkg], pkg, dep, prefix)
				break
			}
		}
	}
}
