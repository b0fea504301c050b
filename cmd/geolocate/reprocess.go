package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/geoapi"
	"github.com/geolocate-aws/geolocate/pkg/jobs"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/predictor"
	"github.com/geolocate-aws/geolocate/pkg/shared/settings"
)

// runReprocess: geolocate reprocess --model ID | --default-model [--run
// NAME] [selection] (--max-credits N | --dry-run) [--follow] [--stack S].
//
// A run is named; starting it again with the same name resumes it: the
// same selection (the sample is seeded by the name), the objects the run
// has finished left out, the others sent again (the ledger never pays
// twice for an object in a run, whatever is sent). The run's messages are
// sent by a job in the account (pkg/jobs), which selects from the results
// table and feeds the upload queue at the stack's rate: the command
// returns within seconds, and nothing here has to stay open.
func runReprocess(ctx context.Context, c *cli, args []string) error {
	fs := c.newFlagSet("reprocess", "")
	var (
		runName      = fs.String("run", "", "the run's name (letters, digits, . _ -); default: the model id, or default-model. The same name resumes the run")
		model        = fs.String("model", "", "the model to ask (see geolocate models)")
		defaultModel = fs.Bool("default-model", false, "ask the service's current default model")
		maxCredits   = fs.Int("max-credits", 0, "the most the run may spend, in credits: required unless --dry-run (a resumed run may raise it)")
		dryRun       = fs.Bool("dry-run", false, "print how many objects, credits and how long, and send nothing")
		follow       = fs.Bool("follow", false, "after creating the run's job, print its progress until it is done (Ctrl-C stops watching, not the job)")
		perCall      = fs.Int("credits-per-call", 0, "the model's price (default: the service's model list, else an estimate)")
		rate         = fs.Float64("rate", 0, "calls per minute the stack makes (its "+settings.RatePerMinute.Key+"); default: read from the stack's predictor")
		sel          selection
		conn         connection
		// d reads the stack's rate from its predictor's configuration as
		// doctor reads it; its locator is the command's.
		d doctor
	)
	refuseJobFlags(fs)
	loc := &d.loc
	sel.register(fs)
	conn.register(fs)
	loc.register(fs, true)
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	if err := refusedJobFlag(fs); err != nil {
		return err
	}
	if flagGiven(fs, "rate") && *rate <= 0 {
		return usageError{errors.New("--rate takes the stack's calls a minute (> 0)")}
	}
	if (*model == "") == !*defaultModel {
		return usageError{errors.New("give exactly one of --model ID and --default-model")}
	}
	if *maxCredits <= 0 && !*dryRun {
		return usageError{errors.New("--max-credits N is required (the most the run may spend), unless --dry-run")}
	}
	if *follow && *dryRun {
		return usageError{errors.New("--follow watches a job; --dry-run creates none")}
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
	fmt.Fprintf(c.stdout, "run %s: model %s at %d credit(s) a call\n", name, modelName(*model), price)
	stack := readStackPredictor(ctx, c, &d, *rate, flagGiven(fs, "rate"))

	if *dryRun {
		// The dry run selects here, as the job would in the account.
		// A selection the job would refuse at its first run is refused here.
		records, err := jobs.SelectRecords(ctx, store, sel.query(), jobs.MaxPlanRecords)
		if err != nil {
			return fmt.Errorf("table %s: %w", table, err)
		}
		plan := jobs.PlanRun(records, sel.Selection, name)
		fmt.Fprintf(c.stdout, "selected %d object(s) (%s); %d already done in this run, %d to send\n",
			plan.Selected, sel.String(), plan.Done, len(plan.Todo))
		fmt.Fprintf(c.stdout, "at most %d credit(s); %s\n", len(plan.Todo)*price, aboutHow(len(plan.Todo), stack.feedRate()))
		return nil
	}

	js := jobs.New(clients.tables, table)
	active, err := activeJob(ctx, js, func(j jobs.Job) bool { return j.Kind == jobs.KindReprocess && j.Run == name })
	if err != nil {
		return err
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
	if active != nil {
		// One job per run: a second would list and feed the same objects
		// again (paid once, whatever is sent, but sent twice).
		fmt.Fprintf(c.stdout, "run %s already has job %s (%s): it goes on; geolocate jobs show %s\n", name, active.ID, active.State, active.ID)
		if !*follow {
			return nil
		}
		return followJob(ctx, c, js, active.ID)
	}
	spec := jobs.Spec{Kind: jobs.KindReprocess, Run: name, ModelID: *model, Price: price, Selection: sel.String(), RatePerMinute: stack.rate}
	return startJob(ctx, c, clients, loc, js, spec, *follow)
}

// aboutHow is how long n calls take at a job's rate.
func aboutHow(n int, ratePerMinute float64) string {
	if ratePerMinute <= 0 {
		return "how long depends on the stack's rate (unknown: --rate gives it)"
	}
	d := time.Duration(float64(n) / ratePerMinute * float64(time.Minute)).Round(time.Second)
	return fmt.Sprintf("about %s at %.1f calls a minute (the job's rate: the stack's, less the room uploads need)", d, ratePerMinute)
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

// selection is reprocess's selection flags: a jobs.Selection, which the
// run stores and its job selects by in the account.
type selection struct {
	jobs.Selection
	// now resolves the time bounds for the dry run's query, as the job
	// resolves them at its creation.
	now time.Time
}

func (s *selection) register(fs *flag.FlagSet) {
	fs.StringVar(&s.Status, "status", ledger.StatusSucceeded, "only objects whose latest record has this status")
	fs.StringVar(&s.Reason, "reason", "", "only objects whose latest record has this reason (error code)")
	fs.StringVar(&s.Since, "since", jobs.DefaultSince, "only records updated since: a duration ago (7d), a date or RFC 3339")
	fs.StringVar(&s.Until, "until", "", "only records updated until: a duration ago, a date or RFC 3339 (default: now)")
	fs.StringVar(&s.Prefix, "prefix", "", "only objects whose key starts with this prefix")
	fs.StringVar(&s.ModelWas, "model-was", "", "only objects whose latest result came from this model")
	fs.Float64Var(&s.RadiusOver, "radius-over", 0, "only results whose radius is over this many km")
	fs.Float64Var(&s.ConfidenceUnder, "confidence-under", 0, "only results whose confidence is under this (0 to 1)")
	fs.BoolVar(&s.WithExifOnly, "with-exif-only", false, "only photos whose EXIF position is known (the ones accuracy can be judged on)")
	fs.IntVar(&s.Sample, "sample", 0, "a random sample of this many of the selected objects, the same each time for the same --run")
}

// check validates the flags once parsed.
func (s *selection) check(fs *flag.FlagSet) error {
	s.Set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { s.Set[f.Name] = true })
	s.now = time.Now()
	if s.Status != "" && !isStatus(s.Status) {
		return fmt.Errorf("--status %q is not one of %s", s.Status, strings.Join(ledger.Statuses, ", "))
	}
	if _, err := jobs.ParseSince(s.Since, s.now); err != nil {
		return fmt.Errorf("--since: %w", err)
	}
	if s.Until != "" {
		if _, err := jobs.ParseSince(s.Until, s.now); err != nil {
			return fmt.Errorf("--until: %w", err)
		}
	}
	if s.Set["sample"] && s.Sample <= 0 {
		return fmt.Errorf("--sample %d: give a positive number", s.Sample)
	}
	if s.Set["radius-over"] && s.RadiusOver < 0 || s.Set["confidence-under"] && s.ConfidenceUnder <= 0 {
		return errors.New("--radius-over takes a distance >= 0, --confidence-under a confidence > 0")
	}
	return nil
}

func (s *selection) query() ledger.QueryInput { return s.Selection.Query(s.now) }

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
