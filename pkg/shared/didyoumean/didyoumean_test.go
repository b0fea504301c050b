package didyoumean

import "testing"

func TestClosest(t *testing.T) {
	commands := []string{"predict", "models", "credits", "results", "status", "doctor", "local", "simulate", "runs", "reprocess"}
	for _, c := range []struct{ word, want string }{
		{"stauts", "status"},   // a swap is one edit
		{"STATUS", "status"},   // case ignored
		{"resutls", "results"}, // a swap
		{"predcit", "predict"}, // a swap
		{"docter", "doctor"},   // a substitution
		{"run", "runs"},        // an insertion
		{"deploy", ""},         // a different word
		{"xyzzy", ""},          // nothing near
		{"s", ""},              // too short to guess
		{"reprocesss", "reprocess"},
	} {
		if got := Closest(c.word, commands); got != c.want {
			t.Errorf("Closest(%q) = %q, want %q", c.word, got, c.want)
		}
	}
	if got := Closest("sinse", []string{"since", "status", "stack"}); got != "since" {
		t.Errorf("Closest(sinse) = %q, want since", got)
	}
}

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"", "abc", 3}, {"ab", "ba", 1}, {"kitten", "sitting", 3}, {"alarmemial", "alarmemail", 1},
	} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
