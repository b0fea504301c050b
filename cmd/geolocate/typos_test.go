package main

import (
	"strings"
	"testing"
)

// Issue 46 point 11: a mistyped flag printed about 30 lines of usage, and
// a mistyped command got no suggestion. Each is one line on stderr, exit
// 2, naming what was meant when the word is a typo of it.
func TestTyposAreOneLineWithASuggestion(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"stauts"}, `geolocate: unknown command "stauts"; did you mean status? (geolocate help lists the commands)`},
		{[]string{"deploy"}, `geolocate: unknown command "deploy" (geolocate help lists the commands)`},
		{[]string{"results", "--sinse", "1h"}, "geolocate: results: unknown flag --sinse; did you mean --since? (geolocate results -h lists the flags)"},
		{[]string{"results", "-sinse=1h"}, "geolocate: results: unknown flag --sinse; did you mean --since? (geolocate results -h lists the flags)"},
		{[]string{"local", "--bogus"}, "geolocate: local: unknown flag --bogus (geolocate local -h lists the flags)"},
		{[]string{"results", "--since"}, "geolocate: results: flag needs an argument: -since (geolocate results -h lists the flags)"},
		{[]string{"predict", "--top-n", "x", "a.jpg"}, `geolocate: predict: invalid value "x" for flag -top-n: parse error (geolocate predict -h lists the flags)`},
	} {
		r := runCLI(t, nil, nil, c.args...)
		if r.code != exitUsage || r.stdout != "" || r.stderr != c.want+"\n" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d and only\n%s", c.args, r.code, r.stdout, r.stderr, exitUsage, c.want)
		}
	}
}

// The help asked for is still the whole usage, on stdout.
func TestHelpIsStillTheUsage(t *testing.T) {
	r := runCLI(t, nil, nil, "results", "-h")
	if r.code != exitOK || !strings.Contains(r.stdout, "-since") || r.stderr != "" {
		t.Errorf("results -h: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}
