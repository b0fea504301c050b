package alarmeval

import (
	"strings"
	"testing"
)

// points reads a row of the documentation's table: oldest first, "0" a
// non-breaching datapoint, "X" a breaching one, "-" a missing one.
func points(t *testing.T, row string) []class {
	t.Helper()
	var out []class
	for _, f := range strings.Fields(row) {
		switch f {
		case "0":
			out = append(out, within)
		case "X":
			out = append(out, breaching)
		case "-":
			out = append(out, absent)
		default:
			t.Fatalf("bad datapoint %q in %q", f, row)
		}
	}
	return out
}

// keep marks "Retain current state" in the table.
const keep State = "retain"

// TestMissingDataTable is the two tables of "How alarm state is evaluated
// when data is missing" (CloudWatch User Guide, Configuring how CloudWatch
// alarms treat missing data; awsdocs/amazon-cloudwatch-user-guide,
// doc_source/AlarmThatSendsEmail.md): an evaluation range of 5 datapoints
// for 3 evaluation periods, most recent on the right.
func TestMissingDataTable(t *testing.T) {
	tests := []struct {
		datapointsToAlarm int
		row               string
		// By TreatMissingData: missing, ignore, breaching, notBreaching.
		missing, ignore, breaching, notBreaching State
	}{
		// 3 out of 3.
		{3, "0 - X - X", StateOK, StateOK, StateOK, StateOK},
		{3, "0 - - - -", StateOK, StateOK, StateOK, StateOK},
		{3, "- - - - -", StateInsufficientData, keep, StateAlarm, StateOK},
		{3, "0 X X - X", StateAlarm, StateAlarm, StateAlarm, StateAlarm},
		{3, "- - - - X", StateInsufficientData, keep, StateAlarm, StateOK},
		{3, "X - - - -", StateAlarm, keep, StateAlarm, StateOK},
		// 2 out of 3.
		{2, "0 - X - X", StateAlarm, StateAlarm, StateAlarm, StateAlarm},
		{2, "0 0 X 0 X", StateAlarm, StateAlarm, StateAlarm, StateAlarm},
		{2, "0 - X - -", StateOK, StateOK, StateAlarm, StateOK},
		{2, "- - - - 0", StateOK, StateOK, StateAlarm, StateOK},
		{2, "- - - - X", StateInsufficientData, keep, StateAlarm, StateOK},
	}
	for _, tt := range tests {
		for treat, want := range map[TreatMissingData]State{
			TreatMissing: tt.missing, TreatIgnore: tt.ignore, TreatBreaching: tt.breaching, TreatNotBreaching: tt.notBreaching,
		} {
			got := decide(points(t, tt.row), 3, tt.datapointsToAlarm, treat)
			gotState := got.state
			if got.keep {
				gotState = keep
			}
			if gotState != want {
				t.Errorf("%d of 3, %q, %s: %s, want %s (%+v)", tt.datapointsToAlarm, tt.row, treat, gotState, want, got)
			}
		}
	}
}

// The second row's explanation: once the non-breaching datapoint leaves the
// range, the alarm treating missing data as breaching goes to ALARM.
func TestMissingDataRowTwoNextEvaluation(t *testing.T) {
	if got := decide(points(t, "- - - - -"), 3, 3, TreatBreaching); got.state != StateAlarm {
		t.Errorf("next evaluation: %s, want ALARM", got.state)
	}
	// As few missing datapoints as possible are filled in: two here.
	if got := decide(points(t, "0 - - - -"), 3, 3, TreatBreaching); got.filled != 2 || got.evaluated != 1 || got.breaching != 2 {
		t.Errorf("filled %d, evaluated %d, breaching %d; want 2, 1, 2", got.filled, got.evaluated, got.breaching)
	}
}
