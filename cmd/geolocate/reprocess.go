package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/geoapi"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/predictor"
	"github.com/geolocate-aws/geolocate/pkg/reprocess"
	"github.com/geolocate-aws/geolocate/pkg/shared/settings"
)

// runReprocess: geolocate reprocess --model ID | --default-model [--run
// NAME] [selection] (--max-credits N | --dry-run) [--stack S].
//
// A run is named; starting it again with the same name resumes it: the
// same selection (the sample is seeded by the name), the objects the run
// has finished left out, the others sent again (the ledger never pays
// twice for an object in a run, whatever is sent).
func runReprocess(ctx context.Context, c *cli, args []string) error {
	fs := c.newFlagSet("reprocess", "")
	var (
		runName      = fs.String("run", "", "the run's name (letters, digits, . _ -); default: the model id, or default-model. The same name resumes the run")
		model        = fs.String("model", "", "the model to ask (see geolocate models)")
		defaultModel = fs.Bool("default-model", false, "ask the service's current default model")
		maxCredits   = fs.Int("max-credits", 0, "the most the run may spend, in credits: required unless --dry-run (a resumed run may raise it)")
		dryRun       = fs.Bool("dry-run", false, "print how many objects, credits and how long, and send nothing")
		perCall      = fs.Int("credits-per-call", 0, "the model's price (default: the service's model list, else an estimate)")
		rate         = fs.Float64("rate", 0, "calls per minute the stack makes (its "+settings.RatePerMinute.Key+"); default: read from the stack's predictor")
		sendRate     = fs.Float64("send-rate", 0, fmt.Sprintf("messages sent per minute; default: %.1f of the rate the stack's pacer calls at, "+
			"--rate spread over a minute and its margin (%.1f for %d); 0 sends them all at once",
			reprocess.SendShare, reprocess.SendRate(float64(settings.RatePerMinute.DefaultInt())), settings.RatePerMinute.DefaultInt()))
		queueURL = fs.String("queue-url", "", "queue to send to (default: the stack's "+outputQueueURL+" output)")
		sel      selection
		conn     connection
		// d reads the stack's rate from its predictor's configuration as
		// doctor reads it; its locator is the command's.
		d doctor
	)
	loc := &d.loc
	sel.register(fs)
	conn.register(fs)
	loc.register(fs, true)
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	if flagGiven(fs, "rate") && *rate <= 0 || *sendRate < 0 {
		return usageError{errors.New("--rate takes the stack's calls a minute (> 0), --send-rate messages a minute (0: all at once)")}
	}
	if (*model == "") == !*defaultModel {
		return usageError{errors.New("give exactly one of --model ID and --default-model")}
	}
	if *maxCredits <= 0 && !*dryRun {
		return usageError{errors.New("--max-credits N is required (the most the run may spend), unless --dry-run")}
	}
	if err := sel.check(fs); err != nil {
		return usageError{err}
	}
	name := *runName
	if name == "" {
		name = defaultRunName(*model)
	}
	if err := ledger.ValidateRunName(name); err != nil {
		return usageError{fmt.Errorf("--run: %w", err)}
	}

	clients, err := loadAWS(ctx)
	if err != nil {
		return err
	}
	d.c, d.clients = c, clients
	table, err := loc.table(ctx, c, clients)
	if err != nil {
		return err
	}
	store := ledger.New(clients.tables, table)
	existing, err := store.GetRun(ctx, name)
	if err != nil {
		return err
	}
	if existing != nil && (existing.ModelID != *model || existing.Selection != sel.String()) {
		return usageError{fmt.Errorf("run %s exists with model %q and selection %q: give the same to resume it, or another --run",
			name, modelName(existing.ModelID), existing.Selection)}
	}
	price := *perCall
	if existing != nil {
		price = existing.Price
	}
	if price <= 0 {
		price = modelPrice(ctx, c, &conn, *model)
	}

	records, err := store.Query(ctx, sel.query())
	if err != nil {
		return fmt.Errorf("read table %s: %w", table, err)
	}
	plan := planRun(records, sel, name)
	fmt.Fprintf(c.stdout, "run %s: model %s at %d credit(s) a call\n", name, modelName(*model), price)
	fmt.Fprintf(c.stdout, "selected %d object(s) (%s); %d already done in this run, %d to send\n",
		plan.selected, sel.String(), plan.done, len(plan.todo))
	if !flagGiven(fs, "rate") {
		if *rate, err = stackRate(ctx, &d); err != nil {
			return err
		}
	}
	pace := sendPace(*rate, *sendRate, flagGiven(fs, "send-rate"))
	fmt.Fprintf(c.stdout, "at most %d credit(s); about %s: %s\n", len(plan.todo)*price, pace.duration(len(plan.todo)), pace)
	if *dryRun {
		return nil
	}

	if *queueURL == "" {
		if *queueURL, err = loc.output(ctx, clients, outputQueueURL); err != nil {
			return fmt.Errorf("no --queue-url: %w", err)
		}
	}
	run, created, err := store.StartRun(ctx, ledger.Run{Name: name, ModelID: *model, Selection: sel.String(), Price: price, Cap: *maxCredits})
	if err != nil {
		return err
	}
	switch {
	case created:
	case *maxCredits > run.Cap:
		if err := store.RaiseRunCap(ctx, name, run.Cap, *maxCredits); err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "resuming run %s: cap raised from %d to %d credits (%d spent)\n", name, run.Cap, *maxCredits, run.Spent)
	case *maxCredits < run.Cap:
		return usageError{fmt.Errorf("run %s has a cap of %d credits: a resumed run's cap is never lowered", name, run.Cap)}
	default:
		fmt.Fprintf(c.stdout, "resuming run %s: %d of %d credits spent\n", name, run.Spent, run.Cap)
	}
	if err := store.SetRunProgress(ctx, name, plan.selected, time.Time{}); err != nil {
		return err
	}
	bodies, err := reprocess.Bodies(name, *model, price, plan.todo)
	if err != nil {
		return err
	}
	b := &backfill{c: c, clients: clients, queueURL: *queueURL}
	sender := reprocess.New(b.send, append([]func(*reprocess.Options){func(o *reprocess.Options) {
		o.PerMinute = pace.send
		o.Progress = func(p reprocess.Progress) {
			if p.Sent < p.Total {
				fmt.Fprintf(c.stdout, "sent %d of %d; about %s left\n", p.Sent, p.Total, p.Left.Round(time.Second))
			}
		}
	}}, reprocessSendOptions...)...)
	if pace.send > 0 && len(bodies) > 1 {
		fmt.Fprintf(c.stdout, "sending one message every %s; Ctrl-C stops, and the same command resumes\n",
			time.Duration(float64(time.Minute)/pace.send).Round(time.Millisecond))
	}
	sent, err := sender.Send(ctx, bodies)
	if errors.Is(err, context.Canceled) {
		// Ctrl-C: what was sent is processed; the rest waits for a resume.
		return fmt.Errorf("stopped after sending %d of %d object(s): the same command resumes run %s (finished objects are left out, none is paid twice)",
			sent.Sent, sent.Total, name)
	}
	if err != nil {
		return fmt.Errorf("run %s: %d of %d object(s) sent: %w; the same command resumes it", name, sent.Sent, sent.Total, err)
	}
	fmt.Fprintf(c.stdout, "sent %d object(s) to the stack's queue; follow with geolocate runs, then geolocate compare --run %s\n", sent.Sent, name)
	return nil
}

