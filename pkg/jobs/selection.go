package jobs

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
)

// Selection is which objects a reprocess job covers, judged on each object
// version's latest result outside the run. Set names the fields given, so
// that an unset bound filters nothing (no magic value stands for "no
// limit"); Status is always given ("" selects every status).
//
// Its text (String, ParseSelection) is what the run stores and the job
// carries: "status=succeeded since=30d prefix=a/", the fields given in a
// fixed order, named as geolocate reprocess's flags.
type Selection struct {
	Status, Reason, Prefix, ModelWas string
	// Since and Until are as the flags take them: a duration ago (7d,
	// 90m), a date or RFC 3339; resolved against the job's creation time,
	// so the feeder selects what the operator saw.
	Since, Until                string
	RadiusOver, ConfidenceUnder float64
	WithExifOnly                bool
	Sample                      int
	Set                         map[string]bool
}

// The selection's field names, in String's order (Status first, always).
var selectionFields = []string{"reason", "since", "until", "prefix", "model-was", "radius-over", "confidence-under", "with-exif-only", "sample"}

// String is the selection as stored with the run: what a resumed run must
// repeat.
func (s Selection) String() string {
	parts := []string{"status=" + s.Status}
	for _, name := range selectionFields {
		if s.Set[name] {
			parts = append(parts, name+"="+s.value(name))
		}
	}
	return strings.Join(parts, " ")
}

func (s Selection) value(name string) string {
	switch name {
	case "reason":
		return s.Reason
	case "since":
		return s.Since
	case "until":
		return s.Until
	case "prefix":
		return s.Prefix
	case "model-was":
		return s.ModelWas
	case "radius-over":
		return strconv.FormatFloat(s.RadiusOver, 'f', -1, 64)
	case "confidence-under":
		return strconv.FormatFloat(s.ConfidenceUnder, 'f', -1, 64)
	case "with-exif-only":
		return strconv.FormatBool(s.WithExifOnly)
	case "sample":
		return strconv.Itoa(s.Sample)
	}
	return ""
}

// ParseSelection reads String's text back. A value may hold spaces (a
// prefix): it runs to the next " name=" of a selection field.
func ParseSelection(text string) (Selection, error) {
	s := Selection{Set: map[string]bool{}}
	rest, ok := strings.CutPrefix(text, "status=")
	if !ok {
		return Selection{}, fmt.Errorf("selection %q: want status=... first", text)
	}
	name := "status"
	for {
		value, next, nextName := cutField(rest)
		if err := s.setField(name, value); err != nil {
			return Selection{}, fmt.Errorf("selection %q: %w", text, err)
		}
		if nextName == "" {
			break
		}
		name, rest = nextName, next
	}
	if s.Status != "" && !slices.Contains(ledger.Statuses, s.Status) {
		return Selection{}, fmt.Errorf("selection %q: status %q is not one of %s", text, s.Status, strings.Join(ledger.Statuses, ", "))
	}
	return s, nil
}

// cutField splits rest at the first " name=" of a selection field: the
// value before it, the text after it and the name ("" at the end).
func cutField(rest string) (value, next, name string) {
	at, found := len(rest), ""
	for _, n := range selectionFields {
		if i := strings.Index(rest, " "+n+"="); i >= 0 && i < at {
			at, found = i, n
		}
	}
	if found == "" {
		return rest, "", ""
	}
	return rest[:at], rest[at+len(found)+2:], found
}

