package lambdarun

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestLogLinesBounded: values over MaxLogValue are cut and say their
// length, a line still over MaxLogLine is replaced by a short valid one,
// and a value holding newlines and JSON cannot forge a line or a field.
func TestLogLinesBounded(t *testing.T) {
	var buf bytes.Buffer
	l := NewLogger(&buf, "info")
	forged := strings.Repeat("\n{\"level\":\"ERROR\",\"msg\":\"forged\"}\r\n\x00\x1b[31m", 3000)
	l.Info("place", "place", forged)
	l.Error("call failed", "error", errors.New(forged))
	var many []any
	for i := range 20 {
		many = append(many, string(rune('a'+i)), strings.Repeat("é", 1000))
	}
	l.Info("many values", many...)
	l.Info("list", "names", []string{forged, forged, forged, forged, forged})
	l.Info("short", "place", "Paris\n")

	sc := bufio.NewScanner(&buf)
	sc.Buffer(nil, 1<<30)
	var msgs []string
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) > MaxLogLine {
			t.Errorf("line of %d bytes", len(line))
		}
		var f map[string]any
		if err := json.Unmarshal(line, &f); err != nil {
			t.Fatalf("not one JSON object: %v: %.100s", err, line)
		}
		msgs = append(msgs, f["msg"].(string))
		for k, v := range f {
			if s, ok := v.(string); ok && len(s) > MaxLogValue+32 {
				t.Errorf("%s: value of %d bytes", k, len(s))
			}
		}
		if p, ok := f["place"].(string); ok && len(forged) > MaxLogValue && p != "Paris\n" && !strings.HasSuffix(p, "bytes)") {
			t.Errorf("cut value does not say so: %.100q", p)
		}
	}
	want := []string{"place", "call failed", "log line over 16384 bytes replaced", "log line over 16384 bytes replaced", "short"}
	if strings.Join(msgs, "|") != strings.Join(want, "|") {
		t.Errorf("messages %q, want %q", msgs, want)
	}
}