// reprocessSendOptions adjust the run's Sender: tests give it a fake clock.
var reprocessSendOptions []func(*reprocess.Options)

// pace is how fast a run goes: sent at send messages a minute (0: all at
// once), called at the stack's pacer's rate, calls a minute.
type pace struct{ send, calls float64 }

// sendPace is a run's pace against a stack calling rate times a minute:
// sent at --send-rate when given, else a little slower than the stack's
// pacer calls (reprocess.SendRate).
func sendPace(rate, sendRate float64, sendRateSet bool) pace {
	p := pace{send: reprocess.SendRate(rate), calls: reprocess.PacerRate(rate)}
	if sendRateSet {
		p.send = sendRate
	}
	return p
}

// duration is how long n objects take: sent at the send rate, or called
// at the stack's rate if that is slower (a faster send only queues them).
func (p pace) duration(n int) time.Duration {
	perMinute := p.calls
	if p.send > 0 {
		perMinute = min(p.send, p.calls)
	}
	return time.Duration(float64(n) / perMinute * float64(time.Minute)).Round(time.Second)
}

func (p pace) String() string {
	if p.send == 0 {
		return fmt.Sprintf("sent all at once, called at %.1f/min", p.calls)
	}
	return fmt.Sprintf("sent at %.1f/min, called at %.1f/min", p.send, p.calls)
}

