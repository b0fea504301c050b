package jobs

import (
	"context"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
)

// S3Lister is the part of *s3.Client a backfill's listing uses.
type S3Lister interface {
	ListObjectVersions(ctx context.Context, params *s3.ListObjectVersionsInput, optFns ...func(*s3.Options)) (*s3.ListObjectVersionsOutput, error)
}

// QueueSender is the part of *sqs.Client the feeding uses.
type QueueSender interface {
	SendMessageBatch(ctx context.Context, params *sqs.SendMessageBatchInput, optFns ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error)
}

// FeederMemoryMB is the feeder function's memory size (the stack deploys
// it with this; cmd/benchreport prices its runs).
const FeederMemoryMB = 256

// Defaults of FeederOptions.
const (
	// DefaultRunBudget is how long one run works: well inside the
	// schedule's minute, so that runs rarely overlap (the lease makes an
	// overlap harmless).
	DefaultRunBudget = 40 * time.Second
	// DefaultWindowMinutes is settings.JobWindowMinutes' default.
	DefaultWindowMinutes = 15
	// DefaultListPages bounds the listing pages one run reads per job
	// (ListObjectVersions returns up to 1,000 versions a page).
	DefaultListPages = 20
	// DefaultVisibility is the upload queue's visibility timeout with the
	// stack's defaults (six times predictorTimeoutSeconds' 120 s).
	DefaultVisibility = 12 * time.Minute
	// DefaultMaxReceiveCount is settings.DLQMaxReceiveCount's default.
	DefaultMaxReceiveCount = 20
)

// FeederOptions configure a Feeder.
type FeederOptions struct {
	// Now returns the current time; tests and the rig's simulated clock
	// replace it. Default time.Now. The one clock of a run: leases, marks
	// and delays all read it.
	Now func() time.Time
	// RatePerMinute is the stack's call rate (settings.RatePerMinute); a
	// job without its own rate feeds at Rate(RatePerMinute).
	RatePerMinute float64
	// PlanRecords bounds a reprocess selection's records (MaxPlanRecords if
	// 0; tests lower it).
	PlanRecords int
	// LivePerMinute is the uploads a minute expected beside the jobs
	// (0: none known): Rate leaves them their room.
	LivePerMinute float64
	// MaxConcurrency is the queue event source's maximum concurrency
	// (settings.MaxConcurrency), kept for the report; the pacer, not the
	// feeder, bounds concurrent calls.
	MaxConcurrency int
	// WindowMinutes is settings.JobWindowMinutes: the minutes of a job's
	// calls kept in flight (sent, not ended).
	WindowMinutes int
	// DailyBudget is settings.DailyCreditBudget (0: none): when the day's
	// reserved credits reach it, feeding holds (Job.Held = HeldBudget).
	DailyBudget int
	// RunBudget bounds one run's work. Default DefaultRunBudget.
	RunBudget time.Duration
	// ListPages bounds the listing pages a run reads per job. Default
	// DefaultListPages.
	ListPages int
	// PageSize is ListObjectVersions' MaxKeys (0: S3's default, 1,000).
	PageSize int32
	// Visibility and MaxReceiveCount are the upload queue's: a message fed
	// longer ago than Visibility x MaxReceiveCount + the window has either
	// ended or reached the dead-letter queue, so settling counts it as
	// settled. Defaults DefaultVisibility, DefaultMaxReceiveCount.
	Visibility      time.Duration
	MaxReceiveCount int
	Logger          *slog.Logger
}

// Feeder advances every active job one bounded step per run.
type Feeder struct {
	store *Store
	// ledger reads records (a backfill's already-done objects, a
	// reprocess's selection) and the day's reserved credits, through the
	// store's client and table.
	ledger   *ledger.Store
	lister   S3Lister
	sender   QueueSender
	queueURL string
	opts     FeederOptions
}

// NewFeeder returns a Feeder of store's jobs that lists with lister and
// sends to queueURL with sender.
func NewFeeder(store *Store, lister S3Lister, sender QueueSender, queueURL string, optFns ...func(*FeederOptions)) *Feeder {
	opts := FeederOptions{Now: time.Now, WindowMinutes: DefaultWindowMinutes, RunBudget: DefaultRunBudget, ListPages: DefaultListPages,
		Visibility: DefaultVisibility, MaxReceiveCount: DefaultMaxReceiveCount}
	for _, fn := range optFns {
		fn(&opts)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.WindowMinutes <= 0 {
		opts.WindowMinutes = DefaultWindowMinutes
	}
	if opts.PlanRecords <= 0 {
		opts.PlanRecords = MaxPlanRecords
	}
	if opts.RunBudget <= 0 {
		opts.RunBudget = DefaultRunBudget
	}
	if opts.ListPages <= 0 {
		opts.ListPages = DefaultListPages
	}
	if opts.Visibility <= 0 {
		opts.Visibility = DefaultVisibility
	}
	if opts.MaxReceiveCount <= 0 {
		opts.MaxReceiveCount = DefaultMaxReceiveCount
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	led := ledger.New(store.client, store.table, func(o *ledger.Options) { o.Clock = opts.Now })
	return &Feeder{store: store, ledger: led, lister: lister, sender: sender, queueURL: queueURL, opts: opts}
}

// Report is what one run did.
type Report struct {
	Jobs     int            `json:"jobs"`     // active jobs seen
	Listed   int64          `json:"listed"`   // objects added to manifests
	Sent     int64          `json:"sent"`     // messages sent
	Finished []string       `json:"finished"` // jobs that became done
	Held     map[string]int `json:"held,omitempty"`
	Errors   []string       `json:"errors,omitempty"` // one line per job that failed this run
}
