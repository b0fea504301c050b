package jobsim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/jobs"
	"github.com/geolocate-aws/geolocate/pkg/pacer"
	"github.com/geolocate-aws/geolocate/pkg/shared/jobmsg"
	"github.com/geolocate-aws/geolocate/pkg/shared/settings"
)

// The stack's queue, from its settings and infra/queue.go: the upload
// queue keeps a message settings.UploadQueueRetentionSeconds (infra's
// uploadQueueRetentionDays, a test there holds them equal), hides a
// received one for six times the predictor's timeout (Lambda's guidance,
// infra.Config.QueueVisibilityTimeout), and moves one received
// dlqMaxReceiveCount times to the dead-letter queue on its next receive.
var (
	queueRetention  = time.Duration(settings.UploadQueueRetentionSeconds) * time.Second
	queueVisibility = 6 * time.Duration(settings.PredictorTimeoutSeconds.DefaultInt()) * time.Second
	maxReceiveCount = settings.DLQMaxReceiveCount.DefaultInt()
)

// Defaults of a Config: the stack's.
var (
	DefaultConcurrency = settings.MaxConcurrency.DefaultInt()
	DefaultBatchSize   = settings.BatchSize.DefaultInt()
	DefaultWindow      = settings.JobWindowMinutes.DefaultInt()
)

// DefaultLiveRate is the live uploads during a job: 5 a minute.
const DefaultLiveRate = 5

// Config is one simulated job.
type Config struct {
	// Objects is the backfill's size: photos in the bucket's prefix.
	Objects int
	// Rate is R, the stack's ratePerMinute.
	Rate float64
	// Concurrency is maxConcurrency, BatchSize the event source's batch
	// and Window jobWindowMinutes; zero takes the stack's default.
	Concurrency, BatchSize, Window int
	// LiveRate is live uploads a minute (Poisson arrivals) throughout;
	// zero takes DefaultLiveRate, negative none.
	LiveRate float64
	// Baseline is how long the no-job run of the same stack and uploads
	// lasts that the live-upload p50 is compared with (zero: a day).
	Baseline time.Duration
	// PauseAt pauses the job that long after its creation (zero: never)
	// and resumes it PauseFor later, as the operator's jobs pause and
	// resume.
	PauseAt, PauseFor time.Duration
	Seed              uint64
}

func (c Config) withDefaults() Config {
	if c.Concurrency <= 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.BatchSize <= 0 {
		c.BatchSize = DefaultBatchSize
	}
	if c.Window <= 0 {
		c.Window = DefaultWindow
	}
	if c.LiveRate == 0 {
		c.LiveRate = DefaultLiveRate
	}
	if c.Baseline <= 0 {
		c.Baseline = 24 * time.Hour
	}
	return c
}

