package main

import (
	"context"
	"fmt"
	"runtime/debug"
)

// buildInfo is what the binary knows of its own build; a variable so tests
// can give it a fixed answer.
var buildInfo = debug.ReadBuildInfo

// runVersion: geolocate version (also geolocate --version) prints the module
// version and the commit the binary was built from, so a bug report can say
// exactly which build it is about. Both come from the Go toolchain's build
// info: `go install ...@v1.2.3` records the version, a build in a checkout
// records the commit (and whether the tree had changes).
func runVersion(_ context.Context, c *cli, args []string) error {
	fs := c.newFlagSet("version", "")
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	_, err := fmt.Fprintln(c.stdout, versionLine())
	return err
}

// versionLine is "geolocate <module version> (commit <rev>[, modified], <date>, <go version>)",
// with "(devel)" and "unknown" where the build did not record them (go run,
// -buildvcs=false, a build outside a checkout).
func versionLine() string {
	version, commit, when, goVersion, modified := "(devel)", "unknown", "", "", false
	if info, ok := buildInfo(); ok {
		if v := info.Main.Version; v != "" {
			version = v
		}
		goVersion = info.GoVersion
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	line := "geolocate " + version + " (commit " + commit
	if modified {
		line += ", modified"
	}
	if when != "" {
		line += ", " + when
	}
	if goVersion != "" {
		line += ", " + goVersion
	}
	return line + ")"
}
