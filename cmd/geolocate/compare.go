package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/geodist"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/predictor"
)

// runRuns: geolocate runs [--table T | --stack S]: every reprocess run with
// its selection, model, cap, spending and progress.
func runRuns(ctx context.Context, c *cli, args []string) error {
	fs := c.newFlagSet("runs", "")
	var loc stackLocator
	loc.register(fs, true)
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	store, err := openStore(ctx, c, &loc)
	if err != nil {
		return err
	}
	runs, err := store.ListRuns(ctx)
	if err != nil {
		return err
	}
	if len(runs) == 0 {
		fmt.Fprintln(c.stderr, "no reprocess runs (start one with geolocate reprocess)")
		return nil
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tMODEL\tCAP\tSPENT\tDONE\tREMAINING\tSTARTED\tFINISHED\tSELECTION")
	for _, run := range runs {
		p, err := runProgress(ctx, store, run)
		if err != nil {
			return err
		}
		finished := "-"
		if !p.finished.IsZero() {
			finished = p.finished.UTC().Format("2006-01-02 15:04")
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\t%s\n", run.Name, modelName(run.ModelID), run.Cap, run.Spent,
			p.done, max(run.Selected-p.done, 0), run.StartedAt.UTC().Format("2006-01-02 15:04"), finished, run.Selection)
	}
	return tw.Flush()
}

func openStore(ctx context.Context, c *cli, loc *stackLocator) (*ledger.Store, error) {
	clients, err := loadAWS(ctx)
	if err != nil {
		return nil, err
	}
	table, err := loc.table(ctx, c, clients)
	if err != nil {
		return nil, err
	}
	return ledger.New(clients.tables, table), nil
}

// progress is how far a run is.
type progress struct {
	records  []ledger.Record // the run's records
	done     int             // final ones
	capped   int             // waiting for the cap
	finished time.Time       // the last final record's time, once all are done
}

func runProgress(ctx context.Context, store *ledger.Store, run ledger.Run) (progress, error) {
	recs, err := store.Query(ctx, ledger.QueryInput{Run: run.Name, Since: run.StartedAt.Add(-time.Minute)})
	if err != nil {
		return progress{}, fmt.Errorf("records of run %s: %w", run.Name, err)
	}
	p := progress{records: recs}
	var last time.Time
	for i := range recs {
		switch r := &recs[i]; {
		case r.Final():
			p.done++
			last = maxTime(last, r.UpdatedAt)
		case r.ErrorCode == predictor.ReasonRunCapReached:
			p.capped++
		}
	}
	if p.done >= run.Selected && run.Selected > 0 {
		p.finished = last
		if !run.FinishedAt.IsZero() {
			p.finished = run.FinishedAt
		}
	}
	return p, nil
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// runCompare: geolocate compare --run R [--json]: what the run changed,
// and whether its model is more accurate on the photos whose EXIF position
// is known.
func runCompare(ctx context.Context, c *cli, args []string) error {
	fs := c.newFlagSet("compare", "")
	var (
		name   = fs.String("run", "", "the run to judge (see geolocate runs)")
		asJSON = fs.Bool("json", false, "print the comparison as JSON")
		loc    stackLocator
	)
	loc.register(fs, true)
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	if *name == "" {
		return usageError{errors.New("--run is required")}
	}
	store, err := openStore(ctx, c, &loc)
	if err != nil {
		return err
	}
	run, err := store.GetRun(ctx, *name)
	if err != nil {
		return err
	}
	if run == nil {
		return fmt.Errorf("no run %q (see geolocate runs)", *name)
	}
	p, err := runProgress(ctx, store, *run)
	if err != nil {
		return err
	}
	cmp := compareRun(p.records)
	if *asJSON {
		return writeIndentedJSON(c.stdout, cmp)
	}
	fmt.Fprintf(c.stdout, "run %s: model %s, %d of %d object(s) done, %d of %d credits spent\n",
		run.Name, modelName(run.ModelID), p.done, run.Selected, run.Spent, run.Cap)
	cmp.write(c.stdout)
	return nil
}

// comparison is what a run changed, over its succeeded records that
// replaced an earlier result.
type comparison struct {
	Compared       int     `json:"compared"` // results with an earlier one
	MovedOver1Km   int     `json:"moved_over_1km"`
	ChangedPlace   int     `json:"changed_place"`
	ChangedRegion  int     `json:"changed_region"`
	ChangedCountry int     `json:"changed_country"`
	MedianMovedKm  float64 `json:"median_moved_km"`
	P90MovedKm     float64 `json:"p90_moved_km"`
	// Accuracy before and after on the same photos: those with an EXIF
	// position, whose error both results have.
	Before *accuracyCI `json:"before,omitempty"`
	After  *accuracyCI `json:"after,omitempty"`
	// MedianGainKm is before's median error minus after's (positive: the
	// run is closer), with its 95% paired bootstrap interval.
	MedianGainKm *interval `json:"median_gain_km,omitempty"`
}

// interval is an estimate with its 95% confidence interval.
type interval struct {
	Value float64 `json:"value"`
	Low   float64 `json:"low"`
	High  float64 `json:"high"`
}

// accuracyCI is accuracy with intervals: the median error's by bootstrap
// over photos (percentile method), each within-share's by Wilson's score
// interval.
type accuracyCI struct {
	Photos   int                 `json:"photos"`
	MedianKm interval            `json:"median_km"`
	Within   map[string]interval `json:"within_share"`
}

// bootstrapResamples and bootstrapSeed make the interval reproducible: the
// same records give the same interval.
const (
	bootstrapResamples = 2000
	bootstrapSeed      = 39
	wilsonZ            = 1.959964 // 95%
)

func compareRun(records []ledger.Record) comparison {
	var cmp comparison
	var moved, before, after []float64
	for i := range records {
		r := &records[i]
		prev := r.Previous
		if r.Status != ledger.StatusSucceeded || prev == nil || r.Latitude == nil || prev.Latitude == nil {
			continue
		}
		cmp.Compared++
		d := geodist.Km(*prev.Latitude, *prev.Longitude, *r.Latitude, *r.Longitude)
		moved = append(moved, d)
		if d > 1 {
			cmp.MovedOver1Km++
		}
		if r.Place != prev.Place {
			cmp.ChangedPlace++
		}
		if r.Admin1 != prev.Admin1 {
			cmp.ChangedRegion++
		}
		if r.CountryCode != prev.CountryCode {
			cmp.ChangedCountry++
		}
		if r.ErrorKm != nil && prev.ErrorKm != nil {
			before = append(before, *prev.ErrorKm)
			after = append(after, *r.ErrorKm)
		}
	}
	if len(moved) > 0 {
		sorted := slices.Sorted(slices.Values(moved))
		cmp.MedianMovedKm, cmp.P90MovedKm = quantile(sorted, 0.5), quantile(sorted, 0.9)
	}
	if len(before) > 0 {
		cmp.Before, cmp.After = withIntervals(before), withIntervals(after)
		cmp.MedianGainKm = pairedMedianGain(before, after)
	}
	return cmp
}

func median(v []float64) float64 { return quantile(slices.Sorted(slices.Values(v)), 0.5) }

func withIntervals(errs []float64) *accuracyCI {
	rng := rand.New(rand.NewPCG(bootstrapSeed, uint64(len(errs))))
	meds := make([]float64, bootstrapResamples)
	sample := make([]float64, len(errs))
	for b := range meds {
		for i := range sample {
			sample[i] = errs[rng.IntN(len(errs))]
		}
		meds[b] = median(sample)
	}
	slices.Sort(meds)
	a := &accuracyCI{Photos: len(errs), MedianKm: interval{median(errs), quantile(meds, 0.025), quantile(meds, 0.975)}, Within: map[string]interval{}}
	for _, th := range geodist.Thresholds {
		k := 0
		for _, e := range errs {
			if e <= th.Km {
				k++
			}
		}
		lo, hi := wilson(k, len(errs))
		a.Within[th.Name] = interval{float64(k) / float64(len(errs)), lo, hi}
	}
	return a
}

// pairedMedianGain resamples photos (each with both its errors), so the
// interval reflects that the two results are of the same photos.
func pairedMedianGain(before, after []float64) *interval {
	rng := rand.New(rand.NewPCG(bootstrapSeed, uint64(len(before))+1))
	gains := make([]float64, bootstrapResamples)
	b, a := make([]float64, len(before)), make([]float64, len(after))
	for n := range gains {
		for i := range b {
			j := rng.IntN(len(before))
			b[i], a[i] = before[j], after[j]
		}
		gains[n] = median(b) - median(a)
	}
	slices.Sort(gains)
	return &interval{median(before) - median(after), quantile(gains, 0.025), quantile(gains, 0.975)}
}

// wilson is the 95% Wilson score interval of k successes in n.
func wilson(k, n int) (float64, float64) {
	if n == 0 {
		return 0, 1
	}
	p, nf, z2 := float64(k)/float64(n), float64(n), wilsonZ*wilsonZ
	centre := (p + z2/(2*nf)) / (1 + z2/nf)
	half := wilsonZ / (1 + z2/nf) * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	return max(centre-half, 0), min(centre+half, 1)
}

func (cmp comparison) write(w io.Writer) {
	if cmp.Compared == 0 {
		fmt.Fprintln(w, "no result of the run has an earlier one to compare with yet")
		return
	}
	fmt.Fprintf(w, "%d result(s) compared with the one they replaced: %d moved more than 1 km, %d changed place, %d changed region, %d changed country\n",
		cmp.Compared, cmp.MovedOver1Km, cmp.ChangedPlace, cmp.ChangedRegion, cmp.ChangedCountry)
	fmt.Fprintf(w, "distance moved: median %s, p90 %s\n", km(cmp.MedianMovedKm), km(cmp.P90MovedKm))
	if cmp.Before == nil {
		fmt.Fprintln(w, "accuracy: no photo with a known EXIF position (select some with --with-exif-only)")
		return
	}
	fmt.Fprintf(w, "\naccuracy on the %d photo(s) whose EXIF position is known (95%% intervals: bootstrap over photos for medians, Wilson for shares):\n", cmp.Before.Photos)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	header := []string{"", "MEDIAN ERROR"}
	for _, th := range geodist.Thresholds {
		header = append(header, "WITHIN "+strconv.FormatFloat(th.Km, 'f', -1, 64)+" KM")
	}
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, row := range []struct {
		name string
		a    *accuracyCI
	}{{"before", cmp.Before}, {"after", cmp.After}} {
		cells := []string{row.name, fmt.Sprintf("%s [%s, %s]", km(row.a.MedianKm.Value), km(row.a.MedianKm.Low), km(row.a.MedianKm.High))}
		for _, th := range geodist.Thresholds {
			s := row.a.Within[th.Name]
			cells = append(cells, fmt.Sprintf("%.0f%% [%.0f, %.0f]", 100*s.Value, 100*s.Low, 100*s.High))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	_ = tw.Flush()
	g := cmp.MedianGainKm
	verdict := "the interval includes 0: no clear gain on these photos"
	switch {
	case g.Low > 0:
		verdict = "the run's model is closer on these photos"
	case g.High < 0:
		verdict = "the run's model is farther on these photos"
	}
	fmt.Fprintf(w, "median error gain: %s [%s, %s] (%s)\n", signedKm(g.Value), signedKm(g.Low), signedKm(g.High), verdict)
}

func signedKm(v float64) string {
	if v < 0 {
		return "-" + km(-v)
	}
	return km(v)
}