// stackRate is the calls a minute the stack's predictor makes: its
// configuration's rate, read from the function the queue triggers (as
// doctor reads it) and parsed as the function parses it (unset is the
// setting's default).
func stackRate(ctx context.Context, d *doctor) (float64, error) {
	env, err := d.predictorEnv(ctx)
	if err != nil {
		return 0, fmt.Errorf("read the stack's rate (or pass --rate, the stack's %s): %w", settings.RatePerMinute.Key, err)
	}
	r := settings.FromEnv(func(name string) string { return env[name] })
	rate := r.Float(settings.RatePerMinute)
	if err := r.Err(); err != nil {
		return 0, fmt.Errorf("the stack's predictor: %w", err)
	}
	return rate, nil
}

// defaultRunName names a run after its model.
func defaultRunName(model string) string {
	if model == "" {
		return "default-model"
	}
	return model
}

// modelName names a run's model; empty is the service's default.
func modelName(s string) string {
	if s == "" {
		return "(default model)"
	}
	return s
}

// selection is which objects a run covers, judged on each object
// version's latest result.
type selection struct {
	status, reason, prefix, modelWas string
	since, until                     string
	radiusOver, confidenceUnder      float64
	withExifOnly                     bool
	sample                           int
	// set names the flags given, so that an unset bound filters nothing
	// (no magic value stands for "no limit").
	set map[string]bool
	now time.Time
}

func (s *selection) register(fs *flag.FlagSet) {
	fs.StringVar(&s.status, "status", ledger.StatusSucceeded, "only objects whose latest record has this status")
	fs.StringVar(&s.reason, "reason", "", "only objects whose latest record has this reason (error code)")
	fs.StringVar(&s.since, "since", "30d", "only records updated since: a duration ago (7d), a date or RFC 3339")
	fs.StringVar(&s.until, "until", "", "only records updated until: a duration ago, a date or RFC 3339 (default: now)")
	fs.StringVar(&s.prefix, "prefix", "", "only objects whose key starts with this prefix")
	fs.StringVar(&s.modelWas, "model-was", "", "only objects whose latest result came from this model")
	fs.Float64Var(&s.radiusOver, "radius-over", 0, "only results whose radius is over this many km")
	fs.Float64Var(&s.confidenceUnder, "confidence-under", 0, "only results whose confidence is under this (0 to 1)")
	fs.BoolVar(&s.withExifOnly, "with-exif-only", false, "only photos whose EXIF position is known (the ones accuracy can be judged on)")
	fs.IntVar(&s.sample, "sample", 0, "a random sample of this many of the selected objects, the same each time for the same --run")
}

// check validates the flags once parsed.
func (s *selection) check(fs *flag.FlagSet) error {
	s.set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { s.set[f.Name] = true })
	s.now = time.Now()
	if s.status != "" && !isStatus(s.status) {
		return fmt.Errorf("--status %q is not one of %s", s.status, strings.Join(ledger.Statuses, ", "))
	}
	if _, err := parseSince(s.since, s.now); err != nil {
		return fmt.Errorf("--since: %w", err)
	}
	if s.until != "" {
		if _, err := parseSince(s.until, s.now); err != nil {
			return fmt.Errorf("--until: %w", err)
		}
	}
	if s.set["sample"] && s.sample <= 0 {
		return fmt.Errorf("--sample %d: give a positive number", s.sample)
	}
	if s.set["radius-over"] && s.radiusOver < 0 || s.set["confidence-under"] && s.confidenceUnder <= 0 {
		return errors.New("--radius-over takes a distance >= 0, --confidence-under a confidence > 0")
	}
	return nil
}

