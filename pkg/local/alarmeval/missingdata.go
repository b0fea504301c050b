package alarmeval

// This file is CloudWatch's rule for the datapoints an alarm evaluates, from
// "How alarm state is evaluated when data is missing" in the CloudWatch
// User Guide (Configuring how CloudWatch alarms treat missing data):
//
// CloudWatch retrieves more datapoints than EvaluationPeriods, the
// evaluation range. Then:
//   - if at least EvaluationPeriods datapoints of the range exist, the most
//     recent EvaluationPeriods existing datapoints are evaluated, wherever
//     they are in the range, and TreatMissingData does not matter;
//   - otherwise every existing datapoint is evaluated, and the missing ones
//     are filled in as TreatMissingData says, as few as possible: up to
//     EvaluationPeriods datapoints in all.
//
// With EvaluationPeriods datapoints, fewer than DatapointsToAlarm breaching
// is OK, else ALARM. missing and ignore do not fill: with no datapoint at
// all, missing is INSUFFICIENT_DATA and ignore keeps the state. With some
// datapoints, the documentation's examples decide (see the test table):
// OK as soon as a non-breaching datapoint exists and too few breach; with
// only breaching ones, too few to alarm, INSUFFICIENT_DATA (missing) or the
// current state (ignore) — except that missing goes to ALARM when those
// breaching datapoints all lie before the most recent EvaluationPeriods
// periods ("X - - - -"), which is how CloudWatch keeps re-evaluating the
// last datapoints after a metric stops.

// class is a datapoint of the evaluation range, as far as the alarm cares.
type class int8

const (
	absent class = iota
	within
	breaching
)

// verdict is the outcome of one evaluation.
type verdict struct {
	state State
	// keep is set when the alarm keeps its current state (ignore).
	keep bool
	// evaluated is how many existing datapoints were evaluated, filled how
	// many missing ones were filled in, breaching how many of all breached.
	evaluated, filled, breaching int
	// used holds the indexes of the evaluated existing datapoints.
	used []int
}

// decide applies the rule to points, the evaluation range oldest first.
func decide(points []class, evaluationPeriods, datapointsToAlarm int, treat TreatMissingData) verdict {
	var existing []int // indexes of existing datapoints, oldest first
	for i, c := range points {
		if c != absent {
			existing = append(existing, i)
		}
	}
	if len(existing) >= evaluationPeriods {
		existing = existing[len(existing)-evaluationPeriods:]
	}
	v := verdict{evaluated: len(existing), used: existing}
	nonBreaching := 0
	for _, i := range existing {
		if points[i] == breaching {
			v.breaching++
		} else {
			nonBreaching++
		}
	}
	short := evaluationPeriods - len(existing)
	alarmOrOK := func() verdict {
		v.state = StateOK
		if v.breaching >= datapointsToAlarm {
			v.state = StateAlarm
		}
		return v
	}
	if short == 0 {
		return alarmOrOK()
	}

	switch treat {
	case TreatBreaching:
		v.filled, v.breaching = short, v.breaching+short
		return alarmOrOK()
	case TreatNotBreaching:
		v.filled = short
		return alarmOrOK()
	}

	// missing and ignore evaluate the existing datapoints only.
	switch {
	case len(existing) == 0 && treat == TreatMissing:
		v.state = StateInsufficientData
		return v
	case v.breaching >= datapointsToAlarm:
		v.state = StateAlarm
		return v
	case nonBreaching > 0:
		v.state = StateOK
		return v
	case treat == TreatIgnore || len(existing) == 0:
		v.keep = true
		return v
	}
	recent := len(points) - evaluationPeriods
	if existing[len(existing)-1] < recent {
		v.state = StateAlarm // "X - - - -"
		return v
	}
	v.state = StateInsufficientData
	return v
}