// Result is what one simulated job measured.
type Result struct {
	Config Config
	// JobRate is the calls a minute the engine feeds the job at
	// (jobs.Rate), WindowMessages the window at it.
	JobRate        float64
	WindowMessages int
	// Lost is the bucket's photos never recorded; Expired and DeadLettered
	// the queue's messages deleted by retention and moved to the
	// dead-letter queue (any kind).
	Lost                  int
	Expired, DeadLettered int64
	// Credits are the job's calls at its price; Distinct the photos
	// recorded (at the price); Duplicates deliveries of a photo already
	// recorded (ended without a call by the ledger's claim).
	Credits, Distinct int64
	Duplicates        int
	// Wrong are job messages naming a version the bucket does not hold;
	// Dropped those the predictor ended without a call for a paused or
	// cancelled job.
	Wrong, Dropped int
	// PausedCalls are the job's calls made more than a minute after its
	// pause and before its resume.
	PausedCalls int
	// Finish is from the job's creation to its last photo's record, DoneAt
	// to the job showing done; Ideal is Objects/R and IdealJob
	// Objects/JobRate.
	Finish, DoneAt, Ideal, IdealJob time.Duration
	// ETA10 is the ETA the job showed when 10% was done (from its
	// creation); ETAError its error against Finish as a share of Finish.
	ETA10    time.Duration
	ETAError float64
	// MaxJobDepth is the most of the job's messages the queue held at once
	// (delayed, visible and in flight); MaxDepth the most of all.
	MaxJobDepth, MaxDepth int
	// LiveP50 is the live uploads' upload-to-record p50 during the job,
	// LiveP50NoJob the same stack's without a job; Live the uploads
	// measured.
	LiveP50, LiveP50NoJob time.Duration
	Live                  int
	// MaxCallsPerMinute is the most calls of any 60 s (the service's
	// sliding window): at most R.
	MaxCallsPerMinute int
	// Holds are messages returned holding their slot, GivenUp held slots
	// given up; Receives the queue's receives a photo (of all messages).
	Holds, GivenUp     int
	ReceivesPerMessage float64
	// FeederRuns is the scheduled Feeder runs, FeederP99 the p99 of their
	// wall time (the real code's cost, on this machine); ListPages the
	// bucket's ListObjectVersions pages served.
	FeederRuns int
	FeederP99  time.Duration
	ListPages  int64
	// DB are the engine's DynamoDB requests (the Store's, the Feeder's and
	// the predictor's counter updates); Batches its SendMessageBatch
	// requests.
	DB      DBStats
	Batches int64
	Elapsed time.Duration
	Events  int64
}

// Ratio is Finish over Objects/R.
func (r *Result) Ratio() float64 { return ratio(r.Finish, r.Ideal) }

// RatioJob is Finish over Objects/JobRate: the job's own rate, the one its
// ETA and the operator's plan use.
func (r *Result) RatioJob() float64 { return ratio(r.Finish, r.IdealJob) }

