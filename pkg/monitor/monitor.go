package monitor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/geolocate-aws/geolocate/pkg/geoapi"
	"github.com/geolocate-aws/geolocate/pkg/lambdarun"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
)

// Service is the part of *geoapi.Client the Monitor uses.
type Service interface {
	Credits(ctx context.Context, in *geoapi.CreditsInput, optFns ...func(*geoapi.Options)) (*geoapi.CreditsOutput, error)
	Models(ctx context.Context, in *geoapi.ModelsInput, optFns ...func(*geoapi.Options)) (*geoapi.ModelsOutput, error)
}

// KeyProvider supplies the API key; *secretkey.SecretsManagerProvider and
// secretkey.Static satisfy it. Refresh bypasses any cache, after a 401.
type KeyProvider interface {
	Key(ctx context.Context) (string, error)
	Refresh(ctx context.Context) (string, error)
}

// Options are the Monitor's collaborators.
type Options struct {
	// Service calls the geolocation service. Required.
	Service Service
	// Keys provides the API key. Required.
	Keys KeyProvider
	// History stores credit readings; nil disables the forecast (no
	// TABLE_NAME), with a warning on every run.
	History *History
	// Metrics receives the Embedded Metric Format lines. Default os.Stdout,
	// where Lambda hands them to CloudWatch.
	Metrics io.Writer
	// Logger receives the structured logs. Default: discards them.
	Logger *slog.Logger
	// Clock returns the current time; tests replace it. Default time.Now.
	Clock func() time.Time
	// Events, with EventBus, receives a Model Available event per model
	// that became available since the last run (see watchModels); nil
	// publishes none, the metric NewModelsAvailable still tells.
	Events   EventsAPI
	EventBus string
	// Jobs lists the backfill and reprocess jobs whose figures the run
	// publishes (JobsRunning and the per-job metrics); nil publishes none.
	Jobs JobLister
}

// Monitor is the scheduled function's handler. It is safe to reuse across
// invocations (Lambda keeps it warm), not to run concurrently with itself.
type Monitor struct {
	cfg     Config
	service Service
	keys    KeyProvider
	history *History
	metrics io.Writer
	logger  *slog.Logger
	clock   func() time.Time

	events   EventsAPI
	eventBus string
	jobs     JobLister

	// creditState is the credit source last explained in the log: a
	// state that lasts (the summary refusing keys) is explained once, when
	// it starts, not every five minutes.
	creditState string
}

// New returns a Monitor for cfg.
func New(cfg Config, opts Options) (*Monitor, error) {
	if opts.Service == nil {
		return nil, errors.New("monitor: a Service is required")
	}
	if opts.Keys == nil {
		return nil, errors.New("monitor: a key Provider is required")
	}
	if cfg.HistoryWindow <= 0 {
		cfg.HistoryWindow = DefaultHistoryWindow
	}
	m := &Monitor{
		cfg: cfg, service: opts.Service, keys: opts.Keys, history: opts.History,
		metrics: opts.Metrics, logger: opts.Logger, clock: opts.Clock,
		events: opts.Events, eventBus: opts.EventBus, jobs: opts.Jobs,
	}
	if m.events != nil && m.eventBus == "" {
		return nil, errors.New("monitor: Events needs an EventBus")
	}
	if m.metrics == nil {
		m.metrics = os.Stdout
	}
	if m.logger == nil {
		m.logger = slog.New(slog.DiscardHandler)
	}
	if m.clock == nil {
		m.clock = time.Now
	}
	return m, nil
}

// Handle runs one check. Problems with the service, the key or the history
// never fail the invocation: they set MonitorHealthy to 0, are logged and
// are listed in the Report. Failing would only make EventBridge retry a
// run the next schedule repeats anyway, and the heartbeat alarm already
// reports it. The one error returned is failing to write the metrics,
// because then nothing else would tell anyone.
func (m *Monitor) Handle(ctx context.Context, ev events.EventBridgeEvent) (Report, error) {
	log := lambdarun.WithRequestID(ctx, m.logger)
	now := m.clock()
	log.Debug("monitor run", "event_id", ev.ID, "scheduled_at", ev.Time)

	run := &runState{log: log}
	var wg sync.WaitGroup
	// The jobs are read from the table alone: their figures (and
	// JobStalled) do not wait for the key or the service.
	if m.jobs != nil {
		wg.Go(func() { m.checkJobs(ctx, run, now) })
	}
	key, err := m.keys.Key(ctx)
	if err != nil {
		// Without the key neither call can be trusted: the public-only model
		// list would report a whitelist model as retired.
		run.fail("api_key", fmt.Errorf("read API key: %w", err))
	} else {
		wg.Go(func() { m.checkCredits(ctx, run, key, now) })
		wg.Go(func() { m.checkModels(ctx, run, key, now) })
	}
	wg.Wait()

	rep := run.report()
	if err := m.emit(rep, log); err != nil {
		log.Error("write metrics", "error", err.Error())
		return rep, fmt.Errorf("write metrics: %w", err)
	}
	if rep.Healthy {
		log.Info("monitor healthy", summaryAttrs(rep)...)
	} else {
		log.Warn("monitor unhealthy", append(summaryAttrs(rep), "reasons", rep.Reasons)...)
	}
	return rep, nil
}