func (s *Selection) setField(name, v string) error {
	if name != "status" {
		if s.Set[name] {
			return fmt.Errorf("%s given twice", name)
		}
		s.Set[name] = true
	}
	var err error
	switch name {
	case "status":
		s.Status = v
	case "reason":
		s.Reason = v
	case "since":
		s.Since = v
		_, err = ParseSince(v, time.Now())
	case "until":
		s.Until = v
		_, err = ParseSince(v, time.Now())
	case "prefix":
		s.Prefix = v
	case "model-was":
		s.ModelWas = v
	case "radius-over":
		s.RadiusOver, err = strconv.ParseFloat(v, 64)
	case "confidence-under":
		s.ConfidenceUnder, err = strconv.ParseFloat(v, 64)
	case "with-exif-only":
		s.WithExifOnly, err = strconv.ParseBool(v)
	case "sample":
		s.Sample, err = strconv.Atoi(v)
		if err == nil && s.Sample <= 0 {
			err = fmt.Errorf("sample %d is not positive", s.Sample)
		}
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// ParseSince reads a time bound as the operator commands take it: a
// duration ago (90m, 7d), a date (2026-11-22) or RFC 3339.
func ParseSince(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil && n >= 0 {
			return now.Add(-time.Duration(n) * 24 * time.Hour), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%q is neither a duration (90m, 7d), a date (2026-11-22) nor an RFC 3339 time", s)
}

// MaxPlanRecords bounds the records a reprocess job's selection may hold:
// the feeder plans a run in one run's memory (the records and the plan,
// about 2.7 KB a record of an upload's size: BenchmarkPlanRunHeap), and
// 50,000 of them take about 140 MB of the feeder's 256 MB (its GOMEMLIMIT
// 90% of it), leaving the rest to the runtime, the SDK and a page in
// flight. A larger selection is refused with ErrSelectionTooLarge, not
// run out of memory on every run.
const MaxPlanRecords = 50_000

// ErrSelectionTooLarge is a reprocess selection of more records than a job
// plans (FeederOptions.PlanRecords): the job's Error says how to split it.
var ErrSelectionTooLarge = errors.New("the selection is too large for a reprocess job")

// SelectionTooLarge is ErrSelectionTooLarge for a job that plans at most
// bound records, saying how to split the run: the feeder's job error and
// reprocess --dry-run's refusal.
func SelectionTooLarge(bound int) error {
	return fmt.Errorf("%w: it holds more than %d records, the most one plans; split the run with --prefix or --since/--until", ErrSelectionTooLarge, bound)
}

// SelectRecords reads in's records for a plan of at most bound of them:
// it asks for one more, so a selection too large (SelectionTooLarge) is
// refused before it fills the heap. The feeder plans from it, and
// reprocess --dry-run counts from it, so both refuse the same selections.
func SelectRecords(ctx context.Context, l *ledger.Store, in ledger.QueryInput, bound int) ([]ledger.Record, error) {
	in.Limit = bound + 1
	records, err := l.Query(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("read the selection: %w", err)
	}
	if len(records) > bound {
		return nil, SelectionTooLarge(bound)
	}
	return records, nil
}

// DefaultSince is the since bound of a selection that gives none, as
// geolocate reprocess's --since defaults.
const DefaultSince = "30d"

// Query is the ledger query whose records the selection judges, with its
// time bounds resolved at now (the job's creation).
func (s Selection) Query(now time.Time) ledger.QueryInput {
	in := ledger.QueryInput{KeyPrefix: s.Prefix}
	since := DefaultSince
	if s.Set["since"] {
		since = s.Since
	}
	in.Since, _ = ParseSince(since, now)
	if s.Set["until"] {
		in.Until, _ = ParseSince(s.Until, now)
	}
	return in
}

// Keeps reports whether an object version whose latest result is rec is
// selected.
func (s Selection) Keeps(rec *ledger.Record) bool {
	switch {
	case s.Status != "" && rec.Status != s.Status,
		s.Set["reason"] && rec.ErrorCode != s.Reason,
		s.Set["model-was"] && rec.ModelID != s.ModelWas,
		s.Set["radius-over"] && (rec.RadiusKM == nil || *rec.RadiusKM <= s.RadiusOver),
		s.Set["confidence-under"] && (rec.Confidence == nil || *rec.Confidence >= s.ConfidenceUnder),
		s.WithExifOnly && rec.ExifLatitude == nil:
		return false
	}
	return true
}

// Plan is what a run must send.
type Plan struct {
	Selected int             // object versions selected (sampled)
	Done     int             // of which the run has a final record
	Todo     []ledger.Record // the latest record of each one still to do
}

// PlanRun groups records by object version, selects on each version's
// latest result outside the run, samples (seeded by the run's name, so a
// resumed run draws the same sample) and leaves out the versions the run
// has finished. A version the run holds waiting (its cap, say) is sent
// again.
func PlanRun(records []ledger.Record, sel Selection, run string) Plan {
	type version struct {
		latest *ledger.Record // newest record outside the run
		inRun  *ledger.Record // the run's own record
	}
	versions := map[string]*version{}
	var order []string
	for i := range records {
		r := &records[i]
		ref := ledger.ObjectRef{Bucket: r.Bucket, Key: r.Key, VersionID: r.VersionID, ETag: r.ETag}
		id := ref.PartitionKey() + "|" + ref.VersionSortKey()
		v := versions[id]
		if v == nil {
			v = &version{}
			versions[id] = v
			order = append(order, id)
		}
		switch {
		case r.Run == run:
			v.inRun = r
		case v.latest == nil || r.UpdatedAt.After(v.latest.UpdatedAt):
			v.latest = r
		}
	}
	var chosen []string
	for _, id := range order {
		if v := versions[id]; v.latest != nil && sel.Keeps(v.latest) {
			chosen = append(chosen, id)
		}
	}
	if sel.Set["sample"] && sel.Sample < len(chosen) {
		rank := func(id string) uint64 {
			h := fnv.New64a()
			h.Write([]byte(run + "\x00" + id))
			return h.Sum64()
		}
		slices.SortFunc(chosen, func(a, b string) int {
			ra, rb := rank(a), rank(b)
			switch {
			case ra < rb:
				return -1
			case ra > rb:
				return 1
			}
			return strings.Compare(a, b)
		})
		chosen = chosen[:sel.Sample]
	}
	plan := Plan{Selected: len(chosen)}
	for _, id := range chosen {
		v := versions[id]
		if v.inRun != nil && v.inRun.Final() {
			plan.Done++
			continue
		}
		plan.Todo = append(plan.Todo, *v.latest)
	}
	return plan
}