func ratio(a, b time.Duration) float64 {
	if b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// run is one simulation's state.
type run struct {
	cfg        Config
	l          *loop
	rng        *rand.Rand
	q          *queue
	sched      *schedule
	c          *consumers
	engine     *engine
	ledger     map[string]*object
	visibility time.Duration
	maxRecv    int

	holds, givenUp, duplicates, busyClaims, dropped, badMessages, wrong, pausedCalls int
	jobRecorded                                                                      int64
	jobCalls                                                                         int64
	lastRecord                                                                       time.Time
	eta10                                                                            time.Time
	etaTaken                                                                         bool
	live                                                                             []time.Duration
	window                                                                           []time.Time // calls of the last 60 s
	maxPerMinute                                                                     int
}

const (
	bucketName = "archive-photos"
	prefix     = "archive/"
	photoSize  = 2 << 20
	queueURL   = "https://sqs.us-east-1.amazonaws.com/000000000000/geolocate-uploads"
	price      = 1
)

func newRun(cfg Config, seed uint64) *run {
	l := newLoop(epoch)
	r := &run{cfg: cfg, l: l, rng: rand.New(rand.NewPCG(seed, 0x70b5)), ledger: map[string]*object{},
		visibility: queueVisibility, maxRecv: maxReceiveCount,
		sched: &schedule{spacing: pacer.DefaultSpacing(cfg.Rate)}}
	r.q = newQueue(l, queueRetention, queueVisibility, maxReceiveCount)
	r.c = newConsumers(r, cfg.Concurrency, cfg.BatchSize)
	r.q.onVisible = r.c.wake
	return r
}

// uploads sends live uploads' notifications at random at rate a minute
// until until.
func (r *run) uploads(until time.Time) {
	if r.cfg.LiveRate < 0 {
		return
	}
	mean := float64(time.Minute) / r.cfg.LiveRate
	n := 0
	var next func()
	next = func() {
		if r.l.now.After(until) {
			return
		}
		n++
		m := r.q.send("uploads/"+strconv.Itoa(n)+".jpg", false, 0)
		m.upload = r.l.now
		r.l.after(time.Duration(r.rng.ExpFloat64()*mean), next)
	}
	r.l.after(time.Duration(r.rng.ExpFloat64()*mean), next)
}

func (r *run) calledAt(t time.Time) {
	r.window = append(r.window, t)
	drop := 0
	for drop < len(r.window) && !r.window[drop].After(t.Add(-time.Minute)) {
		drop++
	}
	r.window = r.window[drop:]
	r.maxPerMinute = max(r.maxPerMinute, len(r.window))
}

// recorded is a call's record written: a live upload's latency, or the
// job's counters as the predictor adds them.
func (r *run) recorded(m *message, jm jobmsg.Object) {
	r.lastRecord = r.l.now
	if !m.job {
		r.live = append(r.live, r.l.now.Sub(m.upload))
		return
	}
	r.jobCalls++
	r.jobRecorded++
	r.engine.ended(jm, jobs.OutcomeDone, jm.CreditsPerCall)
	if !r.etaTaken && r.jobRecorded*10 >= int64(r.cfg.Objects) {
		r.etaTaken = true
		r.eta10 = r.engine.eta(r.l.now)
	}
}

// Run simulates one job, then the same stack without it for the live
// uploads' baseline.
func Run(cfg Config) (*Result, error) {
	cfg = cfg.withDefaults()
	if cfg.Objects < 1 || cfg.Rate <= 0 {
		return nil, fmt.Errorf("jobsim: %d objects at %v a minute: want both positive", cfg.Objects, cfg.Rate)
	}
	began := time.Now()
	base := newRun(cfg, cfg.Seed)
	base.uploads(epoch.Add(cfg.Baseline))
	base.l.run(epoch.Add(cfg.Baseline+time.Hour), func() bool { return false })

	r := newRun(cfg, cfg.Seed)
	e, err := newEngine(context.Background(), r, cfg)
	if err != nil {
		return nil, err
	}
	r.engine = e
	ideal := time.Duration(float64(cfg.Objects) / cfg.Rate * float64(time.Minute))
	idealJob := time.Duration(float64(cfg.Objects) / e.rate * float64(time.Minute))
	// A job slower than three times its own rate has failed the proof
	// anyway: the run stops there rather than run on for ever.
	limit := epoch.Add(3*idealJob + time.Hour)
	r.uploads(limit)
	if err := e.start(); err != nil {
		return nil, err
	}
	r.l.run(limit, func() bool { return e.err != nil || e.done })
	if e.err != nil {
		return nil, e.err
	}
	r.q.expire()
	res := &Result{Config: cfg, JobRate: e.rate, WindowMessages: int(float64(cfg.Window) * e.rate),
		Lost: cfg.Objects - int(r.jobRecorded), Expired: r.q.st.Expired, DeadLettered: r.q.st.DeadLettered,
		Credits: r.jobCalls * price, Distinct: r.jobRecorded * price, Duplicates: r.duplicates,
		Wrong: r.wrong + r.badMessages, Dropped: r.dropped, PausedCalls: r.pausedCalls, DB: e.db.st, Batches: r.q.batches,
		Finish: r.lastRecord.Sub(epoch), Ideal: ideal, IdealJob: idealJob,
		MaxJobDepth: r.q.st.MaxJobDepth, MaxDepth: r.q.st.MaxDepth,
		LiveP50: percentile(r.live, 0.5), LiveP50NoJob: percentile(base.live, 0.5), Live: len(r.live),
		MaxCallsPerMinute: r.maxPerMinute, Holds: r.holds, GivenUp: r.givenUp,
		FeederRuns: e.runs, FeederP99: percentile(e.walls, 0.99), ListPages: e.bucket.pages, Events: r.l.ran + base.l.ran}
	if e.done {
		res.DoneAt = e.doneAt.Sub(epoch)
	}
	if r.q.st.Sent > 0 {
		res.ReceivesPerMessage = float64(r.q.st.Received) / float64(r.q.st.Sent)
	}
	if r.etaTaken {
		res.ETA10 = r.eta10.Sub(epoch)
		res.ETAError = ratio(res.ETA10-res.Finish, res.Finish)
	}
	res.Elapsed = time.Since(began)
	return res, nil
}

func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(int(float64(len(s))*p), len(s)-1)]
}
