package settings

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Kind is how a setting's value is written: it decides cdk.json's JSON type
// (a number, a boolean or a string) and which Reader method parses it.
type Kind int

const (
	Text   Kind = iota // a string, checked by Pattern or Check when set
	Int                // a whole number in [Min, Max], or one of Allowed
	Number             // a number in [Min, Max]
	Bool               // true or false
	Choice             // one of Allowed, case-insensitive
)

// Function is a set of the stack's functions, those a setting's variable
// is written for.
type Function uint8

const (
	Predictor Function = 1 << iota
	Monitor
	JobFeeder // the scheduled job feeder (pkg/jobs, functions/jobfeeder)
)

// Setting is one declaration of the table. Its zero fields mean "none":
// no variable, no bound, no function.
type Setting struct {
	// Key is the CDK context key (cdk.json, -c key=value).
	Key string
	// Env is the environment variable the functions read it from (an
	// envvars constant); "" when no function reads it.
	Env string
	// Functions are those the stack writes Env for. A variable Lambda
	// sets itself (AWS_LAMBDA_FUNCTION_MEMORY_SIZE) has Env and no
	// Functions.
	Functions Function
	Kind      Kind
	// Default is cdk.json's value, as text; "" is cdk.json's empty string.
	// A function that finds Env unset uses it too (unless EnvUnknown).
	Default string
	// Optional lets the context value be empty: Default then applies
	// (Choice, Text) or the zero value (an empty Int is "not set").
	Optional bool
	// Min and Max bound Int and Number (both inclusive). EnvMin, when
	// lower, is what a function accepts of Env: a value only the local rig
	// gives (one poller, hence one concurrent instance).
	Min, Max, EnvMin float64
	// Allowed lists Choice's values (the canonical spelling returned) or
	// an Int's only values.
	Allowed []string
	// Pattern and Check validate Text; Want says what they accept, in the
	// refusal's words ("want <Want>"). For other kinds Want, when set,
	// replaces the generated phrase.
	Pattern *regexp.Regexp
	Check   func(string) error
	Want    string
	// EnvDuration: Env holds a Go duration ("10s") rather than a number of
	// Unit; the bounds still count in Unit.
	EnvDuration bool
	// EnvUnknown: Env tells a function a fact of its deployment (a batch
	// size, a timeout); unset there means unknown (zero), not Default.
	EnvUnknown bool
	// Doc is the one line docs/configuration.md starts the setting's row with.
	Doc string
}

// table holds every declaration, in declaration order (add).
var table []*Setting

// add declares s; table.go's package-level variables call it, once each.
func add(s Setting) *Setting {
	p := &s
	table = append(table, p)
	return p
}

// All is every setting, in declaration order.
func All() []*Setting { return append([]*Setting(nil), table...) }

// ByKey is the setting of a context key.
func ByKey(key string) (*Setting, bool) {
	for _, s := range table {
		if s.Key == key {
			return s, true
		}
	}
	return nil, false
}

// Passed are the variables the local rig takes from the shell to tune the
// functions as CDK context tunes the stack: every setting a function reads.
func Passed() []string {
	var names []string
	for _, s := range table {
		if s.Env != "" && !s.EnvUnknown {
			names = append(names, s.Env)
		}
	}
	return names
}

// DefaultInt is Default as an int (0 when empty); a table test holds every
// Int default parseable.
func (s *Setting) DefaultInt() int {
	n, _ := strconv.Atoi(s.Default)
	return n
}

// want is what the setting accepts, in a refusal's words, between lo and
// hi for a number.
func (s *Setting) want(lo, hi float64) string {
	if s.Want != "" {
		return s.Want
	}
	switch s.Kind {
	case Int:
		if len(s.Allowed) > 0 {
			return "one of " + strings.Join(s.Allowed, ", ")
		}
		return fmt.Sprintf("a whole number from %d to %d", int(lo), int(hi))
	case Number:
		return fmt.Sprintf("a number from %g to %g", lo, hi)
	case Bool:
		return "true or false"
	case Choice:
		return "one of " + strings.Join(s.Allowed, ", ")
	}
	return "text"
}
