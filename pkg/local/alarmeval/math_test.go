package alarmeval

import (
	"strings"
	"testing"
)

func TestMathExpressions(t *testing.T) {
	// ok, rejected and failed as one period's datapoints; "-" is missing.
	env := func(vals map[string]value) func(string) value {
		return func(id string) value { return vals[id] }
	}
	const rate = "IF(FILL(ok,0) + FILL(rejected,0) + FILL(failed,0) > 0, " +
		"100 * FILL(failed,0) / (FILL(ok,0) + FILL(rejected,0) + FILL(failed,0)), 0)"
	const stalled = "IF(FILL(waiting,0) + FILL(inflight,0) > 0 AND FILL(deleted,0) == 0, 1, 0)"
	tests := []struct {
		expr string
		vals map[string]value
		want value
	}{
		{rate, map[string]value{"ok": some(9), "failed": some(1)}, some(10)},
		{rate, map[string]value{"failed": some(2)}, some(100)},
		{rate, map[string]value{}, some(0)}, // nothing handled: 0, not a division by zero
		{rate, map[string]value{"ok": some(3), "rejected": some(1)}, some(0)},
		{stalled, map[string]value{"waiting": some(3)}, some(1)},
		{stalled, map[string]value{"inflight": some(1), "deleted": some(0)}, some(1)},
		{stalled, map[string]value{"waiting": some(3), "deleted": some(1)}, some(0)},
		{stalled, map[string]value{}, some(0)},
		{"m1 + 1", map[string]value{}, missing}, // a missing operand without FILL
		{"m1 / m2", map[string]value{"m1": some(1), "m2": some(0)}, missing},
		{"IF(m1 > 1, 5)", map[string]value{"m1": some(1)}, missing},
		{"IF(m1 > 1, 5)", map[string]value{"m1": some(2)}, some(5)},
		{"-2 ^ 2 + 2 * 3 - 1", nil, some(1)}, // -(2^2) + 6 - 1
		{"2 ^ 3 ^ 2", nil, some(512)},
		{"NOT m1 OR m2 && 1", map[string]value{"m1": some(0), "m2": some(0)}, some(1)},
		{"!(1 >= 2) || 0", nil, some(1)},
		{"1 != 1 or 2 <= 2", nil, some(1)},
		{"FILL(m1, m2 * 2)", map[string]value{"m2": some(4)}, some(8)},
		{"1.5e2 < 151", nil, some(1)},
	}
	for _, tt := range tests {
		n, err := parseExpression(tt.expr)
		if err != nil {
			t.Fatalf("parse %q: %v", tt.expr, err)
		}
		if got := n.eval(env(tt.vals)); got != tt.want {
			t.Errorf("%q with %v = %+v, want %+v", tt.expr, tt.vals, got, tt.want)
		}
	}
}

func TestMathExpressionIDs(t *testing.T) {
	n, err := parseExpression("IF(FILL(waiting,0) + FILL(inflight,0) > 0 AND FILL(deleted,0) == 0, 1, 0)")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(n.ids(nil), ","); got != "waiting,inflight,deleted" {
		t.Errorf("ids = %s", got)
	}
}

func TestUnsupportedMath(t *testing.T) {
	tests := map[string]string{
		`SEARCH('{AWS/SQS,QueueName} MetricName="x"', 'Sum', 300)`: "SEARCH is not supported",
		"ANOMALY_DETECTION_BAND(m1, 2)":                            "ANOMALY_DETECTION_BAND",
		"FILL(m1, REPEAT)":                                         "REPEAT) is not supported",
		"FILL(m1, LINEAR)":                                         "LINEAR) is not supported",
		"RATE(m1)":                                                 "RATE",
		"IF(m1)":                                                   "IF with 1 arguments",
		"m1 +":                                                     "unexpected",
		"(m1":                                                      `expected ")"`,
		"m1 $ 2":                                                   "unexpected character",
		"m1 m2":                                                    "unexpected",
	}
	for expr, want := range tests {
		_, err := parseExpression(expr)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("parse %q: %v, want an error containing %q", expr, err, want)
		}
	}
}
