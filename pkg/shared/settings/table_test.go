package settings

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestTableIsConsistent: one key and one variable per setting, and every
// default is a value its own reader accepts.
func TestTableIsConsistent(t *testing.T) {
	keys, envs := map[string]bool{}, map[string]string{}
	for _, s := range All() {
		if keys[s.Key] {
			t.Errorf("key %s declared twice", s.Key)
		}
		keys[s.Key] = true
		if s.Env != "" {
			if other, dup := envs[s.Env]; dup {
				t.Errorf("%s and %s both read %s", other, s.Key, s.Env)
			}
			envs[s.Env] = s.Key
		}
		if s.Doc == "" {
			t.Errorf("%s has no documentation", s.Key)
		}
		if s.Functions != 0 && s.Env == "" {
			t.Errorf("%s is given to functions but has no variable", s.Key)
		}
		if s.Default == "" {
			continue
		}
		r := FromContext(func(string) any { return s.Default })
		readByKind(r, s)
		if err := r.Err(); err != nil {
			t.Errorf("default of %s refused: %v", s.Key, err)
		}
	}
}

// jsonDefault is the setting's default as cdk.json writes it.
func jsonDefault(s *Setting) any {
	if s.Default == "" {
		return ""
	}
	switch s.Kind {
	case Int, Number:
		f, _ := strconv.ParseFloat(s.Default, 64)
		return f
	case Bool:
		return s.Default == "true"
	}
	return s.Default
}

// TestCDKJSONHoldsTheTablesDefaults: cdk.json's context gives each
// setting the table's default, in the table's order, and nothing else but
// the CDK's own keys. On drift it prints the block to paste.
func TestCDKJSONHoldsTheTablesDefaults(t *testing.T) {
	raw, err := os.ReadFile("../../../cdk.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Context map[string]any `json:"context"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	drift := false
	for _, s := range All() {
		v := jsonDefault(s)
		line, _ := json.Marshal(v)
		fmt.Fprintf(&want, "    %q: %s,\n", s.Key, line)
		if got, ok := doc.Context[s.Key]; !ok || got != v {
			t.Errorf("cdk.json %s = %v, the table's default %v", s.Key, got, v)
			drift = true
		}
	}
	var keys []string
	for key := range doc.Context {
		keys = append(keys, key)
	}
	for _, err := range Unknown(keys) {
		t.Errorf("cdk.json: %v", err)
		drift = true
	}
	// The settings come first, in the table's order, so the file reads as
	// the table does.
	var order []string
	for _, m := range regexp.MustCompile(`(?m)^\s*"([A-Za-z]+)":`).FindAllStringSubmatch(string(raw[strings.Index(string(raw), `"context"`):]), -1) {
		if _, ok := ByKey(m[1]); ok {
			order = append(order, m[1])
		}
	}
	for i, s := range All() {
		if i < len(order) && order[i] != s.Key {
			t.Errorf("cdk.json lists %s where the table has %s", order[i], s.Key)
			drift = true
			break
		}
	}
	if drift {
		t.Logf("cdk.json's context should start with:\n%s", want.String())
	}
}

// docsRow matches a row of docs/configuration.md's settings table: the
// backticked keys of its first column, its default column, its meaning.
var docsRow = regexp.MustCompile("(?m)^\\| (`[A-Za-z]+`(?:(?:, | / )`[A-Za-z]+`)*) \\| ([^|]*) \\| (.*) \\|$")

// TestDocsListEverySetting: docs/configuration.md has a row for every
// setting and none for a key the table lacks; a row's default column
// starts with the table's default, and a range it states (lo..hi) is the
// table's bounds. On drift it prints the rows' expected beginnings.
func TestDocsListEverySetting(t *testing.T) {
	raw, err := os.ReadFile("../../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string][]string{} // key -> default column, meaning
	for _, m := range docsRow.FindAllStringSubmatch(string(raw), -1) {
		for _, k := range regexp.MustCompile("`([A-Za-z]+)`").FindAllStringSubmatch(m[1], -1) {
			rows[k[1]] = []string{strings.TrimSpace(m[2]), m[3]}
		}
	}
	rangeRE := regexp.MustCompile(`(?:^|[ (])(-?\d+)\.\.(\d+)\b`)
	var want strings.Builder
	drift := false
	for _, s := range All() {
		def := defaultInDocs(s)
		fmt.Fprintf(&want, "| `%s` | %s | %s |\n", s.Key, def, s.Doc)
		row, ok := rows[s.Key]
		if !ok {
			t.Errorf("docs/configuration.md has no row for %s", s.Key)
			drift = true
			continue
		}
		delete(rows, s.Key)
		if def != "" && !strings.HasPrefix(strings.ReplaceAll(row[0], ",", ""), def) {
			t.Errorf("docs/configuration.md: %s's default is %q, the table's %s", s.Key, row[0], def)
			drift = true
		}
		if m := rangeRE.FindStringSubmatch(row[1]); m != nil && (s.Kind == Int || s.Kind == Number) {
			if m[1] != strconv.FormatFloat(s.Min, 'f', -1, 64) || m[2] != strconv.FormatFloat(s.Max, 'f', -1, 64) {
				t.Errorf("docs/configuration.md: %s's range is %s..%s, the table's %g..%g", s.Key, m[1], m[2], s.Min, s.Max)
				drift = true
			}
		}
	}
	for key := range rows {
		t.Errorf("docs/configuration.md has a row for %s, which no setting declares", key)
		drift = true
	}
	if drift {
		t.Logf("each setting's row should start so:\n%s", want.String())
	}
}

// defaultInDocs is the default as the docs' table writes it ("" when the
// docs describe it in words: an empty default means "none" or "the
// service's").
func defaultInDocs(s *Setting) string {
	switch {
	case s.Default == "":
		return ""
	case s.Kind == Int || s.Kind == Number:
		return s.Default
	case s.Key == StackName.Key || s.Kind == Bool || s.Kind == Choice || s.Kind == Text:
		return "`" + s.Default + "`"
	}
	return s.Default
}

func TestUnknownKeysAreRefusedWithTheClosest(t *testing.T) {
	keys := []string{"alarmEmial", "ratePerMinutes", "BatchSize", "colour", "batchSize",
		"@aws-cdk/core:checkSecretUsage", "aws:cdk:enable-path-metadata", "acknowledged-issue-numbers", "cli-telemetry"}
	var got []string
	for _, err := range Unknown(keys) {
		got = append(got, err.Error())
	}
	want := []string{
		"unknown setting alarmEmial; did you mean alarmEmail?",
		"unknown setting ratePerMinutes; did you mean ratePerMinute?",
		"unknown setting BatchSize; did you mean batchSize?",
		"unknown setting colour; the settings are listed in docs/configuration.md",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Unknown =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// readByKind reads s with the Reader method of its kind, so that its
// checks run on the value.
func readByKind(r *Reader, s *Setting) {
	switch s.Kind {
	case Int:
		r.Int(s)
	case Number:
		r.Float(s)
	case Bool:
		r.Bool(s)
	default:
		r.String(s)
	}
}
