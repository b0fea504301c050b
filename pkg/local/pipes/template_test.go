package pipes

import (
	"encoding/json"
	"strings"
	"testing"
)

func decode(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestRender(t *testing.T) {
	event := decode(t, `{"a":{"s":"x \"quoted\" <b>","n":1.5,"b":true,"o":{"k":"v"}},"list":[{"S":"first"},{"S":"second"}]}`)
	tests := []struct{ template, want string }{
		// Inside quotes: the value's text, escaped; absent: empty.
		{`{"s":"<$.a.s>","missing":"<$.a.nothing>","n":"<$.a.n>","b":"<$.a.b>"}`,
			`{"s":"x \"quoted\" <b>","missing":"","n":"1.5","b":"true"}`},
		// Outside quotes: the value as JSON.
		{`{"o":<$.a.o>,"n":<$.a.n>,"s":<$.a.s>}`, `{"o":{"k":"v"},"n":1.5,"s":"x \"quoted\" <b>"}`},
		// Array indices, both notations; text around a placeholder.
		{`{"first":"<$.list[0].S>","second":"<$.list.1.S>","text":"is <$.list[0].S>!"}`, `{"first":"first","second":"second","text":"is first!"}`},
		{`{"pipe":"<aws.pipes.pipe-name>"}`, `{"pipe":"P"}`},
	}
	for _, tt := range tests {
		tmpl, err := ParseTemplate(tt.template)
		if err != nil {
			t.Fatal(err)
		}
		got, err := tmpl.Render(event, map[string]string{"aws.pipes.pipe-name": "P"})
		if err != nil {
			t.Errorf("%s: %v", tt.template, err)
			continue
		}
		if string(got) != tt.want {
			t.Errorf("%s\n got %s\nwant %s", tt.template, got, tt.want)
		}
	}
}

// A value absent from the record outside quotes would leave a hole in the
// JSON: refused, as AWS would fail the delivery.
func TestRenderRefusesAHoleInTheJSON(t *testing.T) {
	tmpl, err := ParseTemplate(`{"n": <$.a.nothing>}`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tmpl.Render(decode(t, `{"a":{}}`), nil); err == nil || !strings.Contains(err.Error(), "outside quotes") {
		t.Errorf("err = %v", err)
	}
	for _, bad := range []string{`{"x":"<$.a.*>"}`, `{"x":"<$.a[x]>"}`, `{"x":"<$.a`} {
		if _, err := ParseTemplate(bad); err == nil {
			t.Errorf("ParseTemplate(%s) accepted", bad)
		}
	}
}