func (m *Monitor) checkCredits(ctx context.Context, run *runState, key string, now time.Time) {
	reading, err := m.readCredits(ctx, key)
	switch {
	case geoapi.KeyNotAccepted(err):
		// The endpoint refuses every key, not this one: a known state of
		// the service (its public backend), so the watch goes on from what
		// the pipeline knows, and the run stays healthy.
		run.setSummaryReadable(false)
		if m.history == nil {
			m.explainCredits(run, "summary_refuses_keys_no_history",
				"the service does not let API keys read the credit summary, and without the results table ("+
					envvars.TableName+") there is no estimate: only OutOfCredits (the service's 402 answers) watches the credits")
			return
		}
		estimate, note, err := m.estimateCredits(ctx, now)
		if err != nil {
			run.fail("credits", fmt.Errorf("estimate credits: %w", err))
			return
		}
		if estimate == nil {
			m.explainCredits(run, "summary_refuses_keys_no_balance", note)
			return
		}
		m.explainCredits(run, "summary_refuses_keys_estimate_from_"+string(estimate.AnchorSource), note)
		reading = estimate
	case err != nil:
		run.fail("credits", err)
		return
	default:
		run.setSummaryReadable(true)
		m.explainCredits(run, string(SourceSummary), "")
		for _, r := range reading.Refused {
			run.warn("credits", "a figure of the credit summary refused, not published: "+r.String())
		}
		if m.history != nil {
			// The summary counts every charge so far: the estimate, should
			// the summary stop taking keys, starts from this balance.
			if err := m.history.resetTally(ctx, reading.Remaining, now); err != nil {
				run.warn("credits", "could not keep the balance as the estimate's anchor: "+err.Error())
			}
		}
	}
	run.setCredits(reading)
	if m.history == nil {
		run.warn("forecast", fmt.Sprintf("credit history disabled (%s is empty): no burn rate or days remaining", envvars.TableName))
		return
	}
	res, ok, err := m.forecast(ctx, reading, now)
	if err != nil {
		run.fail("forecast", fmt.Errorf("credit history: %w", err))
		return
	}
	if !ok {
		// Not enough history yet (first runs, just topped up, no usage):
		// healthy, and CreditDaysRemaining stays missing, not breaching.
		run.log.Info("no credit forecast", "reason", res.Reason)
	}
	run.setForecast(&res)
}

// explainCredits puts the note in the report, and in the log when the
// credit state changes (a cold start included).
func (m *Monitor) explainCredits(run *runState, state, note string) {
	run.setCreditNote(note)
	if state == m.creditState {
		return
	}
	m.creditState = state
	if note != "" {
		run.log.Info("credit watch", "state", state, "note", note)
	}
}

func (m *Monitor) checkModels(ctx context.Context, run *runState, key string, now time.Time) {
	reading, list, note, err := m.readModels(ctx, key, run.log)
	if err != nil {
		run.fail("models", err)
		return
	}
	if note != "" {
		run.warn("models", note)
	}
	// The models the pipeline uses come first: the configured one, then
	// what the records show (the default, the models they ran).
	used := []string{m.cfg.ModelID}
	var recent recentModels
	if m.history != nil {
		if recent, err = m.history.recentModels(ctx, now); err != nil {
			run.fail("model_watch", err)
		}
		used = append(append(used, recent.Default), recent.Ran...)
	}
	reading.publish(list, used)
	if reading.Listed > MaxModelsPublished {
		// One line a run, whatever the list holds (ModelIdsLeftOut counts).
		run.warn("models", fmt.Sprintf("the model list holds %d ids, more than the %d a run publishes: only the %d the pipeline uses are published and watched one by one",
			reading.Listed, MaxModelsPublished, len(reading.Models)))
	}
	if m.history != nil && err == nil {
		m.watchModels(ctx, run, reading, list, recent, now)
	}
	run.setModels(reading)
}

// watchModels tells of the models that became available since the last
// run: in the report (and so the NewModelsAvailable metric), the log, and
// a Model Available event each.
func (m *Monitor) watchModels(ctx context.Context, run *runState, reading *ModelsReading, list *modelList, recent recentModels, now time.Time) {
	available, err := m.history.watchModels(ctx, reading, list, recent, now)
	if err != nil {
		run.fail("model_watch", err)
		return
	}
	reading.Watched, reading.New = true, available
	for _, a := range available {
		run.log.Info("model available", "model_id", a.ModelID, "default", a.Default, "previous_default", a.PreviousDefault, "listed", a.Listed)
	}
	if err := m.announce(ctx, available, now); err != nil {
		run.fail("model_watch", err)
	}
}

// withKey calls fn with key and, after a 401, once more with a freshly read
// key: it may have been regenerated since the cache was filled.
func (m *Monitor) withKey(ctx context.Context, key string, fn func(key string) error) error {
	err := fn(key)
	var unauthorized *geoapi.UnauthorizedError
	if !errors.As(err, &unauthorized) || unauthorized.Refusal() == geoapi.KeyNotAcceptedHere {
		// An endpoint that refuses every key says nothing about this one.
		return err
	}
	fresh, rerr := m.keys.Refresh(ctx)
	if rerr != nil || fresh == key {
		return err
	}
	return fn(fresh)
}

func summaryAttrs(rep Report) []any {
	var attrs []any
	if c := rep.Credits; c != nil {
		attrs = append(attrs, "credits_remaining", c.Remaining, "credits_source", c.Source, "credits_path", c.RemainingPath)
	}
	if f := rep.Forecast; f != nil && f.BurnPerDay != nil && f.DaysRemaining != nil {
		attrs = append(attrs, "burn_per_day", *f.BurnPerDay, "days_remaining", *f.DaysRemaining)
	}
	if mr := rep.Models; mr != nil {
		attrs = append(attrs, "models_ready", mr.Ready, "models_down", mr.Down, "models_unknown", mr.Unknown,
			"configured_model_available", mr.ConfiguredAvailable)
	}
	return attrs
}