func (s *selection) query() ledger.QueryInput {
	since, _ := parseSince(s.since, s.now)
	in := ledger.QueryInput{Since: since, KeyPrefix: s.prefix}
	if s.until != "" {
		in.Until, _ = parseSince(s.until, s.now)
	}
	return in
}

// String is the selection as stored with the run: what a resumed run must
// repeat.
func (s *selection) String() string {
	parts := []string{"status=" + s.status}
	add := func(flagName, v string) {
		if s.set[flagName] {
			parts = append(parts, flagName+"="+v)
		}
	}
	add("reason", s.reason)
	add("since", s.since)
	add("until", s.until)
	add("prefix", s.prefix)
	add("model-was", s.modelWas)
	add("radius-over", strconv.FormatFloat(s.radiusOver, 'f', -1, 64))
	add("confidence-under", strconv.FormatFloat(s.confidenceUnder, 'f', -1, 64))
	add("with-exif-only", strconv.FormatBool(s.withExifOnly))
	add("sample", strconv.Itoa(s.sample))
	return strings.Join(parts, " ")
}

// keeps reports whether an object version whose latest result is rec is
// selected.
func (s *selection) keeps(rec *ledger.Record) bool {
	switch {
	case s.status != "" && rec.Status != s.status,
		s.set["reason"] && rec.ErrorCode != s.reason,
		s.set["model-was"] && rec.ModelID != s.modelWas,
		s.set["radius-over"] && (rec.RadiusKM == nil || *rec.RadiusKM <= s.radiusOver),
		s.set["confidence-under"] && (rec.Confidence == nil || *rec.Confidence >= s.confidenceUnder),
		s.withExifOnly && rec.ExifLatitude == nil:
		return false
	}
	return true
}

// runPlan is what a run must send.
type runPlan struct {
	selected int             // object versions selected (sampled)
	done     int             // of which the run has a final record
	todo     []ledger.Record // the latest record of each one still to do
}

// planRun groups records by object version, selects on each version's
// latest result outside the run, samples (seeded by the run's name, so a
// resumed run draws the same sample) and leaves out the versions the run
// has finished. A version the run holds waiting (its cap, say) is sent
// again.
func planRun(records []ledger.Record, sel selection, run string) runPlan {
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
		if v := versions[id]; v.latest != nil && sel.keeps(v.latest) {
			chosen = append(chosen, id)
		}
	}
	if sel.set["sample"] && sel.sample < len(chosen) {
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
		chosen = chosen[:sel.sample]
	}
	plan := runPlan{selected: len(chosen)}
	for _, id := range chosen {
		v := versions[id]
		if v.inRun != nil && v.inRun.Final() {
			plan.done++
			continue
		}
		plan.todo = append(plan.todo, *v.latest)
	}
	return plan
}

// modelPrice is the credits one call of model costs: the service's model
// list when it says, else the predictor's own estimate (what its budget
// reserves).
func modelPrice(ctx context.Context, c *cli, conn *connection, model string) int {
	estimate := predictor.Config{ModelID: model}.ExpectedCost()
	client, err := conn.client(ctx, c, false)
	if err != nil {
		fmt.Fprintf(c.stderr, "reprocess: the model's price is estimated at %d credit(s) (%v); --credits-per-call sets it\n", estimate, err)
		return estimate
	}
	out, err := client.Models(ctx, &geoapi.ModelsInput{Anonymous: c.key == ""})
	if err != nil {
		fmt.Fprintf(c.stderr, "reprocess: the model's price is estimated at %d credit(s) (model list: %v)\n", estimate, describe(err))
		return estimate
	}
	if m, ok := out.Find(model); ok && m.CreditsPerUse != nil && *m.CreditsPerUse > 0 {
		return *m.CreditsPerUse
	}
	if m, ok := out.Find(model); ok && m.Type != "" {
		if p := typePrice(m.Type); p > 0 {
			return p
		}
	}
	return estimate
}

// typePrice is the contract's cost of a model type (docs/service-assumptions.md).
func typePrice(t string) int {
	switch t {
	case "global":
		return 1
	case "cars":
		return 2
	case "accuracy", "property":
		return 3
	}
	return 0
}
