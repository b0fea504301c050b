package emf

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
)

// TestDimensionValuesAreValidByConstruction: values from outside that break
// CloudWatch's rules go out as stand-ins that keep them, distinct from each
// other, each logged once per process however many recorders meet it.
func TestDimensionValuesAreValidByConstruction(t *testing.T) {
	bad := []string{
		"",                        // empty
		"   ",                     // only whitespace
		"glöbal_v1",               // not ASCII
		"global\x00v1",            // a control character
		"global\nv1",              // a line break
		"\x7f",                    // DEL
		strings.Repeat("m", 1025), // too long
		strings.Repeat("é", 600),  // too long and not ASCII
		"emoji 🙂 model",           // not ASCII
		"tab\tinside",             // a control character
	}
	good := []string{"global_v0.1", "geo-global-v2", " padded ", strings.Repeat("m", 1024), "a:b/c=d"}
	var logs bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logs, nil))
	var out bytes.Buffer
	for round := range 2 { // a second recorder, as the next invocation's
		rec := New(&out, "Test", map[string]string{"Pipeline": "p"}, func(o *Options) { o.Logger = logger })
		for _, v := range append(append([]string{}, bad...), good...) {
			rec.Add("Calls", Count, 1, Dim{Name: "ModelId", Value: v})
		}
		if err := rec.Flush(); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var doc map[string]any
		if err := json.Unmarshal([]byte(line), &doc); err != nil {
			t.Fatal(err)
		}
		v, _ := doc["ModelId"].(string)
		if why := checkDimensionValue(v); why != "" {
			t.Errorf("published %q, which CloudWatch refuses: %s", v, why)
		}
		seen[v] = true
	}
	if want := len(bad) + len(good); len(seen) != want {
		t.Errorf("%d distinct values published, want %d: bad values collapsed into one", len(seen), want)
	}
	for _, g := range good {
		if !seen[g] {
			t.Errorf("the valid value %.40q was changed", g)
		}
	}
	if n := strings.Count(logs.String(), "published as a stand-in"); n != len(bad) {
		t.Errorf("%d stand-in log lines for %d bad values over two recorders, want one each:\n%s", n, len(bad), logs.String())
	}
	if !strings.Contains(logs.String(), `"stand_in":"gl__bal_v1~`) {
		t.Errorf("the log does not show the stand-in:\n%s", logs.String())
	}
}

func TestDimensionNamesAreChecked(t *testing.T) {
	var out bytes.Buffer
	rec := New(&out, "Test", nil)
	for _, name := range []string{":Colon", "Mödel", strings.Repeat("n", 256), " "} {
		rec.Add("Calls", Count, 1, Dim{Name: name, Value: "x"})
	}
	rec.Add("Calls", Count, 1, Dim{Name: "Fine", Value: "x"})
	err := rec.Flush()
	if err == nil || strings.Count(err.Error(), "dimension name") != 4 {
		t.Errorf("err = %v, want the four bad names refused", err)
	}
	if !strings.Contains(out.String(), `"Fine":"x"`) || strings.Count(strings.TrimSpace(out.String()), "\n") != 0 {
		t.Errorf("output %s, want the one good metric", out.String())
	}
}
